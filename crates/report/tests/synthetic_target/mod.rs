//! The synthetic steps-to-target study the render tests share, written through the public
//! writers. Set BATCHLAB_FIGURE_DIR to keep the directories and look at the figures.
//!
//! Two workloads whose best trials follow S(B) = S_min (1 + B_crit / B), rounded up to a
//! multiple of the evaluation interval K as the runner's evaluations would:
//!
//! - `mlp/sgd`: 500 (1 + 128 / B), best learning rate 0.0025 B up to batch 32 (linear
//!   scaling over the perfect-scaling range), flat beyond;
//! - `mlp/sgd-momentum`: 300 (1 + 256 / B), best momentum 0.9 and learning rate
//!   0.001 sqrt(B / 4) (square-root scaling); at batch 4096 no trial reaches the target.
//!
//! Every (workload, batch size) has eight trials: the best, four 1% to 4% slower (the near
//! misses a refining stage finds: five reaching trials bound the top of an interval of another
//! search's best), one that misses, one that diverges right after reaching the target in half
//! the best's steps (infeasible: it must not count), and one that diverges early.

#![allow(dead_code)] // each test file uses some of it

use batchlab_report::About;
use std::path::{Path, PathBuf};

use batchlab_method::rows::append_rows;
use batchlab_method::rows::steps_to_target::SearchRow;
use batchlab_method::rows::train::{Budget, TrainEval, TrialRecord};
use batchlab_report::steps_to_target::{TargetContext, OUTPUT_FILES, TIME_FILES};

pub const K: u64 = 10;
pub const MAX_STEPS: u64 = 60_000;
pub const TARGET: f64 = 0.1;
pub const BATCH_SIZES: [u32; 11] = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
pub const TRIALS: usize = 8;

pub struct Workload {
    pub optimizer: &'static str,
    pub s_min: f64,
    pub b_crit: f64,
    pub momentum: f64,
}

pub const WORKLOADS: [Workload; 2] = [
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

pub fn context(step_times: Vec<(String, u32, f64, f64, f64)>) -> TargetContext {
    TargetContext {
        about: About {
            experiment: "synthetic-steps-to-target".into(),
            description: "A synthetic study shaped like the steps-to-target study.".into(),
            reproduces: Some("Shallue et al. 2018, Figure 1 (shape only)".into()),
            claim: Some("perfect scaling, then diminishing returns, then a plateau".into()),
            backend: "flex".into(),
            device: "cpu".into(),
            protocol: "8 quasi-random trials per batch size and workload".into(),
        },
        bands: Default::default(),
        replicates: vec![],
        search_spaces: WORKLOADS
            .iter()
            .map(|w| {
                let space = batchlab_report::steps_to_target::SearchSpace {
                    learning_rate: [1e-4, 10.0],
                    one_minus_momentum: (w.momentum > 0.0).then_some([1e-3, 1.0]),
                };
                (format!("mlp/{}", w.optimizer), space)
            })
            .collect(),
        dataset: vec!["fashion-mnist (synthetic rows)".into()],
        target_error: TARGET,
        budget: batchlab_method::budget::StepBudget::new(K, 1.0, MAX_STEPS, None, 60_000).unwrap(),
        trials_per_batch: TRIALS,
        trials_by_workload: vec![],
        budgets_by_workload: vec![],
        batch_sizes_by_workload: vec![],
        step_times,
        claims: vec![],
        prediction: Default::default(),
    }
}

/// `x` rounded up to a multiple of K.
pub fn ceil_k(x: f64) -> u64 {
    (x / K as f64).ceil() as u64 * K
}

/// Steps to result of the best trial.
pub fn best_steps(w: &Workload, b: u32) -> u64 {
    ceil_k(w.s_min * (1.0 + w.b_crit / f64::from(b)))
}

pub fn best_learning_rate(w: &Workload, b: u32) -> f64 {
    let b = f64::from(b);
    if w.momentum > 0.0 {
        0.001 * (b / 4.0).sqrt()
    } else {
        0.0025 * b.min(32.0)
    }
}

/// How trial `i` goes: (status, evaluations as (step, error), steps taken).
pub fn plan(w: &Workload, b: u32, i: usize) -> (&'static str, Vec<(u64, f64)>, u64) {
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
        // Near misses of the best, as a refining stage finds them: their spacing sets the
        // width of the intervals the regimes are judged with (about 5% either side).
        3..=6 => reach(ceil_k((1.0 + 0.01 * (i - 2) as f64) * s as f64)),
        _ if b == 4096 && w.momentum == 0.0 => ("oom", vec![], 0),
        _ => ("diverged", vec![(K, 0.9)], 2 * K),
    }
}

/// Writes the whole study into `dir`; `search` says which workloads get search.csv rows.
pub fn write_study(dir: &Path, search: impl Fn(&Workload) -> bool) {
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
                        budget: Budget::Steps,
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
                    let factor = [3.0, 0.5, 1.0, 0.7, 0.4, 1.3, 0.8, 5.0][i];
                    let momentum = if w.momentum > 0.0 {
                        [0.5, 0.99, 0.9, 0.95, 0.8, 0.85, 0.93, 0.999][i]
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
                    budget: Budget::Steps,
                    status: status.parse().unwrap(),
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

pub fn out_dir(tmp: &tempfile::TempDir, name: &str) -> PathBuf {
    let dir = std::env::var_os("BATCHLAB_FIGURE_DIR")
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn assert_files(dir: &Path, with_time: bool) {
    for file in OUTPUT_FILES {
        let path = dir.join(file);
        assert!(path.is_file(), "{file} missing");
    }
    for file in TIME_FILES {
        assert_eq!(dir.join(file).is_file(), with_time, "{file}");
    }
}
