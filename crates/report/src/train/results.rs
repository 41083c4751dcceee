//! The two raw files of a training study, appended while it runs: `results.csv` (one row per
//! validation evaluation of a trial) and `trials.csv` (one row per finished trial, failed
//! ones too).
//!
//! Appends are crash safe and readers ignore a trailing partial record (see `crate::csv`).
//! Numbers are written with Rust's shortest round-tripping form; NaN and infinities as `NaN`,
//! `inf` and `-inf`, so a diverged trial's loss reads back as written. Reading is strict: a
//! field that is not what its column holds is an error naming the file, line and column.

use std::collections::BTreeSet;
use std::path::Path;

use polars::prelude::{Column, DataFrame, PolarsResult};

use crate::csv::{append_lines, quote, read_records, Fields};
use crate::ReportError;

/// The header of `results.csv`, exactly.
pub const RESULTS_HEADER: &str = "trial,seed,batch_size,optimizer,variant,budget,epoch,step,examples,train_loss,val_loss,val_accuracy,train_seconds,data_seconds,eval_seconds";

/// The header of `trials.csv`, exactly.
pub const TRIALS_HEADER: &str = "trial,seed,batch_size,optimizer,variant,budget,status,epochs,steps,examples,train_seconds,data_seconds,eval_seconds,test_seconds,test_loss,test_accuracy,message";

/// One row of `results.csv`: a trial evaluated on the validation split during training.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainEval {
    /// The trial's id, e.g. `b32-adam-standard-epochs-s0`; unique within a run.
    pub trial: String,
    /// The trial's seed.
    pub seed: u64,
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// The optimizer's label, e.g. `adam` or `sgd-momentum`.
    pub optimizer: String,
    /// The data variant, e.g. `standard` or `augmented`.
    pub variant: String,
    /// `epochs` (the seed's epoch-matched setup) or `steps` (every batch size gets the same
    /// number of optimizer steps).
    pub budget: String,
    /// Epochs completed; fractional between epoch ends.
    pub epoch: f64,
    /// Optimizer steps so far.
    pub step: u64,
    /// Training examples seen so far.
    pub examples: u64,
    /// Mean training loss over the steps since the previous evaluation (NaN or infinite once
    /// a trial diverges).
    pub train_loss: f64,
    /// Validation loss.
    pub val_loss: f64,
    /// Validation accuracy in [0, 1].
    pub val_accuracy: f64,
    /// Cumulative training time in seconds, evaluations excluded.
    pub train_seconds: f64,
    /// Cumulative seconds the training loop waited for data (part of `train_seconds`).
    pub data_seconds: f64,
    /// Duration of this evaluation in seconds.
    pub eval_seconds: f64,
}

/// One row of `trials.csv`: a finished trial, or one that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialRecord {
    /// The trial's id, as in `results.csv`.
    pub trial: String,
    /// The trial's seed.
    pub seed: u64,
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// The optimizer's label.
    pub optimizer: String,
    /// The data variant.
    pub variant: String,
    /// `epochs` or `steps` (see [`TrainEval::budget`]).
    pub budget: String,
    /// `ok`, `diverged`, `oom` or `error`.
    pub status: String,
    /// Epochs trained (fractional under the steps budget).
    pub epochs: f64,
    /// Optimizer steps taken.
    pub steps: u64,
    /// Training examples seen.
    pub examples: u64,
    /// Training seconds, evaluations excluded.
    pub train_seconds: f64,
    /// Seconds the training loop waited for data.
    pub data_seconds: f64,
    /// Seconds of all validation evaluations together.
    pub eval_seconds: f64,
    /// Inference seconds over the whole test split.
    pub test_seconds: f64,
    /// Test loss (NaN when not ok).
    pub test_loss: f64,
    /// Test accuracy in [0, 1] (NaN when not ok).
    pub test_accuracy: f64,
    /// Empty when ok; otherwise what went wrong (may hold commas, quotes, line breaks).
    pub message: String,
}

