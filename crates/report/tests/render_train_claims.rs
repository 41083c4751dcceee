//! The claims table of a training report, judged from the synthetic study (`synthetic_train`)
//! and from one-claim studies whose times are set directly.

mod synthetic_train;

use std::path::Path;

use batchlab_method::findings::{Finding, Verdict};
use batchlab_method::rows::append_rows;
use batchlab_method::rows::train::Budget;
use batchlab_report::train::{render_train, ClaimRule, TrainClaim, TrainContext};
use synthetic_train::*;

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
        budget: budget.parse().unwrap(),
        rule,
    };
    let falls = ClaimRule::AccuracyFalls {
        from: 16,
        to: 128,
        margin: 0.0,
    };
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
            // per-step overhead is the mechanism, but the per-example cost bends the line, and
            // each batch size against the line of the others (with that line's uncertainty)
            // lies up to 10% off it: batch 256's interval reaches past -20%.
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
    let claims = render_train(&dir, &ctx).unwrap().claims;
    assert_eq!(claims.len(), ctx.claims.len());
    let verdicts: Vec<Verdict> = claims.iter().map(|c| c.outcome.verdict()).collect();
    use Verdict::*;
    assert_eq!(
        verdicts,
        [
            Reproduces,
            DoesNotReproduce,
            DoesNotReproduce,
            Reproduces,
            Inconclusive,
            Inconclusive,
            CannotTest,
            CannotTest,
            CannotTest,
            Reproduces,
            DoesNotReproduce,
        ],
        "{claims:#?}"
    );
    // The falls measured: 9 points for the standard data, 3 for the augmented.
    let diff = |row: usize| claims[row].quantities["diff_points"];
    assert!((diff(1) + 9.0).abs() < 1e-6 && (diff(2) + 3.0).abs() < 1e-6);
    assert!(diff(3).abs() < 1e-6, "flat under the steps budget");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // Raschka's relative table: 375 / 45 steps at 16 against 128.
    assert!(report.contains("| 16 | 8.33x |"), "{report}");
}

/// The finding of one claim judged on the Adam line at `batch_sizes`, three seeds each,
/// whose training times `seconds(batch size, seed)` gives.
fn row_of_one_claim(
    dir: &Path,
    batch_sizes: &[u32],
    seconds: impl Fn(u32, u64) -> f64,
    claim: &str,
    rule: ClaimRule,
) -> Finding {
    row_of_one_claim_with(
        dir,
        batch_sizes,
        |rec, b, seed| rec.train_seconds = seconds(b, seed),
        claim,
        rule,
    )
}

/// The same, each trial's record set by `set` (batch size, seed).
fn row_of_one_claim_with(
    dir: &Path,
    batch_sizes: &[u32],
    set: impl Fn(&mut batchlab_method::rows::train::TrialRecord, u32, u64),
    claim: &str,
    rule: ClaimRule,
) -> Finding {
    for &b in batch_sizes {
        for seed in SEEDS {
            let (mut rec, evals) = trial(b, "standard", "epochs", seed);
            set(&mut rec, b, seed);
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
            budget: Budget::Epochs,
            rule,
        }],
        ..context()
    };
    let mut claims = render_train(dir, &ctx).unwrap().claims;
    assert_eq!(claims.len(), 1);
    claims.remove(0)
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
    assert_eq!(flat.outcome.verdict(), Verdict::Reproduces, "{flat:?}");
    assert_eq!(flat.quantities["pairs"], 2.0, "128 against 127 and 129");
    let slow = verdict_with("slow", 1.10);
    assert_eq!(
        slow.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{slow:?}"
    );
}

