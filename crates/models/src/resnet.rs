//! ResNet-18 and ResNet-50 (He et al. 2015, arXiv:1512.03385) in torchvision's layout
//! (`torchvision/models/resnet.py`): 7x7 stride-2 conv without bias, BN, ReLU, 3x3 stride-2 max
//! pool (padding 1), four stages of BasicBlocks (18) or Bottlenecks (50) with the stride on the
//! 3x3 conv ("ResNet v1.5"), a 1x1 conv + BN projection where the shape changes, global average
//! pooling and a Linear classifier.
//!
//! Must match: 11,689,512 (ResNet-18) and 25,557,032 (ResNet-50) trainable parameters with 1000
//! classes at 3x224x224 (`sum(p.numel() for p in model.parameters())`), and torchvision's
//! 1.81 / 4.09 GMACs at 224.
//!
//! ResNet-8 is He et al.'s CIFAR-10 family (their section 4.2: 6n + 2 layers) with n = 1, the
//! ResNet-8 of Shallue et al. 2018's CIFAR-10 workload: 3x3 stride-1 conv 16 + BN + ReLU (no max
//! pool), three stages of one BasicBlock each at 16, 32 and 64 channels (stride 2 entering the
//! second and third), global average pooling, Linear. Where the shape changes, the shortcut is
//! the same 1x1 conv + BN projection as above (He et al.'s option B; their CIFAR nets used
//! zero-padding, option A, which has no parameters). Must match, at 3x32x32 with 10 classes:
//! 78,042 trainable parameters (convs 432 + 2 x 2,304 + 4,608 + 9,216 + 512 + 18,432 + 36,864 +
//! 2,048, BN 2 x 336, Linear 650).
//!
//! Width multiplier: every stage width is scaled, `k = round(64 x width)` giving stages
//! k, 2k, 4k, 8k (Nakkiran et al. 2019, "Deep Double Descent", ResNet18 width sweep); 1.0 is
//! torchvision's network. For ResNet-8, `k = round(16 x width)`, stages k, 2k, 4k.

use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, PaddingConfig2d};
use burn::prelude::*;
use burn::tensor::activation::relu;

use crate::layers::{
    Activation, ConvBn, ConvBnSpec, ConvSpec, Cost, Init, LinearSpec, Pad, BN_TORCH,
};
use crate::{Architecture, ModelError};

/// Blocks per stage (torchvision `layers`).
const RESNET18_BLOCKS: [usize; 4] = [2, 2, 2, 2];
const RESNET50_BLOCKS: [usize; 4] = [3, 4, 6, 3];
/// ResNet-8: one BasicBlock at each of three stages (He et al.'s CIFAR nets, n = 1).
const RESNET8_BLOCKS: [usize; 3] = [1, 1, 1];
/// Channel growth inside a Bottleneck (its last 1x1 conv outputs 4x the block width).
const BOTTLENECK_EXPANSION: usize = 4;

/// The layer table of one residual block.
#[derive(Clone, Debug, PartialEq)]
struct BlockPlan {
    /// The main branch; the last one has no activation (ReLU comes after the addition).
    convs: Vec<ConvBnSpec>,
    /// 1x1 strided conv + BN on the shortcut when the stride or the channel count changes.
    downsample: Option<ConvBnSpec>,
}

/// The layer table of one ResNet instance.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ResNetPlan {
    stem: ConvBnSpec,
    /// The ImageNet layouts' 3x3 stride-2 max pool after the stem (not in the CIFAR layout).
    stem_pool: bool,
    blocks: Vec<BlockPlan>,
    fc: LinearSpec,
}

fn conv_bn(cin: usize, cout: usize, kernel: usize, stride: usize, act: Activation) -> ConvBnSpec {
    ConvBnSpec {
        // torchvision: kaiming_normal_(mode="fan_out", nonlinearity="relu") for every conv.
        conv: ConvSpec::torchvision(cin, cout, kernel, stride),
        bn: BN_TORCH,
        act,
    }
}

