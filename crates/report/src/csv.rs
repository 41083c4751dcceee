//! The CSV files runners append to while a run goes: crash-safe appends of whole lines, and a
//! strict reader whose errors name the file, line and column of a bad field.
//!
//! Crash safety: each append is one `write` of whole lines followed by `sync_all`. If a run
//! is killed in the middle of that write anyway (power loss, a full disk), the file ends in
//! a partial record with no terminating newline. Readers ignore such a trailing partial
//! record; the writer cuts it off before appending, so that the next row does not fuse with
//! it. Only the unterminated tail is ever removed: every complete row is kept.
//!
//! Quoting follows RFC 4180: a field with a separator, quote or line break is quoted and its
//! quotes doubled, so a record may span several lines.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use crate::ReportError;

/// Appends `body` (whole lines, each ending in `\n`) to `path`, creating the file with
/// `header` if it is missing or empty, then flushes and syncs it. A partial trailing record
/// left by an interrupted write is cut off first. Fails if the file exists with a different
/// header. One writer per file at a time: a second process appending concurrently could see
/// the first one's write in progress as a partial line.
pub(crate) fn append_lines(path: &Path, header: &str, body: &str) -> Result<(), ReportError> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(ReportError::io("open for appending", path))?;
    let existing = std::fs::read(path).map_err(ReportError::io("read", path))?;
    let complete = complete_prefix_len(&existing);
    let mut out = String::new();
    if complete == 0 {
        out.push_str(header);
        out.push('\n');
    } else {
        check_header(path, &existing, header)?;
    }
    if complete < existing.len() {
        file.set_len(complete as u64)
            .map_err(ReportError::io("cut the partial last line of", path))?;
    }
    out.push_str(body);
    // One write call: with O_APPEND, the whole batch lands after the last complete line.
    file.write_all(out.as_bytes())
        .map_err(ReportError::io("append to", path))?;
    file.flush().map_err(ReportError::io("flush", path))?;
    file.sync_all().map_err(ReportError::io("sync", path))
}

/// Fails unless the first line of `bytes` is `header` (a trailing `\r` is allowed).
pub(crate) fn check_header(path: &Path, bytes: &[u8], header: &str) -> Result<(), ReportError> {
    let first = bytes.split(|&c| c == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    if first.trim_end_matches('\r') != header {
        return Err(ReportError::Format {
            path: path.to_path_buf(),
            message: format!("line 1: header is `{first}`, expected `{header}`"),
        });
    }
    Ok(())
}

/// Length of the longest prefix of `bytes` that ends with a record-terminating newline,
/// i.e. a newline outside double quotes (RFC 4180 quoting: `""` inside quotes is a quote).
pub(crate) fn complete_prefix_len(bytes: &[u8]) -> usize {
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

/// RFC 4180 quoting: fields with a separator, quote or line break are quoted, inner quotes
/// doubled.
pub(crate) fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// One record of a CSV file, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    /// 1-based line of the file on which the record starts (the header is line 1).
    pub line: usize,
    /// The fields, unquoted.
    pub fields: Vec<String>,
}

/// Reads the complete records of `path` (a trailing partial record is ignored), checks that
/// the first is exactly `header`, and returns the others. Every record must have as many
/// fields as the header. Errors name the file and the line.
pub(crate) fn read_records(path: &Path, header: &str) -> Result<Vec<Record>, ReportError> {
    let bytes = std::fs::read(path).map_err(ReportError::io("read", path))?;
    let complete = complete_prefix_len(&bytes);
    if complete == 0 {
        return Err(ReportError::Format {
            path: path.to_path_buf(),
            message: format!("no complete header line; expected `{header}`"),
        });
    }
    check_header(path, &bytes, header)?;
    let text = std::str::from_utf8(&bytes[..complete]).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
        format_error(path, format!("line {line}: not valid UTF-8 text"))
    })?;
    let columns = header.split(',').count();
    let mut records = parse(path, text)?;
    records.remove(0);
    for r in &records {
        if r.fields.len() != columns {
            return Err(format_error(
                path,
                format!(
                    "line {}: {} fields, expected {columns} (`{header}`)",
                    r.line,
                    r.fields.len()
                ),
            ));
        }
    }
    Ok(records)
}

