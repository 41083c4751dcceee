//! End to end: the synthetic steps-to-target study (`synthetic_target`) rendered into a run
//! directory: every file, the fit and the regimes, time to result, and what a damaged run
//! directory renders as. The claims table has its tests in render_steps_to_target_claims.rs.

mod synthetic_target;

use batchlab_method::rows::{append_rows, train::TrainEval};
use batchlab_report::steps_to_target::{render_target, RateRule};
use synthetic_target::*;

#[test]
fn renders_every_file_and_finds_the_knee_and_the_regimes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "target-full");
    write_study(&dir, |_| true);
    let findings = render_target(&dir, &context(vec![])).unwrap();
    assert_files(&dir, false);

    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    assert_eq!(
        lines.next().unwrap(),
        "workload,batch_size,trials,reached,missed,infeasible,failed,unevaluated,steps_to_result,best_trial,learning_rate,momentum,effective_learning_rate"
    );
    assert_eq!(summary.lines().count(), 1 + 2 * BATCH_SIZES.len());
    // The diverged trial reached the target in half the steps; it must not count.
    assert!(
        summary.contains("mlp/sgd,4,8,5,1,2,0,0,16500,mlp-sgd-b4-t2,0.01,0.0,0.01"),
        "{summary}"
    );
    assert!(
        summary.contains("mlp/sgd,4096,8,5,1,1,1,0,520,mlp-sgd-b4096-t2,"),
        "{summary}"
    );
    assert!(
        summary.contains("mlp/sgd-momentum,4096,8,0,6,2,0,0,,,,,"),
        "{summary}"
    );

    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // The wording is the snapshot's; the findings are asserted below.
    insta::assert_snapshot!("steps_to_target_report", report);
    let b_crit = |w: usize| findings.workloads[w].fit.as_ref().unwrap().b_crit;
    assert!((b_crit(0) - 128.0).abs() <= 0.2 * 128.0, "{}", b_crit(0));
    assert!((b_crit(1) - 256.0).abs() <= 0.2 * 256.0, "{}", b_crit(1));
    let sgd_rate = findings.workloads[0].learning_rate.unwrap();
    assert_eq!(sgd_rate.rule(), RateRule::Linear, "{sgd_rate:?}");
    let momentum_rate = findings.workloads[1].effective_learning_rate.unwrap();
    assert_eq!(
        momentum_rate.rule(),
        RateRule::SquareRoot,
        "{momentum_rate:?}"
    );
    assert!(
        (momentum_rate.slope - 0.5).abs() < 0.05,
        "{momentum_rate:?}"
    );
    // No trial of momentum reached at 4096: the cell has no steps to result.
    let capped = findings
        .cells
        .iter()
        .find(|c| c.workload == "mlp/sgd-momentum" && c.batch_size == 4096)
        .unwrap();
    assert_eq!((capped.reached, capped.steps_to_result), (0, None));
    assert!(findings
        .workloads
        .iter()
        .all(|w| w.time_to_result.is_none()));
    // Five of eight trials reach in every cell that reaches, and no cap decides: no notes.
    assert_eq!(findings.workloads.len(), 2);
    assert_eq!(findings.cells.len(), 22);
    assert!(findings.notes.is_empty(), "{:?}", findings.notes);
    // True local slopes -B_crit / (B + B_crit): plain SGD (B_crit 128) -0.8 at 32, -0.67 at
    // 64, -0.2 at 512; momentum (B_crit 256) bends away from the line after batch 64, and no
    // trial reaches at 4096.
    let regimes = findings.workloads[0].regimes.as_ref().unwrap();
    assert_eq!(regimes.perfect_scaling, Some((4.0, 32.0)));
    assert_eq!(regimes.diminishing_returns, Some((32.0, 512.0)));
    assert_eq!(regimes.maximal_data_parallelism, Some((512.0, 4096.0)));
    // Momentum's windows below 64 sit near the perfect-scaling band's edge (true slopes -0.98
    // to -0.8 against an edge at -0.75); drawn from its own resampling stream (not plain
    // SGD's), their intervals straddle it, so the rule shows no perfect scaling there.
    let regimes = findings.workloads[1].regimes.as_ref().unwrap();
    assert_eq!(regimes.perfect_scaling, None);
    assert_eq!(regimes.maximal_data_parallelism, Some((1024.0, 4096.0)));
    assert!(
        findings.lines[1].starts_with("mlp/sgd: steps to result by batch size 4:16500 8:8500")
            && findings.lines[1].contains("B_crit 1"),
        "{:?}",
        findings.lines
    );
    assert!(
        findings.lines[2].contains("4096:none"),
        "{:?}",
        findings.lines
    );
}

