//! Writing the Parquet copy of a run's raw results, atomically like every report file
//! ([`batchlab_method::files`]).

use std::path::Path;

use batchlab_method::files::write_atomic;

use polars::prelude::{
    CsvWriter, DataFrame, ParquetCompression, ParquetWriter, PolarsResult, SerWriter,
};

use crate::ReportError;

/// Writes `df` as an uncompressed Parquet file (column types kept, faster to load into a
/// dataframe than the CSV), atomically. Uncompressed because polars' codecs are not compiled
/// in (default features off).
pub(crate) fn write_parquet(path: &Path, df: &mut DataFrame) -> Result<(), ReportError> {
    let mut buffer = Vec::new();
    ParquetWriter::new(&mut buffer)
        .with_compression(ParquetCompression::Uncompressed)
        .finish(df)
        .map_err(ReportError::table("write the Parquet table", path))?;
    Ok(write_atomic(path, &buffer)?)
}

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
