use batchlab_method::rows::Status;
use std::fs::OpenOptions;
use std::io::Write;

use batchlab_method::rows::train::{done_trials, TRIALS_HEADER};
use batchlab_method::rows::{append_rows, read_rows};
use batchlab_method::FileError;

use super::*;

// The typed names the runner used before rows went generic, kept so the tests read as before.
fn append_evals(path: &Path, rows: &[TrainEval]) -> Result<(), FileError> {
    append_rows(path, rows)
}
fn append_trials(path: &Path, rows: &[TrialRecord]) -> Result<(), FileError> {
    append_rows(path, rows)
}
fn read_evals(path: &Path) -> Result<Vec<TrainEval>, FileError> {
    read_rows(path)
}
fn read_trials(path: &Path) -> Result<Vec<TrialRecord>, FileError> {
    read_rows(path)
}

/// A trial id in the experiments crate's format.
pub(crate) fn id(
    batch_size: u32,
    optimizer: &str,
    variant: &str,
    budget: &str,
    seed: u64,
) -> String {
    format!("b{batch_size}-{optimizer}-{variant}-{budget}-s{seed}")
}

/// A grid cell: (batch size, optimizer, variant, budget).
pub(crate) type Key<'a> = (u32, &'a str, &'a str, &'a str);

/// An ok trial of cell `key` taking `steps` steps, with the given test accuracy and training
/// seconds.
pub(crate) fn record(
    key: Key,
    seed: u64,
    accuracy: f64,
    train_seconds: f64,
    steps: u64,
) -> TrialRecord {
    let (batch_size, optimizer, variant, budget) = key;
    TrialRecord {
        trial: id(batch_size, optimizer, variant, budget, seed),
        seed,
        batch_size,
        optimizer: optimizer.into(),
        variant: variant.into(),
        budget: budget.parse().unwrap(),
        status: Status::Ok,
        epochs: 5.0,
        steps,
        examples: steps * u64::from(batch_size),
        train_seconds,
        data_seconds: train_seconds / 10.0,
        eval_seconds: 1.5,
        test_seconds: 0.5,
        test_loss: 0.6,
        test_accuracy: accuracy,
        message: String::new(),
    }
}

/// A trial that failed with `status` before testing.
pub(crate) fn failed(record: TrialRecord, status: &str, message: &str) -> TrialRecord {
    TrialRecord {
        status: status.parse().unwrap(),
        epochs: f64::NAN,
        steps: 0,
        examples: 0,
        train_seconds: f64::NAN,
        data_seconds: f64::NAN,
        eval_seconds: f64::NAN,
        test_seconds: f64::NAN,
        test_loss: f64::NAN,
        test_accuracy: f64::NAN,
        message: message.into(),
        ..record
    }
}

/// An evaluation of `record`'s trial after `step` steps.
pub(crate) fn eval(record: &TrialRecord, step: u64, accuracy: f64) -> TrainEval {
    TrainEval {
        trial: record.trial.clone(),
        seed: record.seed,
        batch_size: record.batch_size,
        optimizer: record.optimizer.clone(),
        variant: record.variant.clone(),
        budget: record.budget,
        epoch: step as f64 / 10.0,
        step,
        examples: step * u64::from(record.batch_size),
        train_loss: 0.7,
        val_loss: 0.65,
        val_accuracy: accuracy,
        train_seconds: step as f64 * 0.1,
        data_seconds: step as f64 * 0.01,
        eval_seconds: 0.25,
    }
}

/// NaN != NaN, so rows are compared by their debug text.
fn same<T: std::fmt::Debug>(a: &[T], b: &[T]) {
    assert_eq!(format!("{a:#?}"), format!("{b:#?}"));
}

fn awkward_trials() -> Vec<TrialRecord> {
    let ok = record(
        (16, "adam", "standard", "epochs"),
        0,
        2.0 / 3.0,
        12.345,
        375,
    );
    let oom = failed(
        record((256, "sgd", "aug, \"mented\"", "steps"), 1, 0.0, 0.0, 0),
        "oom",
        "CUDA out of memory. Tried to allocate 2.00 GiB, \"free\": 1.2 GiB\nline two",
    );
    let diverged = TrialRecord {
        status: Status::Diverged,
        test_loss: f64::INFINITY,
        test_accuracy: f64::NAN,
        message: "loss NaN at step 12 | windows\r\nline, é ∞".into(),
        ..record((32, "sgd", "standard", "epochs"), 2, 0.0, 3.0, 12)
    };
    vec![ok, oom, diverged]
}

