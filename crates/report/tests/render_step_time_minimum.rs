//! "One below or one above it is slower" on a step-time sweep (`analysis.local_minimum_at`):
//! synthetic rounds around batch 128 with a planted cost per example at each neighbour, the
//! verdict the rounds' paired differences decide.

mod synthetic_step_time;

use batchlab_method::findings::{Finding, Verdict};
use batchlab_method::rows::{step_time::StepSample, Status};
use batchlab_report::step_time::StepTimeContext;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use synthetic_step_time::*;

/// `rounds` rounds over batch 126-130, 5 samples a visit: 0.1 ms per example times `cost(b)`,
/// each round's level drifting by up to ±`drift`/2 for all sizes alike and each sample by
/// ±`noise`/2.
fn rounds_with(rounds: u32, drift: f64, noise: f64, cost: impl Fn(u32) -> f64) -> Vec<StepSample> {
    let mut rng = StdRng::seed_from_u64(7);
    let mut rows = vec![];
    for round in 0..rounds {
        let level = 1.0 + drift * (rng.random::<f64>() - 0.5);
        for b in 126..=130u32 {
            for i in 0..5 {
                let jitter = 1.0 + noise * (rng.random::<f64>() - 0.5);
                rows.push(StepSample {
                    batch_size: b,
                    round,
                    sample: Some(i),
                    step_ms: Some(0.1 * f64::from(b) * cost(b) * level * jitter),
                    status: Status::Ok,
                    backend: "flex".into(),
                    device: "cpu, \"test\" device".into(),
                    peak_mem_mb: None,
                    message: String::new(),
                });
            }
        }
    }
    rows
}

fn judged(name: &str, rows: &[StepSample], trio: [u32; 3]) -> Finding {
    let root = tempfile::tempdir().unwrap();
    let ctx = StepTimeContext {
        local_minimum_at: Some(trio),
        claimed_jumps: vec![],
        ..context()
    };
    rule(
        &render_run(root.path(), name, rows, &ctx),
        "local-minimum-at",
    )
    .clone()
}

#[test]
fn both_neighbours_slower_per_example_reproduce_and_a_faster_one_refutes() {
    let trio = [127, 128, 129];
    // 4% more per example at 127 and 129, under rounds that drift by ±10% together.
    let minimum = rounds_with(8, 0.2, 0.02, |b| if b == 128 { 1.0 } else { 1.04 });
    let found = judged("minimum", &minimum, trio);
    assert_eq!(found.outcome.verdict(), Verdict::Reproduces, "{found:?}");
    assert!(found.measured.contains("8 rounds"), "{}", found.measured);

    // 129 takes 4% less per example: refuted, naming it alone.
    let falling = rounds_with(8, 0.2, 0.02, |b| match b {
        127 => 1.04,
        129 => 0.96,
        _ => 1.0,
    });
    let found = judged("falling", &falling, trio);
    assert_eq!(
        found.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{found:?}"
    );
    let why = serde_json::to_string(&found.outcome).unwrap();
    assert!(
        why.contains("batch 129 is") && !why.contains("batch 127"),
        "{why}"
    );

    // Level, with samples noisier than any planted effect: open.
    let level = rounds_with(4, 0.2, 0.3, |_| 1.0);
    let found = judged("level", &level, trio);
    assert_eq!(found.outcome.verdict(), Verdict::Inconclusive, "{found:?}");
}

#[test]
fn a_size_not_measured_or_a_single_round_cannot_be_tested() {
    let rows = rounds_with(8, 0.2, 0.02, |_| 1.0);
    let found = judged("missing", &rows, [127, 128, 131]);
    assert_eq!(found.outcome.verdict(), Verdict::CannotTest, "{found:?}");
    let why = serde_json::to_string(&found.outcome).unwrap();
    assert!(why.contains("batch size 131 not measured"), "{why}");

    let one = rounds_with(1, 0.2, 0.02, |_| 1.0);
    let found = judged("one-round", &one, [127, 128, 129]);
    assert_eq!(found.outcome.verdict(), Verdict::CannotTest, "{found:?}");
}
