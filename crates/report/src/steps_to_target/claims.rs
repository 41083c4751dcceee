//! The verdicts of a steps-to-target report: each claim its config names, judged from the
//! steps-to-result curves (or, for gradient-noise-falls, the noise measurements) by the rule
//! stated in its row (see `crate::verdict`). Each rule decides a value here (or in `quality`,
//! `lr_rule`, `max_useful`, `claims_noise.rs`); `claims_words.rs` words every one but the
//! noise rule (docs/ARCHITECTURE.md, "Analysis decides, rendering words").

use batchlab_method::findings::{reading, ClaimText, Finding, Outcome, Verdict};
use batchlab_method::rows::steps_to_target::NoiseRow;
use batchlab_method::tests_of_claims::Decision;
use serde::Serialize;
use serde_json::Value;

use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::lr_rule::{self, SearchSpace};
use crate::steps_to_target::max_useful::RatioClaim;
use crate::steps_to_target::quality;
use crate::steps_to_target::scaling::bounded_interval;
use crate::steps_to_target::{
    fit_scaling, BandRegimes, CurveIntervals, Reading, Regime, ScalingFitOptions, MIN_FIT_POINTS,
};

/// How a claim is judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TargetClaimRule {
    /// Perfect scaling, then diminishing returns, then a plateau, in that order.
    ThreeRegimes,
    /// The workload's perfect scaling reaches a larger batch size than `versus`'s: the ratio
    /// of their maximum useful batch sizes lies above 1 ([`RatioClaim::Larger`]).
    ExtendsPerfectScaling(f64),
    /// A claim about the ratio of the workload's maximum useful batch size to `versus`'s, with
    /// the factor within which two count as the same.
    MaxUsefulBatch(RatioClaim, f64),
    /// The workload's steps to result is as low as `versus`'s at every batch size both have,
    /// within the factor given (the ratio of the two bounded below it).
    MatchesSearch(f64),
    /// The best learning rate follows no simple rule in the batch size (`lr_rule`), with the
    /// factor within which a rate follows linear scaling.
    NoSimpleLrScaling(f64),
    /// Every batch size's best final validation error is within the margin (a fraction of
    /// error) of the smallest batch size's (`quality`).
    NoDegradation(f64),
    /// At the largest batch size both have, the workload (regularized) reaches a best error
    /// lower than `versus`'s by more than the margin (`quality`).
    RegularizationHelps(f64),
    /// Half the batch gives a noisier gradient estimate than the whole batch, at the same
    /// parameters (`noise.csv`; `claims_noise.rs`).
    GradientNoiseFalls,
}

impl TargetClaimRule {
    /// The rule's name, as the registry and the configs spell it.
    pub fn name(self) -> &'static str {
        match self {
            TargetClaimRule::ThreeRegimes => "three-regimes",
            TargetClaimRule::ExtendsPerfectScaling(_) => RatioClaim::Larger.rule(),
            TargetClaimRule::MaxUsefulBatch(claim, _) => claim.rule(),
            TargetClaimRule::MatchesSearch(_) => "matches-search",
            TargetClaimRule::NoSimpleLrScaling(_) => "no-simple-lr-scaling",
            TargetClaimRule::NoDegradation(_) => "best-error-equal",
            TargetClaimRule::RegularizationHelps(_) => "regularization-helps-at-large-batch",
            TargetClaimRule::GradientNoiseFalls => "gradient-noise-falls",
        }
    }
}

/// A claim the report judges.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetClaim {
    /// The claim's id in the claims registry, if registered.
    pub id: Option<String>,
    /// The claim in the source's words.
    pub claim: String,
    /// Where it was made.
    pub source: String,
    /// The workload it is about.
    pub workload: String,
    /// The rule.
    pub rule: TargetClaimRule,
    /// The workload it is compared with.
    pub versus: Option<String>,
}

