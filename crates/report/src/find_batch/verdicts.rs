//! The verdict on each of the seed's claims, by a rule stated beside it, from the analysis.

use super::analysis::{Analysis, BatchPoint};
use super::FindBatchContext;
use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::tests_of_claims::{
    critical, equivalence, increase, Arm, Decision, Difference,
};

/// The claims of seed 003 (and the Ohio State thesis it cites), each judged by a stated rule.
pub(super) fn judge(a: &Analysis, ctx: &FindBatchContext) -> Vec<Finding> {
    vec![
        memory_grows(a),
        utilization_saturates(a, ctx),
        largest_is_not_right(a, ctx.throughput_tolerance),
    ]
}

/// A finding of this kind: its claim, rule, outcome, what was measured and the test.
fn found(
    claim: &ClaimText,
    rule: &str,
    outcome: Outcome,
    measured: impl Into<String>,
    test: impl Into<String>,
) -> Finding {
    Finding::new(claim.clone(), rule, outcome, measured, test)
}

fn memory_grows(a: &Analysis) -> Finding {
    let claim = ClaimText::new(
        "Memory grows with batch size",
        "seed 003, the Ohio State thesis' memory table",
    );
    let test = format!(
        "Least squares over the curve's {} probes; a directional claim: reproduces if the 95% interval of the per-example cost (t with the probes' residual degrees of freedom) lies above zero, does not reproduce if it lies below zero, inconclusive otherwise. With at least three probes and two batch sizes it can be tested",
        a.model_points
    );
    match a.model {
        Some(fit) if a.model_points >= 3 && fit.slope_se.is_finite() => {
            // A line through n probes has n - 2 residual degrees of freedom: with three, the
            // normal 1.96 would be far too narrow.
            let t = critical(0.025, (a.model_points - 2) as f64);
            let (low, high) = (fit.slope - t * fit.slope_se, fit.slope + t * fit.slope_se);
            let outcome = if low > 0.0 {
                Outcome::reproduces()
            } else if high < 0.0 {
                Outcome::does_not_reproduce("memory falls with the batch size")
            } else {
                Outcome::inconclusive(format!(
                    "growth above {:.3} MiB per example",
                    t * fit.slope_se
                ))
            };
            found(
                &claim,
                "memory-grows",
                outcome,
                format!(
                    "{:.3} MiB per example (95% interval {low:.3} .. {high:.3}), R² {:.3}",
                    fit.slope, fit.r_squared
                ),
                format!(
                    "{test}; at this noise the test detects growth above {:.3} MiB per example",
                    t * fit.slope_se
                ),
            )
            .with_quantities([
                ("slope_mib_per_example", fit.slope),
                ("slope_se", fit.slope_se),
            ])
        }
        _ => found(
            &claim,
            "memory-grows",
            Outcome::cannot_test("too few curve probes fitted the budget"),
            "too few fitting curve probes for a line with an interval",
            test,
        ),
    }
}

fn utilization_saturates(a: &Analysis, ctx: &FindBatchContext) -> Finding {
    let claim = ClaimText::new(
        "Utilization rises with batch size, then saturates",
        "seed 003: the batch size that uses the device fully",
    );
    let rule = "utilization-saturates";
    // The registry's `step` for this claim (claims/registry.toml), through `[analysis]`.
    let step = ctx.utilization_step;
    let test = format!(
        "Utilization (CPU time of the process / (wall time x threads)) of every timed step at the smallest and largest curve batch sizes, and at the last two: rises when the 90% interval (Welch) of its growth lies above {:.0} points, does not when it lies below; saturates when the 90% interval of its change over the curve's last step lies within ±{:.0} points (two one-sided tests), not when it lies beyond. Reproduces if it rises and saturates, partly if it rises and still changes, does not reproduce if it is bounded below the rise, inconclusive otherwise",
        100.0 * step,
        100.0 * step
    );
    let curve: Vec<_> = a
        .points
        .iter()
        .filter(|p| p.in_curve && p.ok > 0 && p.utilization.is_finite())
        .collect();
    if !ctx.utilization_measured {
        return found(
            &claim,
            rule,
            Outcome::cannot_test("the host's CPU time says nothing about a GPU, and the runtime offers no kernel time (only synchronised wall time)"),
            "not measured",
            test,
        );
    }
    let (Some(first), Some(last)) = (curve.first(), curve.last()) else {
        return found(
            &claim,
            rule,
            Outcome::cannot_test("no utilization was read"),
            "no curve probe with a CPU time",
            test,
        );
    };
    let before_last = curve.get(curve.len().saturating_sub(2)).unwrap_or(first);
    let arm = |p: &BatchPoint| Arm::of(&p.utilization_samples);
    // Rises: the 90% interval of (last - first) above the step; not: below it. Saturated: the
    // last step of the curve within ±the step (two one-sided tests); not: beyond it.
    let rise = Difference::welch(arm(first), arm(last));
    let settle = Difference::welch(arm(before_last), arm(last));
    let outcome = match (curve.len(), rise, settle) {
        (0..=2, ..) => Outcome::cannot_test(format!(
            "{} curve batch sizes with a utilization; the rule needs 3 (a rise, then a last step)",
            curve.len()
        )),
        (_, Some(rise), Some(settle)) => {
            let shifted = Difference {
                diff: rise.diff - step,
                ..rise
            };
            match (increase(&shifted), equivalence(&settle, step)) {
                (Decision::Shown, Decision::Shown) => Outcome::reproduces(),
                (Decision::Shown, Decision::Refuted) => Outcome::partly(
                    "rises, and still changes over the curve's last step: not yet saturated",
                ),
                (Decision::Refuted, _) => Outcome::does_not_reproduce(format!(
                    "utilization is bounded below a rise of {:.0} points",
                    100.0 * step
                )),
                _ => Outcome::inconclusive(format!(
                    "a rise or a last step of {:.0} points against intervals of ±{:.0} and ±{:.0} points",
                    100.0 * step,
                    100.0 * (rise.interval90().1 - rise.diff),
                    100.0 * (settle.interval90().1 - settle.diff)
                )),
            }
        }
        _ => Outcome::cannot_test("fewer than two timed steps at a curve batch size"),
    };
    let measured = format!(
        "{:.0}% at batch {}, {:.0}% at {}, {:.0}% at {}",
        100.0 * first.utilization,
        first.batch_size,
        100.0 * before_last.utilization,
        before_last.batch_size,
        100.0 * last.utilization,
        last.batch_size
    );
    found(&claim, rule, outcome, measured, test).with_quantities([
        ("utilization_first", first.utilization),
        ("utilization_before_last", before_last.utilization),
        ("utilization_last", last.utilization),
    ])
}

