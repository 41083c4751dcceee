//! Tests across architectures: golden parameter counts and FLOPs (`golden`), output shapes
//! (`shapes`), a few optimiser steps per family (`training`), and spec validation
//! (`validation`). All run on burn's Flex CPU backend in a few seconds in release; with the
//! `tch` feature the training tests also run on LibTorch, and `agreement` compares the two.

#[cfg(feature = "tch")]
mod agreement;
mod golden;
mod shapes;
mod stages;
mod training;
mod validation;

use std::sync::{Mutex, MutexGuard};

use burn::tensor::backend::Backend;
use burn_flex::Flex;

use crate::{Architecture, ModelSpec};

/// The CPU backend every test runs on.
type Cpu = Flex;

/// LibTorch on the CPU, where the build has it.
#[cfg(feature = "tch")]
type Torch = burn::backend::LibTorch;

/// burn's random generator is one per backend, shared by the test threads: a test that draws
/// (lazy parameter init, random inputs, dropout) holds this lock from seeding to its last draw,
/// so its numbers do not depend on which other tests run beside it.
static RNG: Mutex<()> = Mutex::new(());

pub(crate) fn seeded<B: Backend>(seed: u64) -> MutexGuard<'static, ()> {
    // A test that panicked while holding the lock leaves nothing to repair.
    let guard = RNG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    B::seed(&Default::default(), seed);
    guard
}

fn spec(architecture: Architecture, input: [usize; 3], classes: usize) -> ModelSpec {
    ModelSpec::new(architecture, input, classes)
}
