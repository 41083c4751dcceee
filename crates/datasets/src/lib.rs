//! Data for batchlab studies.
//!
//! - [`images`]: the in-memory form of every dataset (u8, channel-major) and its splits.
//! - [`synthetic`]: seeded random image batches of any shape, made on the host and moved to the
//!   device once, for step-time sweeps where only the shape of the data matters.
//! - [`idx`]: the IDX file format (gzipped or raw).
//! - [`mnist`]: MNIST and Fashion-MNIST with a train/validation/test split, found in the data
//!   directory or where Debian's `dataset-fashion-mnist` installs it.
//! - [`transform`]: resize (nearest, bilinear, bicubic), crop, centre crop and flip of one
//!   channel-major image.
//! - [`cifar10`]: CIFAR-10's binary batches, the last training examples held out for validation.
//! - [`pets`]: cats vs dogs (PetImages): the first readable JPEGs per class in numeric file
//!   order, resized, split, optionally augmented as seed 003; unreadable files listed, not fatal.
//! - [`cache`]: decoded datasets kept as raw bytes under `<data dir>/cache/`, keyed by their
//!   source and preprocessing, written atomically, rebuilt when damaged.
//! - [`sources`]: where CIFAR-10, Fashion-MNIST, MNIST and cats-vs-dogs are published, with
//!   each file's size and checksum and where those come from.
//! - [`checksum`]: streamed MD5/SHA-256 of a file, or of a `.gz` file's decompressed bytes.
//! - [`download`]: resumable download into `<file>.part`, verified before it takes its final
//!   name; every error says where to place a copy obtained some other way.
//! - [`extract`]: `.tar.gz` and `.zip` extraction into `<dest>.partial-<pid>`, renamed to `<dest>`
//!   only when complete; entries that would leave the destination are refused.
//! - [`loader`]: float batches prepared off the training thread (prefetching, parallel, seeded
//!   shuffles and random crops/flips that do not depend on the number of threads).
//! - [`spec`]: a study's `[data]` table: the dataset's name, split and preprocessing.
//! - [`catalog`]: `batchlab data fetch` and `data info`.
//! - [`fixtures`]: photo-like JPEG trees in the real layout, for tests and loader benchmarks.
//!
//! Models and runners never read files themselves.

pub mod acquire;
pub mod cache;
pub mod catalog;
pub mod checksum;
pub mod cifar10;
pub mod download;
pub mod error;
pub mod extract;
pub mod fixtures;
pub mod idx;
pub mod images;
pub mod loader;
pub mod mnist;
pub mod pets;
pub mod sources;
pub mod spec;
pub mod synthetic;
pub mod transform;

#[cfg(test)]
mod test_server;

pub use error::DatasetError;
pub use images::{ImageItem, ImageSet, Splits};
pub use loader::{Batch, Loader, Order, Pipeline};
pub use spec::{DataConfig, DatasetName};
pub use synthetic::{SyntheticBatch, SyntheticImages};
