//! `[[analysis.claims]]` of a training study: the source's claims the report judges, each with
//! the rule that judges it (batchlab_report::train::ClaimRule states each rule in full).
//!
//! ```toml
//! [[analysis.claims]]
//! claim = "both fall from batch 128"
//! source = "seed 003"
//! series = "adam"              # an optimizer label, a variant, or optimizer/variant
//! budget = "epochs"            # default; "steps" judges the steps-matched control
//! rule = "accuracy-falls"      # accuracy-falls | accuracy-rises | accuracy-holds |
//!                              # accuracy-does-not-fall |
//!                              # falls-less-than | accuracy-higher-than | epoch-time-falls |
//!                              # best-batch | local-minimum-at |
//!                              # powers-of-two-flat | inference-powers-of-two-flat |
//!                              # time-follows-steps | time-predicted-from-step-time
//! versus = "sgd"               # falls-less-than, accuracy-higher-than: the other line
//! batch_sizes = [64, 128]      # the accuracy rules: from, to
//!                              # local-minimum-at: below, at, above
//! margin = 1.0                 # accuracy-holds, accuracy-does-not-fall: points (required);
//!                               # accuracy-falls: the size of fall the claim states (optional)
//! id = "..."                   # the claim's id in claims/registry.toml, if registered
//! ```

use serde::{Deserialize, Serialize};

use batchlab_report::train::{ClaimRule, TrainClaim};

use crate::config::{ConfigError, Source};
use crate::train::budget::Budget;

/// The rules a claim can be judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleName {
    /// The mean test accuracy falls from `batch_sizes[0]` to `batch_sizes[1]`.
    AccuracyFalls,
    /// The mean test accuracy rises from `batch_sizes[0]` to `batch_sizes[1]`.
    AccuracyRises,
    /// The mean test accuracy holds from `batch_sizes[0]` to `batch_sizes[1]`.
    AccuracyHolds,
    /// The mean test accuracy does not fall from `batch_sizes[0]` to `batch_sizes[1]`.
    AccuracyDoesNotFall,
    /// Powers of two train no slower or faster than their neighbours, within `tolerance`.
    PowersOfTwoFlat,
    /// Powers of two test (infer) no slower or faster than their neighbours, within
    /// `tolerance` (with `grid.eval_batch_size = "train"`).
    InferencePowersOfTwoFlat,
    /// Training time moves with the steps per trial, relative to batch `reference`.
    TimeFollowsSteps,
    /// The line loses less accuracy from `batch_sizes[0]` to `batch_sizes[1]` than `versus`.
    FallsLessThan,
    /// The line is more accurate than `versus` at `batch_sizes[0]`.
    AccuracyHigherThan,
    /// The whole budget trains faster at `batch_sizes[1]` than at `batch_sizes[0]`.
    EpochTimeFalls,
    /// `batch_sizes[0]` is the most accurate batch size of the line.
    BestBatch,
    /// The whole budget trains slower at `batch_sizes[0]` and at `batch_sizes[2]` than at
    /// `batch_sizes[1]` (a local minimum, e.g. 127 and 129 against 128).
    LocalMinimumAt,
    /// The training time the step-time sweep predicts is the measured one, within `tolerance`.
    TimePredictedFromStepTime,
}

/// One `[[analysis.claims]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimConfig {
    /// The claim's id in claims/registry.toml, if registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The claim in the source's words.
    pub claim: String,
    /// Where it was made.
    pub source: String,
    /// The line it is about.
    pub series: String,
    /// The budget whose cells judge it.
    #[serde(default = "default_budget")]
    pub budget: Budget,
    /// How it is judged.
    pub rule: RuleName,
    /// The accuracy rules' two batch sizes: from, to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_sizes: Option<Vec<u32>>,
    /// `accuracy-holds`, `accuracy-does-not-fall`: the margin in accuracy points (required:
    /// it belongs to the claim, not to a default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// `powers-of-two-flat`: the largest relative difference of training times that is not
    /// noticeable (default 0.03); `time-follows-steps`: of a batch size's time off the line of time
    /// on steps (default 0.03, the seed's own "negligible" difference);
    /// `time-predicted-from-step-time`: of the predicted training time (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// `time-follows-steps`: the batch size the others are compared with (default 128).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<u32>,
    /// `falls-less-than`, `accuracy-higher-than`: the line compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versus: Option<String>,
}

fn default_budget() -> Budget {
    Budget::Epochs
}

