//! `batchlab bench --only epoch`: where an epoch's wall time goes in a training study: waiting
//! for data, training steps, validation evaluation.

use std::path::Path;

use batchlab_method::rows::{read_rows, train::TrialRecord};
use batchlab_method::stats::median;

use crate::{
    config::Source,
    context::RunContext,
    error::RunError,
    progress::Silent,
    registry::load_study,
    session::{run_study, RunOptions},
};

/// One trial's epoch, split.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochSplit {
    /// The trial.
    pub trial: String,
    /// Seconds per epoch spent waiting for and moving batches.
    pub data: f64,
    /// Seconds per epoch in training steps (forward, backward, update), data excluded.
    pub step: f64,
    /// Seconds per epoch evaluating on the validation split.
    pub eval: f64,
}

impl EpochSplit {
    /// Data time as a percentage of the epoch's wall time.
    pub fn data_percent(&self) -> f64 {
        100.0 * self.data / (self.data + self.step + self.eval)
    }
}

/// Runs `experiment` (a TOML file) with `overrides` in this process into `scratch`, and splits
/// each finished trial's epochs.
pub fn epoch_splits(
    experiment: &Path,
    overrides: &[String],
    scratch: &Path,
    data_dir: &Path,
) -> Result<Vec<EpochSplit>, RunError> {
    let source = Source::from_file(experiment)?.with_overrides(overrides);
    let study = load_study(&source)?;
    let options = RunOptions {
        resume: false,
        out: Some(scratch.to_path_buf()),
        context: RunContext::in_process(data_dir),
        shard: None,
    };
    let finished = run_study(study.as_ref(), &options, &Silent)?;
    Ok(read_rows::<TrialRecord>(&finished.dir.join("trials.csv"))?
        .into_iter()
        .filter(|t| t.is_ok() && t.epochs > 0.0)
        .map(|t| EpochSplit {
            data: t.data_seconds / t.epochs,
            step: (t.train_seconds - t.data_seconds) / t.epochs,
            eval: t.eval_seconds / t.epochs,
            trial: t.trial,
        })
        .collect())
}

/// Median and largest data share (% of the epoch) over `splits`.
pub fn data_percent_summary(splits: &[EpochSplit]) -> (f64, f64) {
    let percents: Vec<f64> = splits.iter().map(EpochSplit::data_percent).collect();
    let worst = percents.iter().copied().fold(f64::NAN, f64::max);
    (median(&percents), worst)
}
