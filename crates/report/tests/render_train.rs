//! End to end: a synthetic training study (`synthetic_train`) rendered into a run directory.
//! The claims table has its tests in render_train_claims.rs.

mod synthetic_train;

use batchlab_method::rows::append_rows;
use batchlab_method::rows::train::done_trials;
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
        if file.ends_with(".png") {
            assert_eq!(
                &std::fs::read(&path).unwrap()[..8],
                b"\x89PNG\r\n\x1a\n",
                "{file}"
            );
        }
    }
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(
        summary.lines().count(),
        1 + 20,
        "header and one row per cell"
    );

    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    insta::assert_snapshot!("train_report", report);
    for needle in [
        "## The published shape beside the measured one",
        // 58% at 128 -> 57.5% at 256 published; 61% -> 59.88% measured (seed 2 of 256 ran
        // out of memory): only the changes compare.
        "| adam/augmented | test_accuracy | 256 | 128 | 57.50% (58.00%) | -0.50 points | -1.12 points | adam/augmented: 61.00% → 59.88% |",
        "| adam/augmented | test_accuracy | 512 | 128 | 50.00% (58.00%) | -8.00 points | not measured (batch 128 or 512 was not run) |",
        "Published alone (no second number of that line",
        "## Reading the result",
        "Under the epochs budget, with the augmented data at batch 16 a trial takes 750 steps",
        "with the standard data at batch 16 a trial takes 375 steps, at 32 185, at 64 90, at 128 45 and at 256 only 20",
        "every trial takes 375 steps",
        "under the epoch budget but not under the steps budget",
        "one example is 0.25 points",
        "waited for data for a median 10.0%",
        "accuracy_vs_batch.png",
        "learning_curves.png",
        "train_time.png",
        "skipped 3 corrupt JPEGs",
        "b256-adam-augmented-epochs-s2",
    ] {
        assert!(report.contains(needle), "report.md lacks `{needle}`:\n{report}");
    }
    assert!(!report.contains("Partial results"), "{report}");
    // The train_minutes point is alone in its line: shown, never compared.
    assert!(
        report.contains("adam train_minutes 0.25 min at batch 16"),
        "{report}"
    );
    assert!(!report.contains("| adam | train_minutes"), "{report}");

    assert_eq!(findings.cells.len(), 20);
    assert_eq!(findings.best.len(), 2);
    assert_eq!(findings.best[0].budget, "epochs");
    assert_eq!(findings.best[0].batch_size, 16);
    assert!(findings.missing.is_empty());
    assert_eq!(findings.failed, ["b256-adam-augmented-epochs-s2 (oom)"]);
    assert!(
        findings.lines[0].contains("60 of 60 trials recorded (59 ok, 1 failed)"),
        "{:?}",
        findings.lines
    );

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
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("Partial results: 8 trial(s) missing"),
        "{report}"
    );
    assert!(report.contains("4 of them started"), "{report}");
    assert!(
        report.contains("batch 64, adam/standard, epochs budget, seed 2"),
        "{report}"
    );
    assert!(report.contains("batch 128, adam/augmented, steps budget, seed 1 (evaluations recorded, no final record)"), "{report}");
    assert!(
        findings.lines[0].contains("8 missing"),
        "{:?}",
        findings.lines
    );
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
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("No trial has finished yet"), "{report}");
    assert!(report.contains("not measured in this run"), "{report}");
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
