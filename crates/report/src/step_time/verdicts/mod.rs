//! The verdict on each of seeds 000/001's claims that a step-time sweep can test, by a rule
//! that fits the claim: "grows linearly" by a constant marginal cost (the two halves of the
//! sweep cost the same per extra example, within a margin); "jumps at 16, 32, 48 and 64" and
//! "no jumps at ..." by one standard, the step at each named gap bounded on one side of a
//! margin (`positions`); "fluctuates more" and
//! "slightly slower" against a reference curve measured on the same machine (`versus`); "one
//! below or one above it is slower" by the time per example, round by round (`minimum`);
//! seed 002's "slightly faster in cuDNN's benchmark mode" from the same go's two PyTorch
//! references (`autotune`). The linear, comparison, minimum and benchmark-mode rules decide as
//! values, which `words` words as findings.
mod autotune;
mod minimum;
mod positions;
pub use crate::jumps::Gap;
pub(crate) use positions::{named_jumps, Reading};
mod versus;
mod words;
mod words_positions;

pub(crate) use autotune::{speedup, Speedup};
pub use versus::{Reference, ReferenceCurve};

use batchlab_method::findings::Finding;
use batchlab_method::stats::{linear_fit, LinearFit};
use batchlab_method::tests_of_claims::{critical, Decision, ALPHA};
use serde::Serialize;

use super::analysis::Analysis;
use super::StepTimeContext;
use crate::jumps::JumpOptions;
use crate::markdown::and_list;

/// The source every step-time claim comes from.
pub(super) const SEEDS: &str = "seeds 000/001";

/// Fewest ok batch sizes in each half of the sweep for the marginal-cost test: a line through
/// four points has two residual degrees of freedom.
const MIN_HALF: usize = 4;

/// Random sets of gaps the named positions' rank is compared with.
pub(super) const RANK_RESAMPLES: usize = 10_000;

/// The rules' parameters a config (or the claims registry) sets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTimeRules {
    /// "Grows linearly": the largest relative change of the marginal cost (ms per extra
    /// example) between the lower and the upper half of the sweep that still counts as linear.
    pub linear_margin: f64,
    /// "No jumps at ...": the largest step, relative to the step time, that still counts as
    /// no jump.
    pub no_jumps_margin: f64,
    /// "Jumps at ...": the smallest step, relative to the step time, that counts as a jump
    /// (its one-sided lower bound must reach it; an upper bound below it refutes the jump).
    pub jump_margin: f64,
    /// Which gap a named position means (the registry's reading of the article).
    pub gap: Gap,
    /// "The jumps stay below doubling": the ratio of the step time after a claimed jump to the
    /// time before it that they must stay under; `None` leaves the claim unjudged.
    pub max_jump_ratio: Option<f64>,
    /// "Slightly slower than ...": the largest ratio of this model's step time to the
    /// reference's (geometric mean over the common batch sizes) that still counts as slightly.
    pub slower_max_ratio: f64,
    /// "Slightly faster with cuDNN's benchmark mode": (the smallest gain that counts as faster,
    /// the largest that is still slight), judged from the same go's PyTorch references where
    /// set; `None` leaves the claim unjudged.
    pub autotune: Option<(f64, f64)>,
}

impl Default for StepTimeRules {
    /// The parameters claims/registry.toml gives the seeds' claims, with their provenance.
    fn default() -> Self {
        StepTimeRules {
            linear_margin: 0.25,
            no_jumps_margin: JumpOptions::default().min_relative,
            jump_margin: JumpOptions::default().min_relative,
            gap: Gap::default(),
            slower_max_ratio: 1.5,
            max_jump_ratio: None,
            autotune: None,
        }
    }
}

/// Every claim the config names, judged (the benchmark-mode claim from `tuned`, the same go's
/// PyTorch references compared, where the config names the claim).
pub(super) fn judge(
    ctx: &StepTimeContext,
    a: &Analysis,
    fluctuation: Option<&Reference>,
    slower: Option<&Reference>,
    tuned: Option<&Speedup>,
) -> Vec<Finding> {
    let r = &ctx.rules;
    // The seeds' first claim is about step time in general: every sweep can judge it.
    let mut findings = vec![linear(a, ctx.rules.linear_margin)];
    if !ctx.claimed_jumps.is_empty() {
        let claimed = &ctx.claimed_jumps;
        let reading = positions::jumps_at(a, claimed, r.gap, r.jump_margin, ctx.seed);
        let z = positions::z_one_sided();
        findings.push(
            words_positions::jumps_at(&reading, claimed, r.gap, r.jump_margin, z)
                .with_reading(&reading),
        );
        if let Some(ratio) = r.max_jump_ratio {
            let reading = positions::jumps_below(a, claimed, r.gap, r.jump_margin, ratio);
            findings.push(
                words_positions::jumps_below(&reading, claimed, r.jump_margin, ratio)
                    .with_reading(&reading),
            );
        }
    }
    if !ctx.no_jumps_at.is_empty() {
        let (at, margin) = (&ctx.no_jumps_at, r.no_jumps_margin);
        let reading = positions::no_jumps_at(a, at, r.gap, margin);
        findings
            .push(words_positions::no_jumps_at(&reading, at, r.gap, margin).with_reading(&reading));
    }
    if let Some(trio) = ctx.local_minimum_at {
        let reading = minimum::local_minimum_at(a, trio);
        findings.push(words::local_minimum(&reading, trio).with_reading(&reading));
    }
    if let Some(reference) = fluctuation {
        let reading = versus::fluctuates_more(a, reference, ctx.seed);
        findings.push(words::fluctuates_more(&reading, reference).with_reading(&reading));
    }
    if let Some(reference) = slower {
        let max_ratio = ctx.rules.slower_max_ratio;
        let reading = versus::slowdown(a, reference, max_ratio);
        findings.push(words::slower_than(&reading, reference, max_ratio).with_reading(&reading));
    }
    if let (Some((margin, max_gain)), Some(reading)) = (r.autotune, tuned) {
        findings.push(words::autotune_faster(reading, margin, max_gain).with_reading(reading));
    }
    crate::verdict::quote_registered(&mut findings, &ctx.registered_claims);
    findings
}

