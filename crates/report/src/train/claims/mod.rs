//! The verdict on each claim a training study's config names ([`TrainClaim`]), by the rule of
//! its [`ClaimRule`] (the tests are `batchlab_method::tests_of_claims`), stated in the
//! finding's `test` with what it could detect: the accuracy rules (`accuracy`), the time rules
//! (`time`), and Raschka's table form (`relative`, seed 002).

mod accuracy;
mod relative;
mod time;
mod time_words;
mod words;

pub(super) use relative::relative_tables;

use std::collections::BTreeMap;

use batchlab_method::findings::{reading, ClaimText, Finding, Outcome};
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
        ClaimRule::LocalMinimumAt { .. } => "local-minimum-at",
        ClaimRule::BestBatch { .. } => "best-batch",
        ClaimRule::TimePredicted { .. } => "time-predicted-from-step-time",
    }
}

/// What a rule found, in words: outcome, measured, quantities (`words`); and what it decided,
/// as a value (`Finding::reading`; none where it could not be tested).
struct Judged {
    outcome: Outcome,
    measured: String,
    quantities: Vec<(&'static str, f64)>,
    reading: Option<serde_json::Value>,
}

impl Judged {
    /// The same, recording `decided` as its reading.
    fn decided(mut self, decided: &impl serde::Serialize) -> Self {
        self.reading = reading(decided);
        self
    }
}

/// A cell in a reading, as its batch size: the cell's numbers are the report's tables.
mod as_batch {
    use serde::{Serialize, Serializer};

    use crate::train::TrainCell;

    pub fn one<S: Serializer>(c: &&TrainCell, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(c.batch_size)
    }

    pub fn pair<S: Serializer>(c: &(&TrainCell, &TrainCell), s: S) -> Result<S::Ok, S::Error> {
        (c.0.batch_size, c.1.batch_size).serialize(s)
    }

    pub fn many<S: Serializer>(c: &[&TrainCell], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(c.iter().map(|c| c.batch_size))
    }

    /// Pairs whose first element is a cell.
    pub fn keyed<S: Serializer, T: Serialize>(
        c: &[(&TrainCell, T)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(c.iter().map(|(c, t)| (c.batch_size, t)))
    }
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
    let mut finding = Finding::new(
        text,
        rule_name(&claim.rule),
        judged.outcome,
        judged.measured,
        words::rule(&claim.rule),
    )
    .with_quantities(judged.quantities);
    finding.reading = judged.reading;
    finding
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
        | ClaimRule::AccuracyDoesNotFall { from, to, .. } => {
            let d = accuracy::accuracy(analysis, &line, *from, *to, &claim.rule)?;
            words::change(&d, &claim.rule).decided(&d)
        }
        ClaimRule::FallsLessThan {
            from,
            to,
            versus: v,
        } => {
            let d = accuracy::falls_less_than(analysis, &line, &versus(v)?, (*from, *to))?;
            words::falls_less_than(&d, (*from, *to), v).decided(&d)
        }
        ClaimRule::BestBatch { best } => {
            let d = accuracy::best_batch(analysis, &line, *best)?;
            words::best_batch(&d, *best).decided(&d)
        }
        ClaimRule::AccuracyHigherThan { at, versus: v } => {
            let d = accuracy::higher_than(analysis, &line, &versus(v)?, *at)?;
            words::higher_than(&d, *at, v).decided(&d)
        }
        ClaimRule::EpochTimeFalls { from, to } => {
            let d = time::time_falls(&line, analysis, *from, *to)?;
            time_words::time_falls(&d, *from, *to).decided(&d)
        }
        ClaimRule::LocalMinimumAt { below, at, above } => {
            let d = time::local_minimum(&line, analysis, *at, [*below, *above])?;
            time_words::local_minimum(&d).decided(&d)
        }
        ClaimRule::PowersOfTwoFlat { tolerance } => {
            let clock = time::Clock::Training;
            let d = time::powers_of_two(&line, analysis, *tolerance, clock)?;
            time_words::powers_of_two(&d, *tolerance, clock).decided(&d)
        }
        ClaimRule::InferencePowersOfTwoFlat { tolerance } => {
            let clock = time::Clock::Test;
            let d = time::powers_of_two(&line, analysis, *tolerance, clock)?;
            time_words::powers_of_two(&d, *tolerance, clock).decided(&d)
        }
        ClaimRule::TimeFollowsSteps {
            reference,
            tolerance,
        } => {
            let d = time::time_follows_steps(&line, analysis, *reference, *tolerance)?;
            time_words::follows_steps(&d, *tolerance).decided(&d)
        }
        ClaimRule::TimePredicted { tolerance } => {
            let cells: Vec<&PredictionCheck> = predictions
                .iter()
                .filter(|p| p.budget == CheckBudget::Trained(claim.budget))
                .filter(|p| {
                    line.get(&p.batch_size)
                        .is_some_and(|c| c.optimizer == p.optimizer)
                })
                .collect();
            let d = time::time_predicted(&cells, *tolerance)?;
            time_words::predicted(&d, *tolerance).decided(&d)
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
