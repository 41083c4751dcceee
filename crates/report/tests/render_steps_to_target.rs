//! End to end: a synthetic steps-to-target study written through the public writers,
//! rendered into a run directory. Set BATCHLAB_FIGURE_DIR to keep the directories and look
//! at the figures.
//!
//! Two workloads whose best trials follow S(B) = S_min (1 + B_crit / B), rounded up to a
//! multiple of the evaluation interval K as the runner's evaluations would:
//!
//! - `mlp/sgd`: 500 (1 + 128 / B), best learning rate 0.0025 B up to batch 32 (linear
//!   scaling over the perfect-scaling range), flat beyond;
//! - `mlp/sgd-momentum`: 300 (1 + 256 / B), best momentum 0.9 and learning rate
//!   0.001 sqrt(B / 4) (square-root scaling); at batch 4096 no trial reaches the target.
//!
//! Every (workload, batch size) has six trials: the best, two 5% and 10% slower (the near
//! misses a refining stage finds), one that misses,
//! one that diverges right after reaching the target in half the best's steps (infeasible:
//! it must not count), and one that diverges early.

use std::path::{Path, PathBuf};

use batchlab_method::rows::append_rows;
use batchlab_method::rows::steps_to_target::SearchRow;
use batchlab_method::rows::train::{TrainEval, TrialRecord};
use batchlab_report::steps_to_target::{
    render_target, TargetClaim, TargetClaimRule, TargetContext, OUTPUT_FILES, TIME_FILES,
};

const K: u64 = 10;
const MAX_STEPS: u64 = 60_000;
const TARGET: f64 = 0.1;
const BATCH_SIZES: [u32; 11] = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
const TRIALS: usize = 6;

struct Workload {
    optimizer: &'static str,
    s_min: f64,
    b_crit: f64,
    momentum: f64,
}

const WORKLOADS: [Workload; 2] = [
    Workload {
        optimizer: "sgd",
        s_min: 500.0,
        b_crit: 128.0,
        momentum: 0.0,
    },
    Workload {
        optimizer: "sgd-momentum",
        s_min: 300.0,
        b_crit: 256.0,
        momentum: 0.9,
    },
];

fn context(step_times: Vec<(String, u32, f64, f64, f64)>) -> TargetContext {
    TargetContext {
        experiment: "synthetic-steps-to-target".into(),
        description: "A synthetic study shaped like the steps-to-target study.".into(),
        reproduces: Some("Shallue et al. 2018, Figure 1 (shape only)".into()),
        claim: Some("perfect scaling, then diminishing returns, then a plateau".into()),
        dataset: vec!["fashion-mnist (synthetic rows)".into()],
        backend: "flex".into(),
        device: "cpu".into(),
        protocol: "6 quasi-random trials per batch size and workload".into(),
        target_error: TARGET,
        budget: batchlab_method::budget::StepBudget::new(K, 1.0, MAX_STEPS, None, 60_000).unwrap(),
        trials_per_batch: TRIALS,
        trials_by_workload: vec![],
        budgets_by_workload: vec![],
        batch_sizes_by_workload: vec![],
        search_space: vec![
            "learning rate log-uniform in [1e-4, 10]".into(),
            "1 - momentum log-uniform in [1e-3, 1] (momentum workloads)".into(),
        ],
        step_times,
        claims: vec![],
        prediction: Default::default(),
    }
}

/// `x` rounded up to a multiple of K.
fn ceil_k(x: f64) -> u64 {
    (x / K as f64).ceil() as u64 * K
}

/// Steps to result of the best trial.
fn best_steps(w: &Workload, b: u32) -> u64 {
    ceil_k(w.s_min * (1.0 + w.b_crit / f64::from(b)))
}

fn best_learning_rate(w: &Workload, b: u32) -> f64 {
    let b = f64::from(b);
    if w.momentum > 0.0 {
        0.001 * (b / 4.0).sqrt()
    } else {
        0.0025 * b.min(32.0)
    }
}

