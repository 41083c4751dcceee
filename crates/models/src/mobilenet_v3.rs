//! MobileNetV3-Large and -Small (Howard et al. 2019, arXiv:1905.02244) in torchvision's layout
//! (`torchvision/models/mobilenetv3.py`, `_mobilenet_v3_conf` without reduced tail or
//! dilation): a 3x3 stride-2 conv (16 channels) + BN + hardswish, the inverted-residual tables
//! below (squeeze-and-excitation with `_make_divisible(expanded // 4, 8)` squeeze channels, ReLU
//! inside and hardsigmoid as gate), a 1x1 conv to 6x the last block's channels + BN + hardswish,
//! global average pooling, Linear -> 1280 (Large) / 1024 (Small), hardswish, dropout 0.2, Linear.
//! BatchNorm uses eps 1e-3 and momentum 0.01 as torchvision's MobileNetV3 does.
//!
//! Must match: 5,483,032 (Large) and 2,542,856 (Small) trainable parameters with 1000 classes at
//! 3x224x224, and the paper's 219 M / 56 M multiply-adds (Table 3; torchvision: 0.22 / 0.06
//! GFLOPS).

use batchlab_fast::conv::conv2d;
use burn::nn::conv::Conv2d;
use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig};
use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::prelude::*;
use burn::tensor::activation::{hard_sigmoid, relu};

use crate::layers::{
    make_divisible, Activation, ConvBn, ConvBnSpec, ConvSpec, Cost, Init, LinearSpec, Pad,
    BN_TORCH_V3,
};
use crate::Architecture;

const RE: Activation = Activation::Relu;
const HS: Activation = Activation::HardSwish;

/// One row of torchvision's `bneck_conf(input, kernel, expanded, out, use_se, activation, stride)`.
type Row = (usize, usize, usize, usize, bool, Activation, usize);

const LARGE: [Row; 15] = [
    (16, 3, 16, 16, false, RE, 1),
    (16, 3, 64, 24, false, RE, 2), // C1
    (24, 3, 72, 24, false, RE, 1),
    (24, 5, 72, 40, true, RE, 2), // C2
    (40, 5, 120, 40, true, RE, 1),
    (40, 5, 120, 40, true, RE, 1),
    (40, 3, 240, 80, false, HS, 2), // C3
    (80, 3, 200, 80, false, HS, 1),
    (80, 3, 184, 80, false, HS, 1),
    (80, 3, 184, 80, false, HS, 1),
    (80, 3, 480, 112, true, HS, 1),
    (112, 3, 672, 112, true, HS, 1),
    (112, 5, 672, 160, true, HS, 2), // C4
    (160, 5, 960, 160, true, HS, 1),
    (160, 5, 960, 160, true, HS, 1),
];
const SMALL: [Row; 11] = [
    (16, 3, 16, 16, true, RE, 2),  // C1
    (16, 3, 72, 24, false, RE, 2), // C2
    (24, 3, 88, 24, false, RE, 1),
    (24, 5, 96, 40, true, HS, 2), // C3
    (40, 5, 240, 40, true, HS, 1),
    (40, 5, 240, 40, true, HS, 1),
    (40, 5, 120, 48, true, HS, 1),
    (48, 5, 144, 48, true, HS, 1),
    (48, 5, 288, 96, true, HS, 2), // C4
    (96, 5, 576, 96, true, HS, 1),
    (96, 5, 576, 96, true, HS, 1),
];
/// Width of the classifier's hidden layer (torchvision `last_channel`, before width scaling).
const LAST_LARGE: usize = 1280;
const LAST_SMALL: usize = 1024;
/// torchvision's default `dropout=0.2`.
const DROPOUT: f64 = 0.2;

fn conv_bn(conv: ConvSpec, act: Activation) -> ConvBnSpec {
    ConvBnSpec {
        conv,
        bn: BN_TORCH_V3,
        act,
    }
}

/// torchvision's `Conv2dNormActivation` convolution.
fn conv(cin: usize, cout: usize, kernel: usize, stride: usize) -> ConvSpec {
    ConvSpec::torchvision(cin, cout, kernel, stride)
}

/// The layer table of one bottleneck.
#[derive(Clone, Debug, PartialEq)]
struct BneckPlan {
    /// [1x1 expand (absent when expanded == input)], kxk depthwise.
    convs: Vec<ConvBnSpec>,
    /// Squeeze-and-excitation: 1x1 convs with bias, channels -> squeeze -> channels.
    se: Option<[ConvSpec; 2]>,
    project: ConvBnSpec,
    residual: bool,
}

/// The layer table of one MobileNetV3 instance.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MobileNetV3Plan {
    stem: ConvBnSpec,
    blocks: Vec<BneckPlan>,
    last: ConvBnSpec,
    hidden: LinearSpec,
    classifier: LinearSpec,
}

