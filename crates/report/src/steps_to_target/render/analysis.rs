//! From the run directory's three files to one analysed study: every trial with its outcome
//! and metaparameters, per workload the steps-to-result curve, the S(B) fit, the regimes,
//! how the best learning rate scales, and notes on whatever is missing.
//!
//! A trial's workload is read from its `trials.csv` row (`variant/optimizer`), which every
//! trial has, rather than from `search.csv`, which a partial directory may lack.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::summary::TargetCell;
use super::time::{self, StepTime, TimeToResult};
use super::TargetContext;
use crate::stats::linear_fit;
use crate::steps_to_target::search::{latest_search, read_search, SearchRow};
use crate::steps_to_target::{
    classify, fit_scaling, regimes, steps_to_result, trials_from_train, RegimeOptions, Regimes,
    ScalingFit, ScalingFitOptions, StepsToResult, Trial, TrialOutcome, TrialStatus,
};
use crate::train::{read_evals, read_trials, TrainEval, TrialRecord};
use crate::ReportError;

/// Notes listing (workload, batch size) cells name at most this many; the rest are counted.
const LIST_AT_MOST: usize = 12;

/// What the study found for one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadFindings {
    /// `<model>/<optimizer>`.
    pub workload: String,
    /// Steps to result per batch size, in increasing batch size (batch sizes whose every
    /// trial lacks evaluations are left out).
    pub steps: Vec<StepsToResult>,
    /// S(B) = S_min (1 + B_crit / B) fitted to the batch sizes with a result; `None` with
    /// fewer than 3 of them.
    pub fit: Option<ScalingFit>,
    /// The three regimes; `None` with fewer than 2 batch sizes with a result.
    pub regimes: Option<Regimes>,
    /// How the best trial's learning rate scales with batch size.
    pub learning_rate: Option<LearningRateScaling>,
    /// How the best trial's effective learning rate lr / (1 - momentum) scales (momentum
    /// workloads only).
    pub effective_learning_rate: Option<LearningRateScaling>,
    /// Steps to result times step time, when step times were given.
    pub time_to_result: Option<TimeToResult>,
}

/// A straight line fitted to log(best rate) against log(batch size): a slope of 1 is the
/// linear scaling rule (Goyal et al. 2017), 0.5 the square-root rule (Krizhevsky 2014).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearningRateScaling {
    /// d log(rate) / d log(batch size).
    pub slope: f64,
    /// 95% interval of the slope (Student t with n - 2 degrees of freedom); `None` with two
    /// points, which a line fits exactly.
    pub interval: Option<(f64, f64)>,
    /// The smallest batch size fitted.
    pub from: u32,
    /// The largest batch size fitted.
    pub to: u32,
    /// Batch sizes fitted.
    pub points: usize,
    /// Whether those are the perfect-scaling range, where the rules are meant to hold;
    /// false when that range has fewer than two batch sizes with a known best rate, and
    /// every batch size with one was fitted instead.
    pub perfect_scaling_range: bool,
}

/// One trial as the figures and the report see it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TrialPoint {
    pub id: String,
    pub batch_size: u32,
    /// `None`: an ok trial without evaluations, whose outcome cannot be known.
    pub outcome: Option<TrialOutcome>,
    /// Steps the trial took (where it reached the target, gave up, diverged or failed).
    pub stopped_at: u64,
    pub search: Option<SearchRow>,
}

/// One workload, analysed.
pub(super) struct Workload {
    pub label: String,
    /// Whether momentum was searched (any trial with a momentum above 0).
    pub momentum: bool,
    pub trials: Vec<TrialPoint>,
    pub cells: Vec<TargetCell>,
    pub steps: Vec<StepsToResult>,
    /// (batch size, steps to result) where some trial reached the target.
    pub points: Vec<(f64, f64)>,
    pub fit: Result<ScalingFit, String>,
    pub regimes: Result<Regimes, String>,
    pub learning_rate: Option<LearningRateScaling>,
    pub effective: Option<LearningRateScaling>,
    pub time: Option<TimeToResult>,
}

