//! Weight initialisation per reference framework. The layer tables name a scheme; this turns it
//! into burn's [`Initializer`] with the fans computed as that framework computes them, since
//! PyTorch and Keras disagree for grouped (depthwise) convolutions.

use burn::module::Initializer;

/// How weights are drawn at init: each family uses its reference framework's default, so a run
/// starts from the same distribution as the reference's would.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Init {
    /// PyTorch's `nn.Conv2d`/`nn.Linear` default (also burn's): weights and biases
    /// U(±1/sqrt(fan_in)), fan_in = in/groups x k x k.
    Torch,
    /// torchvision ResNet/MobileNet convs: `kaiming_normal_(mode="fan_out")`, N(0, 2 / fan_out)
    /// with PyTorch's fan_out = out x k x k (not divided by groups), zero bias.
    TorchKaimingFanOut,
    /// torchvision MobileNet classifiers: `normal_(0, 0.01)`, zero bias.
    TorchNormal001,
    /// Keras default `glorot_uniform`, zero bias. Keras fans for a conv kernel
    /// (k, k, in, out / groups): fan_in = k x k x in, fan_out = k x k x out / groups.
    KerasGlorot,
    /// Keras `he_uniform` (U(±sqrt(6 / fan_in)), Keras fan_in), zero bias.
    KerasHe,
}

impl Init {
    /// The weight initializer for a layer with these fans. (`Torch` needs none: burn computes
    /// PyTorch's fan_in, `cin / groups x k x k`, itself.)
    pub(crate) fn weight(self, fans: Fans) -> Initializer {
        match self {
            // burn's default is PyTorch's: KaimingUniform with gain 1/sqrt(3) gives U(±1/sqrt(fan_in)).
            Init::Torch => Initializer::KaimingUniform {
                gain: 1.0 / 3f64.sqrt(),
                fan_out_only: false,
            },
            Init::TorchKaimingFanOut => Initializer::Normal {
                mean: 0.0,
                std: (2.0 / fans.torch_out as f64).sqrt(),
            },
            Init::TorchNormal001 => Initializer::Normal {
                mean: 0.0,
                std: 0.01,
            },
            Init::KerasGlorot => {
                let limit = (6.0 / (fans.keras_in + fans.keras_out) as f64).sqrt();
                Initializer::Uniform {
                    min: -limit,
                    max: limit,
                }
            }
            Init::KerasHe => {
                let limit = (6.0 / fans.keras_in as f64).sqrt();
                Initializer::Uniform {
                    min: -limit,
                    max: limit,
                }
            }
        }
    }

    /// The bias initializer: PyTorch's default draws biases like weights, the others start at 0.
    pub(crate) fn bias(self) -> Initializer {
        match self {
            Init::Torch => self.weight(Fans::default()),
            _ => Initializer::Zeros,
        }
    }
}

/// Fan-in and fan-out in the two conventions (they differ for grouped convolutions).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fans {
    pub torch_out: usize,
    pub keras_in: usize,
    pub keras_out: usize,
}
