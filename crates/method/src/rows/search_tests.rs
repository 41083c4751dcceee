use std::path::Path;

use super::*;
use crate::rows::{append_rows, read_rows};
use crate::FileError;

// The typed names the runner used before rows went generic, kept so the tests read as before.
fn append_search(path: &Path, rows: &[SearchRow]) -> Result<(), FileError> {
    append_rows(path, rows)
}
fn read_search(path: &Path) -> Result<Vec<SearchRow>, FileError> {
    read_rows(path)
}

fn row(trial: &str, learning_rate: f64, momentum: f64) -> SearchRow {
    SearchRow {
        trial: trial.into(),
        workload: "simple-cnn/sgd-momentum".into(),
        batch_size: 64,
        index: 7,
        learning_rate,
        momentum,
        effective_learning_rate: learning_rate / (1.0 - momentum),
    }
}

#[test]
fn rows_round_trip_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("search.csv");
    // Values whose decimal forms are long, a quoted id, and a plain SGD row.
    let rows = vec![
        row("cnn-b64-t7", 0.1 + 0.2, 1.0 - 1e-3 * 3.7),
        row("odd, \"id\"", 3.3e-5, 0.0),
    ];
    append_search(&path, &rows[..1]).unwrap();
    append_search(&path, &rows[1..]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().next().unwrap(), SEARCH_HEADER);
    assert_eq!(read_search(&path).unwrap(), rows);
    assert!(rows[0].has_momentum() && !rows[1].has_momentum());
}

#[test]
fn a_partial_last_line_is_ignored_and_cut_before_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("search.csv");
    append_search(&path, &[row("a", 0.1, 0.9)]).unwrap();
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("b,simple-cnn/sgd,64,1,0.0");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(read_search(&path).unwrap().len(), 1);
    append_search(&path, &[row("c", 0.2, 0.0)]).unwrap();
    let ids: Vec<String> = read_search(&path)
        .unwrap()
        .into_iter()
        .map(|r| r.trial)
        .collect();
    assert_eq!(ids, ["a", "c"]);
}

#[test]
fn bad_fields_and_headers_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("search.csv");
    std::fs::write(&path, format!("{SEARCH_HEADER}\nt,w,64,1,fast,0.9,1.0\n")).unwrap();
    let err = read_search(&path).unwrap_err().to_string();
    assert!(
        err.contains("search.csv") && err.contains("line 2, column 5 (`learning_rate`)"),
        "{err}"
    );
    std::fs::write(&path, "trial,lr\nt,0.1\n").unwrap();
    let err = read_search(&path).unwrap_err().to_string();
    assert!(
        err.contains("search.csv") && err.contains("header"),
        "{err}"
    );
    let err = append_search(&path, &[row("a", 0.1, 0.0)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("header"), "{err}");
}

#[test]
fn the_last_row_of_a_trial_wins() {
    let rows = vec![row("a", 0.1, 0.9), row("b", 0.2, 0.0), row("a", 0.3, 0.5)];
    let latest = latest_search(rows);
    assert_eq!(latest.len(), 2);
    assert_eq!(latest["a"].learning_rate, 0.3);
}
