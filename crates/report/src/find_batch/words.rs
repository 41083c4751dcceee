//! The finder's claims in words: each reading [`super::verdicts`] decided, worded as a
//! `Finding` (the claim, the rule, the outcome with its reason, what was measured, the test and
//! the numbers it was decided from). Every sentence of the finder's verdicts is here.

use super::analysis::Analysis;
use super::verdicts::{LargestIsNotRight, MemoryDiffers, MemoryGrowth, Saturation, Utilization};
use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::tests_of_claims::Decision;

/// "Memory grows with batch size", over the model's `points` fitting curve probes.
pub(super) fn memory_grows(reading: &MemoryGrowth, points: usize) -> Finding {
    let claim = ClaimText::new(
        "Memory grows with batch size",
        "seed 003, the Ohio State thesis' memory table",
    );
    let rule = "memory-grows";
    let test = format!(
        "Least squares over the curve's {points} probes; a directional claim: reproduces if the 95% interval of the per-example cost (t with the probes' residual degrees of freedom) lies above zero, does not reproduce if it lies below zero, inconclusive otherwise. With at least three probes and two batch sizes it can be tested"
    );
    match *reading {
        MemoryGrowth::TooFewProbes => Finding::new(
            claim,
            rule,
            Outcome::cannot_test("too few curve probes fitted the budget"),
            "too few fitting curve probes for a line with an interval",
            test,
        ),
        MemoryGrowth::Fitted {
            slope,
            slope_se,
            low,
            high,
            r_squared,
            detectable,
            decided,
        } => {
            let outcome = match decided {
                Decision::Shown => Outcome::reproduces(),
                Decision::Refuted => {
                    Outcome::does_not_reproduce("memory falls with the batch size")
                }
                Decision::Open => {
                    Outcome::inconclusive(format!("growth above {detectable:.3} MiB per example"))
                }
            };
            Finding::new(
                claim,
                rule,
                outcome,
                format!(
                    "{slope:.3} MiB per example (95% interval {low:.3} .. {high:.3}), R² {r_squared:.3}"
                ),
                format!(
                    "{test}; at this noise the test detects growth above {detectable:.3} MiB per example"
                ),
            )
            .with_quantities([("slope_mib_per_example", slope), ("slope_se", slope_se)])
        }
    }
}

/// "Utilization rises with batch size, then saturates", by the margin `step` (a fraction).
pub(super) fn utilization_saturates(reading: &Utilization, step: f64) -> Finding {
    let claim = ClaimText::new(
        "Utilization rises with batch size, then saturates",
        "seed 003: the batch size that uses the device fully",
    );
    let rule = "utilization-saturates";
    let test = format!(
        "Utilization (CPU time of the process / (wall time x threads)) of every timed step at the smallest and largest curve batch sizes, and at the last two: rises when the 90% interval (Welch) of its growth lies above {:.0} points, does not when it lies below; saturates when the 90% interval of its change over the curve's last step lies within ±{:.0} points (two one-sided tests), not when it lies beyond. Reproduces if it rises and saturates, partly if it rises and still changes, does not reproduce if it is bounded below the rise, inconclusive otherwise",
        100.0 * step,
        100.0 * step
    );
    let (first, before_last, last, decided) = match *reading {
        Utilization::NotMeasured => {
            return Finding::new(
                claim,
                rule,
                Outcome::cannot_test("the host's CPU time says nothing about a GPU, and the runtime offers no kernel time (only synchronised wall time)"),
                "not measured",
                test,
            )
        }
        Utilization::NoneRead => {
            return Finding::new(
                claim,
                rule,
                Outcome::cannot_test("no utilization was read"),
                "no curve probe with a CPU time",
                test,
            )
        }
        Utilization::Read {
            first,
            before_last,
            last,
            decided,
        } => (first, before_last, last, decided),
    };
    let outcome = match decided {
        Saturation::TooFewSizes(n) => Outcome::cannot_test(format!(
            "{n} curve batch sizes with a utilization; the rule needs 3 (a rise, then a last step)"
        )),
        Saturation::TooFewSteps => {
            Outcome::cannot_test("fewer than two timed steps at a curve batch size")
        }
        Saturation::Saturates => Outcome::reproduces(),
        Saturation::StillChanging => Outcome::partly(
            "rises, and still changes over the curve's last step: not yet saturated",
        ),
        Saturation::NoRise => Outcome::does_not_reproduce(format!(
            "utilization is bounded below a rise of {:.0} points",
            100.0 * step
        )),
        Saturation::Undecided {
            rise_half,
            settle_half,
        } => Outcome::inconclusive(format!(
            "a rise or a last step of {:.0} points against intervals of ±{:.0} and ±{:.0} points",
            100.0 * step,
            100.0 * rise_half,
            100.0 * settle_half
        )),
    };
    let measured = format!(
        "{:.0}% at batch {}, {:.0}% at {}, {:.0}% at {}",
        100.0 * first.1,
        first.0,
        100.0 * before_last.1,
        before_last.0,
        100.0 * last.1,
        last.0
    );
    Finding::new(claim, rule, outcome, measured, test).with_quantities([
        ("utilization_first", first.1),
        ("utilization_before_last", before_last.1),
        ("utilization_last", last.1),
    ])
}

