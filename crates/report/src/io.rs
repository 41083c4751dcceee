//! Writing a report's summary tables, atomically like every report file
//! ([`batchlab_method::files`]).

use std::path::Path;

use batchlab_method::files::write_atomic;

use polars_core::prelude::{DataFrame, PolarsResult};
use polars_io::prelude::{CsvWriter, SerWriter};

use crate::ReportError;

/// Writes the table `frame` (as built, or the error building it) as CSV with polars: columns
/// named as built, a null as an empty field; atomically. Every kind's `summary.csv`.
pub(crate) fn write_csv(path: &Path, frame: PolarsResult<DataFrame>) -> Result<(), ReportError> {
    let mut df = frame.map_err(ReportError::table("build the summary table for", path))?;
    let mut buffer = Vec::new();
    CsvWriter::new(&mut buffer)
        .finish(&mut df)
        .map_err(ReportError::table("write the CSV table", path))?;
    Ok(write_atomic(path, &buffer)?)
}