/// The verdict of each claim, in order; `spaces` are the workloads' searched spaces, `noise`
/// the run's gradient noise measurements (none without `noise_every`).
pub(super) fn verdicts(
    claims: &[TargetClaim],
    study: &Study,
    spaces: &[(String, SearchSpace)],
    noise: Option<&[NoiseRow]>,
) -> Vec<Finding> {
    let space = |label: &str| spaces.iter().find(|(l, _)| l == label).map(|(_, s)| s);
    claims
        .iter()
        .map(|c| verdict(c, study, &space, noise))
        .collect()
}

fn find<'a>(study: &'a Study, label: &str) -> Option<&'a Workload> {
    study.workloads.iter().find(|w| w.label == label)
}

fn verdict<'a>(
    c: &TargetClaim,
    study: &Study,
    space: &impl Fn(&str) -> Option<&'a SearchSpace>,
    noise: Option<&[NoiseRow]>,
) -> Finding {
    let claim = ClaimText::new(c.claim.clone(), c.source.clone())
        .with_id(c.id.clone())
        .scoped(c.workload.clone());
    use TargetClaimRule::*;
    let rule = c.rule.name();
    let versus = c.versus.as_deref().and_then(|v| find(study, v));
    let ((measured, verdict, test), reading) = match (find(study, &c.workload), c.rule, versus) {
        (None, _, _) => (words::missing(&c.workload), None),
        (Some(w), ThreeRegimes, _) => three_regimes(w),
        (Some(w), NoSimpleLrScaling(margin), _) => {
            learning_rate_rule(w, space(&c.workload), margin)
        }
        (Some(w), NoDegradation(margin), _) => no_degradation(w, margin),
        (Some(_), GradientNoiseFalls, _) => noise::noise_falls(&c.workload, noise),
        (Some(_), _, None) => (
            words::missing(c.versus.as_deref().unwrap_or("(none named)")),
            None,
        ),
        (Some(w), MatchesSearch(margin), Some(v)) => search::matches(w, v, margin),
        (Some(w), RegularizationHelps(margin), Some(v)) => regularization(w, v, margin),
        (Some(w), ExtendsPerfectScaling(margin), Some(v)) => {
            ratio(w, v, RatioClaim::Larger, margin)
        }
        (Some(w), MaxUsefulBatch(claim, margin), Some(v)) => ratio(w, v, claim, margin),
    };
    let mut finding = Finding::new(claim, rule, verdict, measured, test);
    finding.reading = reading;
    finding
}

/// What a rule found, in words: measured, outcome, test.
pub(super) type Parts = (String, Outcome, String);

/// What a rule found in words, with what it decided as a value (`Finding::reading`); none
/// where it could not be tested.
type Judged = (Parts, Option<Value>);

/// The regimes the windows show, against the claim of all three in order, decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RegimesShown {
    /// Shown out of the claimed order (does not reproduce).
    OutOfOrder(Vec<Regime>),
    /// All three, in order (reproduces).
    AllThree,
    /// Some regimes ruled out (every window's interval lies outside their band): with none
    /// shown, the claim does not reproduce; with some shown in order, partly; `open` are the
    /// regimes neither shown nor ruled out.
    RuledOut {
        shown: Vec<Regime>,
        excluded: Vec<Regime>,
        open: Vec<Regime>,
    },
    /// No window shows a regime, and none is ruled out (inconclusive).
    NoneShown,
    /// Some shown in order, the others neither shown nor ruled out (inconclusive).
    Open {
        shown: Vec<Regime>,
        open: Vec<Regime>,
    },
}

/// What the slope windows could resolve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Resolution {
    /// Some window straddles a band's edge: the widest such interval's half-width, against
    /// the width of the bands.
    Widest { half: f64, bands: f64 },
    /// Some window's interval is unbounded (too few trials reached the target there).
    Unbounded,
    /// Every window's interval lies inside one band.
    Decided,
}

/// The three-regimes claim on one reading's windows, with what they could resolve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Regimes {
    pub shown: RegimesShown,
    pub resolution: Resolution,
}