impl ResNetPlan {
    pub fn new(
        architecture: Architecture,
        input: [usize; 3],
        classes: usize,
        width: f64,
    ) -> Result<Self, ModelError> {
        let cifar = architecture == Architecture::ResNet8;
        let (blocks_per_stage, bottleneck): (&[usize], bool) = match architecture {
            Architecture::ResNet50 => (&RESNET50_BLOCKS, true),
            Architecture::ResNet8 => (&RESNET8_BLOCKS, false),
            _ => (&RESNET18_BLOCKS, false),
        };
        let (stem_width, layer) = if cifar {
            (16.0, "stem conv (16 x width)")
        } else {
            (64.0, "stem conv (64 x width)")
        };
        let base = (stem_width * width).round() as usize;
        if base == 0 {
            return Err(ModelError::WidthTooSmall {
                architecture,
                width,
                layer,
            });
        }
        let stem = if cifar {
            conv_bn(input[0], base, 3, 1, Activation::Relu)
        } else {
            conv_bn(input[0], base, 7, 2, Activation::Relu)
        };
        let mut cin = base;
        let mut blocks = Vec::new();
        for (stage, &count) in blocks_per_stage.iter().enumerate() {
            let planes = base << stage; // k, 2k, 4k, 8k
            for index in 0..count {
                // The first block of stages 2-4 halves the map (torchvision _make_layer).
                let stride = if stage > 0 && index == 0 { 2 } else { 1 };
                let (convs, cout) = if bottleneck {
                    let cout = planes * BOTTLENECK_EXPANSION;
                    let convs = vec![
                        conv_bn(cin, planes, 1, 1, Activation::Relu),
                        conv_bn(planes, planes, 3, stride, Activation::Relu),
                        conv_bn(planes, cout, 1, 1, Activation::Identity),
                    ];
                    (convs, cout)
                } else {
                    let convs = vec![
                        conv_bn(cin, planes, 3, stride, Activation::Relu),
                        conv_bn(planes, planes, 3, 1, Activation::Identity),
                    ];
                    (convs, planes)
                };
                let downsample = (stride != 1 || cin != cout)
                    .then(|| conv_bn(cin, cout, 1, stride, Activation::Identity));
                blocks.push(BlockPlan { convs, downsample });
                cin = cout;
            }
        }
        // torchvision leaves fc at PyTorch's default init.
        let fc = LinearSpec::new(cin, classes, Init::Torch);
        Ok(Self {
            stem,
            stem_pool: !cifar,
            blocks,
            fc,
        })
    }

    pub fn cost(&self, hw: [usize; 2]) -> Cost {
        let mut cost = Cost::default();
        let hw = cost.conv_bn(&self.stem, hw);
        let mut hw = if self.stem_pool {
            Pad::Half.out_hw(hw, 3, 2) // max pool 3x3 s2 p1
        } else {
            hw
        };
        for block in &self.blocks {
            let input = hw;
            for conv in &block.convs {
                hw = cost.conv_bn(conv, hw);
            }
            if let Some(downsample) = &block.downsample {
                let shortcut = cost.conv_bn(downsample, input);
                debug_assert_eq!(shortcut, hw, "shortcut and main branch must agree");
            }
        }
        cost.linear(&self.fc);
        cost
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> ResNet<B> {
        ResNet {
            stem: self.stem.init(device),
            pool: self.stem_pool.then(|| {
                MaxPool2dConfig::new([3, 3])
                    .with_strides([2, 2])
                    .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                    .init()
            }),
            blocks: self
                .blocks
                .iter()
                .map(|block| ResidualBlock {
                    convs: block.convs.iter().map(|conv| conv.init(device)).collect(),
                    downsample: block.downsample.as_ref().map(|conv| conv.init(device)),
                })
                .collect(),
            avgpool: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
            fc: self.fc.init(device),
        }
    }
}

/// A BasicBlock (two 3x3 convs) or a Bottleneck (1x1, 3x3, 1x1), with its shortcut.
#[derive(Module, Debug)]
pub struct ResidualBlock<B: Backend> {
    convs: Vec<ConvBn<B>>,
    downsample: Option<ConvBn<B>>,
}

impl<B: Backend> ResidualBlock<B> {
    /// # Shapes
    /// `[batch, cin, h, w]` -> `[batch, cout, h / stride, w / stride]`
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let shortcut = match &self.downsample {
            Some(downsample) => downsample.forward(x.clone()),
            None => x.clone(),
        };
        let main = self.convs.iter().fold(x, |x, conv| conv.forward(x));
        relu(main + shortcut)
    }
}

/// ResNet-8, ResNet-18 or ResNet-50; see the [module docs](self).
#[derive(Module, Debug)]
pub struct ResNet<B: Backend> {
    stem: ConvBn<B>,
    pool: Option<MaxPool2d>,
    blocks: Vec<ResidualBlock<B>>,
    avgpool: AdaptiveAvgPool2d,
    fc: Linear<B>,
}

impl<B: Backend> ResNet<B> {
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        // ImageNet layouts: [batch, 64, H/2, W/2], pooled to H/4; ResNet-8: [batch, 16, H, W].
        let x = self.stem.forward(images);
        let x = match &self.pool {
            Some(pool) => pool.forward(x),
            None => x,
        };
        // [batch, 512 or 2048, H/32, W/32]; ResNet-8: [batch, 64, H/4, W/4]
        let x = self.blocks.iter().fold(x, |x, block| block.forward(x));
        let x = self.avgpool.forward(x).flatten(1, 3); // [batch, channels]
        self.fc.forward(x) // [batch, classes]
    }
}
