//! Steps to result: per batch size, the fewest optimizer steps any tuned trial needed to
//! reach the target validation error (Shallue et al. 2018, "steps to result").
//!
//! # Rules, and why
//!
//! - **Reaching the target means error <= target**, within a slack far below one example
//!   of any validation split ([`batchlab_method::reaching`], the rule runners stop by).
//! - **A trial's steps to result** is the smallest evaluation step whose error reaches the
//!   target, whatever its evaluations did after that: evaluations are taken at fixed steps,
//!   so this is the earliest step at which reaching it was observed.
//! - **Diverged trials are infeasible**: they never count as reaching the target, even
//!   when an evaluation before the divergence had reached it. Shallue et al. treat the
//!   metaparameters of a diverged trial as infeasible; a setting that reaches the target
//!   and then blows up is not one a practitioner could use, and counting it would reward
//!   learning rates on the edge of stability.
//! - **Failed trials (`error`, `oom`) are set aside**, neither reached nor missed: they say
//!   nothing about the metaparameters (a crash, too little memory), and their partial
//!   curves would make the result depend on when the failure struck. They are counted, so
//!   a batch size with no result because every trial ran out of memory says so.
//! - **The best trial** of a batch size has the fewest steps to result; ties go to the
//!   lowest trial index, i.e. the trial that comes first in the input, which runners give
//!   in the order of the quasi-random sequence. Lowest index, rather than say the lowest
//!   final error, keeps the choice independent of anything but the steps and makes "best of
//!   the first N trials" a prefix property.
//!
//! Note for readers of the result: the minimum over N trials is biased downward as N
//! grows (more draws, a luckier best); compare batch sizes tuned with the same N.

use batchlab_method::reaching::reaches;
use batchlab_method::rows::train::{TrainEval, TrialRecord};
use batchlab_method::rows::Status;
use batchlab_method::TargetError;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One validation evaluation of a trial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// Optimizer steps taken when it was evaluated.
    pub step: u64,
    /// Validation error, e.g. 1 - accuracy (NaN once a trial diverges: never reaches).
    pub error: f64,
}

/// One trial of the search: a batch size with one metaparameter setting.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// The trial's id, unique within the study.
    pub id: String,
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// How it ended.
    pub status: Status,
    /// Its validation evaluations, in any order.
    pub evaluations: Vec<Evaluation>,
}

/// What one trial did with respect to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialOutcome {
    /// Reached the target, first at this step.
    Reached(u64),
    /// Trained without diverging but never reached the target.
    Missed,
    /// Diverged: infeasible, whatever it had reached before.
    Infeasible,
    /// Ended in `error` or `oom`: set aside.
    Failed,
}

/// Classifies `trial` against `target` by the rules of the module documentation.
pub fn classify(trial: &Trial, target: f64) -> TrialOutcome {
    match trial.status {
        Status::Diverged => TrialOutcome::Infeasible,
        Status::Error | Status::Oom => TrialOutcome::Failed,
        Status::Ok => trial
            .evaluations
            .iter()
            .filter(|e| reaches(e.error, target))
            .map(|e| e.step)
            .min()
            .map_or(TrialOutcome::Missed, TrialOutcome::Reached),
    }
}

/// Steps to result at one batch size.
#[derive(Debug, Clone, PartialEq)]
pub struct StepsToResult {
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// The fewest steps at which any trial reached the target; `None` when none did.
    pub steps: Option<u64>,
    /// The id of the trial that reached it in `steps` (ties: the first in the input).
    pub best_trial: Option<String>,
    /// Trials at this batch size, whatever their outcome.
    pub trials: usize,
    /// Trials that reached the target.
    pub reached: usize,
    /// Trials that trained to the end without reaching it.
    pub missed: usize,
    /// Trials that diverged.
    pub infeasible: usize,
    /// Trials that ended in `error` or `oom`.
    pub failed: usize,
}

/// Steps to result for every batch size among `trials`, in increasing batch size. `target`
/// must be finite; trial ids must be unique (a repeated id would be counted twice or hide a
/// rerun: which one is meant is for the caller to decide).
pub fn steps_to_result(trials: &[Trial], target: f64) -> Result<Vec<StepsToResult>, TargetError> {
    if !target.is_finite() {
        return Err(TargetError::argument("target", target, "a finite number"));
    }
    let mut ids = BTreeSet::new();
    for t in trials {
        if !ids.insert(t.id.as_str()) {
            return Err(TargetError::Data(format!(
                "trial id {:?} appears more than once",
                t.id
            )));
        }
    }
    let mut by_batch: BTreeMap<u32, StepsToResult> = BTreeMap::new();
    for trial in trials {
        let cell = by_batch
            .entry(trial.batch_size)
            .or_insert_with(|| StepsToResult {
                batch_size: trial.batch_size,
                steps: None,
                best_trial: None,
                trials: 0,
                reached: 0,
                missed: 0,
                infeasible: 0,
                failed: 0,
            });
        cell.trials += 1;
        match classify(trial, target) {
            TrialOutcome::Reached(step) => {
                cell.reached += 1;
                // Strictly fewer: on a tie the earlier trial in the input stays best.
                if cell.steps.is_none_or(|best| step < best) {
                    cell.steps = Some(step);
                    cell.best_trial = Some(trial.id.clone());
                }
            }
            TrialOutcome::Missed => cell.missed += 1,
            TrialOutcome::Infeasible => cell.infeasible += 1,
            TrialOutcome::Failed => cell.failed += 1,
        }
    }
    Ok(by_batch.into_values().collect())
}

/// The trials of a training study as [`Trial`]s, read the way the training report reads
/// them: a trial id recorded more than once counts by its last row of `records` (a rerun),
/// placed where that row is; its evaluations are those of its latest attempt in `evals` (a
/// rerun starts its steps again, so a step that does not increase begins a new attempt),
/// with error = 1 - `val_accuracy`. Evaluations of trials with no record (still running,
/// interrupted) are left out: a trial without an outcome has no place in steps to result
/// yet.
pub fn trials_from_train(records: &[TrialRecord], evals: &[TrainEval]) -> Vec<Trial> {
    let mut curves: HashMap<&str, Vec<Evaluation>> = HashMap::new();
    for e in evals {
        let curve = curves.entry(e.trial.as_str()).or_default();
        if curve.last().is_some_and(|last| e.step <= last.step) {
            curve.clear();
        }
        curve.push(Evaluation {
            step: e.step,
            error: 1.0 - e.val_accuracy,
        });
    }
    let last: HashMap<&str, usize> = records
        .iter()
        .enumerate()
        .map(|(i, r)| (r.trial.as_str(), i))
        .collect();
    records
        .iter()
        .enumerate()
        .filter(|(i, r)| last[r.trial.as_str()] == *i)
        .map(|(_, r)| Trial {
            id: r.trial.clone(),
            batch_size: r.batch_size,
            status: r.status,
            evaluations: curves.remove(r.trial.as_str()).unwrap_or_default(),
        })
        .collect()
}

#[cfg(test)]
#[path = "steps_tests.rs"]
mod tests;
