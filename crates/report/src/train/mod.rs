//! The training study (runner kind `train`; EXPERIMENTS.md sections 2-5): a grid of training
//! runs, batch size x optimizer x data variant x budget x seed, each evaluated on the
//! validation split as it trains and on the test split at the end.
//!
//! While a run goes, the runner appends each evaluation with [`append_evals`] to
//! `results.csv` and each finished (or failed) trial with [`append_trials`] to `trials.csv`;
//! [`done_trials`] tells a resumed run which trials to skip. Once the run ends (or from
//! `batchlab report <dir>`), [`render_train`] reads both files and writes the rest of the
//! directory: [`OUTPUT_FILES`].
//!
//! Budgets: `epochs` is the source's epoch-matched setup (a larger batch takes fewer steps);
//! `steps` the control in which every batch size takes the same number of optimizer steps.
//! Figures with one panel per budget put the panels side by side in one image (one file per
//! figure, whatever the number of budgets).

mod analysis;
mod figures;
mod reading;
mod report;
mod results;
mod summary;
mod timing;

pub use analysis::{render_train, Published, TrainContext, TrainFindings};
pub use results::{
    append_evals, append_trials, done_trials, read_evals, read_trials, TrainEval, TrialRecord,
    RESULTS_HEADER, TRIALS_HEADER,
};
pub use summary::{summarize, write_summary, TrainCell};

/// The files [`render_train`] writes into a run directory, besides reading `results.csv`
/// and `trials.csv`.
pub const OUTPUT_FILES: [&str; 9] = [
    "results.parquet",
    "summary.csv",
    "accuracy_vs_batch.svg",
    "accuracy_vs_batch.png",
    "learning_curves.svg",
    "learning_curves.png",
    "train_time.svg",
    "train_time.png",
    "report.md",
];

#[cfg(test)]
mod tests;
