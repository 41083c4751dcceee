//! The synthetic training study the render tests share, written through the public writers:
//! Adam on a standard and an augmented variant, batch 16..256, three seeds, under an epoch and
//! a steps budget; accuracy falls 3 points a doubling under the epoch budget (1 with
//! augmentation) and stays at 66% under the steps budget. Set BATCHLAB_FIGURE_DIR to keep the
//! directories and look at the figures.

#![allow(dead_code)] // each test file uses some of it

use batchlab_method::rows::Status;
use batchlab_report::About;
use std::path::{Path, PathBuf};

use batchlab_method::rows::append_rows;
use batchlab_method::rows::train::{TrainEval, TrialRecord};
use batchlab_report::train::{Metric, Published, TrainContext};

pub const BATCH_SIZES: [u32; 5] = [16, 32, 64, 128, 256];
pub const SEEDS: [u64; 3] = [0, 1, 2];

pub fn context() -> TrainContext {
    let published = |batch_size, series: &str, metric: Metric, value| Published {
        batch_size,
        series: series.into(),
        metric,
        value,
        source: "seed 003 text, \"about\"".into(),
    };
    TrainContext {
        about: About {
            experiment: "synthetic-augmentation".into(),
            description: "A synthetic study shaped like the augmentation study.".into(),
            reproduces: Some("seed 003 case study (shape only)".into()),
            claim: Some("with augmentation, batch 128 reaches about 58%".into()),
            backend: "flex".into(),
            device: "cpu".into(),
            protocol: "two budgets: 5 epochs, and 375 steps for every batch size".into(),
        },
        prediction: Default::default(),
        model: "small-cnn, input 3x200x200, 1 class, 1.2 M trainable parameters".into(),
        dataset: vec![
            "cats-vs-dogs (data directory datasets)".into(),
            "variant standard: 1200 train / 400 validation / 400 test examples".into(),
            "variant standard: skipped 3 corrupt JPEGs".into(),
        ],
        test_examples: 400,
        published: vec![
            published(128, "adam/augmented", Metric::TestAccuracy, 58.0),
            published(256, "adam/augmented", Metric::TestAccuracy, 57.5),
            published(16, "adam", Metric::TrainMinutes, 0.25),
            published(512, "adam/augmented", Metric::TestAccuracy, 50.0),
        ],
        claims: vec![],
    }
}

/// Steps of a trial: 5 epochs of 1,200 (standard) or 2,400 (augmented) images with the last
/// partial batch dropped, or 375 under the steps budget.
pub fn steps(batch_size: u32, variant: &str, budget: &str) -> u64 {
    let examples = if variant == "augmented" { 2400 } else { 1200 };
    match budget {
        "steps" => 375,
        _ => 5 * (examples / u64::from(batch_size)),
    }
}

/// Accuracy falls with batch size under the epoch budget (less with augmentation) and stays
/// flat under the steps budget; seeds differ by a quarter point (one test example = 0.25).
pub fn accuracy(batch_size: u32, variant: &str, budget: &str, seed: u64) -> f64 {
    let octaves = f64::from(batch_size / 16).log2();
    let base = match (budget, variant) {
        ("steps", _) => 0.66,
        (_, "augmented") => 0.64 - 0.01 * octaves,
        _ => 0.66 - 0.03 * octaves,
    };
    base + 0.0025 * (seed as f64 - 1.0)
}

pub fn trial(
    batch_size: u32,
    variant: &str,
    budget: &str,
    seed: u64,
) -> (TrialRecord, Vec<TrainEval>) {
    let id = format!("b{batch_size}-adam-{variant}-{budget}-s{seed}");
    let total = steps(batch_size, variant, budget);
    let per_step = 0.01 + 0.0005 * f64::from(batch_size) + 0.001 * seed as f64;
    let acc = accuracy(batch_size, variant, budget, seed);
    let evals = (1..=5u64)
        .map(|k| {
            let step = (total * k).div_ceil(5);
            TrainEval {
                trial: id.clone(),
                seed,
                batch_size,
                optimizer: "adam".into(),
                variant: variant.into(),
                budget: budget.parse().unwrap(),
                epoch: 5.0 * step as f64 / total as f64,
                step,
                examples: step * u64::from(batch_size),
                train_loss: 0.7 - 0.02 * k as f64,
                val_loss: 0.68 - 0.02 * k as f64,
                val_accuracy: acc * (0.8 + 0.04 * k as f64),
                train_seconds: per_step * step as f64,
                data_seconds: 0.1 * per_step * step as f64,
                eval_seconds: 0.5,
            }
        })
        .collect();
    let record = TrialRecord {
        trial: id,
        seed,
        batch_size,
        optimizer: "adam".into(),
        variant: variant.into(),
        budget: budget.parse().unwrap(),
        status: Status::Ok,
        epochs: 5.0,
        steps: total,
        examples: total * u64::from(batch_size),
        train_seconds: per_step * total as f64,
        data_seconds: 0.1 * per_step * total as f64,
        eval_seconds: 2.5,
        test_seconds: 0.4,
        test_loss: 0.6,
        test_accuracy: acc,
        message: String::new(),
    };
    (record, evals)
}

/// Writes the whole grid (60 trials) into `dir`, with one trial out of memory; `keep` says
/// which trials get written at all, `record` which of those get their trials.csv row.
pub fn write_study(
    dir: &Path,
    keep: impl Fn(u32, &str, u64) -> bool,
    record: impl Fn(u32, &str, u64) -> bool,
) {
    for budget in ["epochs", "steps"] {
        for variant in ["standard", "augmented"] {
            for b in BATCH_SIZES {
                for seed in SEEDS {
                    if !keep(b, variant, seed) {
                        continue;
                    }
                    let (mut rec, evals) = trial(b, variant, budget, seed);
                    let oom = b == 256 && variant == "augmented" && budget == "epochs" && seed == 2;
                    if oom {
                        rec.status = Status::Oom;
                        rec.test_accuracy = f64::NAN;
                        rec.test_loss = f64::NAN;
                        rec.message = "out of memory, \"tried\" 2 GiB\nat step 3".into();
                        append_rows(&dir.join("results.csv"), &evals[..1]).unwrap();
                    } else {
                        append_rows(&dir.join("results.csv"), &evals).unwrap();
                    }
                    if record(b, variant, seed) {
                        append_rows(&dir.join("trials.csv"), &[rec]).unwrap();
                    }
                }
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
