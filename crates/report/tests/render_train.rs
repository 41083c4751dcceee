//! End to end: a synthetic training study written through the public writers, rendered into
//! a run directory. Set BATCHLAB_FIGURE_DIR to keep the directory and look at the figures.

use std::path::{Path, PathBuf};

use batchlab_method::rows::append_rows;
use batchlab_method::rows::train::{done_trials, TrainEval, TrialRecord};
use batchlab_report::train::{
    render_train, ClaimRule, Published, TrainClaim, TrainContext, OUTPUT_FILES,
};

const BATCH_SIZES: [u32; 5] = [16, 32, 64, 128, 256];
const SEEDS: [u64; 3] = [0, 1, 2];

fn context() -> TrainContext {
    let published = |batch_size, series: &str, metric: &str, value| Published {
        batch_size,
        series: series.into(),
        metric: metric.into(),
        value,
        source: "seed 003 text, \"about\"".into(),
    };
    TrainContext {
        prediction: Default::default(),
        experiment: "synthetic-augmentation".into(),
        description: "A synthetic study shaped like the augmentation study.".into(),
        reproduces: Some("seed 003 case study (shape only)".into()),
        claim: Some("with augmentation, batch 128 reaches about 58%".into()),
        model: "small-cnn, input 3x200x200, 1 class, 1.2 M trainable parameters".into(),
        dataset: vec![
            "cats-vs-dogs (data directory datasets)".into(),
            "variant standard: 1200 train / 400 validation / 400 test examples".into(),
            "variant standard: skipped 3 corrupt JPEGs".into(),
        ],
        backend: "flex".into(),
        device: "cpu".into(),
        protocol: "two budgets: 5 epochs, and 375 steps for every batch size".into(),
        test_examples: 400,
        published: vec![
            published(128, "adam/augmented", "test_accuracy", 58.0),
            published(256, "adam/augmented", "test_accuracy", 57.5),
            published(16, "adam", "train_minutes", 0.25),
            published(512, "adam/augmented", "test_accuracy", 50.0),
        ],
        claims: vec![],
    }
}

/// Steps of a trial: 5 epochs of 1,200 (standard) or 2,400 (augmented) images with the last
/// partial batch dropped, or 375 under the steps budget.
fn steps(batch_size: u32, variant: &str, budget: &str) -> u64 {
    let examples = if variant == "augmented" { 2400 } else { 1200 };
    match budget {
        "steps" => 375,
        _ => 5 * (examples / u64::from(batch_size)),
    }
}

/// Accuracy falls with batch size under the epoch budget (less with augmentation) and stays
/// flat under the steps budget; seeds differ by a quarter point (one test example = 0.25).
fn accuracy(batch_size: u32, variant: &str, budget: &str, seed: u64) -> f64 {
    let octaves = f64::from(batch_size / 16).log2();
    let base = match (budget, variant) {
        ("steps", _) => 0.66,
        (_, "augmented") => 0.64 - 0.01 * octaves,
        _ => 0.66 - 0.03 * octaves,
    };
    base + 0.0025 * (seed as f64 - 1.0)
}

