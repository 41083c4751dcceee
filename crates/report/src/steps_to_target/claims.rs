//! The verdicts of a steps-to-target report: each claim its config names, judged from the
//! steps-to-result curves by the rule stated in its row (see `crate::verdict`).

use batchlab_method::findings::{ClaimText, Finding, Outcome};

use crate::numbers::signed;
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::lr_rule::{self, SearchSpace};
use crate::steps_to_target::max_useful::RatioClaim;
use crate::steps_to_target::quality;
use crate::steps_to_target::scaling::{bounded_interval, WINDOW};
use crate::steps_to_target::scaling::{INTERVAL_WORDS, LEVEL_WORDS};
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

/// The verdict of each claim, in order; `spaces` are the workloads' searched spaces.
pub(super) fn verdicts(
    claims: &[TargetClaim],
    study: &Study,
    spaces: &[(String, SearchSpace)],
) -> Vec<Finding> {
    let space = |label: &str| spaces.iter().find(|(l, _)| l == label).map(|(_, s)| s);
    claims.iter().map(|c| verdict(c, study, &space)).collect()
}

fn find<'a>(study: &'a Study, label: &str) -> Option<&'a Workload> {
    study.workloads.iter().find(|w| w.label == label)
}

fn verdict<'a>(
    c: &TargetClaim,
    study: &Study,
    space: &impl Fn(&str) -> Option<&'a SearchSpace>,
) -> Finding {
    let claim = ClaimText::new(c.claim.clone(), c.source.clone())
        .with_id(c.id.clone())
        .scoped(c.workload.clone());
    use TargetClaimRule::*;
    let rule = c.rule.name();
    let versus = c.versus.as_deref().and_then(|v| find(study, v));
    let (measured, verdict, test) = match (find(study, &c.workload), c.rule, versus) {
        (None, _, _) => missing(&c.workload),
        (Some(w), ThreeRegimes, _) => three_regimes(w),
        (Some(w), NoSimpleLrScaling(margin), _) => {
            learning_rate_rule(w, space(&c.workload), margin)
        }
        (Some(w), NoDegradation(margin), _) => no_degradation(w, margin),
        (Some(_), _, None) => missing(c.versus.as_deref().unwrap_or("(none named)")),
        (Some(w), MatchesSearch(margin), Some(v)) => search::matches(w, v, margin),
        (Some(w), RegularizationHelps(margin), Some(v)) => regularization(w, v, margin),
        (Some(w), ExtendsPerfectScaling(margin), Some(v)) => {
            ratio(w, v, RatioClaim::Larger, margin)
        }
        (Some(w), MaxUsefulBatch(claim, margin), Some(v)) => ratio(w, v, claim, margin),
    };
    Finding::new(claim, rule, verdict, measured, test)
}

/// What a rule found: measured, outcome, test.
type Parts = (String, Outcome, String);

fn missing(label: &str) -> Parts {
    (
        format!("no trial of {label} recorded"),
        Outcome::cannot_test(format!("no data for {label}")),
        "–".into(),
    )
}

fn range_text(name: &str, range: Option<(f64, f64)>) -> String {
    match range {
        Some((a, b)) => format!("{name} {a}–{b}"),
        None => format!("no {name}"),
    }
}

/// The rule of the band-judged regimes, for the test column.
fn band_rule(w: &Workload) -> String {
    format!(
        "the log-log slope of steps to result fitted over every {WINDOW} neighbouring batch sizes, with a nominally 95% interval (its level not checked out of sample) from curves drawn per batch size from the {} (values the data cannot bound enter as bounds, not numbers); a window is in a regime only when its whole interval lies inside that regime's band ({})",
        INTERVAL_WORDS,
        w.bands.bands.describe()
    )
}

/// What the windows could resolve: the widest open window's half-width, or that every window
/// was decided.
fn resolution(b: &BandRegimes) -> String {
    match b.widest_open() {
        Some(h) if h.is_finite() => format!(
            "windows whose interval straddles a band's edge decide nothing; the widest open interval is ±{h:.2} (the bands are {:.2} wide)",
            b.bands.plateau_from - b.bands.perfect_to
        ),
        Some(_) => "some window's interval is unbounded (too few trials reached the target there)".into(),
        None => "every window's interval lies inside one band".into(),
    }
}