/// What the grid offers a claim: whether the steps budget runs, and the names a series may
/// take (optimizer labels and variants).
pub struct GridAxes {
    /// `grid.steps_matched`.
    pub steps_matched: bool,
    /// Every optimizer label, variant and `optimizer/variant`.
    pub series: Vec<String>,
    /// Whether evaluations run at each trial's training batch size (`grid.eval_batch_size =
    /// "train"`): only then does the test time say anything about the batch size.
    pub eval_at_train: bool,
}

impl ClaimConfig {
    /// Checks the entry against the grid; errors name `analysis.claims[i].KEY`.
    pub fn check(&self, i: usize, source: &Source, axes: &GridAxes) -> Result<(), ConfigError> {
        let key = |k: &str| format!("analysis.claims[{i}].{k}");
        if self.rule == RuleName::InferencePowersOfTwoFlat && !axes.eval_at_train {
            return Err(source.error(
                &key("rule"),
                "inference-powers-of-two-flat needs grid.eval_batch_size = \"train\": at a fixed evaluation batch size the test time is the same at every training batch size by construction",
            ));
        }
        if !axes.series.contains(&self.series) {
            return Err(source.error(
                &key("series"),
                format!(
                    "{:?} names no line of the grid; expected one of {}",
                    self.series,
                    axes.series.join(", ")
                ),
            ));
        }
        if self.budget == Budget::Steps && !axes.steps_matched {
            return Err(source.error(&key("budget"), "\"steps\" needs grid.steps_matched = true"));
        }
        // Batch sizes outside the grid are allowed (a `--set grid.batch_sizes=...` may narrow
        // it): the report then says the claim cannot be tested and why.
        let accuracy = matches!(
            self.rule,
            RuleName::AccuracyFalls
                | RuleName::AccuracyRises
                | RuleName::AccuracyHolds
                | RuleName::AccuracyDoesNotFall
                | RuleName::FallsLessThan
                | RuleName::EpochTimeFalls
        );
        let at_one = matches!(
            self.rule,
            RuleName::AccuracyHigherThan | RuleName::BestBatch
        );
        match (&self.batch_sizes, accuracy, at_one) {
            (Some(pair), true, _)
                if pair.len() == 2 && pair[0] != pair[1] && !pair.contains(&0) => {}
            (_, true, _) => {
                return Err(source.error(
                    &key("batch_sizes"),
                    "expected two different batch sizes >= 1: [from, to]",
                ))
            }
            (Some(one), _, true) if one.len() == 1 && one[0] > 0 => {}
            (_, _, true) => {
                return Err(source.error(&key("batch_sizes"), "expected one batch size >= 1: [b]"))
            }
            (Some(three), false, false) if self.rule == RuleName::LocalMinimumAt => {
                if !(three.len() == 3 && three[0] > 0 && three.is_sorted_by(|a, b| a < b)) {
                    return Err(source.error(
                        &key("batch_sizes"),
                        "expected three increasing batch sizes >= 1: [below, at, above]",
                    ));
                }
            }
            (None, false, false) if self.rule == RuleName::LocalMinimumAt => {
                return Err(source.error(
                    &key("batch_sizes"),
                    "local-minimum-at needs its three batch sizes: [below, at, above]",
                ))
            }
            (Some(_), false, false) => {
                return Err(source.error(
                    &key("batch_sizes"),
                    "only used by the accuracy rules and local-minimum-at",
                ))
            }
            (None, false, false) => {}
        }
        let two_lines = matches!(
            self.rule,
            RuleName::FallsLessThan | RuleName::AccuracyHigherThan
        );
        match (&self.versus, two_lines) {
            (Some(v), true) if *v == self.series => {
                return Err(
                    source.error(&key("versus"), "expected a line other than the claim's own")
                )
            }
            (Some(v), true) if !axes.series.contains(v) => {
                return Err(source.error(
                    &key("versus"),
                    format!(
                        "{v:?} names no line of the grid; expected one of {}",
                        axes.series.join(", ")
                    ),
                ))
            }
            (Some(_), true) | (None, false) => {}
            (None, true) => {
                return Err(source.error(
                    &key("versus"),
                    "this rule compares two lines: name the second",
                ))
            }
            (Some(_), false) => {
                return Err(source.error(
                    &key("versus"),
                    "only used by falls-less-than and accuracy-higher-than",
                ))
            }
        }
        let margined = matches!(
            self.rule,
            RuleName::AccuracyHolds | RuleName::AccuracyDoesNotFall
        );
        let takes_margin = margined || self.rule == RuleName::AccuracyFalls;
        match (self.margin, margined) {
            (Some(m), _) if takes_margin && m > 0.0 && m < 100.0 => {}
            (Some(m), _) if takes_margin => {
                return Err(source.error(
                    &key("margin"),
                    format!("{m} is not a margin in accuracy points in (0, 100)"),
                ))
            }
            (None, true) => {
                return Err(source.error(
                    &key("margin"),
                    "an equivalence or non-inferiority rule needs its margin in accuracy points, with where it comes from in a comment",
                ))
            }
            (Some(_), _) => {
                return Err(source.error(
                    &key("margin"),
                    "only used by accuracy-holds, accuracy-does-not-fall and accuracy-falls (the size of a fall the claim states)",
                ))
            }
            (None, false) => {}
        }
        if let Some(t) = self.tolerance {
            if !matches!(
                self.rule,
                RuleName::PowersOfTwoFlat
                    | RuleName::InferencePowersOfTwoFlat
                    | RuleName::TimeFollowsSteps
                    | RuleName::TimePredictedFromStepTime
            ) {
                return Err(source.error(
                    &key("tolerance"),
                    "only used by powers-of-two-flat, inference-powers-of-two-flat, time-follows-steps and time-predicted-from-step-time",
                ));
            }
            if !(t > 0.0 && t < 1.0) {
                return Err(source.error(&key("tolerance"), "expected a fraction in (0, 1)"));
            }
        }
        if self.reference.is_some() && self.rule != RuleName::TimeFollowsSteps {
            return Err(source.error(&key("reference"), "only used by time-follows-steps"));
        }
        if self.reference == Some(0) {
            return Err(source.error(&key("reference"), "expected a batch size >= 1"));
        }
        Ok(())
    }

