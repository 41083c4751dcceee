//! [`ModelSpec`]: what to build, checked once, then turned into a layer table that builds the
//! burn module and counts its parameters and FLOPs.

use burn::tensor::backend::Backend;

use crate::mlp::MlpPlan;
use crate::mobilenet_v1::MobileNetV1Plan;
use crate::mobilenet_v2::MobileNetV2Plan;
use crate::mobilenet_v3::MobileNetV3Plan;
use crate::resnet::ResNetPlan;
use crate::simple_cnn::SimpleCnnPlan;
use crate::small_cnn::SmallCnnPlan;
use crate::vgg::VggPlan;
use crate::{layers::Cost, Architecture, Model, ModelError};

/// Everything that fixes a network's shape. Build it with [`ModelSpec::new`] and adjust the
/// public fields; [`ModelSpec::init`] validates before building. It is also the `[model]` table
/// of experiment files, which is why it (de)serializes and has a default.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelSpec {
    /// The layout.
    pub architecture: Architecture,
    /// Input `[channels, height, width]`.
    pub input: [usize; 3],
    /// Output columns; 1 means a single logit for a binary task (sigmoid / BCE in the loss).
    pub classes: usize,
    /// Width multiplier, 1.0 for the published networks. Only architectures with
    /// [`Architecture::has_width_multiplier`] accept another value.
    pub width: f64,
    /// Hidden layer widths of the MLP, input side first (other architectures ignore it; an MLP
    /// with no entries is a linear classifier).
    pub hidden: Vec<usize>,
}

/// The layer table of one architecture family, built from a validated spec.
enum Plan {
    Vgg(VggPlan),
    ResNet(ResNetPlan),
    MobileNetV1(MobileNetV1Plan),
    MobileNetV2(MobileNetV2Plan),
    MobileNetV3(MobileNetV3Plan),
    SmallCnn(SmallCnnPlan),
    SimpleCnn(SimpleCnnPlan),
    Mlp(MlpPlan),
}

impl Default for ModelSpec {
    fn default() -> Self {
        // VGG16 at ImageNet size is the network of the step-time study that founded batchlab.
        Self::new(Architecture::Vgg16, [3, 224, 224], 1000)
    }
}

impl ModelSpec {
    /// Width 1.0 and MLP hidden widths [512, 512] (the classic MNIST MLP).
    pub fn new(architecture: Architecture, input: [usize; 3], classes: usize) -> Self {
        Self {
            architecture,
            input,
            classes,
            width: 1.0,
            hidden: vec![512, 512],
        }
    }

    /// Checks the spec against the architecture: classes >= 1, a non-empty input at least as
    /// large as the architecture's downsampling needs, a positive width only where the
    /// architecture has a width multiplier, and no zero-width layer.
    pub fn validate(&self) -> Result<(), ModelError> {
        self.plan().map(|_| ())
    }

    /// Validates, then builds the network with freshly initialised parameters (drawn lazily by
    /// burn on first use, so call `B::seed` before the first forward pass to reproduce a run).
    pub fn init<B: Backend>(&self, device: &B::Device) -> Result<Model<B>, ModelError> {
        Ok(match self.plan()? {
            Plan::Vgg(plan) => Model::Vgg(plan.init(device)),
            Plan::ResNet(plan) => Model::ResNet(plan.init(device)),
            Plan::MobileNetV1(plan) => Model::MobileNetV1(plan.init(device)),
            Plan::MobileNetV2(plan) => Model::MobileNetV2(plan.init(device)),
            Plan::MobileNetV3(plan) => Model::MobileNetV3(plan.init(device)),
            Plan::SmallCnn(plan) => Model::SmallCnn(plan.init(device)),
            Plan::SimpleCnn(plan) => Model::SimpleCnn(plan.init(device)),
            Plan::Mlp(plan) => Model::Mlp(plan.init(device)),
        })
    }

    /// Forward FLOPs per sample: 2 x the multiply-accumulates of every convolution and linear
    /// layer (see the [crate docs](crate#flops-convention) for what is left out). Computed from
    /// the same layer table that [`ModelSpec::init`] builds from.
    pub fn forward_flops(&self) -> Result<u64, ModelError> {
        Ok(2 * self.cost()?.macs)
    }

