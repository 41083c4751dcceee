//! Where a raw table lives: `name.csv` while its run writes it (the crash-safe journal of
//! [`super::file`]), `name.parquet` once the run is finished and the table is large
//! ([`compact`]). Readers take either through [`read_bytes`]: a Parquet table is read back as
//! the exact CSV text it was made from, so one strict reader checks both, and a report renders
//! the same from either. Writers that append to a compacted table first [`expand`] it.
//!
//! Lossless by construction and by check: each column gets the narrowest type that holds every
//! value exactly (`u32`, `u64`, `i64`; a decimal column whose numbers have at most
//! [`MAX_DECIMALS`] decimals, such as times written to the microsecond, as `i64` counts of its
//! last decimal, named `name#1e-D`; `f32` where every number is an f32 widened; `f64`; text),
//! numbers are written back as `{}` writes them, and [`compact`] keeps the CSV unless the
//! Parquet file reads back to the same bytes.
//!
//! One exception to "the same bytes", declared: a clock column (its name ends in
//! [`CLOCK_SUFFIX`]) holds readings of a nanosecond clock and sums of them. Older runs summed
//! them as floats, leaving noise far below a nanosecond in the last digits (0.088875464999999
//! for 0.088875465), which no encoding compresses. [`compact`] rounds such a column to whole
//! nanoseconds when every value lies within [`CLOCK_NOISE`] seconds of one, so the decimal
//! encoding applies; a column with a value further off (not a clock reading) is kept as it is.
//! Runs now sum the clock as integer nanoseconds, and write readings that need no rounding.
//!
//! When both forms exist (a crash between writing one and removing the other), the CSV is
//! the one read: it is the journal, the Parquet file a copy of it.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use polars_core::prelude::{Column, DataFrame, DataType};
use polars_io::prelude::{
    ParquetCompression, ParquetReader, ParquetWriter, SerReader, StatisticsOptions,
};
use polars_parquet::write::ZstdLevel;

use crate::files::write_atomic;
use crate::FileError;

/// A finished run's raw table of at least this many bytes of CSV is stored as Parquet;
/// smaller ones stay CSV, readable as they are (a Parquet file's own overhead is ~1 KiB).
pub const COMPACT_FROM_BYTES: u64 = 16 * 1024;

/// zstd's level for the tables: within a few percent of its smallest output on this
/// project's tables, at about a second per 10 MB of CSV.
const ZSTD_LEVEL: i32 = 19;

/// The most decimals a number column may have to be stored as a scaled integer ([`Decimal`]):
/// an integer count of 10^-9 keeps every value below 9.2e9 exact.
const MAX_DECIMALS: usize = 9;

/// The name ending of a column of clock readings in seconds (see the module's documentation).
const CLOCK_SUFFIX: &str = "_seconds";

/// The most a clock column's value may lie from a whole nanosecond to be rounded to it: float
/// sums of up to millions of readings stay within 1e-12 s of the exact sum, while values that
/// are not readings (a mean, a ratio) lie anywhere within half a nanosecond of one.
const CLOCK_NOISE: f64 = 1e-11;

/// How a decimal column's Parquet name carries its scale: `train_seconds#1e-6`.
const SCALE_MARK: &str = "#1e-";

/// `dir/name.parquet` for `dir/name.csv`.
pub fn parquet_path(csv: &Path) -> PathBuf {
    csv.with_extension("parquet")
}

/// Whether the table `csv` names exists, as CSV or as Parquet.
pub fn exists(csv: &Path) -> bool {
    csv.exists() || parquet_path(csv).exists()
}

/// The table's CSV bytes and the file they came from: `csv` itself when it exists, else its
/// Parquet form read back as CSV. Neither: the error of reading `csv`.
pub fn read_bytes(csv: &Path) -> Result<(PathBuf, Vec<u8>), FileError> {
    let parquet = parquet_path(csv);
    if !csv.exists() && parquet.exists() {
        let bytes = std::fs::read(&parquet).map_err(FileError::io("read", &parquet))?;
        let text = decode(&bytes, &parquet)?;
        return Ok((parquet, text.into_bytes()));
    }
    let bytes = std::fs::read(csv).map_err(FileError::io("read", csv))?;
    Ok((csv.to_path_buf(), bytes))
}

/// The table's CSV text, or `None` when neither form exists.
pub fn read_text(csv: &Path) -> Result<Option<String>, FileError> {
    if !exists(csv) {
        return Ok(None);
    }
    let (path, bytes) = read_bytes(csv)?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| FileError::format(&path, "not valid UTF-8 text"))
}