impl MobileNetV3Plan {
    /// Every width > 0 is valid: `_make_divisible` never returns fewer than 8 channels.
    pub fn new(architecture: Architecture, input: [usize; 3], classes: usize, width: f64) -> Self {
        let (table, last_channel): (&[Row], usize) = match architecture {
            Architecture::MobileNetV3Small => (&SMALL, LAST_SMALL),
            _ => (&LARGE, LAST_LARGE),
        };
        // torchvision InvertedResidualConfig.adjust_channels.
        let adjust = |c: usize| make_divisible(c as f64 * width, 8);
        let stem = conv_bn(conv(input[0], adjust(table[0].0), 3, 2), HS);
        let blocks: Vec<BneckPlan> = table
            .iter()
            .map(|&(cin, kernel, expanded, cout, use_se, act, stride)| {
                let (cin, expanded, cout) = (adjust(cin), adjust(expanded), adjust(cout));
                let mut convs = Vec::new();
                if expanded != cin {
                    convs.push(conv_bn(conv(cin, expanded, 1, 1), act));
                }
                let depthwise = ConvSpec::depthwise(
                    expanded,
                    kernel,
                    stride,
                    Pad::Half,
                    Init::TorchKaimingFanOut,
                );
                convs.push(conv_bn(depthwise, act));
                let se = use_se.then(|| {
                    let squeeze = make_divisible((expanded / 4) as f64, 8);
                    [
                        conv(expanded, squeeze, 1, 1).with_bias(),
                        conv(squeeze, expanded, 1, 1).with_bias(),
                    ]
                });
                BneckPlan {
                    convs,
                    se,
                    project: conv_bn(conv(expanded, cout, 1, 1), Activation::Identity),
                    residual: stride == 1 && cin == cout,
                }
            })
            .collect();
        let last_in = blocks.last().map_or(0, |block| block.project.conv.cout);
        let last_out = 6 * last_in;
        let last = conv_bn(conv(last_in, last_out, 1, 1), HS);
        let hidden_width = adjust(last_channel);
        Self {
            stem,
            blocks,
            last,
            // torchvision: nn.init.normal_(m.weight, 0, 0.01) for both Linear layers.
            hidden: LinearSpec::new(last_out, hidden_width, Init::TorchNormal001),
            classifier: LinearSpec::new(hidden_width, classes, Init::TorchNormal001),
        }
    }

    pub fn cost(&self, hw: [usize; 2]) -> Cost {
        let mut cost = Cost::default();
        let mut hw = cost.conv_bn(&self.stem, hw);
        for block in &self.blocks {
            for layer in &block.convs {
                hw = cost.conv_bn(layer, hw);
            }
            if let Some(se) = &block.se {
                // The SE convs act on the pooled 1x1 map.
                for layer in se {
                    cost.conv(layer, [1, 1]);
                }
            }
            hw = cost.conv_bn(&block.project, hw);
        }
        cost.conv_bn(&self.last, hw);
        cost.linear(&self.hidden);
        cost.linear(&self.classifier);
        cost
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> MobileNetV3<B> {
        let blocks = self
            .blocks
            .iter()
            .map(|block| Bneck {
                convs: block.convs.iter().map(|layer| layer.init(device)).collect(),
                se: block
                    .se
                    .as_ref()
                    .map(|[reduce, restore]| SqueezeExcitation {
                        pool: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
                        reduce: reduce.init(device),
                        restore: restore.init(device),
                    }),
                project: block.project.init(device),
                residual: block.residual,
            })
            .collect();
        MobileNetV3 {
            stem: self.stem.init(device),
            blocks,
            last: self.last.init(device),
            pool: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
            hidden: self.hidden.init(device),
            dropout: DropoutConfig::new(DROPOUT).init(),
            classifier: self.classifier.init(device),
        }
    }
}

/// Squeeze-and-excitation (Hu et al. 2018) as torchvision's `SqueezeExcitation` with a
/// hardsigmoid gate: channel weights from the pooled map rescale the input.
#[derive(Module, Debug)]
pub struct SqueezeExcitation<B: Backend> {
    pool: AdaptiveAvgPool2d,
    reduce: Conv2d<B>,
    restore: Conv2d<B>,
}

impl<B: Backend> SqueezeExcitation<B> {
    /// # Shapes
    /// `[batch, c, h, w]` -> `[batch, c, h, w]`
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let scale = self.pool.forward(x.clone()); // [batch, c, 1, 1]
        let scale = relu(conv2d(&self.reduce, scale)); // [batch, squeeze, 1, 1]
                                                       // torchvision's nn.Hardsigmoid is relu6(x + 3) / 6.
        let scale = hard_sigmoid(conv2d(&self.restore, scale), 1.0 / 6.0, 0.5); // [batch, c, 1, 1]
        x * scale
    }
}

/// A MobileNetV3 bottleneck: expand, depthwise, optional SE, linear projection, residual.
#[derive(Module, Debug)]
pub struct Bneck<B: Backend> {
    convs: Vec<ConvBn<B>>,
    se: Option<SqueezeExcitation<B>>,
    project: ConvBn<B>,
    residual: bool,
}

impl<B: Backend> Bneck<B> {
    /// # Shapes
    /// `[batch, cin, h, w]` -> `[batch, cout, h / stride, w / stride]`
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let mut out = self
            .convs
            .iter()
            .fold(x.clone(), |x, layer| layer.forward(x));
        if let Some(se) = &self.se {
            out = se.forward(out);
        }
        let out = self.project.forward(out);
        if self.residual {
            out + x
        } else {
            out
        }
    }
}

/// MobileNetV3-Large or -Small; see the [module docs](self).
#[derive(Module, Debug)]
pub struct MobileNetV3<B: Backend> {
    stem: ConvBn<B>,
    blocks: Vec<Bneck<B>>,
    last: ConvBn<B>,
    pool: AdaptiveAvgPool2d,
    hidden: Linear<B>,
    dropout: Dropout,
    classifier: Linear<B>,
}

impl<B: Backend> MobileNetV3<B> {
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self.stem.forward(images); // [batch, 16, H/2, W/2]
        let x = self.blocks.iter().fold(x, |x, block| block.forward(x)); // [batch, 160 or 96, H/32, W/32]
        let x = self.last.forward(x); // [batch, 960 or 576, H/32, W/32]
        let x = self.pool.forward(x).flatten(1, 3); // [batch, 960 or 576]
        let x = Activation::HardSwish.forward(self.hidden.forward(x)); // [batch, 1280 or 1024]
        self.classifier.forward(self.dropout.forward(x)) // [batch, classes]
    }
}
