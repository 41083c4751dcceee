//! The study logic that batchlab's runners and its reports share, below both and free of
//! burn, polars and plotters, so that neither reaches into the other (docs/ARCHITECTURE.md,
//! "Layers").
//!
//! - [`stats`]: means, sample standard deviations, medians, type-7 quantiles, bootstrap
//!   intervals, least-squares lines.
//! - [`reaching`]: whether a validation error reaches the target error.
//! - [`batch_search`]: the doubling-then-bisection search for the largest batch size that
//!   fits a memory budget.
//! - [`budget`]: a steps-to-target trial's step budget and evaluation steps.
//! - [`quasi`]: the seeded scrambled Halton sequence that proposes metaparameters, and the
//!   log-uniform and "reverse log" scales they are drawn on.
//! - [`refine`]: independent points per (workload, batch size) and the refining second
//!   stage of a steps-to-target search.
//! - [`noise`]: the simple gradient noise scale B_simple = tr(Sigma) / |G|^2, estimated
//!   during training from gradients of two batch sizes.
//! - [`rows`]: the row type of every CSV file a run writes, and crash-safe appends and a
//!   strict reader for them.
//! - [`findings`]: a judged claim as data (the outcome, the quantities, the test) and
//!   `findings.json`.
//! - [`machine`]: where a run ran, one type for sweeps, findings and predict, with its fast
//!   paths and tuning compared by identity.
//! - [`tests_of_claims`]: the statistical tests the claim rules use (two one-sided tests for
//!   equivalence, a one-sided test at a named position, a permutation rank).
//! - [`files`]: the atomic file writer (temporary sibling, sync, rename).
//! - [`error`]: bad arguments ([`TargetError`]) and unreadable files ([`FileError`]).

#![warn(missing_docs)]

pub mod batch_search;
pub mod budget;
pub mod error;
pub mod files;
pub mod findings;
pub mod machine;
pub mod noise;
pub mod quasi;
pub mod reaching;
pub mod refine;
pub mod rows;
pub mod stats;
pub mod tests_of_claims;

pub use error::{FileError, TargetError};
