//! Writing report files so that a reader never sees half of one (DESIGN.md, reliability
//! rules: "write then rename").

use std::io::Write;
use std::path::{Path, PathBuf};

use polars::prelude::{DataFrame, ParquetCompression, ParquetWriter};

use crate::ReportError;

/// Writes `bytes` to a temporary sibling of `path`, syncs it and renames it over `path`.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let tmp = temporary_sibling(path);
    let mut file = std::fs::File::create(&tmp).map_err(ReportError::io("create", &tmp))?;
    file.write_all(bytes)
        .map_err(ReportError::io("write", &tmp))?;
    file.sync_all().map_err(ReportError::io("sync", &tmp))?;
    rename(&tmp, path)
}

/// `dir/name.ext` -> `dir/.name.tmp<pid>.ext`: hidden, keeping the extension, which plotters'
/// bitmap backend reads to choose the image format, and unique to the process, so shards that
/// render one report directory at once never write the same temporary file.
pub(crate) fn temporary_sibling(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!(
            ".{stem}.tmp{}.{}",
            std::process::id(),
            ext.to_string_lossy()
        ),
        None => format!(".{stem}.tmp{}", std::process::id()),
    };
    path.with_file_name(name)
}

/// Renames `from` over `to`, naming both on failure.
pub(crate) fn rename(from: &Path, to: &Path) -> Result<(), ReportError> {
    std::fs::rename(from, to).map_err(ReportError::io("move a finished file onto", to))
}

/// Writes `df` as an uncompressed Parquet file (column types kept, faster to load into a
/// dataframe than the CSV), atomically. Uncompressed because polars' codecs are not compiled
/// in (default features off).
pub(crate) fn write_parquet(path: &Path, df: &mut DataFrame) -> Result<(), ReportError> {
    let mut buffer = Vec::new();
    ParquetWriter::new(&mut buffer)
        .with_compression(ParquetCompression::Uncompressed)
        .finish(df)
        .map_err(ReportError::table("write the Parquet table", path))?;
    write_atomic(path, &buffer)
}