/// "The largest batch size that fits is not automatically the right one", by the throughput
/// `tolerance` (a fraction of the best).
pub(super) fn largest_is_not_right(
    reading: &LargestIsNotRight,
    a: &Analysis,
    tolerance: f64,
) -> Finding {
    let claim = ClaimText::new(
        "The largest batch size that fits is not automatically the right one",
        "seed 003",
    );
    let test = format!(
        "Compares the largest batch size that fits (with headroom) with the smallest curve batch size whose throughput is within {:.0}% of the best (Welch on the log throughput of every timed step, one-sided at 5%). Reproduces if that batch size is smaller than the largest that fits and its throughput is bounded within the tolerance of the best, and a larger curve batch size confirms the plateau: the extra memory buys no speed. Does not reproduce if the curve's largest batch size below the largest that fits is bounded slower than the best by more than the tolerance; inconclusive otherwise. Accuracy is the other half of the seed's point: see the accuracy studies (sgd-vs-adam, augmentation)",
        100.0 * tolerance
    );
    let outcome = match *reading {
        LargestIsNotRight::NothingFits => {
            Outcome::cannot_test("the search did not end with a size that fits")
        }
        LargestIsNotRight::CurveTooShort => Outcome::cannot_test(
            "the curve stops before throughput levels off; extend curve.batch_sizes",
        ),
        LargestIsNotRight::Shown => Outcome::reproduces(),
        LargestIsNotRight::WithinByMedian { fast } => Outcome::inconclusive(format!(
            "batch {fast}'s throughput is within {:.0}% of the best by its median, not by its bound",
            100.0 * tolerance
        )),
        LargestIsNotRight::NoneBelow => {
            Outcome::cannot_test("no curve batch size below the largest that fits")
        }
        LargestIsNotRight::StillRises => Outcome::does_not_reproduce(
            "throughput still rises up to the largest batch that fits",
        ),
        LargestIsNotRight::SlowerByMedian { below } => Outcome::inconclusive(format!(
            "batch {below}, the curve's largest below the largest that fits, is slower than the best by its median, not by its bound"
        )),
    };
    let measured = match (a.largest_with_headroom, a.fastest_smallest) {
        (Some(largest), Some(fast)) => format!(
            "largest with headroom {largest}; within the tolerance of the best measured throughput from {fast}"
        ),
        _ => "no largest batch or no throughput".to_string(),
    };
    Finding::new(claim, "largest-is-not-right", outcome, measured, test)
}

