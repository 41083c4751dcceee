//! A step-time sweep's raw rows: `results.csv` (or its Parquet form), one [`StepSample`] per
//! timed step (or failed visit), read with [`batchlab_method::rows`].

use std::path::Path;

use batchlab_method::rows::read_rows;
use batchlab_method::rows::step_time::StepSample;

use crate::ReportError;

/// Reads `dir/results.csv`.
pub(super) fn read(dir: &Path) -> Result<Vec<StepSample>, ReportError> {
    Ok(read_rows(&dir.join("results.csv"))?)
}

#[cfg(test)]
#[path = "rows_tests.rs"]
pub(crate) mod tests;
