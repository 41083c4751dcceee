//! A training run's raw rows: `results.csv` (one row per validation evaluation of a trial)
//! and `trials.csv` (one row per finished trial, failed ones too), read with
//! [`batchlab_method::rows`], and the evaluations as a polars frame for `results.parquet`.

use std::path::Path;

use batchlab_method::rows::train::{TrainEval, TrialRecord};
use batchlab_method::rows::{read_rows, Row};
use polars::prelude::{Column, DataFrame, PolarsResult};

use crate::ReportError;

/// Reads `dir/results.csv` and `dir/trials.csv`, which every study on the training runner's
/// trial loop writes; either may be absent (no rows), not both: then the error says that no
/// `study` trial (e.g. `training`) is recorded there.
pub(crate) fn read(
    dir: &Path,
    study: &str,
) -> Result<(Vec<TrainEval>, Vec<TrialRecord>), ReportError> {
    let results = dir.join("results.csv");
    let trials = dir.join("trials.csv");
    if !results.exists() && !trials.exists() {
        return Err(ReportError::Format {
            path: dir.to_path_buf(),
            message: format!("neither results.csv nor trials.csv: no {study} trial recorded here"),
        });
    }
    let evals = read_if_present(&results)?.unwrap_or_default();
    let records = read_if_present(&trials)?.unwrap_or_default();
    Ok((evals, records))
}

/// The rows of `path`, or `None` when it does not exist.
pub(crate) fn read_if_present<T: Row>(path: &Path) -> Result<Option<Vec<T>>, ReportError> {
    if path.exists() {
        Ok(Some(read_rows(path)?))
    } else {
        Ok(None)
    }
}

/// The rows of `results.csv` as a typed polars frame, for `results.parquet`.
pub(super) fn evals_frame(rows: &[TrainEval]) -> PolarsResult<DataFrame> {
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
#[path = "rows_tests.rs"]
pub(crate) mod tests;