impl Regimes {
    fn verdict(&self) -> Verdict {
        match &self.shown {
            RegimesShown::AllThree => Verdict::Reproduces,
            RegimesShown::OutOfOrder(_) => Verdict::DoesNotReproduce,
            RegimesShown::RuledOut { shown, .. } if shown.is_empty() => Verdict::DoesNotReproduce,
            RegimesShown::RuledOut { .. } => Verdict::Partly,
            RegimesShown::NoneShown | RegimesShown::Open { .. } => Verdict::Inconclusive,
        }
    }
}

/// What the windows of `b` could resolve.
pub(super) fn resolution(b: &BandRegimes) -> Resolution {
    match b.widest_open() {
        Some(half) if half.is_finite() => Resolution::Widest {
            half,
            bands: b.bands.plateau_from - b.bands.perfect_to,
        },
        Some(_) => Resolution::Unbounded,
        None => Resolution::Decided,
    }
}

/// The three-regimes claim decided on one reading's windows.
fn judge_regimes(b: &BandRegimes) -> Regimes {
    let seq = b.sequence();
    let all = [
        Regime::PerfectScaling,
        Regime::DiminishingReturns,
        Regime::MaximalDataParallelism,
    ];
    // One standard: a regime is missing from the claim's sequence only where every window's
    // interval lies outside its band; a regime no window shows but some could is open.
    let missing = all.into_iter().filter(|r| !seq.contains(r));
    let (excluded, open): (Vec<Regime>, Vec<Regime>) = missing.partition(|r| b.excluded(*r));
    let shown = if b.out_of_order() {
        RegimesShown::OutOfOrder(seq)
    } else if seq.len() == 3 {
        RegimesShown::AllThree
    } else if !excluded.is_empty() {
        RegimesShown::RuledOut {
            shown: seq,
            excluded,
            open,
        }
    } else if seq.is_empty() {
        RegimesShown::NoneShown
    } else {
        RegimesShown::Open { shown: seq, open }
    };
    Regimes {
        shown,
        resolution: resolution(b),
    }
}

/// A claim judged under both bounds of the censored trials.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Bounded<T> {
    /// Both bounds decide the same: the reading between them where it decides that too, else
    /// the optimistic one.
    Agreed(T),
    /// The verdict flips between the bounds: read as reaching at their stop, as never reaching.
    Flips(Verdict, Verdict),
}

/// `judge` under both bounds of the censored trials: their reading when their verdicts agree.
fn within_bounds<T>(judge: impl Fn(Reading) -> T, verdict: impl Fn(&T) -> Verdict) -> Bounded<T> {
    let (a, b) = (judge(Reading::Optimistic), judge(Reading::Pessimistic));
    if verdict(&a) == verdict(&b) {
        // The reading between the bounds words it, when it decides the same.
        let between = judge(Reading::KaplanMeier);
        Bounded::Agreed(if verdict(&between) == verdict(&a) {
            between
        } else {
            a
        })
    } else {
        Bounded::Flips(verdict(&a), verdict(&b))
    }
}

fn three_regimes(w: &Workload) -> Judged {
    if !w.regimes_with_intervals() {
        return (words::too_few_windows(w), None);
    }
    let bands = w.bands.bands;
    let decided = within_bounds(
        |r| judge_regimes(&BandRegimes::new(w.curve(r), bands)),
        Regimes::verdict,
    );
    (words::three_regimes(w, &decided), reading(&decided))
}

/// Bounds on B_crit fitted to one bootstrap replicate of a curve: the value itself where the
/// fit identifies it; where it does not (the curve has not levelled off), at least the largest
/// batch size drawn and unbounded above; NaN with fewer than [`MIN_FIT_POINTS`] batch sizes
/// drawn exactly, or no fit.
fn replicate_b_crit(c: &CurveIntervals, r: usize) -> (f64, f64) {
    let points = c.replicate_points(r);
    if points.len() < MIN_FIT_POINTS {
        return (f64::NAN, f64::NAN);
    }
    let options = ScalingFitOptions {
        resamples: 0,
        ..ScalingFitOptions::default()
    };
    match fit_scaling(&points, &options) {
        Ok(fit) if fit.b_crit_identified => (fit.b_crit, fit.b_crit),
        Ok(_) => (
            points.iter().map(|p| p.0).fold(0.0, f64::max),
            f64::INFINITY,
        ),
        Err(_) => (f64::NAN, f64::NAN),
    }
}

