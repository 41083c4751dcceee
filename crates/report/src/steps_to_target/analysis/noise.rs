//! The gradient noise scale beside B_crit: each trial's last moving-average B_simple from
//! `noise.csv`, per workload over the trials that reached the target and over every trial,
//! beside the fitted B_crit.
//!
//! The comparison with B_crit uses the trials that reached the target, whose last estimate
//! was taken where training ended, at the target's loss, as McCandlish et al.'s prediction
//! needs.

use std::collections::BTreeMap;

use batchlab_method::rows::steps_to_target::NoiseRow;

use super::Study;
use crate::steps_to_target::TrialOutcome;

/// One workload's last B_simple estimates.
pub(crate) struct NoiseCell {
    /// `<model>/<optimizer>`.
    pub workload: String,
    /// Of the trials that reached the target.
    pub at_target: Vec<f64>,
    /// Of every trial with a finite estimate.
    pub all: Vec<f64>,
    /// Trials whose last estimate is not finite (a gradient norm estimate at or below zero
    /// gives no noise scale): counted, never dropped silently.
    pub non_finite: usize,
    /// The fitted B_crit and its interval, if fitted.
    pub b_crit: Option<(f64, (f64, f64))>,
}

/// Per workload of `study` with an estimate: the last B_simple of each trial, sorted, and
/// how many trials' last estimate is not finite.
pub(crate) fn noise_cells(rows: &[NoiseRow], study: &Study) -> Vec<NoiseCell> {
    let mut last: BTreeMap<&str, &NoiseRow> = BTreeMap::new();
    for row in rows {
        last.insert(&row.trial, row);
    }
    let reached: Vec<&str> = study
        .workloads
        .iter()
        .flat_map(|w| &w.trials)
        .filter(|t| matches!(t.outcome, Some(TrialOutcome::Reached(_))))
        .map(|t| t.id.as_str())
        .collect();
    let mut cells = Vec::new();
    for w in &study.workloads {
        let non_finite = last
            .values()
            .filter(|r| r.workload == w.label && !r.b_simple.is_finite())
            .count();
        let of_workload: Vec<&&NoiseRow> = last
            .values()
            .filter(|r| r.workload == w.label && r.b_simple.is_finite())
            .collect();
        if of_workload.is_empty() && non_finite == 0 {
            continue;
        }
        let mut all: Vec<f64> = of_workload.iter().map(|r| r.b_simple).collect();
        let mut at_target: Vec<f64> = of_workload
            .iter()
            .filter(|r| reached.contains(&r.trial.as_str()))
            .map(|r| r.b_simple)
            .collect();
        all.sort_by(f64::total_cmp);
        at_target.sort_by(f64::total_cmp);
        cells.push(NoiseCell {
            workload: w.label.clone(),
            at_target,
            all,
            non_finite,
            b_crit: w.fit.as_ref().ok().map(|f| (f.b_crit, f.b_crit_interval)),
        });
    }
    cells
}
