//! End to end: a synthetic training study (`synthetic_train`) rendered into a run directory.
//! The claims table has its tests in render_train_claims.rs.

mod synthetic_train;

use batchlab_method::rows::append_rows;
use batchlab_method::rows::train::done_trials;
use batchlab_method::rows::train::Budget;
use batchlab_report::train::{render_train, OUTPUT_FILES};
use synthetic_train::*;

#[test]
fn render_writes_every_file_with_the_published_table_and_the_steps_sentence() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "train-full");
    write_study(&dir, |_, _, _| true, |_, _, _| true);
    assert_eq!(done_trials(&dir).unwrap().len(), 60);
    let findings = render_train(&dir, &context()).unwrap();
    for file in OUTPUT_FILES {
        let path = dir.join(file);
        assert!(path.is_file(), "{file} missing");
    }
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(
        summary.lines().count(),
        1 + 20,
        "header and one row per cell"
    );

    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    insta::assert_snapshot!("train_report", report);
    // The wording (the published table, the steps sentence, the dataset's notes) is the
    // snapshot's; the findings are asserted below.
    assert_eq!(findings.cells.len(), 20);
    assert_eq!(findings.best.len(), 2);
    assert_eq!(findings.best[0].budget, Budget::Epochs);
    assert_eq!(findings.best[0].batch_size, 16);
    assert!(findings.missing.is_empty());
    assert_eq!(findings.failed, ["b256-adam-augmented-epochs-s2 (oom)"]);
    // Seed 2 of the augmented data at 256 ran out of memory: two seeds make that cell.
    let cell = findings
        .cells
        .iter()
        .find(|c| c.batch_size == 256 && c.variant == "augmented" && c.budget == Budget::Epochs)
        .unwrap();
    assert_eq!((cell.trials, cell.ok), (3, 2), "{cell:?}");

    // Rendering again replaces every file and leaves no temporary behind.
    render_train(&dir, &context()).unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn partial_results_render_with_a_missing_note() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "train-partial");
    // Seed 2 never ran at batch 64; seed 1 at batch 128 is still running (evaluations only).
    write_study(
        &dir,
        |b, _, seed| !(b == 64 && seed == 2),
        |b, _, seed| !(b == 128 && seed == 1),
    );
    let findings = render_train(&dir, &context()).unwrap();
    for file in OUTPUT_FILES {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    // 2 budgets x 2 variants at each of the two gaps.
    assert_eq!(findings.missing.len(), 8, "{:?}", findings.missing);
    let missing = |line: &str| findings.missing.iter().any(|m| m == line);
    assert!(missing("batch 64, adam/standard, epochs budget, seed 2"));
    assert!(missing(
        "batch 128, adam/augmented, steps budget, seed 1 (evaluations recorded, no final record)"
    ));
    let started = findings
        .missing
        .iter()
        .filter(|m| m.ends_with("(evaluations recorded, no final record)"))
        .count();
    assert_eq!(started, 4, "{:?}", findings.missing);
}

#[test]
fn a_run_with_only_evaluations_or_nothing_at_all() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "train-early");
    let err = render_train(&dir, &context()).unwrap_err().to_string();
    assert!(
        err.contains("train-early") && err.contains("results.csv"),
        "{err}"
    );
    // One trial has started: no trials.csv yet.
    let (_, evals) = trial(16, "standard", "epochs", 0);
    append_rows(&dir.join("results.csv"), &evals[..2]).unwrap();
    let findings = render_train(&dir, &context()).unwrap();
    for file in OUTPUT_FILES {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    assert_eq!(findings.missing.len(), 1);
    assert!(findings.cells.is_empty() && findings.best.is_empty());
}

#[test]
fn a_malformed_trials_file_fails_naming_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "train-bad");
    write_study(&dir, |b, _, seed| b == 16 && seed == 0, |_, _, _| true);
    let path = dir.join("trials.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen(",ok,5,", ",ok,five,", 1)).unwrap();
    let err = render_train(&dir, &context()).unwrap_err().to_string();
    assert!(
        err.contains("trials.csv") && err.contains("line 2, column 8 (`epochs`)"),
        "{err}"
    );
}
