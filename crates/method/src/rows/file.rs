//! The mechanics of a CSV file that runners append to while a run goes: crash-safe appends
//! of whole lines, and a strict reader whose errors name the file, line and column of a bad
//! field. Rows are written and read by serde through the `csv` crate, by column name.
//!
//! Crash safety: each append is one `write` of whole lines followed by `sync_all`. If a run
//! is killed in the middle of that write anyway (power loss, a full disk), the file ends in
//! a partial record with no terminating newline. Readers ignore such a trailing partial
//! record; the writer cuts it off before appending, so that the next row does not fuse with
//! it. Only the unterminated tail is ever removed: every complete row is kept.
//!
//! Quoting follows RFC 4180: a field with a separator, quote or line break is quoted and its
//! quotes doubled, so a record may span several lines. A quote that neither opens nor
//! closes a field is an error (the `csv` crate alone would read it as text).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use super::{stored, Row};
use crate::FileError;

/// Appends `rows` to `path` as whole CSV lines, creating the file with `T::HEADER` if it is
/// missing or empty, then flushes and syncs it. A partial trailing record left by an
/// interrupted write is cut off first. Fails if the file exists with a different header.
/// One writer per file at a time: a second process appending concurrently could see the
/// first one's write in progress as a partial line (shards of a job array each write their
/// own files, merged when reporting).
/// A table stored as Parquet ([`super::stored`]) becomes CSV again first.
pub fn append_rows<T: Row>(path: &Path, rows: &[T]) -> Result<(), FileError> {
    super::stored::expand(path)?;
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for row in rows {
        writer
            .serialize(row)
            .map_err(|e| FileError::format(path, format!("cannot write a row: {e}")))?;
    }
    let body = writer
        .into_inner()
        .map_err(|e| FileError::format(path, format!("cannot write the rows: {e}")))?;
    append_lines(path, T::HEADER, &body)
}

/// Appends `body` (whole lines) to `path`, creating the file with `header` if it is missing
/// or empty; see [`append_rows`].
fn append_lines(path: &Path, header: &str, body: &[u8]) -> Result<(), FileError> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(FileError::io("open for appending", path))?;
    let existing = std::fs::read(path).map_err(FileError::io("read", path))?;
    let complete = complete_prefix_len(&existing);
    let mut out = Vec::new();
    if complete == 0 {
        out.extend_from_slice(header.as_bytes());
        out.push(b'\n');
    } else {
        check_header(path, &existing, header)?;
    }
    if complete < existing.len() {
        file.set_len(complete as u64)
            .map_err(FileError::io("cut the partial last line of", path))?;
    }
    out.extend_from_slice(body);
    // One write call: with O_APPEND, the whole batch lands after the last complete line.
    file.write_all(&out)
        .map_err(FileError::io("append to", path))?;
    file.flush().map_err(FileError::io("flush", path))?;
    file.sync_all().map_err(FileError::io("sync", path))
}

/// Keeps only the rows of `path` for which `keep` holds, replacing the file atomically (a
/// temporary sibling renamed over it), and only when some row goes; no row left removes the
/// file (an absent file is one without rows). A table stored as Parquet becomes its CSV journal
/// again first: this is a resumed writer's clean-up, and appends follow.
pub fn retain_rows<T: Row + Clone>(
    path: &Path,
    keep: impl Fn(&T) -> bool,
) -> Result<(), FileError> {
    stored::expand(path)?;
    if !path.exists() {
        return Ok(());
    }
    let rows: Vec<T> = read_rows_so_far(path)?;
    let kept: Vec<T> = rows.iter().filter(|r| keep(r)).cloned().collect();
    if kept.len() == rows.len() {
        return Ok(());
    }
    if kept.is_empty() {
        return std::fs::remove_file(path).map_err(FileError::io("remove", path));
    }
    let partial = path.with_extension("csv.partial");
    let _ = std::fs::remove_file(&partial);
    append_rows(&partial, &kept)?;
    crate::files::rename(&partial, path)
}

/// The rows a writer has finished so far, for resuming its work: like [`read_rows`], except that
/// a file cut inside its header (its writer was killed while creating it) holds no rows yet.
pub fn read_rows_so_far<T: Row>(path: &Path) -> Result<Vec<T>, FileError> {
    let (read, bytes) = stored::read_bytes(path)?;
    if complete_prefix_len(&bytes) == 0 && T::HEADER.as_bytes().starts_with(&bytes) {
        return Ok(Vec::new());
    }
    parse_rows(&read, &bytes)
}

/// Reads the complete records of `path` (a trailing partial record is ignored), checks that
/// the first is exactly `T::HEADER`, and deserializes the others by column name. Every
/// record must have as many fields as the header. Errors name the file, the line and, for a
/// bad field, its column number and name and the text found. A table stored as Parquet
/// ([`super::stored`]) is read as the CSV it was made from, its errors naming the Parquet file.
pub fn read_rows<T: Row>(path: &Path) -> Result<Vec<T>, FileError> {
    let (read, bytes) = stored::read_bytes(path)?;
    parse_rows(&read, &bytes)
}

