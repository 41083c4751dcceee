//! Results tables, statistics, figures and `report.md` for batchlab runs.
//!
//! Runners in `batchlab-experiments` write raw results as the rows of `batchlab-method` and
//! call this crate's renderers once a run is finished; nothing here knows about burn
//! (docs/ARCHITECTURE.md, "Layers": reporting is separate from training).
//!
//! - [`jumps`]: discontinuities ("jumps") in a step-time-versus-batch-size curve.
//! - [`figures`]: x/y charts with error bars and vertical markers, to SVG and PNG.
//! - [`about`]: what every report says about its run (experiment, backend, device,
//!   protocol): the header, the "What was run" table and figure titles, worded once.
//! - [`markdown`]: markdown tables.
//! - [`verdict`]: a verdict on a published claim, and the table every report's claims end with.
//! - [`predict`]: training time predicted from step-time sweeps, of the same model or across
//!   models.
//!
//! One module per kind of study, each the same shape: `rows` (the run's CSV files read into
//! rows) -> `analysis` (pure computation) -> `figures` -> `markdown` (`report.md`), called
//! in that order by the kind's render function at its top.
//!
//! - [`find_batch`]: a batch-size finder: memory per batch size and its model, the largest
//!   batch size under a budget, utilization, the recommendation and the verdicts.
//! - [`step_time`]: a step-time sweep: `summary.csv`, figures and report.
//! - [`train`]: a training study: `summary.csv`, figures and report.
//! - [`steps_to_target`]: a steps-to-target study: steps to result per batch size, the S(B)
//!   fit and its regimes, the gradient noise scale beside B_crit, and the report.

#![warn(missing_docs)]

pub mod about;
pub mod error;
pub mod figures;
pub mod find_batch;
mod io;
pub mod jumps;
pub mod markdown;
pub mod numbers;
pub mod predict;
pub mod step_time;
pub mod steps_to_target;
pub mod train;
pub mod verdict;

pub use about::About;
pub use error::ReportError;
pub use verdict::Rendered;
