//! End to end: a synthetic sweep written through the public writer, rendered into a report
//! directory. Set BATCHLAB_FIGURE_DIR to keep the directory and look at the figures.

use batchlab_method::rows::Status;
use std::path::PathBuf;

use batchlab_method::rows::{append_rows, step_time::StepSample};
use batchlab_report::step_time::{render_step_time, StepTimeContext, StepTimeRules, OUTPUT_FILES};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn context() -> StepTimeContext {
    StepTimeContext {
        experiment: "synthetic-step-time".into(),
        description:
            "A synthetic sweep: 20 ms + 3 ms per example, one planted 8% step at batch size 32."
                .into(),
        reproduces: Some("seed 000, figure 2 (shape only)".into()),
        claim: Some(
            "Step time grows linearly with batch size but jumps at 16, 32, 48 and 64.".into(),
        ),
        claimed_jumps: vec![16, 32, 48, 64],
        no_jumps_at: vec![],
        fluctuates_more_than: None,
        slower_than: None,
        rules: Default::default(),
        model: "none (synthetic), 3x64x64 inputs".into(),
        backend: "flex".into(),
        device: "cpu, \"test\" device".into(),
        memory_kind: "process peak resident set size".into(),
        protocol: "2 warm-up steps dropped, 12 samples per visit, 1 round, synchronised clock"
            .into(),
        bootstrap_resamples: 500,
        seed: 42,
    }
}

fn synthetic_sweep() -> Vec<StepSample> {
    noisy_sweep(0.03)
}

