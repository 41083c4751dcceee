//! The steps-to-target claims in words: each value `claims` (and `max_useful`,
//! `claims_search`) decided, worded as what was measured, the outcome with its reason, and the
//! test. With `claims_words_best.rs` (the best error and the best learning rate), every
//! sentence of these verdicts is here.

use batchlab_method::findings::Outcome;
use batchlab_method::tests_of_claims::Decision;

use super::noise::{NoiseFalls, Unjudged};
use super::search::SearchMatch;
use super::{Bounded, Parts, Ratio, Regimes, RegimesShown, Resolution};
use crate::numbers::{fixed, signed};
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::max_useful::RatioClaim;
use crate::steps_to_target::scaling::{INTERVAL_WORDS, LEVEL_WORDS, WINDOW};
use crate::steps_to_target::{Regime, MIN_FIT_POINTS};

/// A claim about a workload the run did not have.
pub(super) fn missing(label: &str) -> Parts {
    (
        format!("no trial of {label} recorded"),
        Outcome::cannot_test(format!("no data for {label}")),
        "–".into(),
    )
}

/// A claim judged under both bounds of the censored trials: the agreed reading worded by
/// `agreed`, or the flip between the bounds.
fn bounded<T>(decided: &Bounded<T>, agreed: impl Fn(&T) -> Outcome) -> Outcome {
    match decided {
        Bounded::Agreed(reading) => agreed(reading),
        Bounded::Flips(a, b) => Outcome::inconclusive(format!(
            "none while the trials stopped before reaching the target are unresolved: the verdict flips between their bounds, \"{}\" read as reaching at their stop, \"{}\" as never reaching",
            a.name(),
            b.name()
        )),
    }
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

/// What the windows could resolve.
fn resolution(r: Resolution) -> String {
    match r {
        Resolution::Widest { half, bands } => format!(
            "windows whose interval straddles a band's edge decide nothing; the widest open interval is ±{half:.2} (the bands are {bands:.2} wide)"
        ),
        Resolution::Unbounded => {
            "some window's interval is unbounded (too few trials reached the target there)".into()
        }
        Resolution::Decided => "every window's interval lies inside one band".into(),
    }
}

/// Too few batch sizes for one slope window.
pub(super) fn too_few_windows(w: &Workload) -> Parts {
    (
        format!("{} batch sizes with trials", w.intervals.batch_sizes.len()),
        Outcome::cannot_test(format!("a slope window needs {WINDOW} batch sizes")),
        "–".into(),
    )
}

/// The three-regimes verdict of one reading's windows.
fn regimes_outcome(r: &Regimes) -> Outcome {
    let words = |rs: &[Regime]| {
        rs.iter()
            .map(|r| r.name())
            .collect::<Vec<_>>()
            .join(", then ")
    };
    let names = |rs: &[Regime]| rs.iter().map(|r| r.name()).collect::<Vec<_>>().join(" or ");
    let resolved = resolution(r.resolution);
    match &r.shown {
        RegimesShown::OutOfOrder(seq) => Outcome::does_not_reproduce(format!(
            "the windows show {} (out of the claimed order)",
            words(seq)
        )),
        RegimesShown::AllThree => Outcome::reproduces(),
        RegimesShown::RuledOut {
            shown, excluded, ..
        } if shown.is_empty() => Outcome::does_not_reproduce(format!(
            "every window's interval lies outside the band of {}",
            names(excluded)
        )),
        RegimesShown::RuledOut {
            shown,
            excluded,
            open,
        } => Outcome::partly(format!(
            "{} shown in order; every window's interval lies outside the band of {}{}",
            words(shown),
            names(excluded),
            if open.is_empty() {
                String::new()
            } else {
                format!("; {} open ({resolved})", names(open))
            }
        )),
        RegimesShown::NoneShown => Outcome::inconclusive(format!(
            "no window shows a regime, so none of the three could be told from its neighbours: {resolved}"
        )),
        RegimesShown::Open { shown, open } => Outcome::inconclusive(format!(
            "{} shown in order; no window shows {}, and none rules it out ({resolved})",
            words(shown),
            names(open)
        )),
    }
}

/// The three-regimes claim: the ranges and windows measured, the decision, the test.
pub(super) fn three_regimes(w: &Workload, decided: &Bounded<Regimes>) -> Parts {
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
    let test = format!(
        "{}; reproduces when all three regimes are shown in this order and none out of it; {}",
        band_rule(w),
        resolution(super::resolution(&w.bands))
    );
    (measured, bounded(decided, regimes_outcome), test)
}

/// The rule of a ratio claim in words, for the report's test column.
fn ratio_rule(claim: RatioClaim, margin: f64) -> String {
    let m = signed(margin);
    let inv = signed(1.0 / margin);
    match claim {
        RatioClaim::Larger => format!("reproduces when it lies above {m} (larger by more than the margin {m}x, within which two count as the same), does not when it lies below {m}"),
        RatioClaim::Differs => format!("reproduces when it lies outside [{inv}, {m}] (a difference of more than the margin {m}x either way), does not when it lies inside it (the same within the margin)"),
        RatioClaim::NotLarger => format!("reproduces when it lies below {m} (not larger by the margin {m}x), does not when it lies above {m}"),
        RatioClaim::Equal => format!("reproduces when it lies inside [{inv}, {m}] (the same within the margin {m}x), does not when it lies outside it"),
    }
}

/// A ratio claim's verdict from the interval (lo, hi) of r and what it decided.
fn ratio_outcome(
    claim: RatioClaim,
    (lo, hi): (f64, f64),
    decided: Decision,
    margin: f64,
) -> Outcome {
    let interval = format!("ratio interval {}–{}", signed(lo), signed(hi));
    let (inv, m) = (1.0 / margin, margin);
    let open = |could: String| {
        Outcome::inconclusive(format!(
            "the {interval} straddles a bound of the rule: {could}"
        ))
    };
    match (claim, decided) {
        (_, Decision::Shown) => Outcome::reproduces_with(interval),
        (RatioClaim::Larger, Decision::Refuted) => {
            Outcome::does_not_reproduce(format!("not larger by more than the margin ({interval})"))
        }
        (RatioClaim::Differs, Decision::Refuted) => {
            Outcome::does_not_reproduce(format!("the same within the margin ({interval})"))
        }
        (RatioClaim::NotLarger, Decision::Refuted) => {
            Outcome::does_not_reproduce(format!("larger by more than the margin ({interval})"))
        }
        (RatioClaim::Equal, Decision::Refuted) => {
            Outcome::does_not_reproduce(format!("they differ by more than the margin ({interval})"))
        }
        (RatioClaim::Larger | RatioClaim::NotLarger, Decision::Open) => {
            open(format!("a ratio clearly above or below {}", signed(m)))
        }
        (RatioClaim::Differs, Decision::Open) => open(format!(
            "a difference beyond {}x either way, or a sameness within it",
            signed(m)
        )),
        (RatioClaim::Equal, Decision::Open) => open(format!(
            "it could not show a ratio within [{}, {}]",
            signed(inv),
            signed(m)
        )),
    }
}

/// A claim about the ratio of two workloads' maximum useful batch sizes: the fits and the
/// ratio's interval measured, the decision, the test.
pub(super) fn ratio(w: &Workload, v: &Workload, decided: &Ratio, margin: f64) -> Parts {
    let fitted = |x: &Workload| match &x.fit {
        Ok(f) => format!("B_crit {:.0} for {}", f.b_crit, x.label),
        Err(e) => format!("no B_crit for {} ({e})", x.label),
    };
    let (lo, hi) = decided.interval;
    let measured = format!(
        "{}, {}; ratio {} / {}: nominally 95% interval {}–{}",
        fitted(w),
        fitted(v),
        w.label,
        v.label,
        signed(lo),
        signed(hi)
    );
    let outcome = match &decided.decided {
        Err(e) => Outcome::cannot_test(e.clone()),
        Ok(bounds) => bounded(bounds, |r| {
            ratio_outcome(decided.claim, r.interval, r.decided, margin)
        }),
    };
    let test = format!(
        "the critical batch size B_crit of S(B) = S_min (1 + B_crit / B), fitted to each bootstrap replicate of both curves (at least {MIN_FIT_POINTS} batch sizes drawn exactly), compared by the nominally 95% interval of the ratio B_crit({}) / B_crit({}) (drawn from the cells' intervals, {LEVEL_WORDS}; the ratio's own level not checked out of sample): {}",
        w.label,
        v.label,
        ratio_rule(decided.claim, margin)
    );
    (measured, outcome, test)
}

/// matches-search in words: what was measured, the outcome, the test.
pub(super) fn search_match(
    reading: &SearchMatch,
    w: &Workload,
    v: &Workload,
    margin: f64,
) -> Parts {
    let parts: Vec<String> = reading
        .compared
        .iter()
        .map(|c| {
            format!(
                "batch {}: {}x (95% interval {}–{})",
                c.batch,
                ratio_text(c.ratio),
                ratio_text(c.low),
                ratio_text(c.high)
            )
        })
        .collect();
    let SearchMatch {
        shown,
        refuted,
        open,
        widest,
        ..
    } = *reading;
    let all = shown + refuted + open;
    let verdict = if all == 0 {
        Outcome::cannot_test("no batch size where either reached the target")
    } else if shown == all {
        Outcome::reproduces_with(format!("within x{margin} at all {all} batch sizes"))
    } else if refuted == all {
        Outcome::does_not_reproduce(format!(
            "more than x{margin} the steps at all {all} batch sizes"
        ))
    } else if shown > 0 && refuted > 0 {
        Outcome::partly(format!(
            "within x{margin} at {shown} of {all} batch sizes, beyond it at {refuted}"
        ))
    } else {
        Outcome::inconclusive(format!(
            "the ratio's interval reaches past x{margin} (up to {}) at {open} of {all} batch sizes",
            ratio_text(widest)
        ))
    };
    let test = format!(
        "A non-inferiority claim per batch size both searches ran: the ratio of {}'s steps to result to {}'s, with the nominally 95% interval of that ratio over the two searches' bootstrap replicates (drawn from the cells' intervals, measured at 83% on fresh replicates) (independent draws: where another search of as many trials would find its best); as low as within x{margin} (the registry's margin: steps to result are read on evaluations spaced by a factor of budget.evaluate_growth, so closer searches cannot be told apart) when the interval's top is at most x{margin}, worse when its bottom lies above it. Reproduces if every batch size is as low, does not reproduce if every one is worse, partly if some of each, inconclusive otherwise",
        w.label, v.label
    );
    let measured = format!(
        "steps to result, {} over {}: {}",
        w.label,
        v.label,
        parts.join("; ")
    );
    (measured, verdict, test)
}

/// A ratio to two decimals, or "unbounded".
fn ratio_text(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "unbounded".into()
    }
}

