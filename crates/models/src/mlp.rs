//! A multilayer perceptron on the flattened input: Linear + ReLU for each hidden width, then a
//! Linear to the classes. With hidden [512, 512] on MNIST (784 inputs, 10 classes) it is the
//! classic 784-512-512-10 network (Keras `mnist_mlp.py` minus its dropout) and must have
//! 669,706 trainable parameters (401,920 + 262,656 + 5,130). PyTorch/burn default init.

use crate::stages::{run, Flow, Stage};
use batchlab_fast::dense::{linear, linear_relu};
use burn::nn::Linear;
use burn::prelude::*;

use crate::layers::{Cost, Init, LinearSpec};

/// The layer table of one MLP.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MlpPlan {
    /// Hidden layers then the output layer.
    layers: Vec<LinearSpec>,
}

impl MlpPlan {
    pub fn new(input: [usize; 3], classes: usize, hidden: &[usize]) -> Self {
        let mut fin = input.iter().product();
        let mut layers = Vec::with_capacity(hidden.len() + 1);
        for &fout in hidden.iter().chain(std::iter::once(&classes)) {
            layers.push(LinearSpec::new(fin, fout, Init::Torch));
            fin = fout;
        }
        Self { layers }
    }

    pub fn cost(&self) -> Cost {
        let mut cost = Cost::default();
        for layer in &self.layers {
            cost.linear(layer);
        }
        cost
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> Mlp<B> {
        Mlp {
            layers: self.layers.iter().map(|layer| layer.init(device)).collect(),
        }
    }
}

/// A ReLU MLP; see the [module docs](self).
#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    /// Hidden layers then the output layer.
    layers: Vec<Linear<B>>,
}

impl<B: Backend> Mlp<B> {
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]` (the input is flattened first)
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        run(&self.stages(), images)
    }

    /// The forward pass as its stages (see [`crate::stages`]): each hidden layer with its ReLU
    /// (the first flattens the images to [batch, C x H x W]), then the output layer.
    pub fn stages(&self) -> Vec<Stage<'_, B>> {
        let last = self.layers.len().saturating_sub(1);
        self.layers
            .iter()
            .enumerate()
            .map(|(i, layer)| {
                if i == last {
                    Stage::new("head", move |x: Flow<B>| {
                        Flow::Features(linear(layer, x.features()))
                    })
                } else {
                    Stage::new(format!("dense{}+relu", i + 1), move |x: Flow<B>| {
                        Flow::Features(linear_relu(layer, x.features()))
                    })
                }
            })
            .collect()
    }
}
