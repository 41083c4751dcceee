//! The claims table of a step-time report, judged from synthetic sweeps
//! (`synthetic_step_time`): no jumps, fluctuation, slightly slower, jumps below a ratio, the gap
//! a named position reads, a PyTorch reference beside the run, and a registered claim's words.

mod synthetic_step_time;

use batchlab_method::findings::Verdict;
use batchlab_method::rows::{append_rows, step_time::StepSample};
use batchlab_report::step_time::{render_step_time, Gap, StepTimeContext, StepTimeRules};
use batchlab_report::About;
use synthetic_step_time::*;

#[test]
fn no_jump_and_fluctuation_claims_get_verdicts_the_data_decides() {
    let root = tempfile::tempdir().unwrap();
    let quiet = StepTimeContext {
        about: About {
            experiment: "quiet".into(),
            ..context().about
        },
        claimed_jumps: vec![],
        no_jumps_at: vec![16, 48],
        local_minimum_at: None,
        ..context()
    };
    render_run(root.path(), "quiet", &noisy_sweep(0.01), &quiet);
    let noisy = StepTimeContext {
        about: About {
            experiment: "noisy".into(),
            ..context().about
        },
        claimed_jumps: vec![],
        no_jumps_at: vec![32],
        fluctuates_more_than: Some(("quiet".into(), Some(root.path().join("quiet/run")))),
        ..context()
    };
    let claims = render_run(root.path(), "noisy", &noisy_sweep(0.06), &noisy);
    let no_jumps = rule(&claims, "no-jumps-at");
    assert_eq!(
        no_jumps.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "the planted jump at 32 refutes 'no jumps at 32': {no_jumps:?}"
    );
    let more = rule(&claims, "fluctuates-more");
    assert_eq!(more.outcome.verdict(), Verdict::Reproduces, "{more:?}");
    assert!(more.quantities["scatter"] > more.quantities["reference_scatter"]);

    // The other way round: the quiet curve does not fluctuate more than the noisy one, and has
    // no jumps at 16 and 48.
    let quiet_against_noisy = StepTimeContext {
        fluctuates_more_than: Some(("noisy".into(), Some(root.path().join("noisy/run")))),
        ..quiet
    };
    let claims = render_run(
        root.path(),
        "quiet-again",
        &noisy_sweep(0.01),
        &quiet_against_noisy,
    );
    let more = rule(&claims, "fluctuates-more");
    assert_eq!(
        more.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{more:?}"
    );
    let no_jumps = rule(&claims, "no-jumps-at");
    assert_eq!(
        no_jumps.outcome.verdict(),
        Verdict::Reproduces,
        "{no_jumps:?}"
    );
    assert!(no_jumps.claim.contains("16 and 48"), "{no_jumps:?}");
    assert!(no_jumps.quantities["widest_half_interval"] <= no_jumps.quantities["margin"]);

    // A reference that is not there cannot be judged against.
    let missing = StepTimeContext {
        fluctuates_more_than: Some(("absent".into(), None)),
        ..context()
    };
    let claims = render_run(root.path(), "missing", &noisy_sweep(0.03), &missing);
    let more = rule(&claims, "fluctuates-more");
    assert_eq!(more.outcome.verdict(), Verdict::CannotTest, "{more:?}");
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
        rule(
            &render_run(root.path(), name, &rows, &against_base),
            "slower-than",
        )
        .clone()
    };
    let slightly = verdict("slightly", 1.25);
    assert_eq!(
        slightly.outcome.verdict(),
        Verdict::Reproduces,
        "{slightly:?}"
    );
    assert!(
        (slightly.quantities["ratio"] - 1.25).abs() < 0.05,
        "{slightly:?}"
    );
    let much = verdict("much", 2.0);
    assert_eq!(
        much.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{much:?}"
    );
    assert!(much.quantities["ratio"] > 1.5, "{much:?}");
    let faster = verdict("faster", 0.8);
    assert_eq!(
        faster.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{faster:?}"
    );
    assert!(faster.quantities["ratio"] < 1.0, "{faster:?}");
    let absent = StepTimeContext {
        slower_than: Some(("absent".into(), None)),
        ..context()
    };
    let claims = render_run(root.path(), "alone", &synthetic_sweep(), &absent);
    let slower = rule(&claims, "slower-than");
    assert_eq!(slower.outcome.verdict(), Verdict::CannotTest, "{slower:?}");
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
        rule(
            &render_run(root.path(), name, &synthetic_sweep(), &ctx),
            "jump-below-ratio",
        )
        .clone()
    };
    // The planted step after 32 is +8% of the step time: far below doubling, above x1.05.
    let doubling = with_limit("doubling", 2.0);
    assert_eq!(
        doubling.outcome.verdict(),
        Verdict::Reproduces,
        "{doubling:?}"
    );
    let tight = with_limit("tight", 1.05);
    assert_eq!(
        tight.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{tight:?}"
    );
    // A claim about the jumps' size cannot be judged on a run without jumps: it would hold
    // trivially.
    let ctx = StepTimeContext {
        rules: StepTimeRules {
            max_jump_ratio: Some(2.0),
            ..Default::default()
        },
        ..context()
    };
    let flat = render_run(root.path(), "flat", &sweep_with(0.03, None), &ctx);
    let flat = rule(&flat, "jump-below-ratio");
    assert_eq!(flat.outcome.verdict(), Verdict::CannotTest, "{flat:?}");
}

