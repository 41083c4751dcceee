//! Data for batchlab studies.
//!
//! - [`synthetic`]: seeded random image batches of any shape, made on the host and moved to the
//!   device once, for step-time sweeps where only the shape of the data matters.
//! - [`idx`]: the IDX file format (gzipped or raw).
//! - [`mnist`]: MNIST and Fashion-MNIST with a train/validation/test split, found in the data
//!   directory or where Debian's `dataset-fashion-mnist` installs it.
//!
//! CIFAR-10, cats vs dogs, downloads and the batch loader join this crate next; models and
//! runners never read files themselves.

pub mod error;
pub mod idx;
pub mod mnist;
pub mod synthetic;

pub use error::DatasetError;
pub use synthetic::{SyntheticBatch, SyntheticImages};
