//! MobileNet v1 (Howard et al. 2017, arXiv:1704.04861) in the layout of Keras
//! `applications.MobileNet` (`keras/src/applications/mobilenet.py`): a 3x3 stride-2 "same" conv
//! (32 x alpha channels, no bias) + BN + ReLU6, 13 depthwise-separable blocks (3x3 depthwise
//! without bias + BN + ReLU6, then 1x1 pointwise without bias + BN + ReLU6), global average
//! pooling, dropout 1e-3 and a 1x1 conv with bias as classifier. On a 1x1 map that conv is a
//! Linear(1024 x alpha -> classes) with the same parameters, which is how it is built here.
//!
//! Must match: 4,231,976 trainable parameters at alpha 1.0, 1000 classes, 3x224x224 (Keras:
//! 4,253,864 total, 21,888 non-trainable BatchNorm statistics), and the paper's 569 M
//! multiply-adds (Table 8).
//!
//! Keras details kept: channels are `int(c x alpha)` (truncation, no rounding to 8); a strided
//! depthwise conv is preceded by `ZeroPadding2D(((0, 1), (0, 1)))` and is `valid`; BatchNorm has
//! epsilon 1e-3 and momentum 0.99; weights are Glorot-uniform.

use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig};
use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::prelude::*;

use crate::layers::{
    Activation, ConvBn, ConvBnSpec, ConvSpec, Cost, Init, LinearSpec, Pad, BN_KERAS,
};
use crate::{Architecture, ModelError};

/// (pointwise filters, depthwise stride) of the 13 blocks, `_depthwise_conv_block` calls 1-13.
const BLOCKS: [(usize, usize); 13] = [
    (64, 1),
    (128, 2),
    (128, 1),
    (256, 2),
    (256, 1),
    (512, 2),
    (512, 1),
    (512, 1),
    (512, 1),
    (512, 1),
    (512, 1),
    (1024, 2),
    (1024, 1),
];
/// Keras's default `dropout=1e-3` before the classifier.
const DROPOUT: f64 = 1e-3;

/// The layer table of one MobileNet v1 instance.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MobileNetV1Plan {
    /// Stem conv, then depthwise/pointwise pairs.
    layers: Vec<ConvBnSpec>,
    classifier: LinearSpec,
}

fn conv_bn(conv: ConvSpec) -> ConvBnSpec {
    ConvBnSpec {
        conv,
        bn: BN_KERAS,
        act: Activation::Relu6,
    }
}

impl MobileNetV1Plan {
    pub fn new(input: [usize; 3], classes: usize, alpha: f64) -> Result<Self, ModelError> {
        // Keras: filters = int(filters * alpha).
        let scaled = |c: usize| (c as f64 * alpha) as usize;
        if scaled(32) == 0 {
            return Err(ModelError::WidthTooSmall {
                architecture: Architecture::MobileNetV1,
                width: alpha,
                layer: "stem conv (int(32 x alpha))",
            });
        }
        let glorot = Init::KerasGlorot;
        let mut layers = vec![conv_bn(ConvSpec::new(
            input[0],
            scaled(32),
            3,
            2,
            Pad::TfSame,
            glorot,
        ))];
        let mut cin = scaled(32);
        for &(filters, stride) in &BLOCKS {
            let pad = if stride == 1 {
                Pad::Half
            } else {
                Pad::BottomRight1
            };
            layers.push(conv_bn(ConvSpec::depthwise(cin, 3, stride, pad, glorot)));
            let cout = scaled(filters);
            layers.push(conv_bn(ConvSpec::new(cin, cout, 1, 1, Pad::Valid, glorot)));
            cin = cout;
        }
        let classifier = LinearSpec::new(cin, classes, glorot);
        Ok(Self { layers, classifier })
    }

    pub fn cost(&self, mut hw: [usize; 2]) -> Cost {
        let mut cost = Cost::default();
        for layer in &self.layers {
            hw = cost.conv_bn(layer, hw);
        }
        cost.linear(&self.classifier);
        cost
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> MobileNetV1<B> {
        MobileNetV1 {
            layers: self.layers.iter().map(|layer| layer.init(device)).collect(),
            pool: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
            dropout: DropoutConfig::new(DROPOUT).init(),
            classifier: self.classifier.init(device),
        }
    }
}

/// MobileNet v1; see the [module docs](self).
#[derive(Module, Debug)]
pub struct MobileNetV1<B: Backend> {
    layers: Vec<ConvBn<B>>,
    pool: AdaptiveAvgPool2d,
    dropout: Dropout,
    classifier: Linear<B>,
}

impl<B: Backend> MobileNetV1<B> {
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self.layers.iter().fold(images, |x, layer| layer.forward(x)); // [batch, 1024a, H/32, W/32]
        let x = self.pool.forward(x).flatten(1, 3); // [batch, 1024a]
        self.classifier.forward(self.dropout.forward(x)) // [batch, classes]
    }
}
