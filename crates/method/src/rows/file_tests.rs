use std::path::Path;

use serde::{Deserialize, Serialize};

use super::*;

/// A two-column file, for the mechanics alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Pair {
    a: String,
    b: String,
}

impl Row for Pair {
    const HEADER: &'static str = "a,b";
}

fn parsed(text: &str) -> Result<Vec<Pair>, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, text).unwrap();
    read_rows::<Pair>(&path).map_err(|e| e.to_string())
}

fn pair(a: &str, b: &str) -> Pair {
    Pair {
        a: a.into(),
        b: b.into(),
    }
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
    let rows = parsed("a,b\r\n\"x, \"\"y\"\"\nz\",\n1,\"\"\n").unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0], pair("x, \"y\"\nz", ""));
    assert_eq!(rows[1], pair("1", ""));
    // A record after one spanning two lines is named by the line it starts on.
    let err = parsed("a,b\n\"x\ny\",1\n1,2,3\n").unwrap_err();
    assert!(err.contains("line 4") && err.contains("3 fields"), "{err}");
}

#[test]
fn stray_quotes_name_line_and_column() {
    // The scan itself: through the reader, an odd quote makes the rest a partial record.
    let parsed = |text: &str| check_quotes(Path::new("t.csv"), text).map_err(|e| e.to_string());
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    let rows: Vec<Pair> = ["plain", "a,b", "say \"hi\"", "two\nlines", "cr\r\nlf", ""]
        .into_iter()
        .map(|field| pair(field, "end"))
        .collect();
    append_rows(&path, &rows).unwrap();
    assert_eq!(read_rows::<Pair>(&path).unwrap(), rows);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("a,b\nplain,end\n\"a,b\",end\n\"say \"\"hi\"\"\",end\n"));
    assert!(text.ends_with("\"cr\r\nlf\",end\n,end\n"), "{text:?}");
}

#[test]
fn a_file_cut_inside_its_header_holds_no_rows() {
    let so_far = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, text).unwrap();
        read_rows_so_far::<Pair>(&path).map_err(|e| e.to_string())
    };
    // A writer killed while creating the file: empty, or part of the header. Resuming reads
    // no rows; the strict reader (the report's) says what is missing.
    assert_eq!(so_far(""), Ok(vec![]));
    assert_eq!(so_far("a,"), Ok(vec![]));
    assert!(parsed("a,")
        .unwrap_err()
        .contains("no complete header line"));
    assert_eq!(so_far("a,b\nx,y\n"), Ok(vec![pair("x", "y")]));
    // Anything else without a whole line is not this file.
    let err = so_far("x,y").unwrap_err();
    assert!(
        err.contains("no complete header line; expected `a,b`"),
        "{err}"
    );
}

#[test]
fn a_cut_last_row_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "a,b\nx,y\nhalf,").unwrap();
    assert_eq!(cut_tail(&path), Some(5));
    std::fs::write(&path, "a,b\nx,y\n").unwrap();
    assert_eq!(cut_tail(&path), None);
    assert_eq!(cut_tail(&dir.path().join("absent.csv")), None);
}

#[test]
fn retaining_rows_rewrites_only_when_some_go_and_removes_an_emptied_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    append_rows(&path, &[pair("1", "x"), pair("2", "y"), pair("3", "x")]).unwrap();
    // Stored as Parquet, as a finished run leaves it: retaining makes it the CSV journal again.
    super::super::stored::compact(&path, 0).unwrap();
    retain_rows(&path, |p: &Pair| p.b == "x").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,x\n3,x\n");
    assert!(!super::super::stored::parquet_path(&path).exists());
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    retain_rows(&path, |_: &Pair| true).unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        modified
    );
    retain_rows(&path, |_: &Pair| false).unwrap();
    assert!(!path.exists());
    retain_rows(&path, |_: &Pair| false).unwrap();
}
