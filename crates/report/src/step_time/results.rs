//! `results.csv` of a step-time sweep: one row per timed sample, appended as it is measured.
//!
//! Appends are crash safe and the reader ignores a trailing partial record: see
//! `crate::csv`.

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use polars::prelude::*;

use crate::csv::{append_lines, complete_prefix_len, quote};
use crate::ReportError;

/// The header of `results.csv`, exactly.
pub const RESULTS_HEADER: &str =
    "batch_size,round,sample,step_ms,status,backend,device,peak_mem_mb,message";

/// One row of `results.csv`: a timed step, or one failed visit of a batch size.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSample {
    /// Examples per step.
    pub batch_size: u32,
    /// The round (pass over the shuffled batch sizes) this sample belongs to, from 0.
    pub round: u32,
    /// Index of the sample within its visit, from 0; `None` on a failure row.
    pub sample: Option<u32>,
    /// Wall time of the step in milliseconds; `None` on a failure row. A non-finite value
    /// is written as empty, and so reads back as `None`.
    pub step_ms: Option<f64>,
    /// `ok`, `oom` or `error`.
    pub status: String,
    /// The burn backend, e.g. `flex` or `cuda`.
    pub backend: String,
    /// The device name.
    pub device: String,
    /// Peak memory of the visit in MB, if measured.
    pub peak_mem_mb: Option<f64>,
    /// Empty when ok; the error text of a failure (may contain commas, quotes, newlines).
    pub message: String,
}

/// Appends `rows` to `path` as whole CSV lines, creating the file with [`RESULTS_HEADER`]
/// if it is missing or empty, then flushes and syncs it. A partial trailing record left by
/// an interrupted write is cut off first (see the module docs). Fails if the file exists
/// with a different header. One writer per file at a time: a second process appending
/// concurrently could see the first one's write in progress as a partial line (shards of a
/// job array should each write their own file, merged when reporting).
pub fn append_step_samples(path: &Path, rows: &[StepSample]) -> Result<(), ReportError> {
    let mut out = String::new();
    for row in rows {
        push_row(&mut out, row);
    }
    append_lines(path, RESULTS_HEADER, &out)
}

/// Reads every complete row of `path` with polars' CSV reader and a fixed schema (empty
/// fields are nulls). A trailing partial record is ignored.
pub fn read_step_samples(path: &Path) -> Result<Vec<StepSample>, ReportError> {
    let df = read_results_frame(path)?;
    frame_to_samples(path, &df)
}

/// `results.csv` as a polars frame with the fixed schema, the trailing partial record
/// dropped.
pub(crate) fn read_results_frame(path: &Path) -> Result<DataFrame, ReportError> {
    let bytes = std::fs::read(path).map_err(ReportError::io("read", path))?;
    let complete = complete_prefix_len(&bytes);
    if complete == 0 {
        return Err(ReportError::Format {
            path: path.to_path_buf(),
            message: format!("no complete header line; expected `{RESULTS_HEADER}`"),
        });
    }
    crate::csv::check_header(path, &bytes, RESULTS_HEADER)?;
    let mut bytes = bytes;
    bytes.truncate(complete);
    CsvReadOptions::default()
        .with_has_header(true)
        .with_schema(Some(Arc::new(results_schema())))
        .with_raise_if_empty(false)
        .into_reader_with_file_handle(Cursor::new(bytes))
        .finish()
        .map_err(ReportError::table("read the CSV table", path))
}

fn results_schema() -> Schema {
    use DataType::{Float64, String as Str, UInt32};
    let columns = [
        ("batch_size", UInt32),
        ("round", UInt32),
        ("sample", UInt32),
        ("step_ms", Float64),
        ("status", Str),
        ("backend", Str),
        ("device", Str),
        ("peak_mem_mb", Float64),
        ("message", Str),
    ];
    Schema::from_iter(
        columns
            .into_iter()
            .map(|(name, dtype)| Field::new(name.into(), dtype)),
    )
}

pub(crate) fn frame_to_samples(
    path: &Path,
    df: &DataFrame,
) -> Result<Vec<StepSample>, ReportError> {
    let column = |name: &str| {
        df.column(name)
            .map_err(ReportError::table("find a column of", path))
    };
    let u32s = |name: &str| -> Result<Vec<Option<u32>>, ReportError> {
        Ok(column(name)?
            .u32()
            .map_err(ReportError::table("read a column of", path))?
            .into_iter()
            .collect())
    };
    let f64s = |name: &str| -> Result<Vec<Option<f64>>, ReportError> {
        Ok(column(name)?
            .f64()
            .map_err(ReportError::table("read a column of", path))?
            .into_iter()
            .collect())
    };
    let strs = |name: &str| -> Result<Vec<String>, ReportError> {
        let ca = column(name)?
            .str()
            .map_err(ReportError::table("read a column of", path))?;
        Ok(ca
            .into_iter()
            .map(|s| s.unwrap_or("").to_string())
            .collect())
    };
    let (batch_size, round, sample) = (u32s("batch_size")?, u32s("round")?, u32s("sample")?);
    let (step_ms, peak_mem_mb) = (f64s("step_ms")?, f64s("peak_mem_mb")?);
    let (status, backend, device, message) = (
        strs("status")?,
        strs("backend")?,
        strs("device")?,
        strs("message")?,
    );
    let mut rows = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let (Some(b), Some(r)) = (batch_size[i], round[i]) else {
            return Err(ReportError::Format {
                path: path.to_path_buf(),
                message: format!("data row {} has no batch_size or round", i + 1),
            });
        };
        rows.push(StepSample {
            batch_size: b,
            round: r,
            sample: sample[i],
            step_ms: step_ms[i],
            status: status[i].clone(),
            backend: backend[i].clone(),
            device: device[i].clone(),
            peak_mem_mb: peak_mem_mb[i],
            message: message[i].clone(),
        });
    }
    Ok(rows)
}

fn push_row(out: &mut String, row: &StepSample) {
    let opt_u32 = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    // `{}` prints the shortest string that parses back to the same f64.
    let opt_f64 = |v: Option<f64>| {
        v.filter(|v| v.is_finite())
            .map(|v| v.to_string())
            .unwrap_or_default()
    };
    let fields = [
        row.batch_size.to_string(),
        row.round.to_string(),
        opt_u32(row.sample),
        opt_f64(row.step_ms),
        quote(&row.status),
        quote(&row.backend),
        quote(&row.device),
        opt_f64(row.peak_mem_mb),
        quote(&row.message),
    ];
    out.push_str(&fields.join(","));
    out.push('\n');
}

#[cfg(test)]
#[path = "results_tests.rs"]
pub(crate) mod tests;
