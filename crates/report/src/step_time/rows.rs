//! A step-time sweep's raw rows: `results.csv`, one [`StepSample`] per timed step (or failed
//! visit), read with [`batchlab_method::rows`], and the same rows as a polars frame for
//! `results.parquet`.

use std::path::Path;

use batchlab_method::rows::read_rows;
use batchlab_method::rows::step_time::StepSample;
use polars::prelude::{Column, DataFrame, PolarsResult};

use crate::ReportError;

/// Reads `dir/results.csv`.
pub(super) fn read(dir: &Path) -> Result<Vec<StepSample>, ReportError> {
    Ok(read_rows(&dir.join("results.csv"))?)
}

/// The rows as a typed polars frame, as polars' CSV reader reads `results.csv`: an empty
/// field is a null, text included.
pub(super) fn samples_frame(rows: &[StepSample]) -> PolarsResult<DataFrame> {
    let u32s = |f: fn(&StepSample) -> Option<u32>| rows.iter().map(f).collect::<Vec<_>>();
    let f64s = |f: fn(&StepSample) -> Option<f64>| rows.iter().map(f).collect::<Vec<_>>();
    let strs = |f: fn(&StepSample) -> &str| {
        rows.iter()
            .map(|r| Some(f(r)).filter(|s| !s.is_empty()))
            .collect::<Vec<_>>()
    };
    let columns = vec![
        Column::new("batch_size".into(), u32s(|r| Some(r.batch_size))),
        Column::new("round".into(), u32s(|r| Some(r.round))),
        Column::new("sample".into(), u32s(|r| r.sample)),
        Column::new("step_ms".into(), f64s(|r| r.step_ms)),
        Column::new("status".into(), strs(|r| r.status.as_str())),
        Column::new("backend".into(), strs(|r| &r.backend)),
        Column::new("device".into(), strs(|r| &r.device)),
        Column::new("peak_mem_mb".into(), f64s(|r| r.peak_mem_mb)),
        Column::new("message".into(), strs(|r| &r.message)),
    ];
    DataFrame::new(rows.len(), columns)
}

#[cfg(test)]
#[path = "rows_tests.rs"]
pub(crate) mod tests;