/// gradient-noise-falls' rule, for the test column.
fn noise_test() -> String {
    "A directional claim on the gradient estimate's noise at fixed parameters: at each noise measurement the squared norm of the mean gradient of half the batch against that of the whole batch (E|G_b|² = |G|² + tr(Σ)/b: the excess is the noise the smaller sample adds); per trial the mean of ln(|G_half|² / |G_whole|²) over its measurements, then a one-sample t over the trials. Reproduces when the one-sided 95% lower bound lies above 0 (the smaller sample's estimate is noisier), does not reproduce when the upper bound lies below 0, inconclusive otherwise.".into()
}

/// gradient-noise-falls decided.
pub(super) fn noise_falls(n: &NoiseFalls, workload: &str) -> Parts {
    let (low, high) = n.d.interval90();
    let times = |x: f64| format!("{}x", fixed(x.exp(), 2));
    let per_batch: Vec<String> = n
        .by_batch
        .iter()
        .map(|(b, _, m)| format!("{b}: {}", times(*m)))
        .collect();
    let measured = format!(
        "{} trials of {workload}, {} measurements{}: |G_half|² / |G_whole|² {} (the geometric mean over the trials; 90% interval {} to {}); by batch size (median over its trials) {}",
        n.trials,
        n.measurements,
        if n.unusable > 0 {
            format!(
                " ({} more left out: a squared norm not above zero, or not finite)",
                n.unusable
            )
        } else {
            String::new()
        },
        times(n.d.diff),
        times(low),
        times(high),
        per_batch.join(", ")
    );
    let outcome = match n.decided {
        Decision::Shown => Outcome::reproduces_with(format!(
            "half the batch's gradient has {} the squared norm of the whole batch's",
            times(n.d.diff)
        )),
        Decision::Refuted => Outcome::does_not_reproduce(format!(
            "half the batch's gradient has the smaller squared norm ({})",
            times(n.d.diff)
        )),
        Decision::Open => Outcome::inconclusive(format!(
            "a ratio of {} (the one-sided 95% half-width)",
            times(n.d.critical() * n.d.se)
        )),
    };
    (measured, outcome, noise_test())
}

/// gradient-noise-falls where the run cannot judge it.
pub(super) fn noise_unjudged(why: &Unjudged, workload: &str) -> Parts {
    let (measured, why) = match why {
        Unjudged::NoNoise => (
            "no gradient noise measured".to_string(),
            "the run measured no gradient noise (no noise.csv: the study sets no noise_every)"
                .to_string(),
        ),
        Unjudged::TooFewTrials(n) => (
            format!("{n} trial(s) of {workload} with a usable noise measurement"),
            "fewer than two trials with a noise measurement: no spread to test against".into(),
        ),
    };
    (measured, Outcome::cannot_test(why), noise_test())
}