impl Workload {
    /// The ids of the best trials (one per batch size with a result).
    pub fn best_ids(&self) -> BTreeSet<&str> {
        self.cells
            .iter()
            .filter_map(|c| c.best_trial.as_deref())
            .collect()
    }

    fn findings(&self) -> WorkloadFindings {
        WorkloadFindings {
            workload: self.label.clone(),
            steps: self.steps.clone(),
            fit: self.fit.as_ref().ok().cloned(),
            regimes: self.regimes.as_ref().ok().cloned(),
            learning_rate: self.learning_rate,
            effective_learning_rate: self.effective,
            time_to_result: self.time.clone(),
        }
    }
}

/// Trial counts over the whole study.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub recorded: usize,
    pub reached: usize,
    pub missed: usize,
    pub infeasible: usize,
    pub failed: usize,
    pub unevaluated: usize,
}

/// Everything the summary, figures and report are drawn from.
pub(super) struct Study {
    /// Workloads by label.
    pub workloads: Vec<Workload>,
    /// Every batch size with a recorded trial, increasing.
    pub batch_sizes: Vec<u32>,
    pub counts: Counts,
    /// Whether `search.csv` exists.
    pub search_file: bool,
    /// Whether step times were given (the time figure is drawn even if none matches).
    pub step_times_given: bool,
    /// What is missing or inconsistent, one sentence each.
    pub notes: Vec<String>,
    /// Trials recorded per (workload, batch size), smallest and largest: the N of best of N.
    pub trials_range: Option<(usize, usize)>,
}

impl Study {
    /// Reads the run directory (see [`super::render_target`] for which files).
    pub fn read(dir: &Path, ctx: &TargetContext) -> Result<Study, ReportError> {
        let results = dir.join("results.csv");
        let trials = dir.join("trials.csv");
        if !results.exists() && !trials.exists() {
            return Err(ReportError::Format {
                path: dir.to_path_buf(),
                message:
                    "neither results.csv nor trials.csv: no steps-to-target trial recorded here"
                        .into(),
            });
        }
        let evals = if results.exists() {
            read_evals(&results)?
        } else {
            vec![]
        };
        let records = if trials.exists() {
            read_trials(&trials)?
        } else {
            vec![]
        };
        let search = dir.join("search.csv");
        let search = if search.exists() {
            Some(read_search(&search)?)
        } else {
            None
        };
        Study::new(dir, ctx, &records, &evals, search)
    }

    /// Analyses the rows of the three files; `search` is `None` when `search.csv` is absent.
    /// `dir` only names the files in errors.
    pub fn new(
        dir: &Path,
        ctx: &TargetContext,
        records: &[TrialRecord],
        evals: &[TrainEval],
        search: Option<Vec<SearchRow>>,
    ) -> Result<Study, ReportError> {
        if !ctx.target_error.is_finite() {
            return Err(ReportError::Format {
                path: dir.to_path_buf(),
                message: format!(
                    "target_error = {}: expected a finite validation error",
                    ctx.target_error
                ),
            });
        }
        let trials = trials_from_train(records, evals).map_err(|e| ReportError::Format {
            path: dir.join("trials.csv"),
            message: e.to_string(),
        })?;
        let search_file = search.is_some();
        let mut search = latest_search(search.unwrap_or_default());
        let latest: HashMap<&str, &TrialRecord> =
            records.iter().map(|r| (r.trial.as_str(), r)).collect();
        let (step_times, mut notes) = time::parse_step_times(&ctx.step_times);

        let mut by_workload: BTreeMap<String, Vec<(Trial, TrialPoint)>> = BTreeMap::new();
        let mut no_search = vec![];
        for trial in trials {
            let Some(record) = latest.get(trial.id.as_str()) else {
                continue;
            };
            let label = format!("{}/{}", record.variant, record.optimizer);
            let evaluated = !trial.evaluations.is_empty() || trial.status != TrialStatus::Ok;
            let row = search.remove(&trial.id);
            if row.is_none() {
                no_search.push(trial.id.clone());
            }
            let point = TrialPoint {
                id: trial.id.clone(),
                batch_size: trial.batch_size,
                outcome: evaluated.then(|| classify(&trial, ctx.target_error)),
                stopped_at: record.steps,
                search: row,
            };
            by_workload.entry(label).or_default().push((trial, point));
        }
        // What is left of `search` has no trials.csv row.
        let orphans = search.len();

        let mut workloads = vec![];
        for (label, trials) in by_workload {
            let w = workload(label, trials, ctx, &step_times).map_err(|message| {
                ReportError::Format {
                    path: dir.join("trials.csv"),
                    message,
                }
            })?;
            workloads.push(w);
        }
        let batch_sizes: BTreeSet<u32> = workloads
            .iter()
            .flat_map(|w| w.cells.iter().map(|c| c.batch_size))
            .collect();
        let mut study = Study {
            workloads,
            batch_sizes: batch_sizes.into_iter().collect(),
            counts: Counts::default(),
            search_file,
            step_times_given: !ctx.step_times.is_empty(),
            notes: vec![],
            trials_range: None,
        };
        study.count();
        study.note_partial(ctx, records, evals, &no_search, orphans);
        study.notes.append(&mut notes);
        Ok(study)
    }

