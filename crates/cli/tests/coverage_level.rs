//! The level the steps-to-result intervals are labelled with is the one the committed fresh
//! coverage check measures: its run, rendered by the current code, holds exactly
//! `FRESH_COVERAGE` of its checks, and the intervals' wording states that count.

use std::path::Path;
use std::process::Command;

use batchlab_report::steps_to_target::scaling::{FRESH_COVERAGE, INTERVAL_WORDS, LEVEL_WORDS};

const RUN: &str = "reports/steps-to-target-coverage-fresh-fmnist/sharded-3770a56803a7aac9";

#[test]
fn the_intervals_are_labelled_with_the_level_the_fresh_check_measures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("run");
    let status = Command::new("cp")
        .args(["-r"])
        .arg(root.join(RUN))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .arg("report")
        .arg(&copy)
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read_to_string(copy.join("report.md")).unwrap();
    let (held, checks) = FRESH_COVERAGE;
    let counted = format!("{held} of {checks} checks held it");
    assert!(
        report.contains(&counted),
        "the fresh check no longer reads '{counted}': label the intervals with what it reads"
    );
    let percent = format!("{:.0}%", 100.0 * held as f64 / checks as f64);
    assert!(
        INTERVAL_WORDS.contains(&format!("{held} of {checks}"))
            && INTERVAL_WORDS.contains(&percent)
            && LEVEL_WORDS.contains(&percent),
        "{INTERVAL_WORDS} / {LEVEL_WORDS}"
    );
}