/// Splits `text` (complete records only) into records. A quote may open a field and close it;
/// anything else is an error naming the line and column.
fn parse(path: &Path, text: &str) -> Result<Vec<Record>, ReportError> {
    let mut records = vec![];
    let mut fields: Vec<String> = vec![];
    let mut field = String::new();
    let mut line = 1;
    let mut record_line = 1;
    let mut chars = text.chars().peekable();
    // Whether the current field was quoted and its closing quote seen.
    let mut closed = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if field.is_empty() && !closed => {
                // A quoted field: read up to the closing quote, `""` being one quote.
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            field.push(c);
                        }
                        None => {
                            return Err(format_error(
                                path,
                                format!(
                                    "line {record_line}, column {}: unterminated quoted field",
                                    fields.len() + 1
                                ),
                            ))
                        }
                    }
                }
                closed = true;
            }
            ',' => {
                fields.push(std::mem::take(&mut field));
                closed = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                fields.push(std::mem::take(&mut field));
                records.push(Record {
                    line: record_line,
                    fields: std::mem::take(&mut fields),
                });
                closed = false;
                line += 1;
                record_line = line;
            }
            _ if closed || c == '"' => {
                return Err(format_error(
                    path,
                    format!(
                        "line {line}, column {}: stray `{c}` {} (quote the field and double its quotes)",
                        fields.len() + 1,
                        if closed { "after a closing quote" } else { "inside an unquoted field" }
                    ),
                ))
            }
            _ => field.push(c),
        }
    }
    Ok(records)
}

fn format_error(path: &Path, message: String) -> ReportError {
    ReportError::Format {
        path: path.to_path_buf(),
        message,
    }
}

/// Typed access to the fields of one [`Record`], each error naming the file, the record's
/// line, the column number and its name.
pub(crate) struct Fields<'a> {
    path: &'a Path,
    record: &'a Record,
    names: Vec<&'a str>,
}

impl<'a> Fields<'a> {
    /// Wraps `record` of `path`, whose columns are named by `header`.
    pub(crate) fn new(path: &'a Path, record: &'a Record, header: &'a str) -> Self {
        Fields {
            path,
            record,
            names: header.split(',').collect(),
        }
    }

    fn error(&self, i: usize, expected: &str) -> ReportError {
        format_error(
            self.path,
            format!(
                "line {}, column {} (`{}`): expected {expected}, found `{}`",
                self.record.line,
                i + 1,
                self.names.get(i).copied().unwrap_or("?"),
                self.record.fields.get(i).map_or("", String::as_str)
            ),
        )
    }

    fn raw(&self, i: usize) -> &str {
        self.record.fields.get(i).map_or("", String::as_str)
    }

    /// Field `i` as text.
    pub(crate) fn string(&self, i: usize) -> String {
        self.raw(i).to_string()
    }

    /// Field `i` as an unsigned integer.
    pub(crate) fn u64(&self, i: usize) -> Result<u64, ReportError> {
        self.raw(i)
            .trim()
            .parse()
            .map_err(|_| self.error(i, "an unsigned integer"))
    }

    /// Field `i` as an unsigned 32-bit integer.
    pub(crate) fn u32(&self, i: usize) -> Result<u32, ReportError> {
        self.raw(i)
            .trim()
            .parse()
            .map_err(|_| self.error(i, "an unsigned 32-bit integer"))
    }

    /// Field `i` as a number; empty, `NaN`, `inf` and `-inf` are accepted (an empty field
    /// reads as NaN: not measured).
    pub(crate) fn f64(&self, i: usize) -> Result<f64, ReportError> {
        let raw = self.raw(i).trim();
        if raw.is_empty() {
            return Ok(f64::NAN);
        }
        raw.parse().map_err(|_| self.error(i, "a number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Vec<Record>, String> {
        parse(Path::new("t.csv"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn complete_prefix_respects_quotes() {
        assert_eq!(complete_prefix_len(b"a\nb"), 2);
        assert_eq!(complete_prefix_len(b"a\n\"b\nc\"\n"), 8);
        assert_eq!(complete_prefix_len(b"a\n\"b\nc"), 2);
        assert_eq!(complete_prefix_len(b"a\n\"b\"\"\nc\"\n"), 10);
        assert_eq!(complete_prefix_len(b""), 0);
    }

    #[test]
    fn parses_quotes_line_breaks_and_crlf() {
        let records = parsed("a,b\r\n\"x, \"\"y\"\"\nz\",\n1,\"\"\n").unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[1].fields, ["x, \"y\"\nz", ""]);
        assert_eq!(records[1].line, 2);
        assert_eq!(
            (records[2].line, records[2].fields.clone()),
            (4, vec!["1".to_string(), String::new()])
        );
        assert_eq!(records[0].fields, ["a", "b"]);
    }

    #[test]
    fn stray_quotes_name_line_and_column() {
        let err = parsed("a,b\n1,x\"y\n").unwrap_err();
        assert!(
            err.contains("t.csv") && err.contains("line 2, column 2"),
            "{err}"
        );
        let err = parsed("a,b\n1,\"x\"y\n").unwrap_err();
        assert!(
            err.contains("line 2, column 2") && err.contains("closing quote"),
            "{err}"
        );
    }

    #[test]
    fn quoting_round_trips() {
        for field in ["plain", "a,b", "say \"hi\"", "two\nlines", ""] {
            let text = format!("{},end\n", quote(field));
            assert_eq!(parsed(&text).unwrap()[0].fields, [field, "end"]);
        }
    }
}