    fn count(&mut self) {
        let mut c = Counts::default();
        for cell in self.cells() {
            c.recorded += cell.trials;
            c.reached += cell.reached;
            c.missed += cell.missed;
            c.infeasible += cell.infeasible;
            c.failed += cell.failed;
            c.unevaluated += cell.unevaluated;
        }
        self.counts = c;
        let sizes = self.cells().map(|c| c.trials);
        self.trials_range = sizes.fold(None, |range, n| match range {
            None => Some((n, n)),
            Some((lo, hi)) => Some((lo.min(n), hi.max(n))),
        });
    }

    /// Notes on what is missing: no search rows, no evaluations, unfinished trials, cells
    /// with fewer trials than planned.
    fn note_partial(
        &mut self,
        ctx: &TargetContext,
        records: &[TrialRecord],
        evals: &[TrainEval],
        no_search: &[String],
        orphans: usize,
    ) {
        let mut notes = vec![];
        if self.counts.recorded == 0 {
            notes.push("No trial has finished yet (trials.csv has no row): there is nothing to analyse, and every table and figure is empty.".to_string());
        }
        if !self.search_file && self.counts.recorded > 0 {
            notes.push("search.csv is missing: the trials' learning rates and momenta are unknown, so the best learning rate and the search space cannot be shown (steps to result do not depend on them).".into());
        } else if !no_search.is_empty() {
            notes.push(format!(
                "{} trial(s) have no row in search.csv ({}): their metaparameters are unknown; they count in steps to result but are missing from the learning-rate figures.",
                no_search.len(),
                examples(no_search)
            ));
        }
        if orphans > 0 {
            notes.push(format!(
                "{orphans} row(s) of search.csv have no trials.csv row (their trials were interrupted after their metaparameters were written): left out."
            ));
        }
        if self.counts.unevaluated > 0 {
            let why = if evals.is_empty() {
                "results.csv is missing or holds no evaluation"
            } else {
                "results.csv holds no evaluation of them"
            };
            notes.push(format!(
                "{} ok trial(s) have no validation evaluation ({why}): without their curves they can be counted neither as reaching nor as missing the target, and are left out of steps to result (column `unevaluated` of summary.csv).",
                self.counts.unevaluated
            ));
        }
        let recorded: BTreeSet<&str> = records.iter().map(|r| r.trial.as_str()).collect();
        let unfinished: BTreeSet<&str> = evals
            .iter()
            .map(|e| e.trial.as_str())
            .filter(|id| !recorded.contains(id))
            .collect();
        if !unfinished.is_empty() {
            notes.push(format!(
                "{} trial(s) have evaluations in results.csv but no trials.csv row (still running or interrupted): left out until they finish.",
                unfinished.len()
            ));
        }
        notes.extend(self.short_cells(ctx));
        self.notes = notes;
    }