/// The line through one half of the ok medians.
fn half_fit(x: &[f64], y: &[f64]) -> Option<LinearFit> {
    linear_fit(x, y).filter(|f| f.slope_se.is_finite())
}

fn linear(a: &Analysis, margin: f64) -> Finding {
    let reading = linearity(a, margin);
    words::linear(&reading, margin).with_reading(&reading)
}

/// "The step time grows linearly", as values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Linearity {
    /// Fewer ok batch sizes than two halves of [`MIN_HALF`].
    TooFew { ok: usize },
    /// A half of the sweep has no line with a standard error.
    NoLines,
    /// The two halves' lines, the batch sizes they span, the whole sweep's line, and what the
    /// rule decided.
    Measured {
        low: LinearFit,
        high: LinearFit,
        /// First and last batch size of the lower half, then of the upper half.
        spans: [(u32, u32); 2],
        /// The whole sweep's line, if fitted.
        whole: Option<LinearFit>,
        decided: MarginalCost,
    },
}

/// What the marginal-cost test of [`Linearity`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum MarginalCost {
    /// A half's cost per example is not positive: refuted where a half's upper bound stays at
    /// or below zero, else open within `bound` ms.
    NotPositive { refuted: bool, bound: f64 },
    /// The upper half's cost over the lower's with its 90% interval; within the margin
    /// (`Shown`), outside it (`Refuted`), or neither, known within a factor of `half_width`'s
    /// exponential.
    Ratio {
        ratio: f64,
        low: f64,
        high: f64,
        half_width: f64,
        decided: Decision,
    },
}

fn linearity(a: &Analysis, margin: f64) -> Linearity {
    let ok: Vec<_> = a.findings.ok_points().collect();
    let half = ok.len() / 2;
    if half < MIN_HALF {
        return Linearity::TooFew { ok: ok.len() };
    }
    let x: Vec<f64> = ok.iter().map(|p| f64::from(p.batch_size)).collect();
    let y: Vec<f64> = ok.iter().map(|p| p.median_ms).collect();
    let (Some(low), Some(high)) = (
        half_fit(&x[..half], &y[..half]),
        half_fit(&x[half..], &y[half..]),
    ) else {
        return Linearity::NoLines;
    };
    let spans = [
        (ok[0].batch_size, ok[half - 1].batch_size),
        (ok[half].batch_size, ok[ok.len() - 1].batch_size),
    ];
    let df = (half - 2).min(ok.len() - half - 2) as f64;
    let decided = if low.slope <= 0.0 || high.slope <= 0.0 {
        // A cost per example that is not positive: the data refute a growing line only where
        // a half's upper bound stays at or below zero; a flat half with noise is open.
        let t = critical(ALPHA, df);
        MarginalCost::NotPositive {
            refuted: [low, high].iter().any(|f| f.slope + t * f.slope_se <= 0.0),
            bound: t * low.slope_se.max(high.slope_se),
        }
    } else {
        let ratio = high.slope / low.slope;
        let se = ((low.slope_se / low.slope).powi(2) + (high.slope_se / high.slope).powi(2)).sqrt();
        let half_width = critical(ALPHA, df) * se;
        let (lo, hi) = (
            (ratio.ln() - half_width).exp(),
            (ratio.ln() + half_width).exp(),
        );
        let bound = (1.0 + margin).ln();
        MarginalCost::Ratio {
            ratio,
            low: lo,
            high: hi,
            half_width,
            decided: if lo.ln() > -bound && hi.ln() < bound {
                Decision::Shown
            } else if hi.ln() < -bound || lo.ln() > bound {
                Decision::Refuted
            } else {
                Decision::Open
            },
        }
    };
    Linearity::Measured {
        low,
        high,
        spans,
        whole: a.findings.fit,
        decided,
    }
}

/// "16, 32 and 48".
pub(super) fn list(values: &[u32]) -> String {
    let text: Vec<String> = values.iter().map(u32::to_string).collect();
    and_list(&text)
}