/// The 95% interval of B_crit(w) / B_crit(v) over bootstrap replicates paired by index. The
/// two curves resample from independent streams (each workload's own seed), so a pair is two
/// independent draws, as the ratio of independent estimates needs. A replicate whose B_crit is
/// only bounded gives the ratio's bounds (a replicate without a fit, none).
fn b_crit_ratio(w: &CurveIntervals, v: &CurveIntervals) -> (f64, f64) {
    let n = w.replicate_count().min(v.replicate_count());
    bounded_interval((0..n).map(|r| {
        let ((wl, wh), (vl, vh)) = (replicate_b_crit(w, r), replicate_b_crit(v, r));
        let (lo, hi) = (wl / vh, wh / vl);
        if lo.is_nan() || hi.is_nan() {
            (f64::NAN, f64::NAN)
        } else {
            (lo, hi)
        }
    }))
}

/// No degradation of the best error with batch size (`quality`).
fn no_degradation(w: &Workload, margin: f64) -> Judged {
    let cells = quality::best_errors(w);
    let decided = quality::no_degradation(&cells, margin);
    (
        words_best::no_degradation(&cells, &decided, margin),
        reading(&decided),
    )
}

/// Regularization crucial at the largest batch size (`quality`).
fn regularization(w: &Workload, v: &Workload, margin: f64) -> Judged {
    let (with, without) = (quality::best_errors(w), quality::best_errors(v));
    let decided = quality::regularization(&with, &without, margin);
    (
        words_best::regularization((w, &with), (v, &without), &decided, margin),
        reading(&decided),
    )
}

/// Whether the best learning rate follows a simple rule (`lr_rule`).
fn learning_rate_rule(w: &Workload, space: Option<&SearchSpace>, margin: f64) -> Judged {
    let regions = lr_rule::regions(w, space);
    let decided = lr_rule::decide(&regions, margin);
    (
        words_best::learning_rate_rule(&regions, &decided, margin),
        reading(&decided),
    )
}

/// A claim about the ratio of two workloads' maximum useful batch sizes (B_crit), decided:
/// the Kaplan-Meier interval of their ratio (the measurement), and the claim under both
/// bounds of the censored trials, or the error of a fit that failed.
#[derive(Serialize)]
pub(super) struct Ratio {
    pub claim: RatioClaim,
    pub interval: (f64, f64),
    pub decided: Result<Bounded<RatioReading>, String>,
}

/// The ratio's interval under one reading and what it decides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct RatioReading {
    pub interval: (f64, f64),
    pub decided: Decision,
}

/// A claim about the ratio of two workloads' maximum useful batch sizes (B_crit).
fn ratio(w: &Workload, v: &Workload, claim: RatioClaim, margin: f64) -> Judged {
    // The Kaplan-Meier ratio is both the measurement and that reading's verdict: fitted once.
    let km = b_crit_ratio(&w.intervals, &v.intervals);
    let decided = match (&w.fit, &v.fit) {
        (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        _ => Ok(within_bounds(
            |r| {
                let interval = match r {
                    Reading::KaplanMeier => km,
                    _ => b_crit_ratio(w.curve(r), v.curve(r)),
                };
                RatioReading {
                    interval,
                    decided: claim.decide(interval, margin),
                }
            },
            |r| r.decided.verdict(),
        )),
    };
    let decided = Ratio {
        claim,
        interval: km,
        decided,
    };
    (words::ratio(w, v, &decided, margin), reading(&decided))
}

#[path = "claims_noise.rs"]
mod noise;

#[path = "claims_search.rs"]
mod search;

#[path = "claims_words.rs"]
mod words;

#[path = "claims_words_best.rs"]
mod words_best;

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
