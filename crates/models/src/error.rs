//! Why a [`ModelSpec`](crate::ModelSpec) cannot be built. Every message says what was expected
//! and what was got, so a config error can be shown to the user as is.

use crate::Architecture;

/// A model specification that cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// An architecture name that is not in [`Architecture::ALL`].
    #[error("unknown architecture {name:?}; expected one of: {}", Architecture::names().join(", "))]
    UnknownArchitecture {
        /// The name as given.
        name: String,
    },
    /// A zero channel count, height or width.
    #[error("input must be channels x height x width with every dimension >= 1; got {}", shape(.input))]
    EmptyInput {
        /// The input shape as given.
        input: [usize; 3],
    },
    /// The input is smaller than the architecture's downsampling allows.
    #[error("{architecture} needs height and width >= {min} ({reason}); got {}", shape(.input))]
    InputTooSmall {
        /// The architecture.
        architecture: Architecture,
        /// The smallest height and width it accepts.
        min: usize,
        /// Why, e.g. "five 2x2 poolings".
        reason: &'static str,
        /// The input shape as given.
        input: [usize; 3],
    },
    /// `classes == 0`.
    #[error("classes must be >= 1 (1 = a single logit for a binary task); got 0")]
    NoClasses,
    /// A width multiplier that is not a finite positive number.
    #[error("width multiplier must be a finite number > 0; got {width}")]
    InvalidWidth {
        /// The width as given.
        width: f64,
    },
    /// A width multiplier other than 1.0 on an architecture that has none.
    #[error(
        "{architecture} has no width multiplier (only the MobileNets and ResNets scale their \
         channels); width must be 1.0, got {width}"
    )]
    WidthNotSupported {
        /// The architecture.
        architecture: Architecture,
        /// The width as given.
        width: f64,
    },
    /// A width multiplier so small that some layer would get no channels.
    #[error(
        "{architecture} at width {width} has a layer with 0 channels ({layer}); use a larger width"
    )]
    WidthTooSmall {
        /// The architecture.
        architecture: Architecture,
        /// The width as given.
        width: f64,
        /// The layer that rounds to 0 channels.
        layer: &'static str,
    },
    /// A network not cut into a chain of stages (yet): those with residual blocks, and
    /// MobileNet v1.
    #[error(
        "{network} cannot be timed stage by stage yet; the networks that can: vgg16, vgg19, \
         small-cnn, simple-cnn, mlp"
    )]
    NotSequential {
        /// The network's family, e.g. "ResNet".
        network: &'static str,
    },
    /// An MLP hidden layer of width 0.
    #[error(
        "mlp hidden layer {index} has width 0; every hidden width must be >= 1 (got {hidden:?})"
    )]
    EmptyHiddenLayer {
        /// Position of the offending layer in `hidden`.
        index: usize,
        /// The hidden widths as given.
        hidden: Vec<usize>,
    },
}

/// `[3, 16, 16]` as `3x16x16`.
pub(crate) fn shape(input: &[usize; 3]) -> String {
    format!("{}x{}x{}", input[0], input[1], input[2])
}