/// How trial `i` goes: (status, evaluations as (step, error), steps taken).
fn plan(w: &Workload, b: u32, i: usize) -> (&'static str, Vec<(u64, f64)>, u64) {
    let s = best_steps(w, b);
    let none_reach = w.momentum > 0.0 && b == 4096;
    let reach = |at: u64| {
        if none_reach {
            ("ok", vec![(K, 0.8), (MAX_STEPS, 0.2)], MAX_STEPS)
        } else {
            (
                "ok",
                vec![(K, 0.8), (at - K, TARGET + 0.05), (at, TARGET)],
                at,
            )
        }
    };
    match i {
        0 => {
            let half = ceil_k(s as f64 / 2.0);
            let plan = vec![(K, 0.8), (half, 0.05), (half + K, f64::NAN)];
            ("diverged", plan, half + K)
        }
        1 => ("ok", vec![(K, 0.8), (MAX_STEPS, 0.3)], MAX_STEPS),
        2 => reach(s),
        // Two near misses of the best, as a refining stage finds them: they set the width of
        // the bootstrap intervals the regimes are judged with (about 10% above the best).
        3 => reach(ceil_k(1.05 * s as f64)),
        4 => reach(ceil_k(1.1 * s as f64)),
        _ if b == 4096 && w.momentum == 0.0 => ("oom", vec![], 0),
        _ => ("diverged", vec![(K, 0.9)], 2 * K),
    }
}

/// Writes the whole study into `dir`; `search` says which workloads get search.csv rows.
fn write_study(dir: &Path, search: impl Fn(&Workload) -> bool) {
    for w in &WORKLOADS {
        for b in BATCH_SIZES {
            for i in 0..TRIALS {
                let id = format!("mlp-{}-b{b}-t{i}", w.optimizer);
                let (status, evals, steps) = plan(w, b, i);
                let rows: Vec<TrainEval> = evals
                    .iter()
                    .map(|&(step, error)| TrainEval {
                        trial: id.clone(),
                        seed: i as u64,
                        batch_size: b,
                        optimizer: w.optimizer.into(),
                        variant: "mlp".into(),
                        budget: "steps".into(),
                        epoch: 0.0,
                        step,
                        examples: step * u64::from(b),
                        train_loss: 0.5,
                        val_loss: 0.5,
                        val_accuracy: 1.0 - error,
                        train_seconds: step as f64 * 1e-3,
                        data_seconds: 0.0,
                        eval_seconds: 0.1,
                    })
                    .collect();
                if !rows.is_empty() {
                    append_rows(&dir.join("results.csv"), &rows).unwrap();
                }
                if search(w) {
                    // The best trial (2) gets the planned rates; the others are spread
                    // around it, as a search's would be.
                    let factor = [3.0, 0.5, 1.0, 0.7, 0.4, 5.0][i];
                    let momentum = if w.momentum > 0.0 {
                        [0.5, 0.99, 0.9, 0.95, 0.8, 0.999][i]
                    } else {
                        0.0
                    };
                    let learning_rate = factor * best_learning_rate(w, b);
                    let row = SearchRow {
                        trial: id.clone(),
                        workload: format!("mlp/{}", w.optimizer),
                        batch_size: b,
                        index: i as u64,
                        learning_rate,
                        momentum,
                        effective_learning_rate: learning_rate / (1.0 - momentum),
                    };
                    append_rows(&dir.join("search.csv"), &[row]).unwrap();
                }
                let record = TrialRecord {
                    trial: id,
                    seed: i as u64,
                    batch_size: b,
                    optimizer: w.optimizer.into(),
                    variant: "mlp".into(),
                    budget: "steps".into(),
                    status: status.into(),
                    epochs: 0.0,
                    steps,
                    examples: steps * u64::from(b),
                    train_seconds: steps as f64 * 1e-3,
                    data_seconds: 0.0,
                    eval_seconds: 0.1,
                    test_seconds: f64::NAN,
                    test_loss: f64::NAN,
                    test_accuracy: f64::NAN,
                    message: if status == "oom" {
                        "out of memory".into()
                    } else {
                        String::new()
                    },
                };
                append_rows(&dir.join("trials.csv"), &[record]).unwrap();
            }
        }
    }
}