/// The three-regimes verdict of one reading's windows.
fn judge_regimes(b: &BandRegimes) -> Outcome {
    let seq = b.sequence();
    let words = |rs: &[Regime]| {
        rs.iter()
            .map(|r| r.name())
            .collect::<Vec<_>>()
            .join(", then ")
    };
    let all = [
        Regime::PerfectScaling,
        Regime::DiminishingReturns,
        Regime::MaximalDataParallelism,
    ];
    let names = |rs: &[Regime]| rs.iter().map(|r| r.name()).collect::<Vec<_>>().join(" or ");
    // One standard: a regime is missing from the claim's sequence only where every window's
    // interval lies outside its band; a regime no window shows but some could is open.
    let missing = all.into_iter().filter(|r| !seq.contains(r));
    let (excluded, open): (Vec<Regime>, Vec<Regime>) = missing.partition(|r| b.excluded(*r));
    if b.out_of_order() {
        Outcome::does_not_reproduce(format!(
            "the windows show {} (out of the claimed order)",
            words(&seq)
        ))
    } else if seq.len() == 3 {
        Outcome::reproduces()
    } else if !excluded.is_empty() && seq.is_empty() {
        Outcome::does_not_reproduce(format!(
            "every window's interval lies outside the band of {}",
            names(&excluded)
        ))
    } else if !excluded.is_empty() {
        Outcome::partly(format!(
            "{} shown in order; every window's interval lies outside the band of {}{}",
            words(&seq),
            names(&excluded),
            if open.is_empty() {
                String::new()
            } else {
                format!("; {} open ({})", names(&open), resolution(b))
            }
        ))
    } else if seq.is_empty() {
        Outcome::inconclusive(format!(
            "no window shows a regime, so none of the three could be told from its neighbours: {}",
            resolution(b)
        ))
    } else {
        Outcome::inconclusive(format!(
            "{} shown in order; no window shows {}, and none rules it out ({})",
            words(&seq),
            names(&open),
            resolution(b)
        ))
    }
}

/// `judge` under both bounds of the censored trials: their verdict when they agree, else
/// inconclusive naming both.
fn within_bounds(judge: impl Fn(Reading) -> Outcome) -> Outcome {
    let (a, b) = (judge(Reading::Optimistic), judge(Reading::Pessimistic));
    if a.verdict() == b.verdict() {
        // The reading between the bounds words it, when it decides the same.
        let between = judge(Reading::KaplanMeier);
        if between.verdict() == a.verdict() {
            between
        } else {
            a
        }
    } else {
        Outcome::inconclusive(format!(
            "none while the trials stopped before reaching the target are unresolved: the verdict flips between their bounds, \"{}\" read as reaching at their stop, \"{}\" as never reaching",
            a.verdict().name(),
            b.verdict().name()
        ))
    }
}

