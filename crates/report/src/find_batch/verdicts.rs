//! What each of the seed's claims comes to, decided from the analysis by a stated rule, as
//! values: no sentence is made here (`words` words each reading as a `Finding`; `judge` in the
//! kind's module puts the two together).

use super::analysis::{Analysis, BatchPoint};
use super::FindBatchContext;
use batchlab_method::tests_of_claims::{
    critical, differs_by, equivalence, increase, Arm, Decision, Difference,
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

/// Another model's finder run that "memory growth depends on the model" compares this one
/// with: its experiment, its run directory's name, and its memory model (slope in MiB per
/// example, the slope's standard error, the probes it went through) or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MemoryReference {
    pub experiment: String,
    pub run: Option<String>,
    pub fit: Result<(f64, f64, usize), String>,
}

/// A model's per-example memory cost: its experiment, its run directory's name (none for the
/// run being judged), the memory model's slope (MiB per example) and the slope's standard
/// error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct MemoryCost {
    pub experiment: String,
    pub run: Option<String>,
    pub slope: f64,
    pub slope_se: f64,
}

/// Two models' per-example costs, `first` over `second` (indices into the costs): the log of
/// their ratio with its delta-method standard error and Welch–Satterthwaite degrees of
/// freedom.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct MemoryPair {
    pub first: usize,
    pub second: usize,
    pub log_ratio: Difference,
}

/// "The memory use depends largely on the model", as values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum MemoryDiffers {
    /// This run has no positive per-example cost with an interval.
    NoFit,
    /// No reference has one: each named with why.
    NoReference(Vec<(String, String)>),
    /// Every model's cost (this run's first), every pair of them (those without a cost named
    /// with why), and what [`differs_by`] decided on the log scale with the margin
    /// `ln(margin)`.
    Compared {
        costs: Vec<MemoryCost>,
        pairs: Vec<MemoryPair>,
        missing: Vec<(String, String)>,
        decided: Decision,
    },
}

/// This run's memory model and each of `references`', every pair of them by the ratio of the
/// per-example costs: "largely" is beyond `margin` (a ratio) either way.
pub(super) fn memory_differs(
    a: &Analysis,
    experiment: &str,
    references: &[MemoryReference],
    margin: f64,
) -> MemoryDiffers {
    let usable = |slope: f64, se: f64, n: usize| slope > 0.0 && se.is_finite() && n >= 3;
    let Some(fit) = a
        .model
        .filter(|f| usable(f.slope, f.slope_se, a.model_points))
    else {
        return MemoryDiffers::NoFit;
    };
    let mut costs = vec![(
        MemoryCost {
            experiment: experiment.to_string(),
            run: None,
            slope: fit.slope,
            slope_se: fit.slope_se,
        },
        a.model_points,
    )];
    let mut missing = vec![];
    for r in references {
        match r.fit {
            Ok((slope, slope_se, n)) if usable(slope, slope_se, n) => costs.push((
                MemoryCost {
                    experiment: r.experiment.clone(),
                    run: r.run.clone(),
                    slope,
                    slope_se,
                },
                n,
            )),
            Ok(_) => missing.push((
                r.experiment.clone(),
                "no positive per-example cost with an interval (fewer than three fitting probes)"
                    .to_string(),
            )),
            Err(ref why) => missing.push((r.experiment.clone(), why.clone())),
        }
    }
    if costs.len() < 2 {
        return MemoryDiffers::NoReference(missing);
    }
    // Each cost's relative variance and residual degrees of freedom.
    let spread = |(c, n): &(MemoryCost, usize)| ((c.slope_se / c.slope).powi(2), (n - 2) as f64);
    let mut pairs = vec![];
    for first in 0..costs.len() {
        for second in first + 1..costs.len() {
            let ((v1, df1), (v2, df2)) = (spread(&costs[first]), spread(&costs[second]));
            let df = (v1 + v2).powi(2) / (v1.powi(2) / df1 + v2.powi(2) / df2);
            pairs.push(MemoryPair {
                first,
                second,
                log_ratio: Difference {
                    diff: (costs[first].0.slope / costs[second].0.slope).ln(),
                    se: (v1 + v2).sqrt(),
                    df: if df.is_finite() { df } else { f64::INFINITY },
                },
            });
        }
    }
    let differences: Vec<Difference> = pairs.iter().map(|p| p.log_ratio).collect();
    MemoryDiffers::Compared {
        costs: costs.into_iter().map(|(c, _)| c).collect(),
        decided: differs_by(&differences, margin.ln()),
        pairs,
        missing,
    }
}
