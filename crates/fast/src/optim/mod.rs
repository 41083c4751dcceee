//! Optimizers that compute burn-optim 0.21's formulas (the same order of operations, the same
//! place for epsilon, momentum's first step without dampening) and update in place where they
//! can: on flex, one fused pass over the parameter's storage and its state, in parallel over
//! rayon's pool (flex's own), where burn's chained tensor ops allocate a temporary per operation
//! and run serially below 4 M elements; on LibTorch, libtorch's in-place ops. Anywhere else, or
//! where a tensor is shared and may not be written, burn's tensor ops (the same formulas).
//!
//! Each is a [`burn::optim::SimpleOptimizer`]: wrap it with [`burn::optim::adaptor::OptimizerAdaptor`]
//! (`.into()`) to get an `Optimizer`, as burn's own configs do.

mod adam;
mod rules;
mod sgd;
#[cfg(feature = "tch")]
mod tch;

pub use adam::AdamState;
pub use rules::{Adam, Decay, Momentum, Sgd};
pub use sgd::SgdState;

/// Elements per parallel task: large enough that rayon's overhead is small against a task, small
/// enough that a 2-core machine splits a 512 x 512 matrix.
const CHUNK: usize = 1 << 14;
