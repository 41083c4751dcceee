//! The synthetic sweep the step-time render tests share, written through the public writer: 20
//! ms + 3 ms per example, a planted 8% step after batch size 32, batch 70 out of memory; and
//! how a test renders one and picks a claim's finding.

#![allow(dead_code)] // each test file uses some of it

use batchlab_method::findings::Finding;
use batchlab_method::rows::Status;
use batchlab_method::rows::{append_rows, step_time::StepSample};
use batchlab_report::step_time::{render_step_time, StepTimeContext};
use batchlab_report::About;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub fn context() -> StepTimeContext {
    StepTimeContext {
        about: About {
            experiment: "synthetic-step-time".into(),
            description:
                "A synthetic sweep: 20 ms + 3 ms per example, one planted 8% step after batch size 32."
                    .into(),
            reproduces: Some("seed 000, figure 2 (shape only)".into()),
            claim: Some(
                "Step time grows linearly with batch size but jumps at 16, 32, 48 and 64.".into(),
            ),
            backend: "flex".into(),
            device: "cpu, \"test\" device".into(),
            protocol: "2 warm-up steps dropped, 12 samples per visit, 1 round, synchronised clock"
                .into(),
        },
        claimed_jumps: vec![16, 32, 48, 64],
        no_jumps_at: vec![],
        local_minimum_at: None,
        fluctuates_more_than: None,
        slower_than: None,
        rules: Default::default(),
        registered_claims: Default::default(),
        model: "none (synthetic), 3x64x64 inputs".into(),
        memory_kind: "process peak resident set size".into(),
        bootstrap_resamples: 500,
        seed: 42,
    }
}

pub fn synthetic_sweep() -> Vec<StepSample> {
    noisy_sweep(0.03)
}

/// The synthetic sweep with uniform noise of +-`spread`/2 on every sample.
pub fn noisy_sweep(spread: f64) -> Vec<StepSample> {
    sweep_with(spread, Some(33))
}

/// 20 ms + 3 ms per example with uniform noise of +-`spread`/2 on every sample, a step of 8%
/// from batch size `step_from` on (if any), and batch 70 out of memory.
pub fn sweep_with(spread: f64, step_from: Option<u32>) -> Vec<StepSample> {
    let mut rng = StdRng::seed_from_u64(3);
    let mut rows = vec![];
    for b in 1..=70u32 {
        let base = StepSample {
            batch_size: b,
            round: 0,
            sample: None,
            step_ms: None,
            status: Status::Ok,
            backend: "flex".into(),
            device: "cpu, \"test\" device".into(),
            peak_mem_mb: Some(400.0 + 10.0 * f64::from(b)),
            message: String::new(),
        };
        if b == 70 {
            let message = "out of memory: tried to allocate 1.5 GiB, \"device\" full\nsecond line"
                .to_string();
            rows.push(StepSample {
                status: Status::Oom,
                peak_mem_mb: None,
                message,
                ..base
            });
            continue;
        }
        let stepped = step_from.is_some_and(|from| b >= from);
        let level = 20.0 + 3.0 * f64::from(b) + if stepped { 0.08 * 116.0 } else { 0.0 };
        for i in 0..12 {
            // Uniform noise: simple, seeded.
            let noise = 1.0 + spread * (rng.random::<f64>() - 0.5);
            rows.push(StepSample {
                sample: Some(i),
                step_ms: Some(level * noise),
                ..base.clone()
            });
        }
    }
    rows
}

/// Renders `rows` as `<root>/<name>/run` with `latest` pointing at it, as runs lay out;
/// returns the claims judged.
pub fn render_run(
    root: &std::path::Path,
    name: &str,
    rows: &[StepSample],
    ctx: &StepTimeContext,
) -> Vec<Finding> {
    let dir = root.join(name).join("run");
    std::fs::create_dir_all(&dir).unwrap();
    append_rows(&dir.join("results.csv"), rows).unwrap();
    render_step_time(&dir, ctx).unwrap().claims
}

/// The one claim judged by `rule`.
pub fn rule<'a>(claims: &'a [Finding], rule: &str) -> &'a Finding {
    let mut judged = claims.iter().filter(|c| c.rule == rule);
    let one = judged
        .next()
        .unwrap_or_else(|| panic!("no {rule} claim: {claims:?}"));
    assert!(judged.next().is_none(), "two {rule} claims");
    one
}
