//! The claims about what a search's best trials reach, in words: the best error per batch size
//! (`quality`: no degradation, regularization) and the best learning rate (`lr_rule`). With
//! `claims_words.rs`, every sentence of steps-to-target's verdicts.

use batchlab_method::findings::Outcome;
use batchlab_method::tests_of_claims::Decision;

use super::Parts;
use crate::numbers::{fixed, sig};
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::lr_rule::{self, LrRule, RateRegion, Widest};
use crate::steps_to_target::quality::{BestError, NoDegradation, Regularization};
use crate::steps_to_target::scaling::LEVEL_WORDS;

/// Points of error (percent), two decimals.
fn points(e: f64) -> String {
    if e.is_finite() {
        fixed(100.0 * e, 2)
    } else {
        "∞".into()
    }
}

/// "12.34% (11.90–13.02%) at 16", per cell.
fn cells_text(cells: &[BestError]) -> String {
    let parts: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "{}: {}% ({}–{}%, {} trials{})",
                c.batch_size,
                points(c.best),
                points(c.interval.0),
                points(c.interval.1),
                c.trials,
                c.test_error
                    .map_or(String::new(), |t| format!("; test {}%", points(t)))
            )
        })
        .collect();
    if parts.is_empty() {
        "no ok trial".into()
    } else {
        parts.join("; ")
    }
}

/// The interval and comparison rule of the best-error claims, for the test column.
const BEST_ERROR_RULE: &str = "per batch size, the lowest validation error at the last evaluation of its ok trials (diverged trials ranked last), with the interval (nominally 95%, its level not checked out of sample) of where another search of as many trials would find its best (the rank law of the steps-to-result intervals); two cells compared by the nominally 95% interval of the difference of two other searches' bests, each drawn from its own cell's law on its own random stream";

/// No degradation of the best error with batch size.
pub(super) fn no_degradation(cells: &[BestError], decided: &NoDegradation, margin: f64) -> Parts {
    let m = points(margin);
    let outcome = match *decided {
        NoDegradation::TooFew(0) => Outcome::cannot_test("no batch size with an ok trial"),
        NoDegradation::TooFew(_) => {
            Outcome::cannot_test("one batch size with an ok trial: nothing to compare")
        }
        NoDegradation::Worse {
            first,
            batch,
            low,
            high,
        } => Outcome::does_not_reproduce(format!(
            "at batch {batch} the best error is worse than at {first} by {} to {} points, beyond the margin of {m}",
            points(low),
            points(high)
        )),
        NoDegradation::Within { first } => Outcome::reproduces_with(format!(
            "every batch size within {m} points of batch {first}'s best error"
        )),
        NoDegradation::Open { batch, worst } => Outcome::inconclusive(format!(
            "a degradation of up to {} points at batch {batch} is within its interval, against a margin of {m}",
            points(worst)
        )),
    };
    let test = format!(
        "{BEST_ERROR_RULE}: reproduces when every batch size's difference from the smallest batch size's best error has its interval below {} points, does not when some batch size's lies wholly above",
        fixed(100.0 * margin, 2)
    );
    (
        format!(
            "best final validation error by batch size: {}",
            cells_text(cells)
        ),
        outcome,
        test,
    )
}

/// Regularization crucial at the largest batch size: the regularized workload `w` against
/// `v`, each with its cells.
pub(super) fn regularization(
    (w, with): (&Workload, &[BestError]),
    (v, without): (&Workload, &[BestError]),
    decided: &Regularization,
    margin: f64,
) -> Parts {
    let outcome = match *decided {
        Regularization::NoSharedBatch => {
            Outcome::cannot_test("no batch size with ok trials of both workloads")
        }
        Regularization::Gain {
            batch,
            gain,
            low,
            high,
            decided,
        } => {
            let gain = format!(
                "at batch {batch}: a gain of {} points ({} to {})",
                points(gain),
                points(low),
                points(high)
            );
            match decided {
                Decision::Shown => Outcome::reproduces_with(gain),
                Decision::Refuted => Outcome::does_not_reproduce(format!(
                    "{gain}, below the margin of {} points",
                    points(margin)
                )),
                Decision::Open => Outcome::inconclusive(format!(
                    "{gain}: the interval straddles the margin of {} points",
                    points(margin)
                )),
            }
        }
    };
    let test = format!(
        "{BEST_ERROR_RULE}: at the largest batch size both searched, the gain {}'s best error − {}'s: reproduces when its interval lies above {} points, does not when below",
        v.label,
        w.label,
        fixed(100.0 * margin, 2)
    );
    (
        format!(
            "{}: {}; {}: {}",
            w.label,
            cells_text(with),
            v.label,
            cells_text(without)
        ),
        outcome,
        test,
    )
}