impl TrialRecord {
    /// Whether the trial trained to the end and was tested.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// Appends `rows` to `path` (normally `<run>/results.csv`) as whole lines, creating the file
/// with [`RESULTS_HEADER`] if it is missing or empty, then syncs it. Fails if the file has
/// another header. One writer per file at a time.
pub fn append_evals(path: &Path, rows: &[TrainEval]) -> Result<(), ReportError> {
    let mut out = String::new();
    for r in rows {
        let fields = [
            quote(&r.trial),
            r.seed.to_string(),
            r.batch_size.to_string(),
            quote(&r.optimizer),
            quote(&r.variant),
            quote(&r.budget),
            r.epoch.to_string(),
            r.step.to_string(),
            r.examples.to_string(),
            r.train_loss.to_string(),
            r.val_loss.to_string(),
            r.val_accuracy.to_string(),
            r.train_seconds.to_string(),
            r.data_seconds.to_string(),
            r.eval_seconds.to_string(),
        ];
        push_line(&mut out, &fields);
    }
    append_lines(path, RESULTS_HEADER, &out)
}

/// Appends `rows` to `path` (normally `<run>/trials.csv`) like [`append_evals`], with
/// [`TRIALS_HEADER`].
pub fn append_trials(path: &Path, rows: &[TrialRecord]) -> Result<(), ReportError> {
    let mut out = String::new();
    for r in rows {
        let fields = [
            quote(&r.trial),
            r.seed.to_string(),
            r.batch_size.to_string(),
            quote(&r.optimizer),
            quote(&r.variant),
            quote(&r.budget),
            quote(&r.status),
            r.epochs.to_string(),
            r.steps.to_string(),
            r.examples.to_string(),
            r.train_seconds.to_string(),
            r.data_seconds.to_string(),
            r.eval_seconds.to_string(),
            r.test_seconds.to_string(),
            r.test_loss.to_string(),
            r.test_accuracy.to_string(),
            quote(&r.message),
        ];
        push_line(&mut out, &fields);
    }
    append_lines(path, TRIALS_HEADER, &out)
}

// `{}` of an f64 prints the shortest text that parses back to the same value.
fn push_line(out: &mut String, fields: &[String]) {
    out.push_str(&fields.join(","));
    out.push('\n');
}

/// Every complete row of a `results.csv`, in file order.
pub fn read_evals(path: &Path) -> Result<Vec<TrainEval>, ReportError> {
    read_records(path, RESULTS_HEADER)?
        .iter()
        .map(|record| {
            let f = Fields::new(path, record, RESULTS_HEADER);
            Ok(TrainEval {
                trial: f.string(0),
                seed: f.u64(1)?,
                batch_size: f.u32(2)?,
                optimizer: f.string(3),
                variant: f.string(4),
                budget: f.string(5),
                epoch: f.f64(6)?,
                step: f.u64(7)?,
                examples: f.u64(8)?,
                train_loss: f.f64(9)?,
                val_loss: f.f64(10)?,
                val_accuracy: f.f64(11)?,
                train_seconds: f.f64(12)?,
                data_seconds: f.f64(13)?,
                eval_seconds: f.f64(14)?,
            })
        })
        .collect()
}

/// Every complete row of a `trials.csv`, in file order.
pub fn read_trials(path: &Path) -> Result<Vec<TrialRecord>, ReportError> {
    read_records(path, TRIALS_HEADER)?
        .iter()
        .map(|record| {
            let f = Fields::new(path, record, TRIALS_HEADER);
            Ok(TrialRecord {
                trial: f.string(0),
                seed: f.u64(1)?,
                batch_size: f.u32(2)?,
                optimizer: f.string(3),
                variant: f.string(4),
                budget: f.string(5),
                status: f.string(6),
                epochs: f.f64(7)?,
                steps: f.u64(8)?,
                examples: f.u64(9)?,
                train_seconds: f.f64(10)?,
                data_seconds: f.f64(11)?,
                eval_seconds: f.f64(12)?,
                test_seconds: f.f64(13)?,
                test_loss: f.f64(14)?,
                test_accuracy: f.f64(15)?,
                message: f.string(16),
            })
        })
        .collect()
}

/// The ids of the trials with a row in `dir/trials.csv`, failed ones included: a resumed
/// run skips them (a failure is a result, recorded once; delete its row to retry it). An
/// absent file means no trial has finished yet.
pub fn done_trials(dir: &Path) -> Result<BTreeSet<String>, ReportError> {
    let path = dir.join("trials.csv");
    if !path.exists() {
        return Ok(BTreeSet::new());
    }
    Ok(read_trials(&path)?.into_iter().map(|r| r.trial).collect())
}

/// The rows of `results.csv` as a typed polars frame, for `results.parquet`.
pub(crate) fn evals_frame(rows: &[TrainEval]) -> PolarsResult<DataFrame> {
    let strs = |f: fn(&TrainEval) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
    let u64s = |f: fn(&TrainEval) -> u64| rows.iter().map(f).collect::<Vec<u64>>();
    let f64s = |f: fn(&TrainEval) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
    let columns = vec![
        Column::new("trial".into(), strs(|r| &r.trial)),
        Column::new("seed".into(), u64s(|r| r.seed)),
        Column::new(
            "batch_size".into(),
            rows.iter().map(|r| r.batch_size).collect::<Vec<u32>>(),
        ),
        Column::new("optimizer".into(), strs(|r| &r.optimizer)),
        Column::new("variant".into(), strs(|r| &r.variant)),
        Column::new("budget".into(), strs(|r| &r.budget)),
        Column::new("epoch".into(), f64s(|r| r.epoch)),
        Column::new("step".into(), u64s(|r| r.step)),
        Column::new("examples".into(), u64s(|r| r.examples)),
        Column::new("train_loss".into(), f64s(|r| r.train_loss)),
        Column::new("val_loss".into(), f64s(|r| r.val_loss)),
        Column::new("val_accuracy".into(), f64s(|r| r.val_accuracy)),
        Column::new("train_seconds".into(), f64s(|r| r.train_seconds)),
        Column::new("data_seconds".into(), f64s(|r| r.data_seconds)),
        Column::new("eval_seconds".into(), f64s(|r| r.eval_seconds)),
    ];
    DataFrame::new(rows.len(), columns)
}

#[cfg(test)]
#[path = "results_tests.rs"]
pub(crate) mod tests;
