//! The claims that compare this curve with another model's, measured on the same machine:
//! "fluctuates more than" and "slightly slower than", decided as values (`words` words
//! them).

use batchlab_method::stats::{bootstrap_median_ci, bootstrap_median_ratio_ci, MAD_TO_SD};
use batchlab_method::tests_of_claims::{increase, non_inferiority, Arm, Decision, Difference};
use serde::Serialize;

use super::super::analysis::Analysis;
use crate::jumps::scatter;

/// The reference curve of a comparison claim: its experiment and, if a report of it was found,
/// what the rules compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The reference experiment, e.g. `vgg16-step-time-cpu`.
    pub experiment: String,
    /// The run of it compared against (its directory name), if one was found.
    pub run: Option<String>,
    /// Its curve, or why there is none.
    pub curve: Result<ReferenceCurve, String>,
}

/// What the comparison rules read of the reference curve, analysed from its own raw rows
/// exactly as its report analyses them.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceCurve {
    /// Its [`crate::jumps::relative_offsets`].
    pub scatter_values: Vec<f64>,
    /// (batch size, median ms) at its ok batch sizes.
    pub medians: Vec<(u32, f64)>,
}

/// "Fluctuates more than": each curve's scatter with its 95% interval (as fractions of the step
/// time), their ratio with its interval, and what the ratio's interval shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Fluctuation {
    /// This curve's (scatter, low, high), if measured.
    pub here: Option<(f64, f64, f64)>,
    /// The reference's, or why there is no reference curve.
    pub there: Result<Option<(f64, f64, f64)>, String>,
    /// (ratio, low, high), where both are measured.
    pub ratio: Option<(f64, f64, f64)>,
    /// More (the interval above 1), less (below), or neither.
    pub decided: Decision,
}

pub(super) fn fluctuates_more(a: &Analysis, reference: &Reference, seed: u64) -> Fluctuation {
    let here = interval(&a.scatter_values, seed);
    let there = match &reference.curve {
        Ok(curve) => Ok(interval(&curve.scatter_values, seed)),
        Err(why) => Err(why.clone()),
    };
    let reference_values = reference
        .curve
        .as_ref()
        .map(|c| c.scatter_values.as_slice())
        .unwrap_or_default();
    let ratio = match (here, &there) {
        (Some(h), Ok(Some(t))) => {
            let (lo, hi) =
                bootstrap_median_ratio_ci(&a.scatter_values, reference_values, 2000, 0.95, seed);
            Some((h.0 / t.0, lo, hi))
        }
        _ => None,
    };
    let decided = match ratio {
        Some((_, lo, _)) if lo > 1.0 => Decision::Shown,
        Some((_, _, hi)) if hi < 1.0 => Decision::Refuted,
        _ => Decision::Open,
    };
    Fluctuation {
        here,
        there,
        ratio,
        decided,
    }
}

/// (scatter, low, high) of the 95% bootstrap interval, as fractions.
fn interval(values: &[f64], seed: u64) -> Option<(f64, f64, f64)> {
    let s = scatter(values);
    if !s.is_finite() {
        return None;
    }
    let (low, high) = bootstrap_median_ci(values, 2000, 0.95, seed);
    Some((s, MAD_TO_SD * low, MAD_TO_SD * high))
}

/// "Slightly slower": the log of this curve's median over the reference's at each batch size
/// both swept, averaged (a geometric mean ratio) with a t interval over the batch sizes.
/// "Slightly slower than", as values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Slowdown {
    /// No reference curve, and why.
    NoReference(String),
    /// Fewer common batch sizes than the rule's 2.
    TooFewCommon(usize),
    /// The geometric-mean ratio with its 90% interval, the per-batch-size range, the common
    /// batch sizes (their count, the first and the last), and what the two tests decided.
    Measured {
        ratio: f64,
        low: f64,
        high: f64,
        min: f64,
        max: f64,
        common: usize,
        first: u32,
        last: u32,
        decided: SlowerDecision,
    },
}

/// What the two one-sided tests of [`Slowdown`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum SlowerDecision {
    /// Slower, and by less than the stated ratio.
    Slightly,
    /// Bounded faster than the reference.
    Faster,
    /// Bounded slower than the stated ratio.
    TooSlow,
    /// Neither: the ratio is known within this factor.
    Open { factor: f64 },
}

pub(super) fn slowdown(a: &Analysis, reference: &Reference, max_ratio: f64) -> Slowdown {
    let common = match &reference.curve {
        Ok(curve) => log_ratios(a, &curve.medians),
        Err(why) => return Slowdown::NoReference(why.clone()),
    };
    let Some(d) = Difference::one_sample(Arm::of(&common.iter().map(|c| c.1).collect::<Vec<_>>()))
    else {
        return Slowdown::TooFewCommon(common.len());
    };
    let (low, high) = d.interval90();
    let (min, max) = common
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(m, x), c| {
            (m.min(c.1.exp()), x.max(c.1.exp()))
        });
    // Slightly: the ratio stays below max_ratio, i.e. the reference's log is not more than
    // ln(max_ratio) below this one's (a non-inferiority test of -log ratio).
    let slightly = non_inferiority(&Difference { diff: -d.diff, ..d }, max_ratio.ln());
    let decided = match (increase(&d), slightly) {
        (Decision::Shown, Decision::Shown) => SlowerDecision::Slightly,
        (Decision::Refuted, _) => SlowerDecision::Faster,
        (_, Decision::Refuted) => SlowerDecision::TooSlow,
        _ => SlowerDecision::Open {
            factor: (high - d.diff).exp(),
        },
    };
    Slowdown::Measured {
        ratio: d.diff.exp(),
        low: low.exp(),
        high: high.exp(),
        min,
        max,
        common: common.len(),
        first: common[0].0,
        last: common[common.len() - 1].0,
        decided,
    }
}

/// (batch size, ln(this median / the reference's)) at the ok batch sizes both curves have.
fn log_ratios(a: &Analysis, reference: &[(u32, f64)]) -> Vec<(u32, f64)> {
    a.findings
        .ok_points()
        .filter_map(|p| {
            let (_, there) = reference.iter().find(|(b, _)| *b == p.batch_size)?;
            let r = (p.median_ms / there).ln();
            r.is_finite().then_some((p.batch_size, r))
        })
        .collect()
}
