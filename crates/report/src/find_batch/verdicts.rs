//! What each of the seed's claims comes to, decided from the analysis by a stated rule, as
//! values: no sentence is made here (`words` words each reading as a `Finding`; `judge` in the
//! kind's module puts the two together).

use super::analysis::{Analysis, BatchPoint};
use super::FindBatchContext;
use batchlab_method::tests_of_claims::{
    critical, equivalence, increase, Arm, Decision, Difference,
};
use serde::Serialize;

/// "Memory grows with batch size": the memory model's per-example cost and its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum MemoryGrowth {
    /// Fewer than three fitting probes, or no standard error: no line with an interval.
    TooFewProbes,
    /// The fitted slope (MiB per example) and its standard error, its 95% interval, the fit's
    /// R², the smallest growth the test could see (the interval's half-width) and what the
    /// interval shows: growth (above zero), the opposite (below), or neither.
    Fitted {
        slope: f64,
        slope_se: f64,
        low: f64,
        high: f64,
        r_squared: f64,
        detectable: f64,
        decided: Decision,
    },
}

pub(super) fn memory_grows(a: &Analysis) -> MemoryGrowth {
    match a.model {
        Some(fit) if a.model_points >= 3 && fit.slope_se.is_finite() => {
            // A line through n probes has n - 2 residual degrees of freedom: with three, the
            // normal 1.96 would be far too narrow.
            let half = critical(0.025, (a.model_points - 2) as f64) * fit.slope_se;
            let (low, high) = (fit.slope - half, fit.slope + half);
            MemoryGrowth::Fitted {
                slope: fit.slope,
                slope_se: fit.slope_se,
                low,
                high,
                r_squared: fit.r_squared,
                detectable: half,
                decided: if low > 0.0 {
                    Decision::Shown
                } else if high < 0.0 {
                    Decision::Refuted
                } else {
                    Decision::Open
                },
            }
        }
        _ => MemoryGrowth::TooFewProbes,
    }
}

/// "Utilization rises with batch size, then saturates".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Utilization {
    /// The backend's utilization is not measured (a GPU).
    NotMeasured,
    /// No curve probe has a CPU time.
    NoneRead,
    /// Read at the curve's first, second-to-last and last batch sizes: `(batch, utilization)`.
    Read {
        first: (u32, f64),
        before_last: (u32, f64),
        last: (u32, f64),
        decided: Saturation,
    },
}

/// What the two tests of [`Utilization`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Saturation {
    /// Fewer curve batch sizes with a utilization than the rule's 3.
    TooFewSizes(usize),
    /// Fewer than two timed steps at a curve batch size.
    TooFewSteps,
    /// Rises, and the last step is within the margin.
    Saturates,
    /// Rises, and still changes over the last step.
    StillChanging,
    /// Bounded below a rise of the margin.
    NoRise,
    /// Neither: the half-widths of the two 90% intervals.
    Undecided { rise_half: f64, settle_half: f64 },
}

pub(super) fn utilization_saturates(a: &Analysis, ctx: &FindBatchContext) -> Utilization {
    // The registry's `step` for this claim (claims/registry.toml), through `[analysis]`.
    let step = ctx.utilization_step;
    if !ctx.utilization_measured {
        return Utilization::NotMeasured;
    }
    let curve: Vec<_> = a
        .points
        .iter()
        .filter(|p| p.in_curve && p.ok > 0 && p.utilization.is_finite())
        .collect();
    let (Some(first), Some(last)) = (curve.first(), curve.last()) else {
        return Utilization::NoneRead;
    };
    let before_last = curve.get(curve.len().saturating_sub(2)).unwrap_or(first);
    let arm = |p: &BatchPoint| Arm::of(&p.utilization_samples);
    // Rises: the 90% interval of (last - first) above the step; not: below it. Saturated: the
    // last step of the curve within ±the step (two one-sided tests); not: beyond it.
    let rise = Difference::welch(arm(first), arm(last));
    let settle = Difference::welch(arm(before_last), arm(last));
    let decided = match (curve.len(), rise, settle) {
        (n @ 0..=2, ..) => Saturation::TooFewSizes(n),
        (_, Some(rise), Some(settle)) => {
            let shifted = Difference {
                diff: rise.diff - step,
                ..rise
            };
            match (increase(&shifted), equivalence(&settle, step)) {
                (Decision::Shown, Decision::Shown) => Saturation::Saturates,
                (Decision::Shown, Decision::Refuted) => Saturation::StillChanging,
                (Decision::Refuted, _) => Saturation::NoRise,
                _ => Saturation::Undecided {
                    rise_half: rise.interval90().1 - rise.diff,
                    settle_half: settle.interval90().1 - settle.diff,
                },
            }
        }
        _ => Saturation::TooFewSteps,
    };
    let at = |p: &BatchPoint| (p.batch_size, p.utilization);
    Utilization::Read {
        first: at(first),
        before_last: at(before_last),
        last: at(last),
        decided,
    }
}

/// "The largest batch size that fits is not automatically the right one".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum LargestIsNotRight {
    /// The search ended without a size that fits.
    NothingFits,
    /// The fastest-smallest batch size is the curve's largest: throughput had not levelled off.
    CurveTooShort,
    /// The fastest-smallest batch size (below the largest that fits) is bounded within the
    /// tolerance of the best.
    Shown,
    /// Batch `fast` is within the tolerance by its median, not by its bound.
    WithinByMedian { fast: u32 },
    /// No curve batch size below the largest that fits.
    NoneBelow,
    /// The curve's largest batch size below the largest that fits is bounded slower than the
    /// best by more than the tolerance: throughput still rises.
    StillRises,
    /// Batch `below` is slower than the best by its median, not by its bound.
    SlowerByMedian { below: u32 },
}

pub(super) fn largest_is_not_right(a: &Analysis, tolerance: f64) -> LargestIsNotRight {
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
    match (a.largest_with_headroom, a.fastest_smallest) {
        (Some(largest), Some(fast)) if Some(fast) == a.largest_curve && fast < largest => {
            LargestIsNotRight::CurveTooShort
        }
        (Some(largest), Some(fast)) if fast < largest => {
            match point(fast).and_then(&against_best) {
                Some((low, _)) if low > slower => LargestIsNotRight::Shown,
                _ => LargestIsNotRight::WithinByMedian { fast },
            }
        }
        (Some(largest), Some(_)) => {
            let below = a
                .points
                .iter()
                .filter(|p| p.in_curve && p.ok > 0 && p.batch_size < largest)
                .max_by_key(|p| p.batch_size);
            match below.map(|p| (p.batch_size, against_best(p))) {
                Some((_, Some((_, high)))) if high < slower => LargestIsNotRight::StillRises,
                Some((b, _)) => LargestIsNotRight::SlowerByMedian { below: b },
                None => LargestIsNotRight::NoneBelow,
            }
        }
        _ => LargestIsNotRight::NothingFits,
    }
}