/// What [`compact`] did with a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compacted {
    /// No such table, or only its Parquet form.
    Absent,
    /// Kept as CSV: smaller than the threshold.
    Small,
    /// Kept as CSV: its last row is cut short (a crash), which the Parquet form could not keep.
    CutShort,
    /// Now Parquet: CSV bytes before, Parquet bytes after.
    Parquet {
        /// Bytes of the CSV file it replaced.
        csv: u64,
        /// Bytes of the Parquet file.
        parquet: u64,
    },
}

/// Stores the table `csv` as Parquet if its CSV has at least `min_bytes` (see
/// [`COMPACT_FROM_BYTES`]) and ends in a whole row: writes `name.parquet` atomically, checks
/// that it reads back to the same bytes, then removes the CSV. A stale Parquet copy beside a
/// CSV that stays is removed, so one form remains. A table already stored as Parquet (by an
/// older encoder) is encoded again and replaced when that is smaller.
pub fn compact(csv: &Path, min_bytes: u64) -> Result<Compacted, FileError> {
    let parquet = parquet_path(csv);
    let Ok(bytes) = std::fs::read(csv) else {
        return recompact(&parquet);
    };
    let keep_csv = if (bytes.len() as u64) < min_bytes {
        Some(Compacted::Small)
    } else if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        Some(Compacted::CutShort)
    } else {
        None
    };
    if let Some(kept) = keep_csv {
        remove_if_present(&parquet)?;
        return Ok(kept);
    }
    let text =
        String::from_utf8(bytes).map_err(|_| FileError::format(csv, "not valid UTF-8 text"))?;
    let text = at_clock_resolution(&text, csv)?;
    let encoded = encode(&text, csv)?;
    if decode(&encoded, &parquet)? != text {
        return Err(FileError::format(
            csv,
            "its Parquet form would not read back to the same text; kept as CSV",
        ));
    }
    write_atomic(&parquet, &encoded)?;
    std::fs::remove_file(csv).map_err(FileError::io("remove (now stored as Parquet)", csv))?;
    Ok(Compacted::Parquet {
        csv: text.len() as u64,
        parquet: encoded.len() as u64,
    })
}

/// Encodes a Parquet table again from the text it reads back as, and keeps the new file when
/// it is smaller and reads back to the same text.
fn recompact(parquet: &Path) -> Result<Compacted, FileError> {
    let Ok(old) = std::fs::read(parquet) else {
        return Ok(Compacted::Absent);
    };
    let text = at_clock_resolution(&decode(&old, parquet)?, parquet)?;
    let encoded = encode(&text, parquet)?;
    let smaller = encoded.len() < old.len() && decode(&encoded, parquet)? == text;
    if smaller {
        write_atomic(parquet, &encoded)?;
    }
    Ok(Compacted::Parquet {
        csv: text.len() as u64,
        parquet: if smaller { encoded.len() } else { old.len() } as u64,
    })
}

/// Turns a table stored as Parquet back into its CSV journal (atomically), so that rows can be
/// appended to it; does nothing when the CSV exists or the table does not.
pub fn expand(csv: &Path) -> Result<(), FileError> {
    let parquet = parquet_path(csv);
    if csv.exists() || !parquet.exists() {
        return Ok(());
    }
    let (_, bytes) = read_bytes(csv)?;
    write_atomic(csv, &bytes)?;
    remove_if_present(&parquet)
}

/// Writes the table `csv` names, from whichever form it is stored in, as CSV to `out`;
/// `false` when the table does not exist.
pub fn write_csv_to(csv: &Path, out: &Path) -> Result<bool, FileError> {
    if !exists(csv) {
        return Ok(false);
    }
    let (_, bytes) = read_bytes(csv)?;
    write_atomic(out, &bytes)?;
    Ok(true)
}

fn remove_if_present(path: &Path) -> Result<(), FileError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(FileError::io("remove", path)(e)),
        _ => Ok(()),
    }
}

/// `text` with each clock column rounded to whole nanoseconds where every value lies within
/// [`CLOCK_NOISE`] of one (see the module's documentation); other columns as they are.
fn at_clock_resolution(text: &str, path: &Path) -> Result<String, FileError> {
    let bad = |e: &dyn std::fmt::Display| FileError::format(path, e.to_string());
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let names = reader.headers().map_err(|e| bad(&e))?.clone();
    let mut records = reader
        .records()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    let mut changed = false;
    for (i, name) in names.iter().enumerate() {
        if !name.ends_with(CLOCK_SUFFIX) {
            continue;
        }
        let fields: Vec<&str> = records.iter().map(|r| r.get(i).unwrap_or("")).collect();
        let Some(rounded) = nanoseconds(&fields) else {
            continue;
        };
        for (record, field) in records.iter_mut().zip(rounded) {
            if let Some(field) = field {
                let mut fields: Vec<String> = record.iter().map(str::to_string).collect();
                fields[i] = field;
                *record = csv::StringRecord::from(fields);
                changed = true;
            }
        }
    }
    if !changed {
        return Ok(text.to_string());
    }
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(&names).map_err(|e| bad(&e))?;
    for record in &records {
        writer.write_record(record).map_err(|e| bad(&e))?;
    }
    let bytes = writer.into_inner().map_err(|e| bad(&e))?;
    String::from_utf8(bytes).map_err(|e| bad(&e))
}

