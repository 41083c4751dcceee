//! A training run's raw rows: `results.csv` (one row per validation evaluation of a trial)
//! and `trials.csv` (one row per finished trial, failed ones too), read with
//! [`batchlab_method::rows`] from either form a table is stored in.

use std::path::Path;

use batchlab_method::rows::train::{TrainEval, TrialRecord};
use batchlab_method::rows::{read_rows, stored, Row};

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
    if !stored::exists(&results) && !stored::exists(&trials) {
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
    if stored::exists(path) {
        Ok(Some(read_rows(path)?))
    } else {
        Ok(None)
    }
}

#[cfg(test)]
#[path = "rows_tests.rs"]
pub(crate) mod tests;