/// Step time 2 ms + 0.05 ms per example, +-5%, given for the model (both workloads).
fn step_times() -> Vec<(String, u32, f64, f64, f64)> {
    BATCH_SIZES
        .iter()
        .map(|&b| {
            let t = 0.002 + 0.000_05 * f64::from(b);
            ("mlp".to_string(), b, t, 0.95 * t, 1.05 * t)
        })
        .collect()
}

#[test]
fn step_times_add_the_time_to_result_and_only_then() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "target-time");
    write_study(&dir, |_| true);
    let findings = render_target(&dir, &context(step_times())).unwrap();
    assert_files(&dir, true);
    // mlp/sgd: 1500 steps x 5.2 ms = 7.8 s at 64; 1000 x 8.4 ms = 8.4 s at 128, whose
    // interval (7.98-8.82 s) overlaps 64's (7.41-8.19 s).
    let time = findings.workloads[0].time_to_result.as_ref().unwrap();
    let soonest = &time.soonest;
    assert_eq!((soonest.batch_size, soonest.steps), (64, 1500));
    let close = |a: f64, b: f64| (a - b).abs() < 0.005;
    assert!(
        close(soonest.seconds, 7.8) && close(soonest.low, 7.41) && close(soonest.high, 8.19),
        "{soonest:?}"
    );
    assert_eq!(time.overlapping, [128]);
    assert!(
        findings
            .lines
            .iter()
            .any(|l| l.contains("soonest to the target at batch 64")),
        "{:?}",
        findings.lines
    );

    // Rendering again without step times removes the stale figure and leaves no temporary.
    let dir = out_dir(&tmp, "target-time-removed");
    write_study(&dir, |_| true);
    render_target(&dir, &context(step_times())).unwrap();
    assert_files(&dir, true);
    render_target(&dir, &context(vec![])).unwrap();
    assert_files(&dir, false);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn trials_without_search_rows_render_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "target-no-search");
    write_study(&dir, |w| w.momentum > 0.0);
    let findings = render_target(&dir, &context(vec![])).unwrap();
    assert_files(&dir, false);
    // The search.csv note only: five of eight trials reach in every cell that reaches.
    assert_eq!(findings.notes.len(), 1, "{:?}", findings.notes);
    assert!(
        findings.notes[0].starts_with("88 trial(s) have no row in search.csv (mlp-sgd-b4-t0"),
        "{:?}",
        findings.notes
    );
    // Steps to result do not need the metaparameters; the learning rate's scaling does.
    let sgd = &findings.workloads[0];
    let regimes = sgd.regimes.as_ref().unwrap();
    assert_eq!(regimes.perfect_scaling, Some((4.0, 32.0)));
    assert!(sgd.learning_rate.is_none());

    let dir = out_dir(&tmp, "target-no-search-file");
    write_study(&dir, |_| false);
    let findings = render_target(&dir, &context(vec![])).unwrap();
    assert_files(&dir, false);
    assert!(
        findings
            .notes
            .iter()
            .any(|n| n.contains("search.csv is missing")),
        "{:?}",
        findings.notes
    );
}

#[test]
fn an_empty_results_file_renders_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "target-no-evals");
    write_study(&dir, |_| true);
    // The header alone: as if the evaluations had been lost.
    std::fs::remove_file(dir.join("results.csv")).unwrap();
    append_rows::<TrainEval>(&dir.join("results.csv"), &[]).unwrap();
    let findings = render_target(&dir, &context(vec![])).unwrap();
    assert_files(&dir, false);
    assert!(
        findings.notes.iter().any(|n| n.contains(
            "ok trial(s) have no validation evaluation (results.csv is missing or holds no evaluation)"
        )),
        "{:?}",
        findings.notes
    );
    assert!(findings.workloads.iter().all(|w| w.regimes.is_none()));
    assert!(
        findings.lines[0].contains("not evaluated"),
        "{:?}",
        findings.lines
    );
}

#[test]
fn unreadable_directories_fail_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "target-empty");
    let err = render_target(&dir, &context(vec![]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("target-empty") && err.contains("trials.csv"),
        "{err}"
    );
    // A results.csv without even its header.
    std::fs::write(dir.join("results.csv"), "").unwrap();
    let err = render_target(&dir, &context(vec![]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("results.csv"), "{err}");
    // A malformed search.csv.
    let dir = out_dir(&tmp, "target-bad-search");
    write_study(&dir, |_| true);
    let path = dir.join("search.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen(",mlp/sgd,4,0,", ",mlp/sgd,four,0,", 1)).unwrap();
    let err = render_target(&dir, &context(vec![]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("search.csv") && err.contains("line 2, column 3 (`batch_size`)"),
        "{err}"
    );
}