/// Each field of a clock column rewritten at whole nanoseconds (`None`: already there, empty,
/// or not a finite number), or `None` for the column when a finite value lies more than
/// [`CLOCK_NOISE`] from a whole nanosecond.
fn nanoseconds(fields: &[&str]) -> Option<Vec<Option<String>>> {
    fields
        .iter()
        .map(|f| {
            let Some(x) = f.parse::<f64>().ok().filter(|x| x.is_finite()) else {
                return Some(None);
            };
            let whole = (x * 1e9).round() / 1e9;
            ((x - whole).abs() <= CLOCK_NOISE).then(|| {
                let text = whole.to_string();
                (text != *f).then_some(text)
            })
        })
        .collect()
}

/// The CSV `text` (a header and whole rows) as Parquet bytes, each column typed.
fn encode(text: &str, path: &Path) -> Result<Vec<u8>, FileError> {
    let bad = |e: &dyn std::fmt::Display| FileError::format(path, e.to_string());
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let names = reader.headers().map_err(|e| bad(&e))?.clone();
    let records = reader
        .records()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    let columns = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let fields: Vec<&str> = records.iter().map(|r| r.get(i).unwrap_or("")).collect();
            typed_column(name, &fields)
        })
        .collect();
    let mut frame = DataFrame::new(records.len(), columns).map_err(|e| bad(&e))?;
    let level = ZstdLevel::try_new(ZSTD_LEVEL).map_err(|e| bad(&e))?;
    let mut buffer = Vec::new();
    ParquetWriter::new(&mut buffer)
        .with_compression(ParquetCompression::Zstd(Some(level)))
        .with_statistics(StatisticsOptions::empty())
        .finish(&mut frame)
        .map_err(|e| bad(&e))?;
    Ok(buffer)
}

/// `fields` as the narrowest column that holds each exactly: an empty field is a null in a
/// numeric column, an empty text in a text column; a column with no value at all is text.
fn typed_column(name: &str, fields: &[&str]) -> Column {
    let values = || fields.iter().copied().filter(|f| !f.is_empty());
    let every = |exact: fn(&str) -> bool| values().next().is_some() && values().all(exact);
    let parsed = |f: &&str| (!f.is_empty()).then(|| f.parse::<f64>().expect("checked"));
    if every(|f| f.parse::<u32>().is_ok_and(|v| v.to_string() == f)) {
        let v: Vec<Option<u32>> = fields.iter().map(|f| f.parse().ok()).collect();
        Column::new(name.into(), v)
    } else if every(|f| f.parse::<u64>().is_ok_and(|v| v.to_string() == f)) {
        let v: Vec<Option<u64>> = fields.iter().map(|f| f.parse().ok()).collect();
        Column::new(name.into(), v)
    } else if every(|f| f.parse::<i64>().is_ok_and(|v| v.to_string() == f)) {
        let v: Vec<Option<i64>> = fields.iter().map(|f| f.parse().ok()).collect();
        Column::new(name.into(), v)
    } else if every(|f| f.parse::<f64>().is_ok_and(|v| v.to_string() == f)) {
        if let Some(column) = decimal_column(name, fields) {
            return column;
        }
        let v: Vec<Option<f64>> = fields.iter().map(parsed).collect();
        let is_f32 = |x: f64| {
            let widened = f64::from(x as f32);
            widened == x || (x.is_nan() && widened.is_nan())
        };
        if v.iter().flatten().all(|&x| is_f32(x)) {
            let v: Vec<Option<f32>> = v.iter().map(|x| x.map(|x| x as f32)).collect();
            Column::new(name.into(), v)
        } else {
            Column::new(name.into(), v)
        }
    } else {
        Column::new(name.into(), fields.to_vec())
    }
}

