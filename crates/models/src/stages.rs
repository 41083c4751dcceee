//! A network as a chain of named stages (a convolution with its activation, a pooling, a dense
//! layer), so that each stage's forward and backward can be timed on its own (the jump anatomy:
//! which layer makes a batch size slow). For the sequential networks (the VGGs, the two small
//! CNNs, the MLP) the chain *is* the forward pass: their `forward` runs [`run`] over their
//! stages, so the stages timed are exactly the computation trained. Networks with branches
//! (ResNets, MobileNets' residual blocks) have none yet.

use burn::prelude::*;

/// The tensor passed between stages: images until the network flattens them.
#[derive(Debug, Clone)]
pub enum Flow<B: Backend> {
    /// `[batch, channels, height, width]`.
    Images(Tensor<B, 4>),
    /// `[batch, features]`.
    Features(Tensor<B, 2>),
}

impl<B: Backend> Flow<B> {
    /// The images. A stage that expects images after the network flattened them is a bug of
    /// its table, not of the data.
    pub fn images(self) -> Tensor<B, 4> {
        match self {
            Flow::Images(x) => x,
            Flow::Features(_) => panic!("a stage expected images after the network flattened them"),
        }
    }

    /// The features, flattening images (`[batch, C x H x W]`).
    pub fn features(self) -> Tensor<B, 2> {
        match self {
            Flow::Images(x) => x.flatten(1, 3),
            Flow::Features(x) => x,
        }
    }

    /// The shape, for allocating a gradient of the same size.
    pub fn dims(&self) -> Vec<usize> {
        match self {
            Flow::Images(x) => x.dims().to_vec(),
            Flow::Features(x) => x.dims().to_vec(),
        }
    }
}

/// One stage of a network: its name (e.g. `conv1_2+relu`) and its forward.
pub struct Stage<'m, B: Backend> {
    /// What it computes, for the reader.
    pub name: String,
    forward: Box<dyn Fn(Flow<B>) -> Flow<B> + 'm>,
}

impl<'m, B: Backend> Stage<'m, B> {
    /// A stage named `name` computing `forward`.
    pub fn new(name: impl Into<String>, forward: impl Fn(Flow<B>) -> Flow<B> + 'm) -> Self {
        Stage {
            name: name.into(),
            forward: Box::new(forward),
        }
    }

    /// Runs the stage.
    pub fn forward(&self, x: Flow<B>) -> Flow<B> {
        (self.forward)(x)
    }
}

impl<B: Backend> std::fmt::Debug for Stage<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stage").field("name", &self.name).finish()
    }
}

/// Runs `stages` in order from `images` to the logits.
pub fn run<B: Backend>(stages: &[Stage<'_, B>], images: Tensor<B, 4>) -> Tensor<B, 2> {
    stages
        .iter()
        .fold(Flow::Images(images), |x, s| s.forward(x))
        .features()
}
