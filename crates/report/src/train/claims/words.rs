//! The training claims in words: each value `accuracy` decided (or why a claim cannot be
//! tested), worded as the outcome with its reason, what was measured and the numbers beside it,
//! and every rule as the verdict table states it. With `time_words` (the time rules' values),
//! every sentence of the training verdicts is here.

use batchlab_method::findings::Outcome;
use batchlab_method::tests_of_claims::{Decision, Difference};

use super::accuracy::{BestBatch, Change, Pairing, Tested, Versus};
use super::{ClaimRule, Judged, TrainClaim, Untested};
use crate::numbers::fixed;
use crate::train::TrainCell;

/// What part of the run a claim is judged on: "adam line, epochs budget".
pub(super) fn scope(claim: &TrainClaim) -> String {
    format!("{} line, {} budget", claim.series, claim.budget)
}

/// Why a claim cannot be tested, as what was measured and the reason.
pub(super) fn untested(u: &Untested) -> Judged {
    let not_measured = "not measured".to_string();
    let (measured, why) = match u {
        Untested::NoLine(series) => (not_measured, format!("no line {series} was recorded")),
        Untested::ManyLines(series, n) => (
            not_measured,
            format!("{series} names {n} lines; name one as optimizer/variant"),
        ),
        Untested::NoTrial(budget) => (not_measured, format!("no trial under the {budget} budget")),
        Untested::NotRun(sizes) => {
            let sizes: Vec<String> = sizes.iter().map(u32::to_string).collect();
            (
                not_measured,
                format!("a batch size of {} was not run", sizes.join(", ")),
            )
        }
        Untested::EitherNotRun(from, to) => {
            (not_measured, format!("batch {from} or {to} was not run"))
        }
        Untested::BatchNotRun(b) => (not_measured, format!("batch {b} was not run")),
        Untested::TooFewSeeds => (
            "fewer than two ok seeds in a cell".into(),
            "fewer than two ok seeds in a cell: no seed spread".into(),
        ),
        Untested::NoAccuracy => (
            "no cell with an accuracy".into(),
            "no cell with an accuracy".into(),
        ),
        Untested::OneBatchSize => (
            "one batch size".into(),
            "one batch size was run: it is the best by construction, nothing to compare it with"
                .into(),
        ),
        Untested::NoPowerOfTwoPair => (
            "no power of two with a neighbour one below or above it".into(),
            "the grid has no power of two beside its neighbours".into(),
        ),
        Untested::NoStepsLine => (
            "fewer than three seeds or one number of steps".into(),
            "no line of time on steps".into(),
        ),
        Untested::FewStepCounts(n) => (
            format!("{n} numbers of steps"),
            "the line left out of each batch size needs two other numbers of steps: at least three in all".into(),
        ),
        Untested::FewPredictions(n) => (
            format!("{n} cells with a prediction"),
            "fewer than two cells have a step-time prediction: no sweep of this model on this machine and build was found (the prediction check below says where it looked)".into(),
        ),
    };
    Judged {
        outcome: Outcome::cannot_test(why),
        measured,
        quantities: vec![],
        reading: None,
    }
}

/// "81.30% (sd 0.63, 5 seeds) at 16".
fn cell(c: &TrainCell) -> String {
    format!(
        "{}% (sd {}, {} seeds) at {}",
        fixed(100.0 * c.test_accuracy_mean, 2),
        fixed(100.0 * c.test_accuracy_std, 2),
        c.ok,
        c.batch_size
    )
}

/// The difference with its interval and how it was tested.
fn interval_text(t: &Tested) -> String {
    let d = &t.d;
    let (low, high) = d.interval90();
    let how = match t.pairing {
        Pairing::BySeed(n) => format!("paired by seed, {n} seeds"),
        Pairing::Welch => "Welch: the cells' seeds differ".into(),
    };
    format!(
        "{:+.2} points (90% interval {:+.2} to {:+.2}; standard error {}, {:.1} degrees of freedom, {how})",
        d.diff,
        low,
        high,
        fixed(d.se, 2),
        d.df
    )
}

fn quantities(d: &Difference) -> Vec<(&'static str, f64)> {
    let (low, high) = d.interval90();
    vec![
        ("diff_points", d.diff),
        ("se_points", d.se),
        ("df", d.df),
        ("low90_points", low),
        ("high90_points", high),
    ]
}