fn trial(batch_size: u32, variant: &str, budget: &str, seed: u64) -> (TrialRecord, Vec<TrainEval>) {
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
                budget: budget.into(),
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
        budget: budget.into(),
        status: "ok".into(),
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
fn write_study(
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
                        rec.status = "oom".into();
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

fn out_dir(tmp: &tempfile::TempDir, name: &str) -> PathBuf {
    let dir = std::env::var_os("BATCHLAB_FIGURE_DIR")
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

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

#[test]
fn each_claim_gets_the_verdict_its_rule_and_the_data_give() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "train-claims");
    write_study(&dir, |_, _, _| true, |_, _, _| true);
    let claim = |series: &str, budget: &str, rule| TrainClaim {
        id: None,
        claim: format!("claim {series} {budget} {rule:?}"),
        source: "seed 003".into(),
        series: series.into(),
        budget: budget.into(),
        rule,
    };
    let falls = ClaimRule::AccuracyFalls { from: 16, to: 128 };
    let holds = ClaimRule::AccuracyHolds {
        from: 16,
        to: 128,
        margin: 1.0,
    };
    let does_not_fall = ClaimRule::AccuracyDoesNotFall {
        from: 16,
        to: 128,
        margin: 1.0,
    };
    let ctx = TrainContext {
        claims: vec![
            // Standard data under the epochs budget: 66% -> 57%, seeds 0.25 points apart.
            claim("adam/standard", "epochs", falls.clone()),
            claim("adam/standard", "epochs", holds.clone()),
            // Augmented: 64% -> 61%, still a fall the seeds cannot explain.
            claim("adam/augmented", "epochs", holds.clone()),
            // Steps budget: flat at 66%.
            claim("adam/standard", "steps", holds.clone()),
            claim("adam/standard", "steps", falls.clone()),
            // Time = 0.01 s per step + 0.5 ms per example (+ 1 ms per step and seed): the
            // per-step overhead is the mechanism, each batch size within 20% of the line.
            claim(
                "adam/standard",
                "epochs",
                ClaimRule::TimeFollowsSteps {
                    reference: 128,
                    tolerance: 0.2,
                },
            ),
            // Every batch size is a power of two: no neighbours to compare with.
            claim(
                "adam/standard",
                "epochs",
                ClaimRule::PowersOfTwoFlat { tolerance: 0.03 },
            ),
            // Ambiguous and absent lines.
            claim("adam", "epochs", falls.clone()),
            claim("sgd", "epochs", falls),
            // Does not fall: flat under the steps budget; falls under the epochs budget.
            claim("adam/standard", "steps", does_not_fall.clone()),
            claim("adam/standard", "epochs", does_not_fall),
        ],
        ..context()
    };
    render_train(&dir, &ctx).unwrap();
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("## The claims, judged"), "{report}");
    let verdict_of = |row: usize| {
        let text = format!(
            "claim {} {} {:?}",
            ctx.claims[row].series, ctx.claims[row].budget, ctx.claims[row].rule
        );
        let line = report
            .lines()
            .find(|l| l.contains(&text))
            .unwrap_or_else(|| panic!("no row for {text}:\n{report}"));
        line.split(" | ").nth(2).unwrap().to_string()
    };
    assert_eq!(verdict_of(0), "**reproduces**");
    assert!(
        verdict_of(1).starts_with("**does not reproduce (it falls by 9.00 points, more than"),
        "{}",
        verdict_of(1)
    );
    assert!(
        verdict_of(2).starts_with("**does not reproduce (it falls by 3.00 points, more than"),
        "{}",
        verdict_of(2)
    );
    assert!(
        verdict_of(3).starts_with("**reproduces (within"),
        "{}",
        verdict_of(3)
    );
    assert!(
        verdict_of(4).starts_with(
            "**inconclusive (the smallest effect this test could have seen: a fall of"
        ),
        "{}",
        verdict_of(4)
    );
    assert!(
        verdict_of(5).starts_with("**reproduces**"),
        "{}",
        verdict_of(5)
    );
    assert!(
        verdict_of(6).starts_with("**cannot be tested here (the grid has no power of two"),
        "{}",
        verdict_of(6)
    );
    assert!(verdict_of(7).contains("names 2 lines"), "{}", verdict_of(7));
    assert!(
        verdict_of(8).contains("no line sgd was recorded"),
        "{}",
        verdict_of(8)
    );
    assert!(
        verdict_of(9).starts_with("**reproduces (no fall of 1"),
        "{}",
        verdict_of(9)
    );
    assert!(
        verdict_of(10).starts_with("**does not reproduce (it falls by 9.00 points, more than"),
        "{}",
        verdict_of(10)
    );
    assert!(
        report
            .contains("Relative to batch 128 (adam/standard line, epochs budget; Raschka's form)"),
        "{report}"
    );
    assert!(
        report.contains("| 16 | 8.33x |"),
        "375 / 45 steps: {report}"
    );
}

/// The verdict row of one claim judged on the Adam line at `batch_sizes`, three seeds each,
/// whose training times `seconds(batch size, seed)` gives.
fn row_of_one_claim(
    dir: &Path,
    batch_sizes: &[u32],
    seconds: impl Fn(u32, u64) -> f64,
    claim: &str,
    rule: ClaimRule,
) -> String {
    for &b in batch_sizes {
        for seed in SEEDS {
            let (mut rec, evals) = trial(b, "standard", "epochs", seed);
            rec.train_seconds = seconds(b, seed);
            append_rows(&dir.join("results.csv"), &evals).unwrap();
            append_rows(&dir.join("trials.csv"), &[rec]).unwrap();
        }
    }
    let ctx = TrainContext {
        claims: vec![TrainClaim {
            id: None,
            claim: claim.into(),
            source: "seed 002".into(),
            series: "adam".into(),
            budget: "epochs".into(),
            rule,
        }],
        ..context()
    };
    render_train(dir, &ctx).unwrap();
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    report
        .lines()
        .find(|l| l.contains(claim))
        .unwrap()
        .to_string()
}