fn out_dir(tmp: &tempfile::TempDir, name: &str) -> PathBuf {
    let dir = std::env::var_os("BATCHLAB_FIGURE_DIR")
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The part of `report` under `### heading`, up to the next heading.
fn section<'a>(report: &'a str, heading: &str) -> &'a str {
    let start = report
        .find(&format!("### {heading}\n"))
        .unwrap_or_else(|| panic!("no section {heading}:\n{report}"));
    let rest = &report[start + 4..];
    let end = rest.find("\n#").unwrap_or(rest.len());
    &rest[..end]
}

/// The number after `B_crit = ` in `text`.
fn b_crit(text: &str) -> f64 {
    let at = text.find("B_crit = ").expect("a fitted B_crit") + "B_crit = ".len();
    let number: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    number.parse().unwrap()
}

fn assert_files(dir: &Path, with_time: bool) {
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
    for file in TIME_FILES {
        assert_eq!(dir.join(file).is_file(), with_time, "{file}");
    }
}

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
        summary.contains("mlp/sgd,4,6,3,1,2,0,0,16500,mlp-sgd-b4-t2,0.01,0.0,0.01"),
        "{summary}"
    );
    assert!(
        summary.contains("mlp/sgd,4096,6,3,1,1,1,0,520,mlp-sgd-b4096-t2,"),
        "{summary}"
    );
    assert!(
        summary.contains("mlp/sgd-momentum,4096,6,0,4,2,0,0,,,,,"),
        "{summary}"
    );

    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let sgd = section(&report, "mlp/sgd");
    let estimate = b_crit(sgd);
    assert!(
        (estimate - 128.0).abs() <= 0.2 * 128.0,
        "B_crit {estimate}:\n{sgd}"
    );
    for needle in [
        "perfect scaling from batch 4 to 16",
        "diminishing returns from batch 16 to 512",
        "maximal data parallelism from batch 512 to 4096",
        "consistent with linear scaling (slope 1), not with square-root scaling",
        "Steps to result: 16500 at batch 4, 8500 at batch 8,",
    ] {
        assert!(sgd.contains(needle), "mlp/sgd lacks `{needle}`:\n{sgd}");
    }
    let momentum = section(&report, "mlp/sgd-momentum");
    let estimate = b_crit(momentum);
    assert!(
        (estimate - 256.0).abs() <= 0.2 * 256.0,
        "B_crit {estimate}:\n{momentum}"
    );
    for needle in [
        // Cumulative from batch 4 with the ~10% slack of the intervals: B_crit 256 bends the
        // curve away from the line before batch 32; no trial reaches at 4096, steps grew.
        "perfect scaling from batch 4 to 16",
        "maximal data parallelism from batch 1024 to 4096",
        "The best effective learning rate lr / (1 - momentum) scales as B^0.5",
        "consistent with square-root scaling (slope 0.5), not with linear scaling",
        "No trial reached the target within the step budget (at most 60000 steps) at batch 4096 (4 missed, 2 diverged of 6 trials): steps to result there are beyond the cap",
    ] {
        assert!(
            momentum.contains(needle),
            "mlp/sgd-momentum lacks `{needle}`:\n{momentum}"
        );
    }
    for needle in [
        "best of N = 6 trials",
        "biased downward as N grows",
        "rounded up to the next evaluation step",
        "perfect scaling ends for mlp/sgd at batch 16 and mlp/sgd-momentum at batch 16",
        "mlp: sgd-momentum scales perfectly to batch 16, plain SGD to batch 16: no further",
        "steps_to_result.png",
        "best_learning_rate.png",
        "search_space.png",
    ] {
        assert!(report.contains(needle), "report.md lacks `{needle}`");
    }
    assert!(!report.contains("time_to_result"), "{report}");
    assert!(!report.contains("Missing and partial"), "{report}");

    assert_eq!(findings.workloads.len(), 2);
    assert_eq!(findings.cells.len(), 22);
    assert!(findings.notes.is_empty(), "{:?}", findings.notes);
    let regimes = findings.workloads[0].regimes.as_ref().unwrap();
    assert_eq!(regimes.perfect_scaling, Some((4.0, 16.0)));
    assert_eq!(regimes.maximal_data_parallelism, Some((512.0, 4096.0)));
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
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // mlp/sgd: 1500 steps x 5.2 ms = 7.8 s at 64; 1000 x 8.4 ms = 8.4 s at 128, whose
    // interval (7.98-8.82 s) overlaps 64's (7.41-8.19 s).
    let sgd = section(&report, "mlp/sgd");
    assert!(
        sgd.contains("mlp/sgd reaches the target soonest at batch 64: 1500 steps x step time = 7.8 s (interval 7.41 s–8.19 s"),
        "{sgd}"
    );
    assert!(sgd.contains("batch size(s) 128 overlap"), "{sgd}");
    assert!(report.contains("time_to_result.png"), "{report}");
    let soonest = findings.workloads[0].time_to_result.as_ref().unwrap();
    assert_eq!(soonest.soonest.batch_size, 64);
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
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("## Missing and partial data")
            && report.contains("66 trial(s) have no row in search.csv (mlp-sgd-b4-t0"),
        "{report}"
    );
    // Steps to result do not need the metaparameters.
    let sgd = section(&report, "mlp/sgd");
    assert!(
        sgd.contains("perfect scaling from batch 4 to 16")
            && sgd.contains("learning rate's scaling is not fitted"),
        "{sgd}"
    );
    assert_eq!(findings.notes.len(), 1, "{:?}", findings.notes);

    let dir = out_dir(&tmp, "target-no-search-file");
    write_study(&dir, |_| false);
    render_target(&dir, &context(vec![])).unwrap();
    assert_files(&dir, false);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("search.csv is missing"), "{report}");
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
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("ok trial(s) have no validation evaluation (results.csv is missing or holds no evaluation)"),
        "{report}"
    );
    assert!(report.contains("The regimes cannot be located"), "{report}");
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

