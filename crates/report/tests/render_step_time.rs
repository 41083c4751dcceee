//! End to end: a synthetic sweep written through the public writer, rendered into a report
//! directory. Set BATCHLAB_FIGURE_DIR to keep the directory and look at the figures.

use batchlab_method::findings::Verdict;
use batchlab_method::rows::append_rows;
use batchlab_method::rows::Status;
use batchlab_report::step_time::{render_step_time, OUTPUT_FILES};
use std::path::PathBuf;

mod synthetic_step_time;

use synthetic_step_time::*;

#[test]
fn render_writes_every_file_and_reports_the_planted_jump() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = std::env::var_os("BATCHLAB_FIGURE_DIR")
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from);
    let results = dir.join("results.csv");
    let _ = std::fs::remove_file(&results);
    let rows = synthetic_sweep();
    for chunk in rows.chunks(100) {
        append_rows(&results, chunk).unwrap();
    }
    let findings = render_step_time(&dir, &context()).unwrap();

    for file in OUTPUT_FILES {
        let len = std::fs::metadata(dir.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .len();
        assert!(len > 0, "{file} is empty");
    }
    assert_eq!(findings.points.len(), 70);
    assert_eq!(
        findings
            .jumps
            .iter()
            .map(|j| j.batch_size)
            .collect::<Vec<_>>(),
        [33]
    );
    let fit = findings.fit.unwrap();
    assert!((fit.slope - 3.0).abs() < 0.3, "{fit:?}");
    assert!(findings.best_batch_size.unwrap() >= 60);

    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // The wording of every section is the snapshot's; the decisions are asserted below.
    insta::assert_snapshot!("step_time_report", md);
    let last = findings.points.last().unwrap();
    assert_eq!((last.batch_size, last.status), (70, Status::Oom));
    let jumps_at = rule(&findings.claims, "jumps-at");
    assert_eq!(jumps_at.outcome.verdict(), Verdict::Partly, "{jumps_at:?}");
    assert!(
        jumps_at.quantities["margin"] == 0.02 && jumps_at.quantities.contains_key("rank_p"),
        "the margin and the permutation test are given: {jumps_at:?}"
    );
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 71);
}

#[test]
fn render_of_an_all_failed_sweep_still_writes_a_report() {
    let tmp = tempfile::tempdir().unwrap();
    let mut rows = synthetic_sweep();
    rows.retain(|r| r.batch_size == 70);
    append_rows(&tmp.path().join("results.csv"), &rows).unwrap();
    let findings = render_step_time(tmp.path(), &context()).unwrap();
    assert!(
        findings.fit.is_none() && findings.jumps.is_empty() && findings.best_batch_size.is_none()
    );
    assert!(tmp.path().join("report.md").is_file());
    let jumps_at = rule(&findings.claims, "jumps-at");
    assert_eq!(
        jumps_at.outcome.verdict(),
        Verdict::CannotTest,
        "{jumps_at:?}"
    );
}

#[test]
fn render_names_a_missing_results_file() {
    let tmp = tempfile::tempdir().unwrap();
    let err = render_step_time(tmp.path(), &context())
        .unwrap_err()
        .to_string();
    assert!(err.contains("results.csv"), "{err}");
}

#[test]
fn a_run_renders_byte_for_byte_alike_from_its_parquet_table() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results.csv");
    append_rows(&results, &synthetic_sweep()).unwrap();
    let rendered = |dir: &std::path::Path| {
        render_step_time(dir, &context()).unwrap();
        OUTPUT_FILES.map(|f| std::fs::read(dir.join(f)).unwrap())
    };
    let from_csv = rendered(tmp.path());
    let stored = batchlab_method::rows::stored::compact(&results, 0).unwrap();
    assert!(matches!(
        stored,
        batchlab_method::rows::stored::Compacted::Parquet { .. }
    ));
    assert!(!results.exists());
    assert!(from_csv == rendered(tmp.path()), "a file differs");
}