/// One standard for presence and absence: a jump claim is refuted only where every named
/// step is bounded below the margin, and stays open where the noise cannot bound it.
#[test]
fn jumps_are_refuted_only_when_bounded_below_the_margin() {
    let root = tempfile::tempdir().unwrap();
    let claimed = |name: &str, rows: &[StepSample], at: Vec<u32>, gap: Gap| {
        let ctx = StepTimeContext {
            claimed_jumps: at,
            rules: StepTimeRules {
                gap,
                ..Default::default()
            },
            ..context()
        };
        rule(&render_run(root.path(), name, rows, &ctx), "jumps-at").clone()
    };
    let after = Gap::After;
    let present = claimed("present", &sweep_with(0.01, Some(33)), vec![32], after);
    assert_eq!(
        present.outcome.verdict(),
        Verdict::Reproduces,
        "{present:?}"
    );
    let absent = claimed("absent", &sweep_with(0.01, None), vec![16, 32], after);
    assert_eq!(
        absent.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{absent:?}"
    );
    // The same flat curve with noise that cannot bound a 2% step: open, not refuted, with
    // the smallest step that would have shown.
    let open = claimed("open", &sweep_with(0.6, None), vec![16, 32], after);
    assert_eq!(open.outcome.verdict(), Verdict::Inconclusive, "{open:?}");
    assert!(open.quantities["detectable_relative"] > 0.02, "{open:?}");
}

/// A named position means one gap: a step on the neighbouring gap is not a hit.
#[test]
fn a_named_position_reads_only_the_gap_it_means() {
    let root = tempfile::tempdir().unwrap();
    // The level rises from 32 on: the step lies before 32, not after it.
    let rows = sweep_with(0.01, Some(32));
    let judged = |name: &str, gap: Gap| {
        let ctx = StepTimeContext {
            claimed_jumps: vec![32],
            rules: StepTimeRules {
                gap,
                ..Default::default()
            },
            ..context()
        };
        rule(&render_run(root.path(), name, &rows, &ctx), "jumps-at").clone()
    };
    let before = judged("before", Gap::Before);
    assert_eq!(before.outcome.verdict(), Verdict::Reproduces, "{before:?}");
    let after = judged("after", Gap::After);
    assert_ne!(after.outcome.verdict(), Verdict::Reproduces, "{after:?}");
}