#[test]
fn a_slow_power_of_two_is_noticed_and_a_flat_one_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let verdict_with = |name: &str, slowdown: f64| {
        // Seeds 0.1% apart: an equivalence within 3% can be shown with 3 of them.
        let seconds = |b: u32, seed: u64| {
            30.0 * (1.0 + 0.001 * seed as f64) * if b == 128 { slowdown } else { 1.0 }
        };
        row_of_one_claim(
            &out_dir(&tmp, name),
            &[127, 128, 129],
            seconds,
            "powers of two make no noticeable difference",
            ClaimRule::PowersOfTwoFlat { tolerance: 0.03 },
        )
    };
    let flat = verdict_with("flat", 1.0);
    assert!(flat.contains("| **reproduces** |"), "{flat}");
    assert!(flat.contains("vs 127 (90% interval"), "{flat}");
    let slow = verdict_with("slow", 1.10);
    assert!(
        slow.contains("**does not reproduce (a noticeable difference in all 2 comparisons)**"),
        "{slow}"
    );
}

#[test]
fn time_that_does_not_grow_with_the_steps_refutes_the_steps_mechanism() {
    let tmp = tempfile::tempdir().unwrap();
    // Larger batches, fewer steps, yet more time: a step's cost grows with the batch.
    let row = row_of_one_claim(
        &out_dir(&tmp, "no-mechanism"),
        &[100, 128, 156],
        |b, seed| (20.0 + 0.05 * f64::from(b)) * (1.0 + 0.001 * seed as f64),
        "time follows the steps",
        ClaimRule::TimeFollowsSteps {
            reference: 128,
            tolerance: 0.03,
        },
    );
    assert!(
        row.contains("**does not reproduce (more steps do not take more time"),
        "{row}"
    );
}

#[test]
fn a_faster_larger_batch_is_seen_and_a_slower_one_refutes_the_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let row = |name: &str, per_example: f64| {
        row_of_one_claim(
            &out_dir(&tmp, name),
            &[100, 512],
            |b, seed| (20.0 + per_example * f64::from(b)) * (1.0 + 0.001 * seed as f64),
            "the larger the batch size, the faster the training",
            ClaimRule::EpochTimeFalls { from: 100, to: 512 },
        )
    };
    let faster = row("faster", -0.01);
    assert!(faster.contains("**reproduces ("), "{faster}");
    let slower = row("slower", 0.01);
    assert!(
        slower.contains("**does not reproduce (batch 512 trains"),
        "{slower}"
    );
}

#[test]
fn the_best_batch_size_is_judged_by_the_sizes_the_seeds_cannot_tell_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "best-batch");
    write_study(&dir, |_, _, _| true, |_, _, _| true);
    let best = |budget: &str, b: u32| TrainClaim {
        id: None,
        claim: format!("the best batch size is {b} ({budget})"),
        source: "seed 003".into(),
        series: "adam/standard".into(),
        budget: budget.into(),
        rule: ClaimRule::BestBatch { best: b },
    };
    let ctx = TrainContext {
        // Epochs: 66% at 16, 3 points less each doubling, the seeds shifted alike in every
        // cell; steps: 66% everywhere.
        claims: vec![best("epochs", 16), best("epochs", 64), best("steps", 64)],
        ..context()
    };
    render_train(&dir, &ctx).unwrap();
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let row = |text: &str| {
        report
            .lines()
            .find(|l| l.contains(text))
            .unwrap_or_else(|| panic!("no row {text}"))
            .to_string()
    };
    let sixteen = row("is 16 (epochs)");
    assert!(sixteen.contains("| **reproduces** |"), "{sixteen}");
    let sixty_four = row("is 64 (epochs)");
    assert!(
        sixty_four.contains("**does not reproduce (16 is best here"),
        "{sixty_four}"
    );
    let flat = row("is 64 (steps)");
    assert!(
        flat.contains("**inconclusive (") && flat.contains("could be best: "),
        "{flat}"
    );
}
