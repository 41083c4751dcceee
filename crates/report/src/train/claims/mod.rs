//! The verdict on each claim a training study's config names ([`TrainClaim`]), by the rule of
//! its [`ClaimRule`] (the tests are `batchlab_method::tests_of_claims`), stated in the
//! finding's `test` with what it could detect: the accuracy rules (`accuracy`), the time rules
//! (`time`), and Raschka's table form (`relative`, seed 002).

mod accuracy;
mod relative;
mod time;
mod words;

pub(super) use relative::relative_tables;

use std::collections::BTreeMap;

use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::rows::train::Budget;

use super::analysis::{matches, Analysis, SeriesKey};
use super::{ClaimRule, TrainCell, TrainClaim, TrainContext};
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

/// What a rule found, in words: outcome, measured, quantities (`words`).
struct Judged {
    outcome: Outcome,
    measured: String,
    quantities: Vec<(&'static str, f64)>,
}

/// Why a claim cannot be tested on this run.
#[derive(Debug, Clone, PartialEq)]
enum Untested {
    /// No line the claim's series names was recorded.
    NoLine(String),
    /// The series names this many lines.
    ManyLines(String, usize),
    /// No trial under the claim's budget.
    NoTrial(Budget),
    /// A batch size among these was not run.
    NotRun(Vec<u32>),
    /// Batch `from` or `to` was not run.
    EitherNotRun(u32, u32),
    /// This batch size was not run.
    BatchNotRun(u32),
    /// Fewer than two ok seeds in a cell: no seed spread.
    TooFewSeeds,
    /// No cell with an accuracy.
    NoAccuracy,
    /// One batch size run: the best by construction.
    OneBatchSize,
    /// No power of two beside a neighbour one below or above it.
    NoPowerOfTwoPair,
    /// Fewer than three seeds or one number of steps: no line of time on steps.
    NoStepsLine,
    /// This many numbers of steps, fewer than the three the left-out lines need.
    FewStepCounts(usize),
    /// This many cells with a step-time prediction, fewer than two.
    FewPredictions(usize),
}

fn judge_one(claim: &TrainClaim, analysis: &Analysis, predictions: &[PredictionCheck]) -> Finding {
    let text = ClaimText::new(claim.claim.clone(), claim.source.clone())
        .with_id(claim.id.clone())
        .scoped(words::scope(claim));
    let judged = match judge_rule(claim, analysis, predictions) {
        Ok(judged) => judged,
        Err(untested) => words::untested(&untested),
    };
    Finding::new(
        text,
        rule_name(&claim.rule),
        judged.outcome,
        judged.measured,
        words::rule(&claim.rule),
    )
    .with_quantities(judged.quantities)
}

/// The claim decided by its rule and worded; `Err` when it cannot be tested here.
fn judge_rule(
    claim: &TrainClaim,
    analysis: &Analysis,
    predictions: &[PredictionCheck],
) -> Result<Judged, Untested> {
    let line = line_cells(&claim.series, claim.budget, analysis)?;
    let versus = |name: &str| line_cells(name, claim.budget, analysis);
    Ok(match &claim.rule {
        ClaimRule::AccuracyFalls { from, to, .. }
        | ClaimRule::AccuracyRises { from, to }
        | ClaimRule::AccuracyHolds { from, to, .. }
        | ClaimRule::AccuracyDoesNotFall { from, to, .. } => words::change(
            &accuracy::accuracy(analysis, &line, *from, *to, &claim.rule)?,
            &claim.rule,
        ),
        ClaimRule::FallsLessThan {
            from,
            to,
            versus: v,
        } => words::falls_less_than(
            &accuracy::falls_less_than(analysis, &line, &versus(v)?, (*from, *to))?,
            (*from, *to),
            v,
        ),
        ClaimRule::BestBatch { best } => {
            words::best_batch(&accuracy::best_batch(analysis, &line, *best)?, *best)
        }
        ClaimRule::AccuracyHigherThan { at, versus: v } => words::higher_than(
            &accuracy::higher_than(analysis, &line, &versus(v)?, *at)?,
            *at,
            v,
        ),
        ClaimRule::EpochTimeFalls { from, to } => {
            words::time_falls(&time::time_falls(&line, analysis, *from, *to)?, *from, *to)
        }
        ClaimRule::PowersOfTwoFlat { tolerance } => words::powers_of_two(
            &time::powers_of_two(&line, analysis, *tolerance, time::Clock::Training)?,
            *tolerance,
            time::Clock::Training,
        ),
        ClaimRule::InferencePowersOfTwoFlat { tolerance } => words::powers_of_two(
            &time::powers_of_two(&line, analysis, *tolerance, time::Clock::Test)?,
            *tolerance,
            time::Clock::Test,
        ),
        ClaimRule::TimeFollowsSteps {
            reference,
            tolerance,
        } => words::follows_steps(
            &time::time_follows_steps(&line, analysis, *reference, *tolerance)?,
            *tolerance,
        ),
        ClaimRule::TimePredicted { tolerance } => {
            let cells: Vec<&PredictionCheck> = predictions
                .iter()
                .filter(|p| p.budget == CheckBudget::Trained(claim.budget))
                .filter(|p| {
                    line.get(&p.batch_size)
                        .is_some_and(|c| c.optimizer == p.optimizer)
                })
                .collect();
            words::predicted(&time::time_predicted(&cells, *tolerance)?, *tolerance)
        }
    })
}

/// The cells of the one line (optimizer, variant) `series` names under `budget`, by batch size.
fn line_cells<'a>(
    series: &str,
    budget: Budget,
    analysis: &'a Analysis,
) -> Result<accuracy::Line<'a>, Untested> {
    let lines: Vec<&SeriesKey> = analysis
        .series
        .iter()
        .filter(|s| matches(series, &s.optimizer, &s.variant))
        .collect();
    let line = match lines.as_slice() {
        [one] => *one,
        [] => return Err(Untested::NoLine(series.to_string())),
        many => return Err(Untested::ManyLines(series.to_string(), many.len())),
    };
    let cells: BTreeMap<u32, &TrainCell> = analysis
        .cells_of(budget, line)
        .map(|c| (c.batch_size, c))
        .collect();
    if cells.is_empty() {
        return Err(Untested::NoTrial(budget));
    }
    Ok(cells)
}