#[test]
fn the_inference_rule_reads_the_test_pass_not_training() {
    let tmp = tempfile::tempdir().unwrap();
    // Training flat; the test pass 10% slower at 128 (seeds 0.1% apart).
    let row = |name: &str, rule: ClaimRule| {
        row_of_one_claim_with(
            &out_dir(&tmp, name),
            &[127, 128, 129],
            |rec, b, seed| {
                let jitter = 1.0 + 0.001 * seed as f64;
                rec.train_seconds = 30.0 * jitter;
                rec.test_seconds = 2.0 * jitter * if b == 128 { 1.1 } else { 1.0 };
            },
            "a power of two is no different",
            rule,
        )
    };
    let inference = row(
        "inference",
        ClaimRule::InferencePowersOfTwoFlat { tolerance: 0.03 },
    );
    assert_eq!(
        inference.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{inference:?}"
    );
    assert!(inference.measured.contains("128 (2.20 s)"), "{inference:?}");
    let training = row("training", ClaimRule::PowersOfTwoFlat { tolerance: 0.03 });
    assert_eq!(
        training.outcome.verdict(),
        Verdict::Reproduces,
        "{training:?}"
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
    assert_eq!(row.outcome.verdict(), Verdict::DoesNotReproduce, "{row:?}");
    assert!(row.quantities["seconds_per_step_high95"] < 0.0, "{row:?}");
}

/// With two numbers of steps a line through both fits each exactly, so no departure could
/// show: the rule cannot judge that, rather than pass it.
#[test]
fn two_numbers_of_steps_cannot_judge_the_steps_mechanism() {
    let tmp = tempfile::tempdir().unwrap();
    let row = row_of_one_claim(
        &out_dir(&tmp, "two-step-counts"),
        &[100, 128],
        |b, seed| (20.0 + 0.01 * f64::from(b)) * (1.0 + 0.001 * seed as f64),
        "time follows the steps",
        ClaimRule::TimeFollowsSteps {
            reference: 128,
            tolerance: 0.03,
        },
    );
    assert_eq!(row.outcome.verdict(), Verdict::CannotTest, "{row:?}");
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
    assert_eq!(faster.outcome.verdict(), Verdict::Reproduces, "{faster:?}");
    assert!(faster.quantities["log_ratio"] < 0.0, "{faster:?}");
    let slower = row("slower", 0.01);
    assert_eq!(
        slower.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{slower:?}"
    );
    assert!(slower.quantities["log_ratio"] > 0.0, "{slower:?}");
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
        budget: budget.parse().unwrap(),
        rule: ClaimRule::BestBatch { best: b },
    };
    let ctx = TrainContext {
        // Epochs: 66% at 16, 3 points less each doubling, the seeds shifted alike in every
        // cell; steps: 66% everywhere.
        claims: vec![best("epochs", 16), best("epochs", 64), best("steps", 64)],
        ..context()
    };
    let claims = render_train(&dir, &ctx).unwrap().claims;
    let [sixteen, sixty_four, flat] = &claims[..] else {
        panic!("{claims:?}");
    };
    assert_eq!(
        sixteen.outcome.verdict(),
        Verdict::Reproduces,
        "{sixteen:?}"
    );
    assert_eq!(sixty_four.outcome.verdict(), Verdict::DoesNotReproduce);
    assert_eq!(
        sixty_four.quantities["best_observed"], 16.0,
        "{sixty_four:?}"
    );
    assert_eq!(flat.outcome.verdict(), Verdict::Inconclusive, "{flat:?}");
    assert!(flat.quantities["could_be_best"] >= 2.0, "{flat:?}");
}

#[test]
fn a_local_minimum_needs_both_neighbours_slower_and_one_faster_refutes_it() {
    let tmp = tempfile::tempdir().unwrap();
    // Training times at 127, 128 and 129: `factor(b)` times 30 s, the seeds `spread` apart.
    let row = |name: &str, factor: fn(u32) -> f64, spread: f64| {
        row_of_one_claim(
            &out_dir(&tmp, name),
            &[127, 128, 129],
            |b, seed| 30.0 * factor(b) * (1.0 + spread * seed as f64),
            "one below or above 128 trains slower",
            ClaimRule::LocalMinimumAt {
                below: 127,
                at: 128,
                above: 129,
            },
        )
    };
    let minimum = row("minimum", |b| if b == 128 { 1.0 } else { 1.02 }, 0.001);
    assert_eq!(
        minimum.outcome.verdict(),
        Verdict::Reproduces,
        "{minimum:?}"
    );
    assert!(minimum.quantities["log_ratio_below"] > 0.0, "{minimum:?}");
    assert!(minimum.measured.contains("127 (30.63 s)"), "{minimum:?}");
    let falling = row("falling", |b| 1.0 - 0.02 * f64::from(b - 127), 0.001);
    assert_eq!(
        falling.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{falling:?}"
    );
    assert!(
        falling
            .outcome
            .reason()
            .unwrap()
            .contains("batch 129 trains 2.0% faster"),
        "{falling:?}"
    );
    // Level, and seeds 5% apart: nothing shown either way.
    let level = row("level", |_| 1.0, 0.05);
    assert_eq!(level.outcome.verdict(), Verdict::Inconclusive, "{level:?}");
    let missing = row_of_one_claim(
        &out_dir(&tmp, "missing"),
        &[127, 128],
        |_, seed| 30.0 * (1.0 + 0.001 * seed as f64),
        "one below or above 128 trains slower",
        ClaimRule::LocalMinimumAt {
            below: 127,
            at: 128,
            above: 129,
        },
    );
    assert_eq!(
        missing.outcome.verdict(),
        Verdict::CannotTest,
        "{missing:?}"
    );
}