    /// "mlp/sgd at batch 512: 37 of 100 trials recorded", and batch sizes a workload lacks.
    fn short_cells(&self, ctx: &TargetContext) -> Option<String> {
        let mut short = vec![];
        for w in &self.workloads {
            for &b in &self.batch_sizes {
                let n = w
                    .cells
                    .iter()
                    .find(|c| c.batch_size == b)
                    .map_or(0, |c| c.trials);
                let planned = ctx.planned_trials(&w.label);
                if n < planned && ctx.planned_at(&w.label, b) {
                    short.push(format!("{} at batch {b}: {n} of {planned}", w.label));
                }
            }
        }
        if short.is_empty() {
            return None;
        }
        let listed = short.len().min(LIST_AT_MOST);
        let more = if short.len() > listed {
            format!(" and {} more", short.len() - listed)
        } else {
            String::new()
        };
        Some(format!(
            "Partial results: {} (workload, batch size) cell(s) have fewer trials recorded than the {} planned ({}{more}). Their best of fewer trials is biased upward against the others (see the note on best of N).",
            short.len(),
            ctx.trials_text(),
            short[..listed].join("; ")
        ))
    }

    /// Every summary row, workload by workload.
    pub fn cells(&self) -> impl Iterator<Item = &TargetCell> + '_ {
        self.workloads.iter().flat_map(|w| w.cells.iter())
    }

    /// Whether step times were given.
    pub fn has_step_times(&self) -> bool {
        self.step_times_given
    }

    pub fn findings(&self, ctx: &TargetContext) -> super::TargetFindings {
        super::TargetFindings {
            lines: super::reading::headlines(ctx, self),
            cells: self.cells().cloned().collect(),
            workloads: self.workloads.iter().map(Workload::findings).collect(),
            notes: self.notes.clone(),
        }
    }
}

/// The first few ids of a list, "a, b, c, …".
fn examples(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
    let ellipsis = if ids.len() > shown.len() { ", …" } else { "" };
    format!("{}{ellipsis}", shown.join(", "))
}

/// Analyses one workload's trials.
fn workload(
    label: String,
    trials: Vec<(Trial, TrialPoint)>,
    ctx: &TargetContext,
    step_times: &[StepTime],
) -> Result<Workload, String> {
    // Only trials with an outcome enter steps to result; the others are counted apart.
    let evaluated: Vec<Trial> = trials
        .iter()
        .filter(|(_, p)| p.outcome.is_some())
        .map(|(t, _)| t.clone())
        .collect();
    let points: Vec<TrialPoint> = trials.into_iter().map(|(_, p)| p).collect();
    // Cannot fail: the target is checked finite and trials_from_train keeps one row per id.
    let steps = steps_to_result(&evaluated, ctx.target_error).map_err(|e| e.to_string())?;
    let cells = cells(&label, &points, &steps);
    let momentum = if points.iter().any(|p| p.search.is_some()) {
        points
            .iter()
            .any(|p| p.search.as_ref().is_some_and(SearchRow::has_momentum))
    } else {
        // No metaparameters recorded: the optimizer's label is all there is to go by.
        label.ends_with("momentum") || label.ends_with("nesterov")
    };
    let curve: Vec<(f64, f64)> = cells
        .iter()
        .filter_map(|c| Some((f64::from(c.batch_size), c.steps_to_result? as f64)))
        .collect();
    // The defaults' 1000 resamples cost a fraction of a second per workload.
    let fit = fit_scaling(&curve, &ScalingFitOptions::default()).map_err(|e| e.to_string());
    let regimes = regimes(&curve, &RegimeOptions::default()).map_err(|e| e.to_string());
    let learning_rate = rate_scaling(&cells, regimes.as_ref().ok(), |c| c.learning_rate);
    let effective = if momentum {
        rate_scaling(&cells, regimes.as_ref().ok(), |c| c.effective_learning_rate)
    } else {
        None
    };
    let model = label.split('/').next().unwrap_or(&label).to_string();
    let time = time::time_to_result(&label, &model, &cells, step_times);
    Ok(Workload {
        label,
        momentum,
        trials: points,
        cells,
        steps,
        points: curve,
        fit,
        regimes,
        learning_rate,
        effective,
        time,
    })
}