/// "The memory use depends largely on the model": the per-example costs of this run's model
/// and of other models on the same machine, every pair of them, "largely" beyond `margin` (a
/// ratio) either way.
pub(super) fn memory_differs(reading: &MemoryDiffers, margin: f64) -> Finding {
    let claim = ClaimText::new(
        "How memory grows with the batch depends largely on the model",
        "analysis.memory_growth_differs_from",
    );
    let rule = "memory-growth-differs";
    let test = format!(
        "Per-example cost (the memory model's slope, MiB per example) of this run's model and of each other model named, from that model's newest complete finder run on this machine; every pair of models by the log of their ratio with a delta-method standard error (t with Welch–Satterthwaite degrees of freedom from the two lines' residual ones). Largely: a ratio beyond {margin:.2}x either way. Reproduces when some pair's one-sided bound at 5% shared among the pairs (Bonferroni) lies beyond it, does not reproduce when every pair's 90% interval lies within 1/{margin:.2}x to {margin:.2}x, inconclusive otherwise. The models must share the input size, optimizer and budget for a ratio to be the models' alone"
    );
    let why_not = |missing: &[(String, String)]| {
        missing
            .iter()
            .map(|(e, why)| format!("{e}: {why}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let (costs, pairs, missing, decided) = match reading {
        MemoryDiffers::NoFit => {
            let why = "this run has no positive per-example cost with an interval";
            return Finding::new(
                claim,
                rule,
                Outcome::cannot_test(why),
                "no memory line",
                test,
            );
        }
        MemoryDiffers::NoReference(missing) => {
            let why = if missing.is_empty() {
                "no other model named".to_string()
            } else {
                format!("no other model's cost to compare: {}", why_not(missing))
            };
            return Finding::new(claim, rule, Outcome::cannot_test(why), "no reference", test);
        }
        MemoryDiffers::Compared {
            costs,
            pairs,
            missing,
            decided,
        } => (costs, pairs, missing, *decided),
    };
    let each: Vec<String> = costs
        .iter()
        .map(|c| match &c.run {
            Some(run) => format!(
                "{} {:.3} MiB per example (run {run}, this machine)",
                c.experiment, c.slope
            ),
            None => format!("{} {:.3} MiB per example (this run)", c.experiment, c.slope),
        })
        .collect();
    let ratios: Vec<String> = pairs
        .iter()
        .map(|p| {
            let (low, high) = p.log_ratio.interval90();
            format!(
                "{} over {} {:.2}x (90% interval {:.2}x to {:.2}x)",
                costs[p.first].experiment,
                costs[p.second].experiment,
                p.log_ratio.diff.exp(),
                low.exp(),
                high.exp()
            )
        })
        .collect();
    let mut measured = format!("{}; {}", each.join(", "), ratios.join("; "));
    if !missing.is_empty() {
        measured.push_str(&format!("; not compared: {}", why_not(missing)));
    }
    let widest = pairs
        .iter()
        .max_by(|x, y| x.log_ratio.diff.abs().total_cmp(&y.log_ratio.diff.abs()));
    let outcome = match (decided, widest) {
        (Decision::Shown, Some(p)) => Outcome::reproduces_with(format!(
            "{} and {}: {:.2}x, beyond {margin:.2}x",
            costs[p.first].experiment,
            costs[p.second].experiment,
            p.log_ratio.diff.abs().exp()
        )),
        (Decision::Refuted, _) => Outcome::does_not_reproduce(format!(
            "every pair of models' per-example costs within {margin:.2}x of each other"
        )),
        _ => Outcome::inconclusive(format!(
            "a ratio known within a factor of {:.2} at the widest",
            pairs
                .iter()
                .map(|p| (p.log_ratio.critical() * p.log_ratio.se).exp())
                .fold(1.0, f64::max)
        )),
    };
    let quantities = [
        ("slope_mib_per_example", costs[0].slope),
        ("slope_se", costs[0].slope_se),
        ("margin", margin),
        (
            "largest_log_ratio",
            widest.map_or(f64::NAN, |p| p.log_ratio.diff.abs()),
        ),
    ];
    Finding::new(claim, rule, outcome, measured, test).with_quantities(quantities)
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlab_method::findings::Verdict;

    #[test]
    fn a_reading_is_worded_and_its_decision_kept() {
        let fitted = |decided| MemoryGrowth::Fitted {
            slope: 1.5,
            slope_se: 0.5,
            low: -0.1,
            high: 3.1,
            r_squared: 0.9,
            detectable: 1.6,
            decided,
        };
        let open = memory_grows(&fitted(Decision::Open), 4);
        assert_eq!(open.outcome.verdict(), Verdict::Inconclusive);
        assert_eq!(
            open.outcome.reason(),
            Some("growth above 1.600 MiB per example")
        );
        assert_eq!(open.quantities["slope_mib_per_example"], 1.5);
        assert!(open.test.contains("curve's 4 probes"), "{}", open.test);
        // The words follow the decision, never the numbers beside it.
        let shown = memory_grows(&fitted(Decision::Shown), 4);
        assert_eq!(shown.outcome.verdict(), Verdict::Reproduces);
        let none = utilization_saturates(&Utilization::NotMeasured, 0.05);
        assert_eq!(none.outcome.verdict(), Verdict::CannotTest);
        assert!(none.test.contains("above 5 points"), "{}", none.test);
    }
}
