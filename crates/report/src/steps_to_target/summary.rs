//! `summary.csv` of a steps-to-target study: one row per (workload, batch size), with how
//! its trials ended, its steps to result and the metaparameters of its best trial.

use std::path::Path;

use polars_core::prelude::*;

use crate::ReportError;

/// The summary of one (workload, batch size). `trials` = `reached` + `missed` +
/// `infeasible` + `failed` + `unevaluated`.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetCell {
    /// `<model>/<optimizer>`.
    pub workload: String,
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// Trials recorded in `trials.csv`, whatever their outcome.
    pub trials: usize,
    /// Trials whose validation error reached the target.
    pub reached: usize,
    /// Trials that trained to the end of their budget without reaching it.
    pub missed: usize,
    /// Trials that diverged: infeasible, whatever they reached before.
    pub infeasible: usize,
    /// Trials that ended in `error` or `oom`: set aside.
    pub failed: usize,
    /// `ok` trials without any evaluation in `results.csv`, whose outcome is unknown: left
    /// out of steps to result (0 in a complete run directory).
    pub unevaluated: usize,
    /// The fewest steps at which any trial reached the target; `None` when none did.
    pub steps_to_result: Option<u64>,
    /// The trial that reached it first (ties: the first in `trials.csv`).
    pub best_trial: Option<String>,
    /// The best trial's learning rate (`None` without a `search.csv` row for it).
    pub learning_rate: Option<f64>,
    /// The best trial's momentum (0 for plain SGD).
    pub momentum: Option<f64>,
    /// The best trial's learning rate / (1 - momentum).
    pub effective_learning_rate: Option<f64>,
}

/// Why a cell has no steps to result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoResult {
    /// Some trial trained to its cap without reaching: the budget limits it, and steps to
    /// result lie beyond the cap (if any setting of the search space gets there at all).
    BeyondCap,
    /// Every trial diverged, failed or was not evaluated: no setting of the search space
    /// trains there, so the budget is not what limits it.
    NothingTrains,
}

impl TargetCell {
    /// Why this cell has no steps to result; `None` where it has one.
    pub fn no_result(&self) -> Option<NoResult> {
        match (self.steps_to_result, self.missed) {
            (Some(_), _) => None,
            (None, 0) => Some(NoResult::NothingTrains),
            (None, _) => Some(NoResult::BeyondCap),
        }
    }
}

/// Writes `cells` to `path` as CSV with polars, columns named as the fields (a `None` is
/// written as an empty field), atomically.
pub fn write_summary(path: &Path, cells: &[TargetCell]) -> Result<(), ReportError> {
    crate::io::write_csv(path, summary_frame(cells))
}

fn summary_frame(cells: &[TargetCell]) -> PolarsResult<DataFrame> {
    let counts =
        |f: fn(&TargetCell) -> usize| cells.iter().map(|c| f(c) as u64).collect::<Vec<u64>>();
    // A NaN from a malformed search row is as unknown as a missing one.
    let rates = |f: fn(&TargetCell) -> Option<f64>| {
        cells
            .iter()
            .map(|c| f(c).filter(|v| v.is_finite()))
            .collect::<Vec<Option<f64>>>()
    };
    let columns = vec![
        Column::new(
            "workload".into(),
            cells
                .iter()
                .map(|c| c.workload.as_str())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "batch_size".into(),
            cells.iter().map(|c| c.batch_size).collect::<Vec<u32>>(),
        ),
        Column::new("trials".into(), counts(|c| c.trials)),
        Column::new("reached".into(), counts(|c| c.reached)),
        Column::new("missed".into(), counts(|c| c.missed)),
        Column::new("infeasible".into(), counts(|c| c.infeasible)),
        Column::new("failed".into(), counts(|c| c.failed)),
        Column::new("unevaluated".into(), counts(|c| c.unevaluated)),
        Column::new(
            "steps_to_result".into(),
            cells
                .iter()
                .map(|c| c.steps_to_result)
                .collect::<Vec<Option<u64>>>(),
        ),
        Column::new(
            "best_trial".into(),
            cells
                .iter()
                .map(|c| c.best_trial.as_deref())
                .collect::<Vec<Option<&str>>>(),
        ),
        Column::new("learning_rate".into(), rates(|c| c.learning_rate)),
        Column::new("momentum".into(), rates(|c| c.momentum)),
        Column::new(
            "effective_learning_rate".into(),
            rates(|c| c.effective_learning_rate),
        ),
    ];
    DataFrame::new(cells.len(), columns)
}
