//! The step-time sweep: time of one training step per batch size (EXPERIMENTS.md section
//! 1). Runners append raw samples with [`append_step_samples`] as they are measured; once a
//! run ends (or from `batchlab report <dir>`), [`render_step_time`] turns the directory's
//! `results.csv` into `summary.csv`, figures and `report.md`.

mod analysis;
mod figures;
mod report;
mod results;
mod summary;

pub use analysis::{render_step_time, StepTimeContext, StepTimeFindings};
pub use results::{append_step_samples, read_step_samples, StepSample, RESULTS_HEADER};
pub use summary::{summarize, write_summary, StepPoint, CI_LEVEL};

/// The files [`render_step_time`] writes into a report directory, besides reading
/// `results.csv`.
pub const OUTPUT_FILES: [&str; 7] = [
    "results.parquet",
    "summary.csv",
    "step_time.svg",
    "step_time.png",
    "throughput.svg",
    "throughput.png",
    "report.md",
];