    /// Trainable parameters (BatchNorm's running statistics excluded), computed from the layer
    /// table; equal to [`trainable_param_count`](crate::trainable_param_count) of the built
    /// module, which the tests check for every architecture.
    pub fn trainable_params(&self) -> Result<usize, ModelError> {
        Ok(self.cost()?.params)
    }

    /// Activations per sample that a backward pass keeps: the output elements of every
    /// convolution, BatchNorm and linear layer of the layer table (activation functions and
    /// pooling not counted). An analytic lower estimate of memory per example, in elements.
    pub fn activation_elements(&self) -> Result<u64, ModelError> {
        Ok(self.cost()?.activations)
    }

    /// Forward FLOPs per sample of the grouped (depthwise) convolutions alone: a part of
    /// [`ModelSpec::forward_flops`] that CPU kernels run far below dense throughput.
    pub fn grouped_flops(&self) -> Result<u64, ModelError> {
        Ok(2 * self.cost()?.grouped_macs)
    }

    /// Convolution, BatchNorm and linear layers of the layer table: the number of kernel
    /// calls of a step grows with it, whatever the batch size.
    pub fn layer_count(&self) -> Result<u64, ModelError> {
        Ok(self.cost()?.layers)
    }

    fn cost(&self) -> Result<Cost, ModelError> {
        let hw = [self.input[1], self.input[2]];
        Ok(match self.plan()? {
            Plan::Vgg(plan) => plan.cost(hw),
            Plan::ResNet(plan) => plan.cost(hw),
            Plan::MobileNetV1(plan) => plan.cost(hw),
            Plan::MobileNetV2(plan) => plan.cost(hw),
            Plan::MobileNetV3(plan) => plan.cost(hw),
            Plan::SmallCnn(plan) => plan.cost(hw),
            Plan::SimpleCnn(plan) => plan.cost(hw),
            Plan::Mlp(plan) => plan.cost(),
        })
    }

    /// Checks what every architecture shares, then builds the family's layer table (which may
    /// still refuse a width that leaves a layer without channels).
    fn plan(&self) -> Result<Plan, ModelError> {
        let architecture = self.architecture;
        if self.classes == 0 {
            return Err(ModelError::NoClasses);
        }
        if self.input.contains(&0) {
            return Err(ModelError::EmptyInput { input: self.input });
        }
        if !(self.width.is_finite() && self.width > 0.0) {
            return Err(ModelError::InvalidWidth { width: self.width });
        }
        if self.width != 1.0 && !architecture.has_width_multiplier() {
            return Err(ModelError::WidthNotSupported {
                architecture,
                width: self.width,
            });
        }
        let (min, reason) = architecture.min_input();
        if self.input[1] < min || self.input[2] < min {
            return Err(ModelError::InputTooSmall {
                architecture,
                min,
                reason,
                input: self.input,
            });
        }
        let (input, classes, width) = (self.input, self.classes, self.width);
        Ok(match architecture {
            Architecture::Vgg16 | Architecture::Vgg19 => {
                Plan::Vgg(VggPlan::new(architecture, input, classes))
            }
            Architecture::ResNet8 | Architecture::ResNet18 | Architecture::ResNet50 => {
                Plan::ResNet(ResNetPlan::new(architecture, input, classes, width)?)
            }
            Architecture::MobileNetV1 => {
                Plan::MobileNetV1(MobileNetV1Plan::new(input, classes, width)?)
            }
            Architecture::MobileNetV2 => {
                Plan::MobileNetV2(MobileNetV2Plan::new(input, classes, width))
            }
            Architecture::MobileNetV3Large | Architecture::MobileNetV3Small => {
                Plan::MobileNetV3(MobileNetV3Plan::new(architecture, input, classes, width))
            }
            Architecture::SmallCnn => Plan::SmallCnn(SmallCnnPlan::new(input, classes)),
            Architecture::SimpleCnn => Plan::SimpleCnn(SimpleCnnPlan::new(input, classes)),
            Architecture::Mlp => {
                if let Some(index) = self.hidden.iter().position(|&width| width == 0) {
                    return Err(ModelError::EmptyHiddenLayer {
                        index,
                        hidden: self.hidden.clone(),
                    });
                }
                Plan::Mlp(MlpPlan::new(input, classes, &self.hidden))
            }
        })
    }
}
