//! The study analysis and its sentences on small hand-made inputs; the whole rendering of
//! a synthetic run directory is in `tests/render_steps_to_target.rs`.

use crate::About;
use batchlab_method::rows::train::Budget;
use std::path::Path;

use super::analysis::time::{parse_step_times, time_to_result};
use super::analysis::Study;
use super::markdown::reading::{fit_sentence, regimes_sentence};
use super::{NoResult, RateRule, TargetCell, TargetContext};
use batchlab_method::rows::steps_to_target::SearchRow;
use batchlab_method::rows::train::{TrainEval, TrialRecord};

fn context() -> TargetContext {
    TargetContext {
        about: About {
            experiment: "unit".into(),
            description: String::new(),
            reproduces: None,
            claim: None,
            backend: "flex".into(),
            device: "cpu".into(),
            protocol: String::new(),
        },
        bands: Default::default(),
        replicates: vec![],
        search_spaces: vec![],
        dataset: vec![],
        target_error: 0.1,
        budget: batchlab_method::budget::StepBudget::new(10, 1.0, 1000, None, 1000).unwrap(),
        trials_per_batch: 2,
        trials_by_workload: vec![],
        budgets_by_workload: vec![],
        batch_sizes_by_workload: vec![],
        step_times: vec![],
        claims: vec![],
        prediction: Default::default(),
    }
}

fn record(id: &str, batch_size: u32, optimizer: &str, status: &str, steps: u64) -> TrialRecord {
    TrialRecord {
        trial: id.into(),
        seed: 0,
        batch_size,
        optimizer: optimizer.into(),
        variant: "mlp".into(),
        budget: Budget::Steps,
        status: status.parse().unwrap(),
        epochs: 0.0,
        steps,
        examples: 0,
        train_seconds: 0.0,
        data_seconds: 0.0,
        eval_seconds: 0.0,
        test_seconds: 0.0,
        test_loss: f64::NAN,
        test_accuracy: f64::NAN,
        message: String::new(),
    }
}

fn eval(r: &TrialRecord, step: u64, error: f64) -> TrainEval {
    TrainEval {
        trial: r.trial.clone(),
        seed: 0,
        batch_size: r.batch_size,
        optimizer: r.optimizer.clone(),
        variant: r.variant.clone(),
        budget: Budget::Steps,
        epoch: 0.0,
        step,
        examples: 0,
        train_loss: 1.0,
        val_loss: 1.0,
        val_accuracy: 1.0 - error,
        train_seconds: 0.0,
        data_seconds: 0.0,
        eval_seconds: 0.0,
    }
}

fn search(r: &TrialRecord, learning_rate: f64, momentum: f64) -> SearchRow {
    SearchRow {
        trial: r.trial.clone(),
        workload: format!("mlp/{}", r.optimizer),
        batch_size: r.batch_size,
        index: 0,
        learning_rate,
        momentum,
        effective_learning_rate: learning_rate / (1.0 - momentum),
    }
}

fn cell(batch_size: u32, steps: Option<u64>, learning_rate: Option<f64>) -> TargetCell {
    TargetCell {
        workload: "mlp/sgd".into(),
        batch_size,
        trials: 1,
        reached: usize::from(steps.is_some()),
        missed: usize::from(steps.is_none()),
        infeasible: 0,
        failed: 0,
        unevaluated: 0,
        steps_to_result: steps,
        best_trial: steps.map(|_| format!("b{batch_size}")),
        learning_rate,
        momentum: learning_rate.map(|_| 0.0),
        effective_learning_rate: learning_rate,
    }
}