/// [`read_rows`] of the CSV `bytes` read from `path`.
fn parse_rows<T: Row>(path: &Path, bytes: &[u8]) -> Result<Vec<T>, FileError> {
    let header = T::HEADER;
    let complete = complete_prefix_len(bytes);
    if complete == 0 {
        return Err(FileError::format(
            path,
            format!("no complete header line; expected `{header}`"),
        ));
    }
    check_header(path, bytes, header)?;
    let text = std::str::from_utf8(&bytes[..complete]).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
        FileError::format(path, format!("line {line}: not valid UTF-8 text"))
    })?;
    check_quotes(path, text)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let names = reader
        .headers()
        .map_err(|e| read_error(path, header, &e))?
        .clone();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| read_error(path, header, &e))?;
        let row = record.deserialize(Some(&names)).map_err(|e| {
            let line = record.position().map_or(0, |p| p.line());
            match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => {
                    let (column, found) = match err.field() {
                        Some(i) => (i as usize, record.get(i as usize).unwrap_or("")),
                        None => (usize::MAX, ""),
                    };
                    let expected = match err.kind() {
                        csv::DeserializeErrorKind::ParseInt(_) => "an unsigned integer".into(),
                        csv::DeserializeErrorKind::ParseFloat(_) => "a number".into(),
                        other => other.to_string(),
                    };
                    FileError::format(
                        path,
                        format!(
                            "line {line}, column {} (`{}`): expected {expected}, found `{found}`",
                            column.wrapping_add(1),
                            names.get(column).unwrap_or("?"),
                        ),
                    )
                }
                _ => read_error(path, header, &e),
            }
        })?;
        if let Err((column, problem)) = T::check(&row) {
            let line = record.position().map_or(0, |p| p.line());
            let at = names.iter().position(|n| n == column).map_or(0, |i| i + 1);
            return Err(FileError::format(
                path,
                format!("line {line}, column {at} (`{column}`): {problem}"),
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// A `csv` reading error as a [`FileError`] naming the line.
fn read_error(path: &Path, header: &str, e: &csv::Error) -> FileError {
    let line = e.position().map_or(0, |p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("line {line}: {len} fields, expected {expected_len} (`{header}`)"),
        csv::ErrorKind::Utf8 { .. } => format!("line {line}: not valid UTF-8 text"),
        _ => format!("line {line}: {e}"),
    };
    FileError::format(path, message)
}

/// Fails unless the first line of `bytes` is `header` (a trailing `\r` is allowed).
fn check_header(path: &Path, bytes: &[u8], header: &str) -> Result<(), FileError> {
    let first = bytes.split(|&c| c == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    if first.trim_end_matches('\r') != header {
        return Err(FileError::format(
            path,
            format!("line 1: header is `{first}`, expected `{header}`"),
        ));
    }
    Ok(())
}

/// Bytes after the last whole record of `path`: a row whose write was cut short (a crash, a full
/// disk), which readers leave out. `None` when the file ends in a whole record or is absent.
pub fn cut_tail(path: &Path) -> Option<usize> {
    let bytes = std::fs::read(path).ok()?;
    let cut = bytes.len() - complete_prefix_len(&bytes);
    (cut > 0).then_some(cut)
}

/// Length of the longest prefix of `bytes` that ends with a record-terminating newline,
/// i.e. a newline outside double quotes (RFC 4180 quoting: `""` inside quotes is a quote).
fn complete_prefix_len(bytes: &[u8]) -> usize {
    let mut in_quotes = false;
    let mut end = 0;
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            // A doubled quote toggles twice, which is right.
            b'"' => in_quotes = !in_quotes,
            b'\n' if !in_quotes => end = i + 1,
            _ => {}
        }
    }
    end
}

/// Where a field of [`check_quotes`]'s scan is.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    /// Nothing read yet.
    Start,
    /// Unquoted text.
    Plain,
    /// Inside quotes.
    Quoted,
    /// After the closing quote.
    Closed,
}

/// Fails on a quote inside an unquoted field or text after a closing quote, naming the line
/// and column (`text` holds complete records only).
fn check_quotes(path: &Path, text: &str) -> Result<(), FileError> {
    let (mut line, mut column, mut field) = (1, 1, Field::Start);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        field = match (field, c) {
            (Field::Quoted, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                Field::Quoted
            }
            (Field::Quoted, '"') => Field::Closed,
            (Field::Quoted, c) => {
                line += usize::from(c == '\n');
                Field::Quoted
            }
            (Field::Start, '"') => Field::Quoted,
            (_, ',') => {
                column += 1;
                Field::Start
            }
            (_, '\n') => {
                (line, column) = (line + 1, 1);
                Field::Start
            }
            (Field::Closed, '\r') if chars.peek() == Some(&'\n') => Field::Closed,
            (Field::Closed, _) | (_, '"') => {
                return Err(FileError::format(
                    path,
                    format!(
                        "line {line}, column {column}: stray `{c}` {} (quote the field and double its quotes)",
                        if field == Field::Closed {
                            "after a closing quote"
                        } else {
                            "inside an unquoted field"
                        }
                    ),
                ))
            }
            _ => Field::Plain,
        };
    }
    Ok(())
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