/// The single-line accuracy rules.
pub(super) fn change(c: &Change, rule: &ClaimRule) -> Judged {
    let d = &c.tested.d;
    let (low, _) = d.interval90();
    let half = d.critical() * d.se;
    let m = |m: f64| fixed(m, 2);
    let outcome = match (rule, c.decided) {
        (ClaimRule::AccuracyHolds { margin, .. }, decided) => match decided {
            Decision::Shown => Outcome::reproduces_with(format!("within ±{} points", m(*margin))),
            Decision::Refuted => Outcome::does_not_reproduce(format!(
                "it {} by {:.2} points, more than the margin of {}",
                if d.diff < 0.0 { "falls" } else { "rises" },
                d.diff.abs(),
                m(*margin)
            )),
            Decision::Open => Outcome::inconclusive(format!(
                "the 90% interval is ±{} points wide against a margin of ±{}",
                fixed(half, 2),
                m(*margin)
            )),
        },
        (ClaimRule::AccuracyDoesNotFall { margin, .. }, decided) => match decided {
            Decision::Shown => {
                Outcome::reproduces_with(format!("no fall of {} points or more", m(*margin)))
            }
            Decision::Refuted => Outcome::does_not_reproduce(format!(
                "it falls by {:.2} points, more than the margin of {}",
                -d.diff,
                m(*margin)
            )),
            Decision::Open => Outcome::inconclusive(format!(
                "a fall is bounded only to {} points against a margin of {}",
                fixed(-low, 2),
                m(*margin)
            )),
        },
        (ClaimRule::AccuracyRises { .. }, decided) => match decided {
            Decision::Shown => Outcome::reproduces(),
            Decision::Refuted => Outcome::does_not_reproduce("it falls"),
            Decision::Open => Outcome::inconclusive(format!("a rise of {} points", fixed(half, 2))),
        },
        (ClaimRule::AccuracyFalls { margin, .. }, decided) if *margin > 0.0 => match decided {
            Decision::Shown => {
                Outcome::reproduces_with(format!("a fall of more than {} points", m(*margin)))
            }
            Decision::Refuted => Outcome::does_not_reproduce(format!(
                "the fall is bounded below {} points (at most {} points)",
                m(*margin),
                fixed(-low, 2)
            )),
            Decision::Open => Outcome::inconclusive(format!(
                "a fall of {} points either side of the stated {}",
                fixed(half, 2),
                m(*margin)
            )),
        },
        (_, decided) => match decided {
            Decision::Shown => Outcome::reproduces(),
            Decision::Refuted => Outcome::does_not_reproduce("it rises"),
            Decision::Open => Outcome::inconclusive(format!("a fall of {} points", fixed(half, 2))),
        },
    };
    Judged {
        outcome,
        measured: format!(
            "{} → {}: {}",
            cell(c.cells.0),
            cell(c.cells.1),
            interval_text(&c.tested)
        ),
        quantities: quantities(d),
        reading: None,
    }
}

/// A one-sided test that the contrast lies above zero: `shown`, refuted (with what was found
/// instead), or inconclusive with the smallest `what` it could have seen.
fn above_zero(v: &Versus, shown: Outcome, refuted: String, what: &str) -> Outcome {
    let d = &v.tested.d;
    match v.decided {
        Decision::Shown => shown,
        Decision::Refuted => Outcome::does_not_reproduce(refuted),
        Decision::Open => Outcome::inconclusive(format!(
            "{what} of {} points",
            fixed(d.critical() * d.se, 2)
        )),
    }
}

/// The claim's line falls less from `from` to `to` than `versus` does.
pub(super) fn falls_less_than(v: &Versus, (from, to): (u32, u32), versus: &str) -> Judged {
    let d = &v.tested.d;
    let change = |c: &[&TrainCell]| 100.0 * (c[1].test_accuracy_mean - c[0].test_accuracy_mean);
    let outcome = above_zero(
        v,
        Outcome::reproduces_with(format!("it loses {:.2} points less than {versus}", d.diff)),
        format!("it loses {:.2} points more than {versus}", -d.diff),
        "a difference between the two changes",
    );
    Judged {
        outcome,
        measured: format!(
            "from {from} to {to}: {:+.2} points on this line, {:+.2} on {versus}; the difference {}",
            change(&v.line),
            change(&v.versus),
            interval_text(&v.tested)
        ),
        quantities: quantities(d),
        reading: None,
    }
}