#[test]
fn outcomes_are_counted_and_unevaluated_trials_set_apart() {
    // Batch 8: one trial reaches at 40 (and would have at 20 if the diverged one counted),
    // one diverged after reaching, one ok without evaluations, one oom.
    let reached = record("a", 8, "sgd", "ok", 40);
    let diverged = record("b", 8, "sgd", "diverged", 30);
    let silent = record("c", 8, "sgd", "ok", 1000);
    let oom = record("d", 8, "sgd", "oom", 0);
    // Batch 16: missed.
    let missed = record("e", 16, "sgd", "ok", 1000);
    let evals = vec![
        eval(&reached, 20, 0.3),
        eval(&reached, 40, 0.1),
        eval(&diverged, 20, 0.05),
        eval(&diverged, 30, f64::NAN),
        eval(&missed, 1000, 0.2),
        // Still running: no record.
        eval(&record("f", 16, "sgd", "ok", 0), 10, 0.5),
    ];
    let records = vec![reached.clone(), diverged, silent, oom, missed];
    let rows = vec![search(&reached, 0.1, 0.0)];
    let study = Study::new(Path::new("run"), &context(), &records, &evals, Some(rows)).unwrap();
    assert_eq!(study.workloads.len(), 1);
    let w = &study.workloads[0];
    assert!(!w.momentum);
    let c = &w.cells[0];
    assert_eq!(
        (c.trials, c.reached, c.infeasible, c.failed, c.unevaluated),
        (4, 1, 1, 1, 1)
    );
    assert_eq!(c.steps_to_result, Some(40));
    assert_eq!(c.best_trial.as_deref(), Some("a"));
    assert_eq!(c.learning_rate, Some(0.1));
    assert_eq!((w.cells[1].missed, w.cells[1].steps_to_result), (1, None));
    let notes = study.notes.join("\n");
    for needle in [
        "4 trial(s) have no row in search.csv (b, c, d, …)",
        "1 ok trial(s) have no validation evaluation",
        "1 trial(s) have evaluations in results.csv but no trials.csv row",
        "mlp/sgd at batch 16: 1 of 2",
    ] {
        assert!(notes.contains(needle), "no `{needle}` in\n{notes}");
    }
    assert_eq!(w.cells[1].no_result(), Some(NoResult::BeyondCap));
    assert!(
        w.regimes.is_err(),
        "one batch size with a result: no regimes"
    );
}

#[test]
fn a_target_error_that_is_not_a_number_is_refused() {
    // (An unknown status cannot reach here: trials.csv's reader refuses it, naming the line.)
    let mut ctx = context();
    ctx.target_error = f64::NAN;
    let err = Study::new(Path::new("run"), &ctx, &[], &[], None)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("target_error"), "{err}");
}

#[test]
fn momentum_is_read_from_the_search_rows() {
    let r = record("a", 8, "sgd-momentum", "ok", 40);
    let evals = vec![eval(&r, 40, 0.05)];
    let rows = vec![search(&r, 0.01, 0.9)];
    let study = Study::new(
        Path::new("run"),
        &context(),
        std::slice::from_ref(&r),
        &evals,
        Some(rows),
    )
    .unwrap();
    let w = &study.workloads[0];
    assert!(w.momentum);
    let e = w.cells[0].effective_learning_rate.unwrap();
    assert!((e - 0.1).abs() < 1e-12, "{e}");
    // Without search.csv the optimizer's label decides.
    let study = Study::new(Path::new("run"), &context(), &[r], &evals, None).unwrap();
    assert!(study.workloads[0].momentum);
    assert!(study.notes[0].contains("search.csv is missing"));
}

#[test]
fn step_times_are_checked_and_an_exact_label_wins_over_the_model() {
    let raw = vec![
        ("mlp".to_string(), 8, 1.0, 0.9, 1.1),
        ("mlp".to_string(), 16, 1.0, 0.9, 1.1),
        ("mlp/sgd".to_string(), 16, 0.5, 0.45, 0.55),
        ("mlp/sgd".to_string(), 32, 0.5, 0.6, 0.55),
        ("mlp/sgd".to_string(), 64, f64::NAN, 0.6, 0.55),
    ];
    let (times, notes) = parse_step_times(&raw);
    assert_eq!(times.len(), 3);
    assert_eq!(notes.len(), 2);
    assert!(notes[0].contains("mlp/sgd at batch 32"), "{notes:?}");
    let cells = vec![
        cell(8, Some(100), None),
        cell(16, Some(60), None),
        cell(32, Some(50), None),
    ];
    let t = time_to_result("mlp/sgd", "mlp", &cells, &times).unwrap();
    // 8: 100 s (90-110); 16: 60 x 0.5 = 30 s (27-33); 32: no usable step time.
    assert_eq!(t.points.len(), 2);
    assert_eq!(t.soonest.batch_size, 16);
    assert!((t.soonest.seconds - 30.0).abs() < 1e-9 && (t.soonest.high - 33.0).abs() < 1e-9);
    assert!(t.overlapping.is_empty());
    assert!(time_to_result("cnn/sgd", "cnn", &cells, &times).is_none());
}

