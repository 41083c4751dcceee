//! Data for batchlab studies.
//!
//! - [`images`]: the in-memory form of every dataset (u8, channel-major) and its splits.
//! - [`synthetic`]: seeded random image batches of any shape, made on the host and moved to the
//!   device once, for step-time sweeps where only the shape of the data matters.
//! - [`idx`]: the IDX file format (gzipped or raw).
//! - [`mnist`]: MNIST and Fashion-MNIST with a train/validation/test split, found in the data
//!   directory or where Debian's `dataset-fashion-mnist` installs it.
//!
//! Models and runners never read files themselves.

pub mod error;
pub mod idx;
pub mod images;
pub mod mnist;
pub mod synthetic;

pub use error::DatasetError;
pub use images::{ImageItem, ImageSet, Splits};
pub use synthetic::{SyntheticBatch, SyntheticImages};