/// The claim's line is more accurate than `versus` at `at`.
pub(super) fn higher_than(v: &Versus, at: u32, versus: &str) -> Judged {
    let outcome = above_zero(
        v,
        Outcome::reproduces(),
        format!("{versus} is more accurate at {at}"),
        "a difference",
    );
    Judged {
        outcome,
        measured: format!(
            "{} against {versus}'s {}: {}",
            cell(v.line[0]),
            cell(v.versus[0]),
            interval_text(&v.tested)
        ),
        quantities: quantities(&v.tested.d),
        reading: None,
    }
}

/// "The best batch size is `claimed`".
pub(super) fn best_batch(b: &BestBatch, claimed: u32) -> Judged {
    let sizes: Vec<String> = b.possible.iter().map(u32::to_string).collect();
    let parts: Vec<String> = b
        .against
        .iter()
        .map(|&(batch, deficit, half)| {
            format!(
                "{batch}: {:+.2} points (bound {:+.2})",
                deficit,
                half + deficit
            )
        })
        .collect();
    let outcome = match b.decided(claimed) {
        Decision::Refuted => Outcome::does_not_reproduce(format!(
            "{} is best here; {claimed} is below it beyond the seeds' spread",
            b.top.batch_size
        )),
        Decision::Shown => Outcome::reproduces(),
        Decision::Open => Outcome::inconclusive(format!(
            "a difference of {} points from the best; could be best: {}",
            fixed(b.widest, 2),
            sizes.join(", ")
        )),
    };
    Judged {
        outcome,
        measured: format!(
            "best observed {} at {}; against it: {}; could be best: {}",
            fixed(100.0 * b.top.test_accuracy_mean, 2),
            b.top.batch_size,
            parts.join(", "),
            sizes.join(", ")
        ),
        quantities: vec![
            ("best_observed", f64::from(b.top.batch_size)),
            ("could_be_best", b.possible.len() as f64),
        ],
        reading: None,
    }
}