    /// The claim as the report judges it (defaults filled in).
    pub fn to_report(&self) -> TrainClaim {
        let pair = |i: usize| self.batch_sizes.as_ref().map_or(0, |p| p[i]);
        let margin = self.margin.unwrap_or(f64::NAN);
        TrainClaim {
            id: self.id.clone(),
            claim: self.claim.clone(),
            source: self.source.clone(),
            series: self.series.clone(),
            budget: self.budget,
            rule: match self.rule {
                // Without a margin, a bare direction: any fall.
                RuleName::AccuracyFalls => ClaimRule::AccuracyFalls {
                    from: pair(0),
                    to: pair(1),
                    margin: self.margin.unwrap_or(0.0),
                },
                RuleName::AccuracyRises => ClaimRule::AccuracyRises {
                    from: pair(0),
                    to: pair(1),
                },
                RuleName::AccuracyHolds => ClaimRule::AccuracyHolds {
                    from: pair(0),
                    to: pair(1),
                    margin,
                },
                RuleName::AccuracyDoesNotFall => ClaimRule::AccuracyDoesNotFall {
                    from: pair(0),
                    to: pair(1),
                    margin,
                },
                RuleName::PowersOfTwoFlat => ClaimRule::PowersOfTwoFlat {
                    tolerance: self.tolerance.unwrap_or(0.03),
                },
                RuleName::InferencePowersOfTwoFlat => ClaimRule::InferencePowersOfTwoFlat {
                    tolerance: self.tolerance.unwrap_or(0.03),
                },
                RuleName::FallsLessThan => ClaimRule::FallsLessThan {
                    from: pair(0),
                    to: pair(1),
                    versus: self.versus.clone().unwrap_or_default(),
                },
                RuleName::BestBatch => ClaimRule::BestBatch { best: pair(0) },
                RuleName::LocalMinimumAt => ClaimRule::LocalMinimumAt {
                    below: pair(0),
                    at: pair(1),
                    above: pair(2),
                },
                RuleName::EpochTimeFalls => ClaimRule::EpochTimeFalls {
                    from: pair(0),
                    to: pair(1),
                },
                RuleName::AccuracyHigherThan => ClaimRule::AccuracyHigherThan {
                    at: pair(0),
                    versus: self.versus.clone().unwrap_or_default(),
                },
                RuleName::TimeFollowsSteps => ClaimRule::TimeFollowsSteps {
                    reference: self.reference.unwrap_or(128),
                    tolerance: self.tolerance.unwrap_or(0.03),
                },
                RuleName::TimePredictedFromStepTime => ClaimRule::TimePredicted {
                    tolerance: self.tolerance.unwrap_or(0.1),
                },
            },
        }
    }
}