fn three_regimes(w: &Workload) -> Parts {
    if !w.regimes_with_intervals() {
        return (
            format!("{} batch sizes with trials", w.intervals.batch_sizes.len()),
            Outcome::cannot_test(format!("a slope window needs {WINDOW} batch sizes")),
            "–".into(),
        );
    }
    let range = |r| {
        w.bands
            .range(r)
            .map(|(a, b)| (w.intervals.batch_sizes[a], w.intervals.batch_sizes[b]))
    };
    let windows: Vec<String> = w
        .bands
        .windows
        .iter()
        .map(|(win, r)| {
            let (lo, hi) = win.interval;
            format!(
                "{}–{}: [{}, {}] {}",
                w.intervals.batch_sizes[win.first],
                w.intervals.batch_sizes[win.last],
                signed(lo),
                signed(hi),
                r.map_or("open", Regime::name)
            )
        })
        .collect();
    let measured = format!(
        "{}; {}; {} (slope windows {})",
        range_text("perfect scaling", range(Regime::PerfectScaling)),
        range_text("diminishing returns", range(Regime::DiminishingReturns)),
        range_text(
            "maximal data parallelism",
            range(Regime::MaximalDataParallelism)
        ),
        windows.join("; ")
    );
    let bands = w.bands.bands;
    let verdict = within_bounds(|r| judge_regimes(&BandRegimes::new(w.curve(r), bands)));
    let test = format!(
        "{}; reproduces when all three regimes are shown in this order and none out of it; {}",
        band_rule(w),
        resolution(&w.bands)
    );
    (measured, verdict, test)
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

/// The interval and comparison rule of the best-error claims, for the test column.
const BEST_ERROR_RULE: &str = "per batch size, the lowest validation error at the last evaluation of its ok trials (diverged trials ranked last), with the interval (nominally 95%, its level not checked out of sample) of where another search of as many trials would find its best (the rank law of the steps-to-result intervals); two cells compared by the nominally 95% interval of the difference of two other searches' bests, each drawn from its own cell's law on its own random stream";

/// No degradation of the best error with batch size (`quality`).
fn no_degradation(w: &Workload, margin: f64) -> Parts {
    let cells = quality::best_errors(w);
    let test = format!(
        "{BEST_ERROR_RULE}: reproduces when every batch size's difference from the smallest batch size's best error has its interval below {} points, does not when some batch size's lies wholly above",
        crate::numbers::fixed(100.0 * margin, 2)
    );
    (
        format!(
            "best final validation error by batch size: {}",
            quality::cells_text(&cells)
        ),
        quality::judge_no_degradation(&cells, margin),
        test,
    )
}

/// Regularization crucial at the largest batch size (`quality`).
fn regularization(w: &Workload, v: &Workload, margin: f64) -> Parts {
    let (with, without) = (quality::best_errors(w), quality::best_errors(v));
    let test = format!(
        "{BEST_ERROR_RULE}: at the largest batch size both searched, the gain {}'s best error − {}'s: reproduces when its interval lies above {} points, does not when below",
        v.label,
        w.label,
        crate::numbers::fixed(100.0 * margin, 2)
    );
    (
        format!(
            "{}: {}; {}: {}",
            w.label,
            quality::cells_text(&with),
            v.label,
            quality::cells_text(&without)
        ),
        quality::judge_regularization(&with, &without, margin),
        test,
    )
}

/// Whether the best learning rate follows a simple rule (`lr_rule`).
fn learning_rate_rule(w: &Workload, space: Option<&SearchSpace>, margin: f64) -> Parts {
    let regions = lr_rule::regions(w, space);
    let cells: Vec<String> = regions
        .iter()
        .map(|r| {
            format!(
                "{}: {}{}–{}{} ({} trials)",
                r.batch_size,
                if r.open_low { "≤" } else { "" },
                crate::numbers::sig(r.low),
                crate::numbers::sig(r.high),
                if r.open_high { "+" } else { "" },
                r.trials
            )
        })
        .collect();
    let measured = format!(
        "near-best effective learning rates by batch size: {}; power laws through all of them: slopes {}",
        if cells.is_empty() { "none".into() } else { cells.join("; ") },
        lr_rule::slopes_text(&regions)
    );
    let test = format!(
        "per batch size, the effective learning rates of the trials that reached the target within the upper end of its interval of steps to result ({LEVEL_WORDS}) (≤ or + where they reach the outer {:.0}% of the searched log-range: open on that side); a simple rule is a power law, a line in log-log, and a departure counts beyond x{m} (the registry's margin): reproduces when no line of any slope comes within x{m} of every region, partly when lines do but none of slope 1 (linear scaling fails), does not reproduce when a line of slope 1 keeps every region, closed, within x{m} of it, inconclusive otherwise",
        100.0 * lr_rule::EDGE_SHARE,
        m = crate::numbers::sig(margin)
    );
    (measured, lr_rule::judge(&regions, margin), test)
}

/// A claim about the ratio of two workloads' maximum useful batch sizes (B_crit).
fn ratio(w: &Workload, v: &Workload, claim: RatioClaim, margin: f64) -> Parts {
    let fitted = |x: &Workload| match &x.fit {
        Ok(f) => format!("B_crit {:.0} for {}", f.b_crit, x.label),
        Err(e) => format!("no B_crit for {} ({e})", x.label),
    };
    // The Kaplan-Meier ratio is both the measurement and that reading's verdict: fitted once.
    let km = b_crit_ratio(&w.intervals, &v.intervals);
    let (lo, hi) = km;
    let measured = format!(
        "{}, {}; ratio {} / {}: nominally 95% interval {}–{}",
        fitted(w),
        fitted(v),
        w.label,
        v.label,
        signed(lo),
        signed(hi)
    );
    let verdict = match (&w.fit, &v.fit) {
        (Err(e), _) | (_, Err(e)) => Outcome::cannot_test(e.clone()),
        _ => within_bounds(|r| {
            let interval = match r {
                Reading::KaplanMeier => km,
                _ => b_crit_ratio(w.curve(r), v.curve(r)),
            };
            claim.judge(interval, margin)
        }),
    };
    let test = format!(
        "the critical batch size B_crit of S(B) = S_min (1 + B_crit / B), fitted to each bootstrap replicate of both curves (at least {MIN_FIT_POINTS} batch sizes drawn exactly), compared by the nominally 95% interval of the ratio B_crit({}) / B_crit({}) (drawn from the cells' intervals, {LEVEL_WORDS}; the ratio's own level not checked out of sample): {}",
        w.label,
        v.label,
        claim.words(margin)
    );
    (measured, verdict, test)
}

#[path = "claims_search.rs"]
mod search;

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
