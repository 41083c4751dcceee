//! The seed-003 Keras CNN: one VGG-style block, the "one-block VGG" baseline of the
//! dogs-vs-cats tutorial (Brownlee, machinelearningmastery.com):
//!
//! ```text
//! Conv2D(32, (3, 3), activation="relu", kernel_initializer="he_uniform", padding="same")
//! MaxPooling2D((2, 2)) -> Flatten()
//! Dense(128, activation="relu", kernel_initializer="he_uniform")
//! Dense(1, activation="sigmoid")          # here: raw logit, the loss applies the sigmoid
//! ```
//!
//! Must match: 40,961,153 trainable parameters at 3x200x200 with 1 class
//! (896 + 320,000 x 128 + 128 + 129). The flatten size follows the input (32 x H/2 x W/2).
//! Keras biases start at zero; the last Dense keeps Keras's default Glorot-uniform kernel.

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
use crate::stages::{run, Flow, Stage};

const FILTERS: usize = 32;
const DENSE: usize = 128;

/// The layer table of one seed-003 CNN.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SmallCnnPlan {
    conv: ConvSpec,
    dense: LinearSpec,
    head: LinearSpec,
}

impl SmallCnnPlan {
    pub fn new(input: [usize; 3], classes: usize) -> Self {
        let conv = ConvSpec::new(input[0], FILTERS, 3, 1, Pad::Half, Init::KerasHe).with_bias();
        let [h, w] = Pad::Valid.out_hw(conv.out_hw([input[1], input[2]]), 2, 2);
        Self {
            conv,
            dense: LinearSpec::new(FILTERS * h * w, DENSE, Init::KerasHe),
            head: LinearSpec::new(DENSE, classes, Init::KerasGlorot),
        }
    }

    pub fn cost(&self, hw: [usize; 2]) -> Cost {
        let mut cost = Cost::default();
        cost.conv(&self.conv, hw);
        cost.linear(&self.dense);
        cost.linear(&self.head);
        cost
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> SmallCnn<B> {
        SmallCnn {
            conv: self.conv.init(device),
            pool: MaxPool2dConfig::new([2, 2]).init(),
            dense: self.dense.init(device),
            head: self.head.init(device),
        }
    }
}

/// The seed-003 CNN; see the [module docs](self).
#[derive(Module, Debug)]
pub struct SmallCnn<B: Backend> {
    conv: Conv2d<B>,
    pool: MaxPool2d,
    dense: Linear<B>,
    head: Linear<B>,
}

impl<B: Backend> SmallCnn<B> {
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        run(&self.stages(), images)
    }

    /// The forward pass as its stages (see [`crate::stages`]).
    pub fn stages(&self) -> Vec<Stage<'_, B>> {
        vec![
            // [batch, 32, H, W]
            Stage::new("conv+relu", |x| {
                Flow::Images(conv2d_relu(&self.conv, x.images()))
            }),
            // [batch, 32, H/2, W/2]
            Stage::new("maxpool", |x| {
                Flow::Images(max_pool2d(&self.pool, x.images()))
            }),
            // [batch, 128], flattening first
            Stage::new("dense+relu", |x| {
                Flow::Features(linear_relu(&self.dense, x.features()))
            }),
            // [batch, classes]
            Stage::new("head", |x| Flow::Features(linear(&self.head, x.features()))),
        ]
    }
}