/// One summary row per batch size with a recorded trial.
fn cells(label: &str, points: &[TrialPoint], steps: &[StepsToResult]) -> Vec<TargetCell> {
    let mut batch_sizes: BTreeMap<u32, usize> = BTreeMap::new();
    for p in points {
        *batch_sizes.entry(p.batch_size).or_default() += usize::from(p.outcome.is_none());
    }
    batch_sizes
        .into_iter()
        .map(|(b, unevaluated)| {
            let s = steps.iter().find(|s| s.batch_size == b);
            let best = s.and_then(|s| s.best_trial.clone());
            let row = best
                .as_deref()
                .and_then(|id| points.iter().find(|p| p.id == id))
                .and_then(|p| p.search.as_ref());
            let count = |f: fn(&StepsToResult) -> usize| s.map_or(0, f);
            TargetCell {
                workload: label.to_string(),
                batch_size: b,
                trials: count(|s| s.trials) + unevaluated,
                reached: count(|s| s.reached),
                missed: count(|s| s.missed),
                infeasible: count(|s| s.infeasible),
                failed: count(|s| s.failed),
                unevaluated,
                steps_to_result: s.and_then(|s| s.steps),
                best_trial: best,
                learning_rate: row.map(|r| r.learning_rate),
                momentum: row.map(|r| r.momentum),
                effective_learning_rate: row.map(|r| r.effective_learning_rate),
            }
        })
        .collect()
}

/// The log-log slope of a best rate against batch size, over the perfect-scaling range
/// when it has two batch sizes with a known rate, else over every batch size with one.
/// `None` with fewer than two such batch sizes.
fn rate_scaling(
    cells: &[TargetCell],
    regimes: Option<&Regimes>,
    rate: fn(&TargetCell) -> Option<f64>,
) -> Option<LearningRateScaling> {
    let known: Vec<(u32, f64)> = cells
        .iter()
        .filter(|c| c.steps_to_result.is_some())
        .filter_map(|c| {
            let r = rate(c).filter(|r| r.is_finite() && *r > 0.0)?;
            Some((c.batch_size, r))
        })
        .collect();
    let perfect: Vec<(u32, f64)> = match regimes.and_then(|r| r.perfect_scaling) {
        Some((lo, hi)) => known
            .iter()
            .filter(|(b, _)| (lo..=hi).contains(&f64::from(*b)))
            .copied()
            .collect(),
        None => vec![],
    };
    let (used, perfect_scaling_range) = if perfect.len() >= 2 {
        (perfect, true)
    } else {
        (known, false)
    };
    let x: Vec<f64> = used.iter().map(|(b, _)| f64::from(*b).ln()).collect();
    let y: Vec<f64> = used.iter().map(|(_, r)| r.ln()).collect();
    let fit = linear_fit(&x, &y)?;
    let interval = (used.len() >= 3 && fit.slope_se.is_finite()).then(|| {
        let half = t_975(used.len() - 2) * fit.slope_se;
        (fit.slope - half, fit.slope + half)
    });
    Some(LearningRateScaling {
        slope: fit.slope,
        interval,
        from: used.first()?.0,
        to: used.last()?.0,
        points: used.len(),
        perfect_scaling_range,
    })
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (standard tables), for a
/// two-sided 95% interval; the normal 1.96 beyond 30. With the handful of batch sizes of a
/// perfect-scaling range, 2 standard errors would be far too narrow (t = 4.3 at 2).
fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        d if d <= TABLE.len() => TABLE[d - 1],
        _ => 1.96,
    }
}