/// "0.62 to 1.10".
fn slopes((a, b): (f64, f64)) -> String {
    format!("{a:.2} to {b:.2}")
}

/// The claim that the best learning rate follows no simple rule, `margin` the registry's
/// factor within which a rate follows linear scaling.
fn lr_rule_outcome(decided: &LrRule, margin: f64) -> Outcome {
    let m = sig(margin);
    match *decided {
        LrRule::TooFew(n) => Outcome::cannot_test(format!(
            "{n} batch sizes with near-best trials; a rule needs 3 to be tested"
        )),
        LrRule::NoPowerLaw => Outcome::reproduces_with(format!(
            "no power law comes within x{m} of every batch size's near-best region"
        )),
        LrRule::NotLinear { slopes: s } => Outcome::partly(format!(
            "linear scaling misses a batch size's near-best region by more than x{m}, but power laws of slope {} come within x{m} of every one",
            slopes(s)
        )),
        LrRule::Linear => Outcome::does_not_reproduce(format!(
            "one linear-scaling line keeps every batch size's near-best region within x{m} of it"
        )),
        LrRule::Open(widest) => Outcome::inconclusive(format!(
            "a departure from linear scaling beyond x{m}, the margin, where no line comes within it of every region; short of that, the regions bound nothing: {}, where bounding the rate within x{m} of one line needs every region closed and within x{}",
            match widest {
                Widest::Open(batch) => format!(
                    "batch {batch}'s region reaches the searched space's edge, so the best rate may lie anywhere beyond it"
                ),
                Widest::Span { factor, batch } => {
                    format!("the widest region spans x{} (batch {batch})", sig(factor))
                }
            },
            sig(margin * margin)
        )),
    }
}

/// Whether the best learning rate follows a simple rule: the regions measured, the decision,
/// the test.
pub(super) fn learning_rate_rule(regions: &[RateRegion], decided: &LrRule, margin: f64) -> Parts {
    let cells: Vec<String> = regions
        .iter()
        .map(|r| {
            format!(
                "{}: {}{}–{}{} ({} trials)",
                r.batch_size,
                if r.open_low { "≤" } else { "" },
                sig(r.low),
                sig(r.high),
                if r.open_high { "+" } else { "" },
                r.trials
            )
        })
        .collect();
    let measured = format!(
        "near-best effective learning rates by batch size: {}; power laws through all of them: slopes {}",
        if cells.is_empty() { "none".into() } else { cells.join("; ") },
        lr_rule::fitting_slopes(regions, 1.0).map_or("none".into(), slopes)
    );
    let test = format!(
        "per batch size, the effective learning rates of the trials that reached the target within the upper end of its interval of steps to result ({LEVEL_WORDS}) (≤ or + where they reach the outer {:.0}% of the searched log-range: open on that side); a simple rule is a power law, a line in log-log, and a departure counts beyond x{m} (the registry's margin): reproduces when no line of any slope comes within x{m} of every region, partly when lines do but none of slope 1 (linear scaling fails), does not reproduce when a line of slope 1 keeps every region, closed, within x{m} of it, inconclusive otherwise",
        100.0 * lr_rule::EDGE_SHARE,
        m = sig(margin)
    );
    (measured, lr_rule_outcome(decided, margin), test)
}
