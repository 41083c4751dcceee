//! The claims table of a steps-to-target report, judged from the synthetic study's curves
//! (`synthetic_target`).

mod synthetic_target;

use batchlab_method::findings::Verdict;
use batchlab_method::rows::append_rows;
use batchlab_method::rows::steps_to_target::NoiseRow;
use batchlab_report::steps_to_target::{render_target, RatioClaim, TargetClaim, TargetClaimRule};
use synthetic_target::{context, out_dir, write_study};

fn claim(workload: &str, rule: TargetClaimRule, versus: Option<&str>) -> TargetClaim {
    TargetClaim {
        id: None,
        claim: format!("{rule:?}"),
        source: "a test".into(),
        workload: workload.into(),
        rule,
        versus: versus.map(str::to_string),
    }
}

#[test]
fn each_claim_is_judged_from_the_curves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "target-claims");
    write_study(&dir, |_| true);
    let mut ctx = context(vec![]);
    use RatioClaim::*;
    use TargetClaimRule::*;
    let (momentum, sgd) = ("mlp/sgd-momentum", Some("mlp/sgd"));
    ctx.claims = vec![
        claim("mlp/sgd", ThreeRegimes, None),
        claim(momentum, ExtendsPerfectScaling(2.0), sgd),
        claim("mlp/sgd", ExtendsPerfectScaling(2.0), Some(momentum)),
        claim("mlp/sgd", MatchesSearch(1.1), Some(momentum)),
        claim("mlp/adam", ThreeRegimes, None),
        // B_crit 256 against 128: a ratio of 2.
        claim(momentum, MaxUsefulBatch(Differs, 1.25), sgd),
        claim(momentum, MaxUsefulBatch(Differs, 8.0), sgd),
        claim(momentum, MaxUsefulBatch(NotLarger, 1.25), sgd),
        claim(momentum, MaxUsefulBatch(NotLarger, 8.0), sgd),
        claim(momentum, MaxUsefulBatch(Equal, 8.0), sgd),
        claim(momentum, MaxUsefulBatch(Equal, 1.25), sgd),
        claim("mlp/sgd", NoSimpleLrScaling(1.1), None),
        claim(momentum, NoSimpleLrScaling(1.1), None),
    ];
    let findings = render_target(&dir, &ctx).unwrap().claims;
    let verdicts: Vec<Verdict> = findings.iter().map(|f| f.outcome.verdict()).collect();
    use Verdict::*;
    assert_eq!(
        verdicts,
        [
            // Perfect 4-16, diminishing 128-512, plateau 512-4096 (see the regimes test).
            Reproduces,
            // The ratio's bootstrap interval: a replicate whose B_crit the curve leaves
            // unidentified bounds it from below only (at least the largest batch size), and
            // read as reaching at their stop the censored trials leave it so: open either way.
            Inconclusive,
            Inconclusive,
            // S_sgd = 500 + 64000 / B against S_momentum = 300 + 76800 / B: plain SGD needs
            // fewer steps below batch 64 and more above it.
            Partly,
            CannotTest,
            // 2 lies beyond 1.25 and inside 8 each way, where both readings of the censored
            // trials bound it; where one leaves it open, inconclusive.
            Inconclusive,
            DoesNotReproduce,
            Inconclusive,
            Reproduces,
            Reproduces,
            Inconclusive,
            // Plain SGD's best rate grows with B to 32, then stays: no power law; momentum's
            // grows as √B: a power law, not linear scaling (departures beyond x1.1 count; the
            // regions are x3 to x7 wide, so at x2 neither would be told: see lr_rule's tests).
            Reproduces,
            Partly,
        ],
        "{findings:#?}"
    );
    let rules: Vec<&str> = findings[5..11].iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(
        rules,
        [
            "max-useful-batch-differs",
            "max-useful-batch-differs",
            "max-useful-batch-not-larger",
            "max-useful-batch-not-larger",
            "max-useful-batch-equal",
            "max-useful-batch-equal"
        ]
    );
}

/// Noise measurements of `trials` trials of mlp/sgd at batch 64, `measurements` each, whose
/// squared norms at parameters with |G|² = 1 and tr(Σ) = `trace` are E|G_b|² = 1 + trace / b,
/// times a jitter per trial and measurement; `swap` exchanges the half batch's and the whole
/// batch's.
fn noise_rows(trials: usize, trace: f64, swap: bool) -> Vec<NoiseRow> {
    let mut rows = vec![];
    for t in 0..trials {
        for m in 0..5u64 {
            let jitter = 1.0 + 0.02 * ((t * 5 + m as usize) % 7) as f64;
            let (small, big) = ((1.0 + trace / 32.0) * jitter, (1.0 + trace / 64.0) * jitter);
            let (small, big) = if swap { (big, small) } else { (small, big) };
            rows.push(NoiseRow {
                trial: format!("t{t}"),
                workload: "mlp/sgd".into(),
                batch_size: 64,
                step: 50 * (m + 1),
                b_small: 32,
                b_big: 64,
                g_small_sq: small,
                g_big_sq: big,
                b_simple: f64::NAN,
            });
        }
    }
    rows
}

#[test]
fn half_a_batch_gives_the_noisier_gradient_or_the_claim_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let verdict = |name: &str, noise: Option<Vec<NoiseRow>>| {
        let dir = out_dir(&tmp, name);
        write_study(&dir, |_| true);
        if let Some(rows) = noise {
            append_rows(&dir.join("noise.csv"), &rows).unwrap();
        }
        let mut ctx = context(vec![]);
        ctx.claims = vec![claim("mlp/sgd", TargetClaimRule::GradientNoiseFalls, None)];
        let mut findings = render_target(&dir, &ctx).unwrap().claims;
        findings.remove(0)
    };
    // tr(Σ) = 64: |G_half|² = 3, |G_whole|² = 2, a ratio of 1.5 in every measurement.
    let noisy = verdict("noisy", Some(noise_rows(4, 64.0, false)));
    assert_eq!(noisy.outcome.verdict(), Verdict::Reproduces, "{noisy:?}");
    assert!(
        noisy.measured.contains("1.50x (the geometric mean"),
        "{noisy:?}"
    );
    let reversed = verdict("reversed", Some(noise_rows(4, 64.0, true)));
    assert_eq!(
        reversed.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{reversed:?}"
    );
    let one_trial = verdict("one-trial", Some(noise_rows(1, 64.0, false)));
    assert_eq!(
        one_trial.outcome.verdict(),
        Verdict::CannotTest,
        "{one_trial:?}"
    );
    let unmeasured = verdict("unmeasured", None);
    assert_eq!(
        unmeasured.outcome.verdict(),
        Verdict::CannotTest,
        "{unmeasured:?}"
    );
    assert!(unmeasured.outcome.reason().unwrap().contains("noise_every"));
}