fn largest_is_not_right(a: &Analysis, tolerance: f64) -> Finding {
    let claim = ClaimText::new(
        "The largest batch size that fits is not automatically the right one",
        "seed 003",
    );
    let rule = "largest-is-not-right";
    let test = format!(
        "Compares the largest batch size that fits (with headroom) with the smallest curve batch size whose throughput is within {:.0}% of the best (Welch on the log throughput of every timed step, one-sided at 5%). Reproduces if that batch size is smaller than the largest that fits and its throughput is bounded within the tolerance of the best, and a larger curve batch size confirms the plateau: the extra memory buys no speed. Does not reproduce if the curve's largest batch size below the largest that fits is bounded slower than the best by more than the tolerance; inconclusive otherwise. Accuracy is the other half of the seed's point: see the accuracy studies (sgd-vs-adam, augmentation)",
        100.0 * tolerance
    );
    let point = |b: u32| a.points.iter().find(|p| p.batch_size == b && p.ok > 0);
    let log_throughput = |p: &BatchPoint| {
        let b = f64::from(p.batch_size);
        Arm::of(
            &p.step_samples
                .iter()
                .map(|ms| (1000.0 * b / ms).ln())
                .filter(|x| x.is_finite())
                .collect::<Vec<_>>(),
        )
    };
    // ln(throughput at `p` / the best's), its 90% interval; exact 0 for the best itself.
    let against_best = |p: &BatchPoint| -> Option<(f64, f64)> {
        let best = point(a.best_throughput?)?;
        if best.batch_size == p.batch_size {
            return Some((0.0, 0.0));
        }
        Difference::welch(log_throughput(best), log_throughput(p)).map(|d| d.interval90())
    };
    let slower = (1.0 - tolerance).ln();
    let outcome =
        match (a.largest_with_headroom, a.fastest_smallest) {
            (Some(largest), Some(fast)) if Some(fast) == a.largest_curve && fast < largest => {
                Outcome::cannot_test(
                    "the curve stops before throughput levels off; extend curve.batch_sizes",
                )
            }
            (Some(largest), Some(fast)) if fast < largest => {
                match point(fast).and_then(&against_best) {
                Some((low, _)) if low > slower => Outcome::reproduces(),
                _ => Outcome::inconclusive(format!(
                    "batch {fast}'s throughput is within {:.0}% of the best by its median, not by its bound",
                    100.0 * tolerance
                )),
            }
            }
            (Some(largest), Some(_)) => {
                let below = a
                    .points
                    .iter()
                    .filter(|p| p.in_curve && p.ok > 0 && p.batch_size < largest)
                    .max_by_key(|p| p.batch_size);
                match below.map(|p| (p.batch_size, against_best(p))) {
                Some((_, Some((_, high)))) if high < slower => Outcome::does_not_reproduce(
                    "throughput still rises up to the largest batch that fits",
                ),
                Some((b, _)) => Outcome::inconclusive(format!(
                    "batch {b}, the curve's largest below the largest that fits, is slower than the best by its median, not by its bound"
                )),
                None => Outcome::cannot_test("no curve batch size below the largest that fits"),
            }
            }
            _ => Outcome::cannot_test("the search did not end with a size that fits"),
        };
    let measured = match (a.largest_with_headroom, a.fastest_smallest) {
        (Some(largest), Some(fast)) => format!(
            "largest with headroom {largest}; within the tolerance of the best measured throughput from {fast}"
        ),
        _ => "no largest batch or no throughput".to_string(),
    };
    found(&claim, rule, outcome, measured, test)
}
