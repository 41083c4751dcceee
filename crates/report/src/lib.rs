//! Results tables, statistics, figures and `report.md` for batchlab runs.
//!
//! Runners in `batchlab-experiments` write raw results through this crate's writers and
//! call its renderers once a run is finished; nothing here knows about burn (DESIGN.md:
//! "reporting is separate from training").
//!
//! - [`stats`]: means, sample standard deviations, medians, type-7 quantiles, bootstrap intervals, least-squares lines.
//! - [`jumps`]: discontinuities ("jumps") in a step-time-versus-batch-size curve.
//! - [`figures`]: x/y charts with error bars and vertical markers, to SVG and PNG.
//! - [`markdown`]: markdown tables for `report.md`.
//! - [`step_time`]: the step-time sweep's `results.csv`, `summary.csv`, figures and report.
//! - [`train`]: a training study's `results.csv`, `trials.csv`, `summary.csv`, figures and
//!   report.
//! - [`steps_to_target`]: a steps-to-target study: quasi-random metaparameters and `search.csv`,
//!   steps to result per batch size, the S(B) fit and its regimes, the gradient noise
//!   scale, and the report (`summary.csv`, figures, `report.md`).

#![warn(missing_docs)]

mod csv;
pub mod error;
pub mod figures;
mod io;
pub mod jumps;
pub mod markdown;
pub mod stats;
pub mod step_time;
pub mod steps_to_target;
pub mod train;

pub use error::ReportError;