#[test]
fn a_reference_beside_the_run_is_read_by_the_same_rules_and_kept_out_of_the_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The run: a planted 8% step after 32; its PyTorch reference: the same sweep without it,
    // 10% faster.
    append_rows(&dir.join("results.csv"), &sweep_with(0.03, Some(33))).unwrap();
    let reference: Vec<StepSample> = sweep_with(0.03, None)
        .into_iter()
        .map(|s| StepSample {
            step_ms: s.step_ms.map(|ms| ms * 0.9),
            backend: "pytorch-cuda".into(),
            ..s
        })
        .collect();
    append_rows(&dir.join("pytorch.csv"), &reference).unwrap();
    let findings = render_step_time(dir, &context()).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let section = md
        .split("## The same go's PyTorch references")
        .nth(1)
        .expect("a section on the reference")
        .split("\n## ")
        .next()
        .unwrap();
    assert!(
        section.contains("`pytorch.csv`: PyTorch, cuDNN's defaults | 69 ok | "),
        "{section}"
    );
    // This run over the reference: 1/0.9 below the step, 1.08/0.9 above it.
    assert!(section.contains("x1.1"), "{section}");
    // The reference shows no jump where the run shows one: the reader sees both readings.
    assert!(section.contains("no jump detected"), "{section}");
    let jumps = section
        .lines()
        .find(|l| l.starts_with("| \"Step time grows linearly with batch size but jumps"))
        .or_else(|| section.lines().find(|l| l.contains("jumps at 16, 32")))
        .unwrap_or_else(|| panic!("{section}"));
    assert!(jumps.contains("| partly"), "{jumps}");
    // Never in findings.json: one reading per rule, the run's own.
    let rules: Vec<&str> = findings.claims.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(
        rules.iter().filter(|r| **r == "jumps-at").count(),
        1,
        "{rules:?}"
    );
}

/// A rule that judges a registered claim words the finding and the report's row with the
/// claim's own quote and source; the other rules keep the kind's summary of seeds 000/001.
#[test]
fn a_registered_claim_is_quoted_with_its_own_source() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = StepTimeContext {
        no_jumps_at: vec![16],
        registered_claims: [(
            "no-jumps-at".to_string(),
            (
                "powers of two make little difference".to_string(),
                "seed 002".to_string(),
            ),
        )]
        .into(),
        ..context()
    };
    let claims = render_run(tmp.path(), "registered", &synthetic_sweep(), &ctx);
    let none = rule(&claims, "no-jumps-at");
    assert_eq!(
        (none.claim.as_str(), none.source.as_str()),
        ("powers of two make little difference", "seed 002")
    );
    assert_eq!(rule(&claims, "linear").source, "seeds 000/001");
    let report = std::fs::read_to_string(tmp.path().join("registered/run/report.md")).unwrap();
    assert!(
        report.contains("\"powers of two make little difference\" (seed 002)"),
        "{report}"
    );
}

/// The benchmark-mode claim, judged from the two PyTorch references beside a run: 10% faster
/// reproduces "slightly faster"; the same speed refutes it; a missing reference cannot judge it.
#[test]
fn cudnn_benchmark_mode_is_judged_from_the_two_references() {
    let judged = |factor: Option<f64>| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        append_rows(&dir.join("results.csv"), &sweep_with(0.03, None)).unwrap();
        let reference = |file: &str, times: f64| {
            let rows: Vec<StepSample> = sweep_with(0.03, None)
                .into_iter()
                .map(|s| StepSample {
                    step_ms: s.step_ms.map(|ms| ms * times),
                    backend: "pytorch-cuda".into(),
                    ..s
                })
                .collect();
            append_rows(&dir.join(file), &rows).unwrap();
        };
        reference("pytorch.csv", 1.0);
        if let Some(factor) = factor {
            reference("pytorch-cudnn-benchmark.csv", factor);
        }
        let ctx = StepTimeContext {
            rules: StepTimeRules {
                autotune: Some((0.02, 0.25)),
                ..Default::default()
            },
            ..context()
        };
        let findings = render_step_time(dir, &ctx).unwrap();
        rule(&findings.claims, "autotune-faster").clone()
    };
    let faster = judged(Some(0.9));
    assert_eq!(faster.outcome.verdict(), Verdict::Reproduces, "{faster:?}");
    assert!((faster.quantities["gain"] - 0.1).abs() < 0.01, "{faster:?}");
    let same = judged(Some(1.0));
    assert_eq!(
        same.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{same:?}"
    );
    let missing = judged(None);
    assert_eq!(
        missing.outcome.verdict(),
        Verdict::CannotTest,
        "{missing:?}"
    );
}
