//! The claims table of a training report, judged from the synthetic study (`synthetic_train`)
//! and from one-claim studies whose times are set directly.

mod synthetic_train;

use std::path::Path;

use batchlab_method::rows::append_rows;
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
) -> String {
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
    assert!(
        inference.contains("**does not reproduce (a noticeable difference in all 2 comparisons)**"),
        "{inference}"
    );
    assert!(inference.contains("128 (2.20 s)"), "{inference}");
    let training = row("training", ClaimRule::PowersOfTwoFlat { tolerance: 0.03 });
    assert!(training.contains("| **reproduces** |"), "{training}");
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
