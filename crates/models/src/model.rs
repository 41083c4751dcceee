//! [`Model`]: any of the networks behind one type, so runners and optimisers need not be generic
//! over the architecture. Built by [`ModelSpec::init`](crate::ModelSpec::init).

use burn::prelude::*;

use crate::{
    stages::Stage, Mlp, MobileNetV1, MobileNetV2, MobileNetV3, ModelError, ResNet, SimpleCnn,
    SmallCnn, Vgg,
};

/// One of batchlab's networks.
// The variants hold layer handles, not weights (under 2 KB): a move per optimiser step is
// nothing next to the step itself, and burn 0.21 implements Module for no Box to shrink them.
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum Model<B: Backend> {
    /// VGG16 or VGG19.
    Vgg(Vgg<B>),
    /// ResNet-8, ResNet-18 or ResNet-50.
    ResNet(ResNet<B>),
    /// MobileNet v1.
    MobileNetV1(MobileNetV1<B>),
    /// MobileNetV2.
    MobileNetV2(MobileNetV2<B>),
    /// MobileNetV3-Large or -Small.
    MobileNetV3(MobileNetV3<B>),
    /// The seed-003 Keras CNN.
    SmallCnn(SmallCnn<B>),
    /// Shallue et al.'s Simple CNN.
    SimpleCnn(SimpleCnn<B>),
    /// A ReLU MLP.
    Mlp(Mlp<B>),
}

impl<B: Backend> Model<B> {
    /// Raw logits (no softmax or sigmoid: [`classification_loss`](crate::classification_loss)
    /// applies it). BatchNorm uses batch statistics and dropout is active on an autodiff
    /// backend; call `valid()` for evaluation.
    ///
    /// # Shapes
    /// images `[batch, C, H, W]` -> logits `[batch, classes]` (the MLP flattens its input)
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        match self {
            Model::Vgg(model) => model.forward(images),
            Model::ResNet(model) => model.forward(images),
            Model::MobileNetV1(model) => model.forward(images),
            Model::MobileNetV2(model) => model.forward(images),
            Model::MobileNetV3(model) => model.forward(images),
            Model::SmallCnn(model) => model.forward(images),
            Model::SimpleCnn(model) => model.forward(images),
            Model::Mlp(model) => model.forward(images),
        }
    }

    /// The forward pass as a chain of named stages whose composition is [`Model::forward`]
    /// (see [`crate::stages`]); an error for the networks with branches.
    pub fn stages(&self) -> Result<Vec<Stage<'_, B>>, ModelError> {
        let not = |network| Err(ModelError::NotSequential { network });
        match self {
            Model::Vgg(model) => Ok(model.chain()),
            Model::SmallCnn(model) => Ok(model.stages()),
            Model::SimpleCnn(model) => Ok(model.stages()),
            Model::Mlp(model) => Ok(model.stages()),
            Model::ResNet(_) => not("ResNet"),
            Model::MobileNetV1(_) => not("MobileNet v1"),
            Model::MobileNetV2(_) => not("MobileNetV2"),
            Model::MobileNetV3(_) => not("MobileNetV3"),
        }
    }
}