/// `trials` plain-SGD trials per batch size, each reaching the target in 6400 / B steps
/// (perfect scaling).
fn scaling_perfectly(batch_sizes: &[u32], trials: usize) -> (Vec<TrialRecord>, Vec<TrainEval>) {
    let records: Vec<TrialRecord> = batch_sizes
        .iter()
        .flat_map(|&b| (0..trials).map(move |t| record(&format!("b{b}-t{t}"), b, "sgd", "ok", 0)))
        .collect();
    let evals = records
        .iter()
        .map(|r| eval(r, 6400 / u64::from(r.batch_size), 0.05))
        .collect();
    (records, evals)
}

#[test]
fn regimes_and_fit_are_put_in_words() {
    // Perfect scaling throughout: no plateau, and B_crit beyond the measured range.
    // Six equal trials per batch size: enough for a finite top (the 5th of 6 trials bounds
    // another search's best at 97.5%), and no spread, so zero-width intervals.
    let (records, evals) = scaling_perfectly(&[8, 16, 32, 64, 128], 6);
    let rows: Vec<SearchRow> = records
        .iter()
        .map(|r| search(r, 0.001 * f64::from(r.batch_size), 0.0))
        .collect();
    let mut ctx = context();
    ctx.trials_per_batch = 6;
    // A cap of 3x the most steps any batch size needs (800 at 8): no cap decides.
    ctx.budget = batchlab_method::budget::StepBudget::new(10, 1.0, 2400, None, 1000).unwrap();
    let study = Study::new(Path::new("run"), &ctx, &records, &evals, Some(rows)).unwrap();
    let w = &study.workloads[0];
    let regimes = regimes_sentence(w);
    assert!(
        regimes.contains("perfect scaling from batch 8 to 128")
            && regimes.contains(
                "no window shows maximal data parallelism up to batch 128 (the window 32 to 128 has a slope interval from -1 to -1 (perfect scaling))"
            ),
        "{regimes}"
    );
    let fit = fit_sentence(w);
    assert!(fit.contains("B_crit is not identified"), "{fit}");
    // Learning rate exactly proportional to B: slope 1 with a zero-width interval.
    let lr = w.learning_rate.unwrap();
    assert!((lr.slope - 1.0).abs() < 1e-9 && lr.perfect_scaling_range && lr.points == 5);
    assert_eq!(lr.rule(), RateRule::Linear);
    assert!(study.notes.is_empty(), "{:?}", study.notes);
}

#[test]
fn workloads_with_their_own_plan_are_judged_by_it() {
    let mut ctx = context();
    assert!(ctx.planned_at("cnn/sgd", 32));
    assert_eq!(ctx.trials_text(), "2");
    ctx.batch_sizes_by_workload = vec![("cnn/sgd".into(), vec![16, 64])];
    ctx.trials_by_workload = vec![("cnn/sgd".into(), 5), ("mlp/sgd".into(), 2)];
    assert!(ctx.planned_at("cnn/sgd", 64));
    assert!(!ctx.planned_at("cnn/sgd", 32));
    assert!(ctx.planned_at("mlp/sgd", 32));
    assert_eq!(ctx.planned_trials("cnn/sgd"), 5);
    assert_eq!(ctx.planned_trials("other"), 2);
    assert_eq!(ctx.trials_text(), "2 (cnn/sgd: 5)");
}

#[test]
fn a_batch_size_where_every_trial_diverged_is_not_blamed_on_the_budget() {
    // Batch 8 reaches the target; at batch 16 one trial diverged and one failed.
    let reached = record("a", 8, "sgd", "ok", 40);
    let diverged = record("b", 16, "sgd", "diverged", 30);
    let oom = record("c", 16, "sgd", "oom", 0);
    let evals = vec![
        eval(&reached, 40, 0.05),
        eval(&diverged, 20, 0.5),
        eval(&diverged, 30, f64::NAN),
    ];
    let records = vec![reached.clone(), diverged, oom];
    let study = Study::new(Path::new("run"), &context(), &records, &evals, None).unwrap();
    let cell = &study.workloads[0].cells[1];
    assert_eq!((cell.batch_size, cell.infeasible, cell.failed), (16, 1, 1));
    assert_eq!(cell.no_result(), Some(NoResult::NothingTrains));
}

