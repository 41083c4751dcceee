//! The networks batchlab studies, as burn modules: VGG16/19, ResNet-18/50, MobileNet v1, v2 and
//! v3, two small CNNs and MLPs. Each layout follows a named reference implementation and is
//! tested against its published trainable-parameter count.
//!
//! A [`ModelSpec`] (architecture, input shape, classes, width) is validated once and turned into
//! a layer table; the same table builds the [`Model`] ([`ModelSpec::init`]), counts its
//! trainable parameters ([`ModelSpec::trainable_params`]) and its forward FLOPs
//! ([`ModelSpec::forward_flops`]).
//!
//! # FLOPs convention
//!
//! Forward FLOPs per sample = 2 x the multiply-accumulates (MACs) of every convolution and
//! linear layer, squeeze-and-excitation convolutions included. A convolution producing an
//! `h' x w'` map with `cout` channels from `cin` channels in `groups` groups with a `k x k`
//! kernel does `cout x (cin / groups) x k x k x h' x w'` MACs; a linear layer `in x out`.
//! Bias additions, BatchNorm, activations, pooling, residual additions and the SE rescaling are
//! left out: they are a few percent at most and papers leave them out too. Published "FLOPs" of
//! torchvision and of the MobileNet papers ("mult-adds") are MACs, so they equal half of
//! [`ModelSpec::forward_flops`]. A training step costs about 3x the forward FLOPs (forward, and
//! two matrix products per layer backward).

#![warn(missing_docs)]

mod architecture;
mod error;
mod init;
mod layers;
pub mod mlp;
pub mod mobilenet_v1;
pub mod mobilenet_v2;
pub mod mobilenet_v3;
mod model;
pub mod resnet;
pub mod simple_cnn;
pub mod small_cnn;
mod spec;
pub mod stages;
mod train;
pub mod vgg;

pub use architecture::Architecture;
pub use error::ModelError;
pub use layers::ConvBn;
pub use mlp::Mlp;
pub use mobilenet_v1::MobileNetV1;
pub use mobilenet_v2::MobileNetV2;
pub use mobilenet_v3::MobileNetV3;
pub use model::Model;
pub use resnet::ResNet;
pub use simple_cnn::SimpleCnn;
pub use small_cnn::SmallCnn;
pub use spec::ModelSpec;
pub use stages::{Flow, Stage};
pub use train::{classification_loss, trainable_param_count};
pub use vgg::Vgg;

#[cfg(test)]
mod tests;
