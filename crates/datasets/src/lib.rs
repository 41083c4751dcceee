//! Data for batchlab studies.
//!
//! - [`synthetic`]: seeded random image batches of any shape, made on the host and moved to the
//!   device once, for step-time sweeps where only the shape of the data matters.
//!
//! Real datasets (CIFAR-10, cats vs dogs, Fashion-MNIST/MNIST) join this crate next; models and
//! runners never read files themselves.

pub mod synthetic;

pub use synthetic::{SyntheticBatch, SyntheticImages};