/// The synthetic sweep with uniform noise of +-`spread`/2 on every sample.
fn noisy_sweep(spread: f64) -> Vec<StepSample> {
    let mut rng = StdRng::seed_from_u64(3);
    let mut rows = vec![];
    for b in 1..=70u32 {
        let base = StepSample {
            batch_size: b,
            round: 0,
            sample: None,
            step_ms: None,
            status: Status::Ok,
            backend: "flex".into(),
            device: "cpu, \"test\" device".into(),
            peak_mem_mb: Some(400.0 + 10.0 * f64::from(b)),
            message: String::new(),
        };
        if b == 70 {
            let message = "out of memory: tried to allocate 1.5 GiB, \"device\" full\nsecond line"
                .to_string();
            rows.push(StepSample {
                status: Status::Oom,
                peak_mem_mb: None,
                message,
                ..base
            });
            continue;
        }
        let level = 20.0 + 3.0 * f64::from(b) + if b >= 32 { 0.08 * 116.0 } else { 0.0 };
        for i in 0..12 {
            // Uniform noise: simple, seeded.
            let noise = 1.0 + spread * (rng.random::<f64>() - 0.5);
            rows.push(StepSample {
                sample: Some(i),
                step_ms: Some(level * noise),
                ..base.clone()
            });
        }
    }
    rows
}

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
        [32]
    );
    let fit = findings.fit.unwrap();
    assert!((fit.slope - 3.0).abs() < 0.3, "{fit:?}");
    assert!(findings.best_batch_size.unwrap() >= 60);

    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    insta::assert_snapshot!("step_time_report", md);
    assert!(md.contains("jumps detected at 32"), "{md}");
    assert!(
        md.contains("| 32 | 31 → 32 |"),
        "the jump table lists the planted jump"
    );
    assert!(
        md.contains("| 32 | detected |"),
        "the claim table marks 32 as detected"
    );
    assert!(md.contains("| 16 | not detected |"));
    assert!(md.contains("![Median step time versus batch size](step_time.png)"));
    assert!(
        md.contains("| 70 | oom | 1 | out of memory"),
        "failed points are listed"
    );
    assert!(md.contains("two-sided local-regression step test"));
    assert!(
        md.contains("**partly (a jump at 1 of 4 named positions)**"),
        "the jump claim's verdict: {md}"
    );
    assert!(
        md.contains("could pass. Beside it, a permutation test"),
        "the detector's power is said"
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
    let md = std::fs::read_to_string(tmp.path().join("report.md")).unwrap();
    assert!(
        md.contains("No ok batch size") && md.contains("not tested"),
        "{md}"
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
fn results_parquet_holds_every_row() {
    use polars::prelude::{ParquetReader, SerReader};
    let tmp = tempfile::tempdir().unwrap();
    let rows = synthetic_sweep();
    append_rows(&tmp.path().join("results.csv"), &rows).unwrap();
    render_step_time(tmp.path(), &context()).unwrap();
    let file = std::fs::File::open(tmp.path().join("results.parquet")).unwrap();
    let df = ParquetReader::new(file).finish().unwrap();
    assert_eq!(df.height(), rows.len());
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(
        names.join(","),
        batchlab_method::rows::step_time::RESULTS_HEADER
    );
}

/// Renders `rows` as `<root>/<name>/run` with `latest` pointing at it, as runs lay out.
fn render_run(
    root: &std::path::Path,
    name: &str,
    rows: &[StepSample],
    ctx: &StepTimeContext,
) -> String {
    let dir = root.join(name).join("run");
    std::fs::create_dir_all(&dir).unwrap();
    append_rows(&dir.join("results.csv"), rows).unwrap();
    render_step_time(&dir, ctx).unwrap();
    std::fs::read_to_string(dir.join("report.md")).unwrap()
}

#[test]
fn no_jump_and_fluctuation_claims_get_verdicts_the_data_decides() {
    let root = tempfile::tempdir().unwrap();
    let quiet = StepTimeContext {
        experiment: "quiet".into(),
        claimed_jumps: vec![],
        no_jumps_at: vec![16, 48],
        ..context()
    };
    render_run(root.path(), "quiet", &noisy_sweep(0.01), &quiet);
    let noisy = StepTimeContext {
        experiment: "noisy".into(),
        claimed_jumps: vec![],
        no_jumps_at: vec![32],
        fluctuates_more_than: Some(("quiet".into(), Some(root.path().join("quiet/run")))),
        ..context()
    };
    let md = render_run(root.path(), "noisy", &noisy_sweep(0.06), &noisy);
    assert!(
        md.contains("\"No jumps at 32 (unlike VGG)\"")
            && md.contains("**does not reproduce (a step above 2% at 1 of 1 positions)**"),
        "the planted jump at 32 refutes 'no jumps at 32': {md}"
    );
    assert!(
        md.contains("| **reproduces** |"),
        "noisy fluctuates more than quiet: {md}"
    );

    // The other way round: the quiet curve does not fluctuate more than the noisy one, and has
    // no jumps at 16 and 48.
    let quiet_against_noisy = StepTimeContext {
        fluctuates_more_than: Some(("noisy".into(), Some(root.path().join("noisy/run")))),
        ..quiet
    };
    let md = render_run(
        root.path(),
        "quiet-again",
        &noisy_sweep(0.01),
        &quiet_against_noisy,
    );
    assert!(
        md.contains("**does not reproduce (it fluctuates less than noisy)**"),
        "{md}"
    );
    assert!(
        md.contains("\"No jumps at 16 and 48 (unlike VGG)\""),
        "{md}"
    );
    let no_jumps_row = md
        .lines()
        .find(|l| l.contains("\"No jumps at 16 and 48"))
        .unwrap();
    assert!(
        no_jumps_row.contains("**reproduces (every step within ±2%)**"),
        "{no_jumps_row}"
    );

    // A reference that is not there cannot be judged against.
    let missing = StepTimeContext {
        fluctuates_more_than: Some(("absent".into(), None)),
        ..context()
    };
    let md = render_run(root.path(), "missing", &noisy_sweep(0.03), &missing);
    assert!(
        md.contains("**cannot be tested here (no complete run of absent"),
        "{md}"
    );
}

#[test]
fn slightly_slower_is_judged_by_the_ratio_to_the_reference_curve() {
    let root = tempfile::tempdir().unwrap();
    render_run(root.path(), "base", &synthetic_sweep(), &context());
    let against_base = StepTimeContext {
        slower_than: Some(("base".into(), Some(root.path().join("base/run")))),
        ..context()
    };
    let verdict = |name: &str, factor: f64| {
        let rows: Vec<StepSample> = noisy_sweep(0.03)
            .into_iter()
            .map(|s| StepSample {
                step_ms: s.step_ms.map(|t| t * factor),
                ..s
            })
            .collect();
        let md = render_run(root.path(), name, &rows, &against_base);
        md.lines()
            .find(|l| l.contains("slightly longer (than base)"))
            .unwrap()
            .to_string()
    };
    let slightly = verdict("slightly", 1.25);
    assert!(slightly.contains("| **reproduces** |"), "{slightly}");
    assert!(slightly.contains("1.2"), "the ratio is stated: {slightly}");
    let much = verdict("much", 2.0);
    assert!(
        much.contains("**does not reproduce (it is more than 1.50x as slow: not slightly)**"),
        "{much}"
    );
    let faster = verdict("faster", 0.8);
    assert!(
        faster.contains("**does not reproduce (it is faster than base)**"),
        "{faster}"
    );
    let absent = StepTimeContext {
        slower_than: Some(("absent".into(), None)),
        ..context()
    };
    let md = render_run(root.path(), "alone", &synthetic_sweep(), &absent);
    assert!(
        md.contains("**cannot be tested here (no complete run of absent"),
        "{md}"
    );
}

#[test]
fn jumps_below_a_ratio_are_judged_at_the_named_positions() {
    let root = tempfile::tempdir().unwrap();
    let with_limit = |name: &str, limit: f64| {
        let ctx = StepTimeContext {
            rules: StepTimeRules {
                max_jump_ratio: Some(limit),
                ..Default::default()
            },
            ..context()
        };
        let md = render_run(root.path(), name, &synthetic_sweep(), &ctx);
        md.lines()
            .find(|l| l.contains("stay below"))
            .unwrap()
            .to_string()
    };
    // The planted step at 32 is +8% of the step time: far below doubling, above x1.05.
    let doubling = with_limit("doubling", 2.0);
    assert!(
        doubling.contains("| **reproduces (at most x1.0"),
        "{doubling}"
    );
    let tight = with_limit("tight", 1.05);
    assert!(
        tight.contains("**does not reproduce (the step time reaches x1.05 at 1 of 4 positions)**"),
        "{tight}"
    );
}