#[test]
fn a_cap_below_three_times_a_neighbours_steps_is_noted() {
    // Steps 800, 400, 200 at 8, 16, 32 under a 1000-step cap: 3 x 800 and 3 x 400 exceed it.
    let (records, evals) = scaling_perfectly(&[8, 16, 32], 1);
    let ctx = context();
    let study = Study::new(Path::new("run"), &ctx, &records, &evals, None).unwrap();
    let note = study
        .notes
        .iter()
        .find(|n| n.starts_with("Caps that may decide"))
        .expect("a caps note");
    assert!(
        note.contains(
            "mlp/sgd at batch 8 (cap 1000 steps, steps to result 800; batch 16 needed 400)"
        ),
        "{note}"
    );
    assert!(note.contains("3 cell(s)"), "{note}");
}

#[test]
fn replicates_check_each_others_values_against_their_intervals() {
    // Six trials per cell, so that the 5th bounds the top. r1 and r2 overlap at batch 8; at 16
    // they are far apart.
    let mut records = vec![];
    let mut evals = vec![];
    let trials: [(&str, u32, &[u64]); 4] = [
        ("sgd-r1", 8, &[100, 105, 110, 115, 120, 150]),
        ("sgd-r2", 8, &[110, 115, 120, 125, 130, 140]),
        ("sgd-r1", 16, &[50, 52, 54, 56, 58, 60]),
        ("sgd-r2", 16, &[400, 404, 408, 412, 416, 420]),
    ];
    for (optimizer, b, steps) in trials {
        for (i, &s) in steps.iter().enumerate() {
            let r = record(&format!("{optimizer}-b{b}-t{i}"), b, optimizer, "ok", s);
            evals.push(eval(&r, s, 0.05));
            records.push(r);
        }
    }
    let mut ctx = context();
    ctx.replicates = vec![
        "mlp/sgd-r1".into(),
        "mlp/sgd-r2".into(),
        "mlp/absent".into(),
    ];
    let study = Study::new(Path::new("run"), &ctx, &records, &evals, None).unwrap();
    let c = study.coverage.as_ref().expect("two replicates found");
    assert_eq!(c.replicates, vec!["mlp/sgd-r1", "mlp/sgd-r2"]);
    assert_eq!(c.checks.len(), 4);
    let at = |b: f64, of: &str| {
        c.checks
            .iter()
            .find(|k| k.batch_size == b && k.interval_of == of)
            .unwrap()
            .covered
    };
    assert!(!at(16.0, "mlp/sgd-r1") && !at(16.0, "mlp/sgd-r2"));
    assert!(at(8.0, "mlp/sgd-r1"), "{:?}", c.checks);
    // Another search's best can fall below this one's: r2's interval reaches below its best
    // (110 - 1.115 x 20 = 88) and holds r1's 100.
    assert!(at(8.0, "mlp/sgd-r2"), "{:?}", c.checks);
    assert_eq!(c.covered(), 2);
    let (lo, hi) = c.rate_interval();
    assert!(lo < 0.5 && hi > 0.5 && hi < 1.0, "{lo} {hi}");
}

#[test]
fn the_steps_figure_keys_the_fitted_curve_only_where_one_is_drawn() {
    let key = "thin: fitted S(B)";
    for (batch_sizes, fitted) in [
        (&[8u32, 16, 32, 64][..], false),
        (&[8, 16, 32, 64, 128][..], true),
    ] {
        let (records, evals) = scaling_perfectly(batch_sizes, 6);
        let mut ctx = context();
        ctx.trials_per_batch = 6;
        ctx.budget = batchlab_method::budget::StepBudget::new(10, 1.0, 2400, None, 1000).unwrap();
        let study = Study::new(Path::new("run"), &ctx, &records, &evals, None).unwrap();
        assert_eq!(study.workloads[0].fit.is_ok(), fitted);
        let dir = tempfile::tempdir().unwrap();
        super::figures::draw_steps(dir.path(), &ctx, &study).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("steps_to_result.svg")).unwrap();
        assert_eq!(svg.contains(key), fitted, "{batch_sizes:?}");
    }
}