/// `fields` (numbers as `{}` writes an f64, or empty) as counts of 10^-D, D their most
/// decimals, when D is at most [`MAX_DECIMALS`] and each count divided by 10^D writes back the
/// same text: an f64 division is correctly rounded, so it gives the double the text parses to.
/// Times written to the microsecond compress to about half their f64 size this way.
fn decimal_column(name: &str, fields: &[&str]) -> Option<Column> {
    let decimals = |f: &str| f.split_once('.').map_or(0, |(_, frac)| frac.len());
    let d = fields.iter().map(|f| decimals(f)).max()?;
    if d == 0 || d > MAX_DECIMALS {
        return None;
    }
    let scale = 10f64.powi(d as i32);
    let count = |f: &str| -> Option<i64> {
        let (whole, frac) = f.split_once('.').unwrap_or((f, ""));
        let digits = format!("{whole}{frac:0<d$}");
        // "-0.5" is "-0" and "5": "-05" parses to -5, the sign kept.
        let n: i64 = digits.parse().ok()?;
        ((n as f64 / scale).to_string() == f && n.unsigned_abs() < 1 << 53).then_some(n)
    };
    let v: Vec<Option<i64>> = fields
        .iter()
        .map(|f| {
            if f.is_empty() {
                Ok(None)
            } else {
                count(f).map(Some).ok_or(())
            }
        })
        .collect::<Result<_, _>>()
        .ok()?;
    Some(Column::new(format!("{name}{SCALE_MARK}{d}").into(), v))
}

/// Parquet bytes written by [`encode`] as the CSV text they were made from.
fn decode(bytes: &[u8], path: &Path) -> Result<String, FileError> {
    let bad = |e: &dyn std::fmt::Display| FileError::format(path, format!("not a table: {e}"));
    let frame = ParquetReader::new(Cursor::new(bytes))
        .finish()
        .map_err(|e| bad(&e))?;
    let columns = frame
        .columns()
        .iter()
        .map(|c| fields(c).map_err(|e| bad(&e)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let names: Vec<&str> = frame
        .columns()
        .iter()
        .map(|c| unscaled(c.name()).0)
        .collect();
    writer.write_record(&names).map_err(|e| bad(&e))?;
    for row in 0..frame.height() {
        writer
            .write_record(columns.iter().map(|c| c[row].as_str()))
            .map_err(|e| bad(&e))?;
    }
    let bytes = writer.into_inner().map_err(|e| bad(&e))?;
    String::from_utf8(bytes).map_err(|e| bad(&e))
}

/// A Parquet column's CSV name and, for a decimal column, its scale 10^D.
fn unscaled(name: &str) -> (&str, Option<f64>) {
    match name.rsplit_once(SCALE_MARK) {
        Some((csv, d)) => match d.parse::<i32>() {
            Ok(d) => (csv, Some(10f64.powi(d))),
            Err(_) => (name, None),
        },
        None => (name, None),
    }
}

/// A column's values as CSV fields: numbers as `{}` writes them (an f32 widened to f64
/// first, as the rows hold it; a decimal column's counts divided by its scale), a null as an
/// empty field.
fn fields(column: &Column) -> Result<Vec<String>, String> {
    let series = column.as_materialized_series();
    let text = |v: Option<String>| v.unwrap_or_default();
    let e = |e: polars_core::error::PolarsError| e.to_string();
    if let (_, Some(scale)) = unscaled(column.name()) {
        return Ok(series
            .i64()
            .map_err(e)?
            .into_iter()
            .map(|v| text(v.map(|n| (n as f64 / scale).to_string())))
            .collect());
    }
    Ok(match series.dtype() {
        DataType::UInt32 => series
            .u32()
            .map_err(e)?
            .into_iter()
            .map(|v| text(v.map(|v| v.to_string())))
            .collect(),
        DataType::UInt64 => series
            .u64()
            .map_err(e)?
            .into_iter()
            .map(|v| text(v.map(|v| v.to_string())))
            .collect(),
        DataType::Int64 => series
            .i64()
            .map_err(e)?
            .into_iter()
            .map(|v| text(v.map(|v| v.to_string())))
            .collect(),
        DataType::Float32 => series
            .f32()
            .map_err(e)?
            .into_iter()
            .map(|v| text(v.map(|v| f64::from(v).to_string())))
            .collect(),
        DataType::Float64 => series
            .f64()
            .map_err(e)?
            .into_iter()
            .map(|v| text(v.map(|v| v.to_string())))
            .collect(),
        DataType::String => series
            .str()
            .map_err(e)?
            .into_iter()
            .map(|v| text(v.map(str::to_string)))
            .collect(),
        other => return Err(format!("column `{}` is of type {other}", column.name())),
    })
}

#[cfg(test)]
#[path = "stored_tests.rs"]
mod tests;
