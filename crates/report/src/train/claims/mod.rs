//! The verdict on each claim a training study's config names ([`TrainClaim`]), by the rule of
//! its [`ClaimRule`] (the tests are `batchlab_method::tests_of_claims`), stated in the
//! finding's `test` with what it could detect: the accuracy rules (`accuracy`), the time rules
//! (`time`), and Raschka's table form (`relative`, seed 002).

mod accuracy;
mod relative;
mod time;

pub(super) use relative::relative_tables;

use std::collections::BTreeMap;

use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::rows::train::Budget;

use super::analysis::{matches, Analysis, SeriesKey};
use super::{ClaimRule, TrainCell, TrainClaim, TrainContext};
use crate::numbers::fixed;
use crate::predict::check::{checks, CheckBudget, PredictionCheck};

/// Every claim of the context, judged.
pub(super) fn judge(ctx: &TrainContext, analysis: &Analysis) -> Vec<Finding> {
    let predictions = checks(&ctx.prediction, &analysis.measured_cells());
    ctx.claims
        .iter()
        .map(|c| judge_one(c, analysis, &predictions))
        .collect()
}

fn rule_name(rule: &ClaimRule) -> &'static str {
    match rule {
        ClaimRule::AccuracyFalls { .. } => "accuracy-falls",
        ClaimRule::AccuracyRises { .. } => "accuracy-rises",
        ClaimRule::AccuracyHolds { .. } => "accuracy-holds",
        ClaimRule::AccuracyDoesNotFall { .. } => "accuracy-does-not-fall",
        ClaimRule::PowersOfTwoFlat { .. } => "powers-of-two-flat",
        ClaimRule::InferencePowersOfTwoFlat { .. } => "inference-powers-of-two-flat",
        ClaimRule::TimeFollowsSteps { .. } => "time-follows-steps",
        ClaimRule::FallsLessThan { .. } => "falls-less-than",
        ClaimRule::AccuracyHigherThan { .. } => "accuracy-higher-than",
        ClaimRule::EpochTimeFalls { .. } => "epoch-time-falls",
        ClaimRule::BestBatch { .. } => "best-batch",
        ClaimRule::TimePredicted { .. } => "time-predicted-from-step-time",
    }
}

/// What a rule found: outcome, measured, quantities.
struct Judged {
    outcome: Outcome,
    measured: String,
    quantities: Vec<(&'static str, f64)>,
}

impl Judged {
    fn untested(measured: impl Into<String>, why: impl Into<String>) -> Self {
        Judged {
            outcome: Outcome::cannot_test(why),
            measured: measured.into(),
            quantities: vec![],
        }
    }
}

fn judge_one(claim: &TrainClaim, analysis: &Analysis, predictions: &[PredictionCheck]) -> Finding {
    let text = ClaimText::new(claim.claim.clone(), claim.source.clone())
        .with_id(claim.id.clone())
        .scoped(format!("{} line, {} budget", claim.series, claim.budget));
    let judged = match judge_rule(claim, analysis, predictions) {
        Ok(judged) | Err(judged) => judged,
    };
    Finding::new(
        text,
        rule_name(&claim.rule),
        judged.outcome,
        judged.measured,
        rule_words(&claim.rule),
    )
    .with_quantities(judged.quantities)
}

/// The claim judged by its rule; `Err` when its cells are missing.
fn judge_rule(
    claim: &TrainClaim,
    analysis: &Analysis,
    predictions: &[PredictionCheck],
) -> Result<Judged, Judged> {
    let missing = |why: String| Judged::untested("not measured", why);
    let line = line_cells(&claim.series, claim.budget, analysis).map_err(missing)?;
    let versus = |name: &str| line_cells(name, claim.budget, analysis).map_err(missing);
    Ok(match &claim.rule {
        ClaimRule::AccuracyFalls { from, to, .. }
        | ClaimRule::AccuracyRises { from, to }
        | ClaimRule::AccuracyHolds { from, to, .. }
        | ClaimRule::AccuracyDoesNotFall { from, to, .. } => {
            accuracy::accuracy(analysis, &line, *from, *to, &claim.rule)
        }
        ClaimRule::FallsLessThan {
            from,
            to,
            versus: v,
        } => accuracy::falls_less_than(analysis, &line, &versus(v)?, (*from, *to), v),
        ClaimRule::BestBatch { best } => accuracy::best_batch(analysis, &line, *best),
        ClaimRule::AccuracyHigherThan { at, versus: v } => {
            accuracy::higher_than(analysis, &line, &versus(v)?, *at, v)
        }
        ClaimRule::EpochTimeFalls { from, to } => time::time_falls(&line, analysis, *from, *to),
        ClaimRule::PowersOfTwoFlat { tolerance } => {
            time::powers_of_two(&line, analysis, *tolerance, time::Clock::Training)
        }
        ClaimRule::InferencePowersOfTwoFlat { tolerance } => {
            time::powers_of_two(&line, analysis, *tolerance, time::Clock::Test)
        }
        ClaimRule::TimeFollowsSteps {
            reference,
            tolerance,
        } => time::time_follows_steps(&line, analysis, *reference, *tolerance),
        ClaimRule::TimePredicted { tolerance } => {
            let cells: Vec<&PredictionCheck> = predictions
                .iter()
                .filter(|p| p.budget == CheckBudget::Trained(claim.budget))
                .filter(|p| {
                    line.get(&p.batch_size)
                        .is_some_and(|c| c.optimizer == p.optimizer)
                })
                .collect();
            time::time_predicted(&cells, *tolerance)
        }
    })
}

/// The cells of the one line (optimizer, variant) `series` names under `budget`, by batch size.
fn line_cells<'a>(
    series: &str,
    budget: Budget,
    analysis: &'a Analysis,
) -> Result<accuracy::Line<'a>, String> {
    let lines: Vec<&SeriesKey> = analysis
        .series
        .iter()
        .filter(|s| matches(series, &s.optimizer, &s.variant))
        .collect();
    let line = match lines.as_slice() {
        [one] => *one,
        [] => return Err(format!("no line {series} was recorded")),
        many => {
            return Err(format!(
                "{series} names {} lines; name one as optimizer/variant",
                many.len()
            ))
        }
    };
    let cells: BTreeMap<u32, &TrainCell> = analysis
        .cells_of(budget, line)
        .map(|c| (c.batch_size, c))
        .collect();
    if cells.is_empty() {
        return Err(format!("no trial under the {budget} budget"));
    }
    Ok(cells)
}

/// The rule of a claim in words, as the verdict table states it.
fn rule_words(rule: &ClaimRule) -> String {
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
