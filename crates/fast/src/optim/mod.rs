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

/// One parallel task's element loop of an update.
trait Loop {
    /// The loop. `#[inline(always)]`, with everything it calls, to be compiled where
    /// [`vectorized`] runs it.
    fn run(self);
}

/// `l` compiled for the CPU's widest vectors (`crate::simd::vectorized`), where LLVM's
/// vectoriser turns an element loop into vector code: the crate compiles for baseline x86-64,
/// and there the update loops, their settings read through references at every element, had
/// stayed scalar (Adam's a fifth of the profile's samples of the small CNN's steps, SGD's 1.9%
/// of the MLP's; Zen 3, 2026-11-29). The same f32 operations on each element, in the same order.
fn vectorized(l: impl Loop) {
    crate::simd::vectorized(Pass(l))
}

/// A [`Loop`] as the kernel `crate::simd::vectorized` runs.
struct Pass<L>(L);

impl<L: Loop> crate::simd::WithSimd for Pass<L> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: crate::simd::Simd>(self, _: S) {
        self.0.run()
    }
}
