//! The names of the networks batchlab can build, as they appear in experiment files.

use std::fmt;
use std::str::FromStr;

use crate::ModelError;

/// A network layout. Each one reproduces a reference implementation layer for layer; the
/// reference and the trainable-parameter count it must match are cited in its module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Architecture {
    /// VGG16, Keras `applications.VGG16` layout.
    Vgg16,
    /// VGG19, Keras `applications.VGG19` layout.
    Vgg19,
    /// ResNet-8, the CIFAR layout of He et al. 2015 (6n + 2 layers, n = 1).
    ResNet8,
    /// ResNet-18, torchvision layout.
    ResNet18,
    /// ResNet-50 (v1.5, stride on the 3x3 conv), torchvision layout.
    ResNet50,
    /// MobileNet v1, Keras `applications.MobileNet` layout.
    MobileNetV1,
    /// MobileNetV2, torchvision layout.
    MobileNetV2,
    /// MobileNetV3-Large, torchvision layout.
    MobileNetV3Large,
    /// MobileNetV3-Small, torchvision layout.
    MobileNetV3Small,
    /// The one-conv-block Keras CNN of seed 003 (dogs vs cats).
    SmallCnn,
    /// The TensorFlow MNIST tutorial CNN used by Shallue et al. 2018.
    SimpleCnn,
    /// A fully connected ReLU network on the flattened input.
    Mlp,
}

impl Architecture {
    /// Every architecture, in the order the CLI lists them.
    pub const ALL: [Architecture; 12] = [
        Architecture::Vgg16,
        Architecture::Vgg19,
        Architecture::ResNet8,
        Architecture::ResNet18,
        Architecture::ResNet50,
        Architecture::MobileNetV1,
        Architecture::MobileNetV2,
        Architecture::MobileNetV3Large,
        Architecture::MobileNetV3Small,
        Architecture::SmallCnn,
        Architecture::SimpleCnn,
        Architecture::Mlp,
    ];

    /// The name used in experiment files and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Architecture::Vgg16 => "vgg16",
            Architecture::Vgg19 => "vgg19",
            Architecture::ResNet8 => "resnet8",
            Architecture::ResNet18 => "resnet18",
            Architecture::ResNet50 => "resnet50",
            Architecture::MobileNetV1 => "mobilenet-v1",
            Architecture::MobileNetV2 => "mobilenet-v2",
            Architecture::MobileNetV3Large => "mobilenet-v3-large",
            Architecture::MobileNetV3Small => "mobilenet-v3-small",
            Architecture::SmallCnn => "small-cnn",
            Architecture::SimpleCnn => "simple-cnn",
            Architecture::Mlp => "mlp",
        }
    }

    /// One line naming the reference layout.
    pub fn description(&self) -> &'static str {
        match self {
            Architecture::Vgg16 => "VGG16, Keras layout (Simonyan & Zisserman 2014)",
            Architecture::Vgg19 => "VGG19, Keras layout (Simonyan & Zisserman 2014)",
            Architecture::ResNet8 => {
                "ResNet-8, CIFAR layout 16/32/64 (He et al. 2015; Shallue et al. 2018)"
            }
            Architecture::ResNet18 => "ResNet-18, torchvision layout (He et al. 2015)",
            Architecture::ResNet50 => "ResNet-50 v1.5, torchvision layout (He et al. 2015)",
            Architecture::MobileNetV1 => "MobileNet v1, Keras layout (Howard et al. 2017)",
            Architecture::MobileNetV2 => "MobileNetV2, torchvision layout (Sandler et al. 2018)",
            Architecture::MobileNetV3Large => {
                "MobileNetV3-Large, torchvision layout (Howard et al. 2019)"
            }
            Architecture::MobileNetV3Small => {
                "MobileNetV3-Small, torchvision layout (Howard et al. 2019)"
            }
            Architecture::SmallCnn => {
                "one conv block + dense 128, the Keras seed-003 CNN (He-uniform init)"
            }
            Architecture::SimpleCnn => {
                "2 conv + dense 1024, TensorFlow MNIST tutorial CNN (Shallue et al. 2018)"
            }
            Architecture::Mlp => "fully connected ReLU network on the flattened input",
        }
    }

    /// Whether the network is a chain of stages (`Model::stages`), which a step can be taken
    /// apart along: the VGGs, the two small CNNs and the MLP.
    pub fn has_stages(&self) -> bool {
        matches!(
            self,
            Architecture::Vgg16
                | Architecture::Vgg19
                | Architecture::SmallCnn
                | Architecture::SimpleCnn
                | Architecture::Mlp
        )
    }

    /// Whether [`ModelSpec::width`](crate::ModelSpec::width) may differ from 1.0: the MobileNets
    /// (their papers' width multiplier) and the ResNets (all stage widths scaled, as in
    /// Nakkiran et al. 2019's ResNet18 width sweep). The others have dense layers whose widths a
    /// channel multiplier does not define.
    pub fn has_width_multiplier(&self) -> bool {
        matches!(
            self,
            Architecture::ResNet8
                | Architecture::ResNet18
                | Architecture::ResNet50
                | Architecture::MobileNetV1
                | Architecture::MobileNetV2
                | Architecture::MobileNetV3Large
                | Architecture::MobileNetV3Small
        )
    }

    /// The smallest input height and width, and why.
    pub(crate) fn min_input(&self) -> (usize, &'static str) {
        // Keras applications refuse inputs below 32x32 for VGG, ResNet and MobileNet: below it
        // the five stride-2 stages end on maps made of padding.
        match self {
            Architecture::Vgg16 | Architecture::Vgg19 => (32, "five 2x2 poolings"),
            Architecture::ResNet18
            | Architecture::ResNet50
            | Architecture::MobileNetV1
            | Architecture::MobileNetV2
            | Architecture::MobileNetV3Large
            | Architecture::MobileNetV3Small => (32, "five stride-2 stages, total stride 32"),
            Architecture::ResNet8 => (4, "two stride-2 stages"),
            Architecture::SmallCnn => (2, "one 2x2 pooling"),
            Architecture::SimpleCnn => (4, "two 2x2 poolings"),
            Architecture::Mlp => (1, "no spatial layers"),
        }
    }

    pub(crate) fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(Architecture::name).collect()
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// In experiment files an architecture is its [`Architecture::name`].
impl serde::Serialize for Architecture {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Architecture {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Architecture {
    type Err = ModelError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|architecture| architecture.name() == name)
            .ok_or_else(|| ModelError::UnknownArchitecture {
                name: name.to_string(),
            })
    }
}
