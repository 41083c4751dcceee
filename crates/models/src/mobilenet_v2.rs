//! MobileNetV2 (Sandler et al. 2018, arXiv:1801.04381) in torchvision's layout
//! (`torchvision/models/mobilenetv2.py`): a 3x3 stride-2 conv (32 channels) + BN + ReLU6, the
//! inverted-residual table below, a 1x1 conv to 1280 channels + BN + ReLU6, global average
//! pooling, dropout 0.2 and a Linear classifier. Channel counts go through
//! `_make_divisible(c x width_mult, 8)`; the last conv keeps at least 1280 channels.
//!
//! Must match: 3,504,872 trainable parameters at width 1.0, 1000 classes, 3x224x224, and
//! torchvision's 0.30 GFLOPS (its "FLOPS" are multiply-accumulates; the paper says 300 M).

use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig};
use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::prelude::*;

use crate::layers::{
    make_divisible, Activation, ConvBn, ConvBnSpec, ConvSpec, Cost, Init, LinearSpec, Pad, BN_TORCH,
};

/// (expansion t, output channels c, repeats n, first stride s), the paper's Table 2.
const INVERTED_RESIDUALS: [(usize, usize, usize, usize); 7] = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
];
const STEM_CHANNELS: usize = 32;
const LAST_CHANNELS: usize = 1280;
/// torchvision's default `dropout=0.2`.
const DROPOUT: f64 = 0.2;

fn conv_bn(conv: ConvSpec, act: Activation) -> ConvBnSpec {
    ConvBnSpec {
        conv,
        bn: BN_TORCH,
        act,
    }
}

/// torchvision's `Conv2dNormActivation` convolution.
fn conv(cin: usize, cout: usize, kernel: usize, stride: usize) -> ConvSpec {
    ConvSpec::torchvision(cin, cout, kernel, stride)
}

/// The layer table of one inverted residual block.
#[derive(Clone, Debug, PartialEq)]
struct InvertedResidualPlan {
    /// [1x1 expand (absent when t = 1)], 3x3 depthwise, 1x1 linear projection.
    layers: Vec<ConvBnSpec>,
    /// stride 1 and unchanged channel count: add the input back.
    residual: bool,
}

/// The layer table of one MobileNetV2 instance.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MobileNetV2Plan {
    stem: ConvBnSpec,
    blocks: Vec<InvertedResidualPlan>,
    last: ConvBnSpec,
    classifier: LinearSpec,
}

impl MobileNetV2Plan {
    /// Every width > 0 is valid: `_make_divisible` never returns fewer than 8 channels.
    pub fn new(input: [usize; 3], classes: usize, width: f64) -> Self {
        let mut cin = make_divisible(STEM_CHANNELS as f64 * width, 8);
        let stem = conv_bn(conv(input[0], cin, 3, 2), Activation::Relu6);
        let mut blocks = Vec::new();
        for &(t, c, n, s) in &INVERTED_RESIDUALS {
            let cout = make_divisible(c as f64 * width, 8);
            for index in 0..n {
                let stride = if index == 0 { s } else { 1 };
                let hidden = cin * t;
                let mut layers = Vec::new();
                if t != 1 {
                    layers.push(conv_bn(conv(cin, hidden, 1, 1), Activation::Relu6));
                }
                let depthwise =
                    ConvSpec::depthwise(hidden, 3, stride, Pad::Half, Init::TorchKaimingFanOut);
                layers.push(conv_bn(depthwise, Activation::Relu6));
                // Linear bottleneck: no activation after the projection (paper section 3.2).
                layers.push(conv_bn(conv(hidden, cout, 1, 1), Activation::Identity));
                blocks.push(InvertedResidualPlan {
                    layers,
                    residual: stride == 1 && cin == cout,
                });
                cin = cout;
            }
        }
        let last_channels = make_divisible(LAST_CHANNELS as f64 * width.max(1.0), 8);
        let last = conv_bn(conv(cin, last_channels, 1, 1), Activation::Relu6);
        // torchvision: nn.init.normal_(m.weight, 0, 0.01) for the classifier.
        let classifier = LinearSpec::new(last_channels, classes, Init::TorchNormal001);
        Self {
            stem,
            blocks,
            last,
            classifier,
        }
    }

    pub fn cost(&self, hw: [usize; 2]) -> Cost {
        let mut cost = Cost::default();
        let mut hw = cost.conv_bn(&self.stem, hw);
        for block in &self.blocks {
            for layer in &block.layers {
                hw = cost.conv_bn(layer, hw);
            }
        }
        cost.conv_bn(&self.last, hw);
        cost.linear(&self.classifier);
        cost
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> MobileNetV2<B> {
        MobileNetV2 {
            stem: self.stem.init(device),
            blocks: self
                .blocks
                .iter()
                .map(|block| InvertedResidual {
                    layers: block
                        .layers
                        .iter()
                        .map(|layer| layer.init(device))
                        .collect(),
                    residual: block.residual,
                })
                .collect(),
            last: self.last.init(device),
            pool: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
            dropout: DropoutConfig::new(DROPOUT).init(),
            classifier: self.classifier.init(device),
        }
    }
}

/// Expand (1x1), filter (3x3 depthwise), project (1x1, linear), with a residual connection
/// when the shape is unchanged.
#[derive(Module, Debug)]
pub struct InvertedResidual<B: Backend> {
    layers: Vec<ConvBn<B>>,
    residual: bool,
}

impl<B: Backend> InvertedResidual<B> {
    /// # Shapes
    /// `[batch, cin, h, w]` -> `[batch, cout, h / stride, w / stride]`
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let out = self
            .layers
            .iter()
            .fold(x.clone(), |x, layer| layer.forward(x));
        if self.residual {
            out + x
        } else {
            out
        }
    }
}

/// MobileNetV2; see the [module docs](self).
#[derive(Module, Debug)]
pub struct MobileNetV2<B: Backend> {
    stem: ConvBn<B>,
    blocks: Vec<InvertedResidual<B>>,
    last: ConvBn<B>,
    pool: AdaptiveAvgPool2d,
    dropout: Dropout,
    classifier: Linear<B>,
}

impl<B: Backend> MobileNetV2<B> {
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self.stem.forward(images); // [batch, 32, H/2, W/2]
        let x = self.blocks.iter().fold(x, |x, block| block.forward(x)); // [batch, 320, H/32, W/32]
        let x = self.last.forward(x); // [batch, 1280, H/32, W/32]
        let x = self.pool.forward(x).flatten(1, 3); // [batch, 1280]
        self.classifier.forward(self.dropout.forward(x)) // [batch, classes]
    }
}