#[test]
fn trials_round_trip_with_nan_and_awkward_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trials.csv");
    let rows = awkward_trials();
    append_trials(&path, &rows[..1]).unwrap();
    append_trials(&path, &rows[1..]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(&format!("{TRIALS_HEADER}\n")));
    assert_eq!(
        text.matches(TRIALS_HEADER).count(),
        1,
        "header written once"
    );
    same(&read_trials(&path).unwrap(), &rows);
    assert_eq!(
        done_trials(dir.path()).unwrap(),
        rows.iter().map(|r| r.trial.clone()).collect()
    );
}

#[test]
fn evals_round_trip_with_nan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let r = record((16, "adam", "standard", "epochs"), 0, 0.6, 1.0, 375);
    let mut diverged = eval(&r, 150, f64::NAN);
    diverged.train_loss = f64::NAN;
    diverged.val_loss = f64::NEG_INFINITY;
    let rows = vec![eval(&r, 75, 0.1 + 0.2), diverged];
    append_evals(&path, &rows).unwrap();
    same(&read_evals(&path).unwrap(), &rows);
    // Stored as Parquet, they read back the same, NaN and infinity included.
    batchlab_method::rows::stored::compact(&path, 0).unwrap();
    assert!(!path.exists());
    same(&read_evals(&path).unwrap(), &rows);
}

#[test]
fn a_missing_trials_file_means_nothing_is_done() {
    let dir = tempfile::tempdir().unwrap();
    assert!(done_trials(dir.path()).unwrap().is_empty());
}

#[test]
fn a_truncated_last_line_is_ignored_then_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trials.csv");
    let rows = awkward_trials();
    append_trials(&path, &rows).unwrap();
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"b64-adam-standard-epochs-s0,0,64,adam,standard,epochs,ok,5,\"half")
        .unwrap();
    drop(file);
    same(&read_trials(&path).unwrap(), &rows);
    let more = vec![record((64, "adam", "standard", "epochs"), 0, 0.5, 2.0, 90)];
    append_trials(&path, &more).unwrap();
    same(&read_trials(&path).unwrap(), &[rows, more].concat());
}

#[test]
fn a_malformed_row_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let r = record((16, "adam", "standard", "epochs"), 0, 0.6, 1.0, 375);
    append_evals(&path, &[eval(&r, 75, 0.5), eval(&r, 150, 0.55)]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // Line 3 (the second data row): the step becomes text.
    let broken = text.replace(",150,", ",fifty,");
    std::fs::write(&path, broken).unwrap();
    let err = read_evals(&path).unwrap_err().to_string();
    assert!(
        err.contains("results.csv")
            && err.contains("line 3, column 8 (`step`)")
            && err.contains("fifty"),
        "{err}"
    );

    // A row with a field too few.
    let trials = dir.path().join("trials.csv");
    append_trials(&trials, &awkward_trials()[..1]).unwrap();
    let mut file = OpenOptions::new().append(true).open(&trials).unwrap();
    file.write_all(b"x,0,16,adam,standard,epochs,ok,5,375\n")
        .unwrap();
    drop(file);
    let err = read_trials(&trials).unwrap_err().to_string();
    assert!(
        err.contains("trials.csv") && err.contains("line 3") && err.contains("9 fields"),
        "{err}"
    );
    let err = done_trials(dir.path()).unwrap_err().to_string();
    assert!(err.contains("trials.csv"), "{err}");
}

#[test]
fn a_foreign_header_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    std::fs::write(&path, "a,b\n1,2\n").unwrap();
    let r = record((16, "adam", "standard", "epochs"), 0, 0.6, 1.0, 375);
    let err = append_evals(&path, &[eval(&r, 1, 0.5)])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("results.csv") && err.contains("line 1") && err.contains("expected"),
        "{err}"
    );
    let err = read_evals(&path).unwrap_err().to_string();
    assert!(err.contains("results.csv"), "{err}");
    let missing = dir.path().join("missing.csv");
    let err = read_trials(&missing).unwrap_err().to_string();
    assert!(err.contains("missing.csv"), "{err}");
}
