//! VGG16 and VGG19 (Simonyan & Zisserman 2014, arXiv:1409.1556, configurations D and E) in the
//! layout of Keras `applications.VGG16` / `VGG19` with `include_top=True`: 3x3 "same"
//! convolutions with bias and ReLU, 2x2 max pooling after each of the five stages, Flatten,
//! Dense 4096 ReLU, Dense 4096 ReLU, Dense classes. No BatchNorm, no dropout (Keras has none).
//!
//! Must match: 138,357,544 (VGG16) and 143,667,240 (VGG19) trainable parameters with 1000
//! classes at 3x224x224 (Keras `model.summary()`), and ~15.5 GMACs for VGG16 at 224.
//!
//! The flatten size follows the input (512 x H/32 x W/32, floors at each pooling), so inputs
//! down to 32x32 work; at 224 it is Keras's 25,088.

use crate::stages::{run, Flow, Stage};
use batchlab_fast::{
    conv::conv2d_relu,
    dense::{linear, linear_relu},
    pool::max_pool2d,
};
use burn::nn::conv::Conv2d;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::Linear;
use burn::prelude::*;

use crate::layers::{ConvSpec, Cost, Init, LinearSpec, Pad};
use crate::Architecture;

/// Output channels of each conv, stage by stage (a 2x2 pooling closes each stage).
const VGG16_STAGES: [&[usize]; 5] = [
    &[64, 64],
    &[128, 128],
    &[256, 256, 256],
    &[512, 512, 512],
    &[512, 512, 512],
];
const VGG19_STAGES: [&[usize]; 5] = [
    &[64, 64],
    &[128, 128],
    &[256, 256, 256, 256],
    &[512, 512, 512, 512],
    &[512, 512, 512, 512],
];
/// Width of the two hidden dense layers (Keras `fc1`, `fc2`).
const DENSE: usize = 4096;

/// The layer table of one VGG instance.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VggPlan {
    stages: Vec<Vec<ConvSpec>>,
    dense: [LinearSpec; 3],
}

impl VggPlan {
    pub fn new(architecture: Architecture, input: [usize; 3], classes: usize) -> Self {
        let table = match architecture {
            Architecture::Vgg19 => VGG19_STAGES,
            _ => VGG16_STAGES,
        };
        let mut cin = input[0];
        let stages = table
            .iter()
            .map(|stage| {
                stage
                    .iter()
                    .map(|&cout| {
                        let conv = ConvSpec::new(cin, cout, 3, 1, Pad::Half, Init::KerasGlorot);
                        cin = cout;
                        conv.with_bias()
                    })
                    .collect()
            })
            .collect();
        // Five floor-halvings, as Keras's valid 2x2 pooling does.
        let [h, w] = (0..5).fold([input[1], input[2]], |[h, w], _| [h / 2, w / 2]);
        let flat = cin * h * w;
        let dense = [
            LinearSpec::new(flat, DENSE, Init::KerasGlorot),
            LinearSpec::new(DENSE, DENSE, Init::KerasGlorot),
            LinearSpec::new(DENSE, classes, Init::KerasGlorot),
        ];
        Self { stages, dense }
    }

    pub fn cost(&self, mut hw: [usize; 2]) -> Cost {
        let mut cost = Cost::default();
        for stage in &self.stages {
            for conv in stage {
                hw = cost.conv(conv, hw);
            }
            hw = Pad::Valid.out_hw(hw, 2, 2);
        }
        for layer in &self.dense {
            cost.linear(layer);
        }
        cost
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> Vgg<B> {
        Vgg {
            stages: self
                .stages
                .iter()
                .map(|stage| VggStage {
                    convs: stage.iter().map(|conv| conv.init(device)).collect(),
                })
                .collect(),
            pool: MaxPool2dConfig::new([2, 2]).init(),
            fc1: self.dense[0].init(device),
            fc2: self.dense[1].init(device),
            head: self.dense[2].init(device),
        }
    }
}

/// Convolutions of one stage, between two poolings.
#[derive(Module, Debug)]
pub struct VggStage<B: Backend> {
    convs: Vec<Conv2d<B>>,
}

/// VGG16 or VGG19; see the [module docs](self).
#[derive(Module, Debug)]
pub struct Vgg<B: Backend> {
    stages: Vec<VggStage<B>>,
    pool: MaxPool2d,
    fc1: Linear<B>,
    fc2: Linear<B>,
    head: Linear<B>,
}

impl<B: Backend> Vgg<B> {
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        run(&self.chain(), images)
    }

    /// The forward pass as its stages (see [`crate::stages`]): every convolution with its ReLU
    /// (`conv<block>_<i>+relu`, [batch, c, h, w]), each block's pooling (halving h and w), the
    /// two hidden dense layers (flattening first) and the head.
    pub fn chain(&self) -> Vec<Stage<'_, B>> {
        let mut chain = vec![];
        for (b, block) in self.stages.iter().enumerate() {
            for (i, conv) in block.convs.iter().enumerate() {
                chain.push(Stage::new(
                    format!("conv{}_{}+relu", b + 1, i + 1),
                    move |x: Flow<B>| Flow::Images(conv2d_relu(conv, x.images())),
                ));
            }
            chain.push(Stage::new(
                format!("maxpool{}", b + 1),
                move |x: Flow<B>| Flow::Images(max_pool2d(&self.pool, x.images())),
            ));
        }
        chain.push(Stage::new("fc1+relu", |x| {
            Flow::Features(linear_relu(&self.fc1, x.features()))
        }));
        chain.push(Stage::new("fc2+relu", |x| {
            Flow::Features(linear_relu(&self.fc2, x.features()))
        }));
        chain.push(Stage::new("head", |x| {
            Flow::Features(linear(&self.head, x.features()))
        }));
        chain
    }
}