/// The rule of a claim in words, as the verdict table states it.
pub(super) fn rule(rule: &ClaimRule) -> String {
    let welch = "the difference of the test accuracies, paired by seed where both cells have the same seeds (else Welch's standard error and degrees of freedom)";
    match rule {
        ClaimRule::AccuracyFalls { from, to, margin } if *margin > 0.0 => format!(
            "A claim of a fall of a size: {welch}; reproduces when the one-sided 95% upper bound of (accuracy at {to} - accuracy at {from}) lies below -{m} points (the registry's size of the fall the claim states), does not reproduce when the lower bound lies above -{m} (the data bound the fall below that size), inconclusive otherwise.",
            m = fixed(*margin, 2)
        ),
        ClaimRule::AccuracyFalls { from, to, .. } => format!(
            "A directional claim: {welch}; reproduces when the one-sided 95% upper bound of (accuracy at {to} - accuracy at {from}) lies below zero, does not reproduce when the lower bound lies above zero, inconclusive otherwise."
        ),
        ClaimRule::AccuracyRises { from, to } => format!(
            "A directional claim: {welch}; reproduces when the one-sided 95% lower bound of (accuracy at {to} - accuracy at {from}) lies above zero, does not reproduce when the upper bound lies below zero, inconclusive otherwise."
        ),
        ClaimRule::AccuracyHolds { from, to, margin } => format!(
            "An equivalence claim: {welch}; two one-sided tests at 5%: reproduces when the 90% interval of (accuracy at {to} - accuracy at {from}) lies inside ±{} points, does not reproduce when it lies wholly outside, inconclusive otherwise (more seeds narrow the interval).",
            fixed(*margin, 2)
        ),
        ClaimRule::AccuracyDoesNotFall { from, to, margin } => format!(
            "A non-inferiority claim: {welch}; reproduces when the one-sided 95% lower bound of (accuracy at {to} - accuracy at {from}) lies above -{} points, does not reproduce when the upper bound lies below it, inconclusive otherwise.",
            fixed(*margin, 2)
        ),
        ClaimRule::PowersOfTwoFlat { tolerance } => format!(
            "An equivalence claim on each power of two against each neighbour one below or above it: two one-sided tests at 5% on the log training times of the seeds (Welch); the pair counts as not noticeably different when the 90% interval of the time ratio lies within ±{:.0}%, as noticeably different when it lies wholly outside. Reproduces if every pair is shown not different, partly if some are shown different, does not reproduce if all are, inconclusive otherwise.",
            100.0 * tolerance
        ),
        ClaimRule::InferencePowersOfTwoFlat { tolerance } => format!(
            "An equivalence claim on each power of two against each neighbour one below or above it: two one-sided tests at 5% on the log times of the test pass (inference over the test split, at the training batch size) of the seeds (Welch); the pair counts as not noticeably different when the 90% interval of the time ratio lies within ±{:.0}%, as noticeably different when it lies wholly outside. Reproduces if every pair is shown not different, partly if some are shown different, does not reproduce if all are, inconclusive otherwise.",
            100.0 * tolerance
        ),
        ClaimRule::FallsLessThan { from, to, versus } => format!(
            "A contrast between two lines: (accuracy at {to} - at {from}) on this line minus the same on {versus}, paired by seed where all four cells share their seeds (else Welch). Reproduces when the one-sided 95% lower bound of that contrast lies above zero (this line loses less), does not reproduce when the upper bound lies below zero, inconclusive otherwise."
        ),
        ClaimRule::AccuracyHigherThan { at, versus } => format!(
            "A superiority between two lines at batch {at}: this line's accuracy minus {versus}'s, paired by seed where both cells have the same seeds (else Welch). Reproduces when the one-sided 95% lower bound lies above zero, does not reproduce when the upper bound lies below zero, inconclusive otherwise."
        ),
        ClaimRule::BestBatch { best } => format!(
            "Which batch sizes could be best: each batch size against the most accurate one, paired by seed where they share their seeds (else Welch), one-sided at 5% divided by the number of comparisons (Bonferroni); a batch size clearly below the best is left out. Reproduces if only {best} could be best, does not reproduce if {best} is left out, inconclusive if the seeds cannot tell it from others."
        ),
        ClaimRule::EpochTimeFalls { from, to } => format!(
            "A directional claim on the training time of the whole (epoch) budget: the seeds' log training times at {to} against {from} (Welch); reproduces when the one-sided 95% upper bound of the ratio lies below 1 (faster at {to}), does not reproduce when the lower bound lies above 1, inconclusive otherwise."
        ),
        ClaimRule::LocalMinimumAt { below, at, above } => format!(
            "A claim of a local minimum: the seeds' log training times of the whole (epoch) budget at {below} and at {above}, each against {at} (Welch). Reproduces when both neighbours are shown slower (each one-sided 95% lower bound of the time ratio above 1: both must hold, so no correction), does not reproduce when either is shown faster (its one-sided upper bound below 1 at 2.5%, the 5% shared between the two sides), inconclusive otherwise. The claim states no size, so any slowdown counts."
        ),
        ClaimRule::TimePredicted { tolerance } => format!(
            "An equivalence claim: each cell's median training time (the training loop's clock) against the time the same model's step-time sweep on this machine predicts for its median steps (the prediction check below); the mean size of the cells' log errors (their absolute values, so that errors of opposite sign do not cancel; t over the cells): reproduces when its one-sided 95% upper bound lies below {0:.0}%, does not reproduce when its lower bound lies above it, inconclusive otherwise. Cannot be judged without a sweep of the same model on the same machine and build.",
            100.0 * tolerance
        ),
        ClaimRule::TimeFollowsSteps { reference, tolerance } => format!(
            "A mechanism claim: training time differs between batch sizes because they take different numbers of steps (batch {reference} is the seed's reference). A line of training time on steps through every seed of the line: the mechanism needs a per-step overhead above zero (one-sided 95% lower bound of the slope) and every batch size's mean time within ±{:.0}% of the line through the other batch sizes (two one-sided tests on the seeds' log ratios to it, with that line's own uncertainty; at least three numbers of steps, else it cannot be judged). Reproduces if both, partly if the overhead is there but some batch size lies off the line (the steps explain only part of the time), does not reproduce if the slope's upper bound is not above zero, inconclusive otherwise.",
            100.0 * tolerance
        ),
    }
}