fn claim(workload: &str, rule: TargetClaimRule, versus: Option<&str>) -> TargetClaim {
    TargetClaim {
        claim: format!("{rule:?}"),
        source: "a test".into(),
        workload: workload.into(),
        rule,
        versus: versus.map(str::to_string),
    }
}

/// The verdict cell of the claims table's row whose claim cell starts with `start`.
fn verdict_of<'a>(report: &'a str, start: &str) -> &'a str {
    let table = &report[report.find("## Claims").expect("a claims section")..];
    let row = table
        .lines()
        .find(|l| l.starts_with(&format!("| \"{start}")))
        .unwrap_or_else(|| panic!("no row {start}:\n{table}"));
    row.split(" | ").nth(2).unwrap()
}

#[test]
fn each_claim_is_judged_from_the_curves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "target-claims");
    write_study(&dir, |_| true);
    let mut ctx = context(vec![]);
    use TargetClaimRule::*;
    ctx.claims = vec![
        claim("mlp/sgd", ThreeRegimes, None),
        claim("mlp/sgd-momentum", ExtendsPerfectScaling, Some("mlp/sgd")),
        claim("mlp/sgd", MatchesSearch, Some("mlp/sgd-momentum")),
        claim("mlp/adam", ThreeRegimes, None),
    ];
    render_target(&dir, &ctx).unwrap();
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // Perfect 4-16, diminishing 16-512, plateau 512-4096 (see the regimes test above).
    assert_eq!(
        verdict_of(&report, "ThreeRegimes\" (a test; mlp/sgd)"),
        "**reproduces**"
    );
    // Both end at batch 16 on this grid.
    assert_eq!(
        verdict_of(&report, "ExtendsPerfectScaling"),
        "**does not reproduce**"
    );
    // S_sgd = 500 + 64000 / B against S_momentum = 300 + 76800 / B: plain SGD needs fewer
    // steps below batch 64 and more above it.
    let matched = verdict_of(&report, "MatchesSearch");
    assert!(matched.starts_with("**partly: as low at "), "{matched}");
    assert!(verdict_of(&report, "ThreeRegimes\" (a test; mlp/adam)")
        .contains("cannot be tested here: no data for mlp/adam"));
}
