//! Writing the Parquet copy of a run's raw results, atomically like every report file
//! ([`batchlab_method::files`]).

use std::path::Path;

use batchlab_method::files::write_atomic;

use polars::prelude::{DataFrame, ParquetCompression, ParquetWriter};

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
