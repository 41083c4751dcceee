//! The "Simple CNN" of Shallue et al. 2018 ("Measuring the Effects of Data Parallelism on Neural
//! Network Training", arXiv:1811.03600, used for MNIST and Fashion-MNIST), which is the
//! TensorFlow layers tutorial's MNIST network (`cnn_mnist.py`): conv 5x5 32 "same" + ReLU,
//! 2x2 max pool, conv 5x5 64 "same" + ReLU, 2x2 max pool, dense 1024 + ReLU, dense classes.
//! The tutorial's dropout (rate 0.4) before the last layer is not part of this layout: the
//! network studied is the plain conv-pool-conv-pool-dense stack.
//!
//! Must match, at 1x28x28 with 10 classes: 3,274,634 trainable parameters
//! (832 + 51,264 + 3,136 x 1,024 + 1,024 + 10,250). Weights are Glorot-uniform and biases
//! zero, `tf.layers`' defaults.

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

const FILTERS: [usize; 2] = [32, 64];
const KERNEL: usize = 5;
const DENSE: usize = 1024;

/// The layer table of one Simple CNN.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SimpleCnnPlan {
    convs: [ConvSpec; 2],
    dense: LinearSpec,
    head: LinearSpec,
}

impl SimpleCnnPlan {
    pub fn new(input: [usize; 3], classes: usize) -> Self {
        let conv = |cin, cout| {
            ConvSpec::new(cin, cout, KERNEL, 1, Pad::Half, Init::KerasGlorot).with_bias()
        };
        let convs = [conv(input[0], FILTERS[0]), conv(FILTERS[0], FILTERS[1])];
        let [h, w] = convs.iter().fold([input[1], input[2]], |hw, conv| {
            Pad::Valid.out_hw(conv.out_hw(hw), 2, 2)
        });
        Self {
            dense: LinearSpec::new(FILTERS[1] * h * w, DENSE, Init::KerasGlorot),
            head: LinearSpec::new(DENSE, classes, Init::KerasGlorot),
            convs,
        }
    }

    pub fn cost(&self, mut hw: [usize; 2]) -> Cost {
        let mut cost = Cost::default();
        for conv in &self.convs {
            hw = Pad::Valid.out_hw(cost.conv(conv, hw), 2, 2);
        }
        cost.linear(&self.dense);
        cost.linear(&self.head);
        cost
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> SimpleCnn<B> {
        SimpleCnn {
            convs: self.convs.iter().map(|conv| conv.init(device)).collect(),
            pool: MaxPool2dConfig::new([2, 2]).init(),
            dense: self.dense.init(device),
            head: self.head.init(device),
        }
    }
}

/// The Simple CNN; see the [module docs](self).
#[derive(Module, Debug)]
pub struct SimpleCnn<B: Backend> {
    convs: Vec<Conv2d<B>>,
    pool: MaxPool2d,
    dense: Linear<B>,
    head: Linear<B>,
}

impl<B: Backend> SimpleCnn<B> {
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]`
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        run(&self.stages(), images)
    }

    /// The forward pass as its stages (see [`crate::stages`]): each convolution with its ReLU,
    /// then its pooling (to [batch, 64, H/4, W/4]), the dense layer (1024) and the head.
    pub fn stages(&self) -> Vec<Stage<'_, B>> {
        let mut stages = vec![];
        for (i, conv) in self.convs.iter().enumerate() {
            stages.push(Stage::new(
                format!("conv{}+relu", i + 1),
                move |x: Flow<B>| Flow::Images(conv2d_relu(conv, x.images())),
            ));
            stages.push(Stage::new(
                format!("maxpool{}", i + 1),
                move |x: Flow<B>| Flow::Images(max_pool2d(&self.pool, x.images())),
            ));
        }
        stages.push(Stage::new("dense+relu", |x| {
            Flow::Features(linear_relu(&self.dense, x.features()))
        }));
        stages.push(Stage::new("head", |x| {
            Flow::Features(linear(&self.head, x.features()))
        }));
        stages
    }
}
