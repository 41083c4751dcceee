//! From the rows of a run directory to one analysed study: every trial with its outcome
//! and metaparameters, per workload the steps-to-result curve, the S(B) fit, the regimes,
//! how the best learning rate scales, and notes on whatever is missing.
//!
//! A trial's workload is read from its `trials.csv` row (`variant/optimizer`), which every
//! trial has, rather than from `search.csv`, which a partial directory may lack.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use batchlab_method::rows::steps_to_target::{latest_search, SearchRow};
use batchlab_method::rows::train::{TrainEval, TrialRecord};
use batchlab_method::rows::Status;

use crate::steps_to_target::scaling::{upper_rank, LEVEL};
use crate::steps_to_target::{
    classify, trials_from_train, TargetCell, TargetContext, TargetFindings, Trial,
};
use crate::ReportError;
use workload::{workload, TrialPoint, Workload};

pub(crate) mod coverage;
pub(super) mod noise;
pub(super) mod rate_rule;
pub(super) mod time;
pub(super) mod workload;

/// Notes listing (workload, batch size) cells name at most this many; the rest are counted.
const LIST_AT_MOST: usize = 12;

/// A cell's step cap should be at least this many times its neighbours' steps to result, so
/// that a trial slower than the best neighbour by that much still fits.
const CAP_FACTOR: f64 = 3.0;

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
    /// How often the replicates' intervals hold each other's values, when the config names
    /// replicates.
    pub coverage: Option<coverage::Coverage>,
}

impl Study {
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
        let trials = trials_from_train(records, evals);
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
            let evaluated = !trial.evaluations.is_empty() || trial.status != Status::Ok;
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
                final_error: (trial.status == Status::Ok)
                    .then(|| trial.evaluations.iter().max_by_key(|e| e.step))
                    .flatten()
                    .map(|e| e.error)
                    .filter(|e| e.is_finite()),
                test_error: Some(1.0 - record.test_accuracy).filter(|e| e.is_finite()),
            };
            by_workload.entry(label).or_default().push((trial, point));
        }
        // What is left of `search` has no trials.csv row.
        let orphans = search.len();

        let mut workloads = vec![];
        // Each workload resamples from its own stream (its place in the study), so intervals
        // of ratios and differences between workloads pair independent draws.
        for (stream, (label, trials)) in (0u64..).zip(by_workload) {
            let w = workload(label, trials, ctx, &step_times, stream).map_err(|message| {
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
        let coverage = coverage::Coverage::of(&workloads, &ctx.replicates);
        let mut study = Study {
            workloads,
            batch_sizes: batch_sizes.into_iter().collect(),
            counts: Counts::default(),
            search_file,
            step_times_given: !ctx.step_times.is_empty(),
            notes: vec![],
            trials_range: None,
            coverage,
        };
        study.count();
        study.note_partial(ctx, records, evals, &no_search, orphans);
        study.note_caps(ctx);
        study.note_few_reached();
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

    /// A note on the cells whose step cap is below [`CAP_FACTOR`] x a neighbouring batch
    /// size's steps to result: there the cap may decide the answer (nothing reaches because
    /// nothing could), so their steps to result are only "> cap" when none reached.
    fn note_caps(&mut self, ctx: &TargetContext) {
        let mut low = vec![];
        for w in &self.workloads {
            let budget = ctx.budget_of(&w.label);
            let steps: Vec<(u32, Option<u64>)> = w
                .cells
                .iter()
                .map(|c| (c.batch_size, c.steps_to_result))
                .collect();
            for (k, &(b, own)) in steps.iter().enumerate() {
                let cap = budget.steps(b);
                let neighbours = [k.checked_sub(1), Some(k + 1)]
                    .into_iter()
                    .flatten()
                    .filter_map(|j| steps.get(j).and_then(|(nb, s)| Some((*nb, (*s)?))));
                if let Some((nb, need)) = neighbours.max_by_key(|(_, s)| *s) {
                    if (cap as f64) < CAP_FACTOR * need as f64 {
                        let own = own.map_or(format!("none reached: > {cap}"), |s| {
                            format!("steps to result {s}")
                        });
                        low.push(format!(
                            "{} at batch {b} (cap {cap} steps, {own}; batch {nb} needed {need})",
                            w.label
                        ));
                    }
                }
            }
        }
        if !low.is_empty() {
            self.notes.push(format!(
                "Caps that may decide: {} cell(s) had a step budget below {CAP_FACTOR}x a neighbouring batch size's steps to result: {}. Raise `budget.max_epochs` or `min_steps` for them; the regimes read a cell where none reached as \"more than its cap\", a bound, never a number.",
                low.len(),
                low.join("; ")
            ));
        }
    }

    /// A note on the cells where some trials reached the target, but fewer than the rank
    /// that bounds the top of an interval of another search's best ([`upper_rank`]: 5 of 16,
    /// 6 of 32): there the top is open. The remedy is more trials in that cell, not another
    /// estimator.
    fn note_few_reached(&mut self) {
        let tail = (1.0 - LEVEL) / 2.0;
        let few: Vec<String> = self
            .cells()
            .filter_map(|c| {
                let needed = upper_rank(c.reached + c.missed + c.infeasible, tail);
                (c.reached > 0 && c.reached < needed).then(|| {
                    format!(
                        "{} at batch {} ({} of {}, {needed} needed)",
                        c.workload, c.batch_size, c.reached, c.trials
                    )
                })
            })
            .collect();
        if !few.is_empty() {
            self.notes.push(format!(
                "Too few trials reached the target for a finite top in {} cell(s): {}. Another search's best is bounded above only by a cell's k-th fewest steps to the target, k set by the number of trials (5 of 16, 6 of 32), so there the top of the interval is open; run more trials in those cells to close it.",
                few.len(),
                few.join("; ")
            ));
        }
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

    /// The findings, with `lines` for the terminal.
    pub fn findings(&self, lines: Vec<String>) -> TargetFindings {
        TargetFindings {
            lines,
            cells: self.cells().cloned().collect(),
            workloads: self.workloads.iter().map(Workload::findings).collect(),
            notes: self.notes.clone(),
            claims: Vec::new(),
        }
    }
}

/// The first few ids of a list, "a, b, c, …".
fn examples(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
    let ellipsis = if ids.len() > shown.len() { ", …" } else { "" };
    format!("{}{ellipsis}", shown.join(", "))
}
