//! A steps-to-target run's raw rows, read with [`batchlab_method::rows`]: the training
//! runner's `results.csv` and `trials.csv`, and this study's `search.csv` and `noise.csv`.

use std::path::Path;

use batchlab_method::rows::steps_to_target::{NoiseRow, SearchRow};
use batchlab_method::rows::train::{TrainEval, TrialRecord};

use crate::train::rows::read_if_present;
use crate::ReportError;

/// The rows of one run directory.
pub(super) struct Rows {
    /// `results.csv`; empty when absent.
    pub evals: Vec<TrainEval>,
    /// `trials.csv`; empty when absent.
    pub records: Vec<TrialRecord>,
    /// `search.csv`; `None` when absent.
    pub search: Option<Vec<SearchRow>>,
    /// `noise.csv`; `None` when absent.
    pub noise: Option<Vec<NoiseRow>>,
}

/// Reads the run directory's files; any may be absent, but not both `results.csv` and
/// `trials.csv`.
pub(super) fn read(dir: &Path) -> Result<Rows, ReportError> {
    let (evals, records) = crate::train::rows::read(dir, "steps-to-target")?;
    Ok(Rows {
        evals,
        records,
        search: read_if_present(&dir.join("search.csv"))?,
        noise: read_if_present(&dir.join("noise.csv"))?,
    })
}
