//! Steps to a target error versus batch size (kind `steps-to-target`, seed 004: Shallue et al.
//! 2018). For every workload (model, optimizer) and batch size, a quasi-random search over the
//! learning rate (and 1 - momentum) runs `search.trials` trials; each trains until its validation
//! error reaches `budget.target_error` (checked every `budget.evaluate_every` steps) or
//! `budget.max_steps` runs out. Steps to result for a batch size is the earliest evaluation step
//! at which any of its trials reached the target; diverged trials are infeasible.

mod analysis_config;
pub mod claims;
pub mod config;
mod cutoff;
mod noise;
mod plan;
mod work;

use std::{collections::BTreeSet, path::Path};

use batchlab_datasets::spec::DatasetName;
use batchlab_method::rows::train::Budget;
use batchlab_method::{
    budget::StepBudget,
    rows::{
        steps_to_target::{NoiseRow, SearchRow},
        train::TrainEval,
    },
};

use batchlab_report::about::About;
use batchlab_report::steps_to_target::{
    RegimeBands, SearchSpace, TargetProtocol, WorkloadProtocol,
};

use crate::{
    claim_registry::ConfigKey,
    claim_registry::Registry,
    config::{ConfigError, Source},
    context::RunContext,
    drive::StudyPlan,
    error::RunError,
    study::{PlannedSteps, Rendered, Study, StudyConfig},
    trial::{append_failure, drop_unfinished, TrialLabels, TrialStudy},
};

pub use config::{
    BudgetConfig, SearchConfig, StepTimeSource, TargetAnalysis, TargetConfig, Workload,
};

/// Which stage of the search a trial belongs to (see `batchlab_method::refine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The first: a quasi-random point of the workload's whole search space.
    Explore,
    /// The second: a point of the box around the first stage's best trial of its cell.
    Refine,
}

/// One trial of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchTrial {
    /// `<model>-<optimizer>-b<batch>-t<index>`.
    pub id: String,
    /// Index into `[[workloads]]`.
    pub workload: usize,
    /// The batch size.
    pub batch_size: u32,
    /// Its index in the cell: first-stage trials from 0, refining ones after them (also the
    /// seed of the initialisation).
    pub index: u64,
    /// Its stage.
    pub stage: Stage,
    /// Its point in the unit square (learning rate, then 1 - momentum), mapped onto the
    /// search space by [`TargetStudy::metaparameters`].
    pub point: Vec<f64>,
}

/// A resolved steps-to-target study.
#[derive(Debug, Clone)]
pub struct TargetStudy {
    /// The config, defaults filled in.
    pub config: TargetConfig,
    /// Every trial, in the (shuffled) order they run.
    pub trials: Vec<SearchTrial>,
}

/// Parses and resolves a steps-to-target config (the registry's entry point).
/// Where a steps-to-target config carries a registered parameter of `rule`'s claims (the table
/// of kinds reads it: `registry::config_key`): the regime bands are keys of `[analysis]`, the
/// rest the claim's own `[[analysis.claims]]` entry.
pub fn config_key(rule: &str, param: &str) -> Option<ConfigKey> {
    use ConfigKey::Analysis;
    let bands = RegimeBands::default();
    match (rule, param) {
        ("three-regimes", "perfect_slope_from") => {
            Some(Analysis("perfect_slope_from", Some(bands.perfect_from)))
        }
        ("three-regimes", "perfect_slope_to") => {
            Some(Analysis("perfect_slope_to", Some(bands.perfect_to)))
        }
        ("three-regimes", "plateau_slope_from") => {
            Some(Analysis("plateau_slope_from", Some(bands.plateau_from)))
        }
        _ => ConfigKey::in_entry(&["workload", "versus", "margin"], param),
    }
}

pub fn load(source: &Source) -> Result<Box<dyn Study>, ConfigError> {
    let config: TargetConfig = source.parse()?;
    config.check(source)?;
    let trials = plan::search_trials(&config).map_err(|e| source.error("search", e))?;
    Ok(Box::new(TargetStudy { config, trials }))
}

impl TargetStudy {
    /// The budget of `workload` (None: the study's) for `train_examples` training examples
    /// (validated by `check`).
    fn step_budget(
        &self,
        workload: Option<&Workload>,
        train_examples: u64,
    ) -> Result<StepBudget, String> {
        let b = &self.config.budget;
        StepBudget::new(
            b.evaluate_every,
            b.evaluate_growth,
            b.max_steps,
            workload.and_then(|w| w.max_epochs).or(b.max_epochs),
            train_examples,
        )
        .and_then(|budget| {
            budget.with_min_steps(
                workload
                    .and_then(|w| w.min_steps)
                    .or(b.min_steps)
                    .unwrap_or(0),
            )
        })
        .map_err(|e| format!("budget: {e}"))
    }
}

impl StudyPlan for TargetStudy {
    fn config(&self) -> &dyn StudyConfig {
        &self.config
    }
    fn plan(&self) -> Vec<String> {
        let s = &self.config.search;
        let workloads: Vec<String> = self
            .config
            .workloads
            .iter()
            .map(|w| {
                format!(
                    "{} (batch sizes {:?} x {} trials)",
                    w.label(),
                    w.batch_sizes(s),
                    w.trials(s) + w.refine_trials(s)
                )
            })
            .collect();
        vec![
            format!("data: {}", self.config.data.name.as_str()),
            format!(
                "workloads: {} = {} trials",
                workloads.join(", "),
                self.trials.len()
            ),
            format!("protocol: {}", self.protocol()),
            format!("backend: {}", self.config.backend.name),
        ]
    }
    fn datasets(&self) -> Vec<DatasetName> {
        vec![self.config.data.name]
    }
    /// Each trial's step cap: a trial stops earlier when it reaches the target or is beaten.
    fn planned_steps(&self) -> Vec<PlannedSteps> {
        let n = self.config.data.train_size();
        self.trials
            .iter()
            .filter_map(|t| {
                let w = self.config.workloads.get(t.workload)?;
                let budget = self.step_budget(Some(w), n).ok()?;
                Some(PlannedSteps {
                    model: w.model.clone(),
                    optimizer: w.optimizer.clone(),
                    batch_size: t.batch_size,
                    steps: budget.steps(t.batch_size),
                    cap: true,
                })
            })
            .collect()
    }
    /// The search per workload, its stopping rules and the order of trials.
    fn protocol(&self) -> String {
        let b = &self.config.budget;
        let s = &self.config.search;
        TargetProtocol {
            workloads: self
                .config
                .workloads
                .iter()
                .map(|w| WorkloadProtocol {
                    label: w.label(),
                    trials: w.trials(s),
                    refine_trials: w.refine_trials(s),
                    batch_sizes: w.batch_sizes(s).to_vec(),
                    max_epochs: w.max_epochs,
                    min_steps: w.min_steps,
                    space: SearchSpace {
                        learning_rate: w.learning_rate(s),
                        one_minus_momentum: w.searches_momentum().then(|| w.one_minus_momentum(s)),
                    },
                })
                .collect(),
            shared_points: s.points == config::Points::Shared,
            seed: s.seed,
            refine_factor: s.refine.map(|r| r.factor),
            target_error: b.target_error,
            beaten_factor: b.stop_when_beaten.then_some(b.beaten_factor),
            divergence_factor: b.divergence_factor,
        }
        .words()
    }
    fn render(
        &self,
        dir: &Path,
        about: About,
        context: &RunContext,
        _registry: &Registry,
    ) -> Result<Rendered, RunError> {
        work::render(self, dir, about, context)
    }
}

impl TrialStudy for TargetStudy {
    type Trial = SearchTrial;
    type Worker<'a> = work::TargetWorker<'a>;
    const WHAT: &'static str = "steps-to-target trials";

    fn trials(&self) -> &[SearchTrial] {
        &self.trials
    }
    fn id(trial: &SearchTrial) -> &str {
        &trial.id
    }
    /// A refining trial waits for the first stage of its cell (see `plan`).
    fn ready(&self, trial: &SearchTrial, done_in_run: &BTreeSet<String>) -> bool {
        plan::ready(self, trial, done_in_run)
    }
    fn labels(&self, trial: &SearchTrial) -> TrialLabels {
        let w = &self.config.workloads[trial.workload];
        TrialLabels {
            id: trial.id.clone(),
            seed: trial.index,
            batch_size: trial.batch_size,
            optimizer: w.optimizer_label(),
            variant: w.model_label(),
            // A search trial trains to a step budget of its own (the target or the cap).
            budget: Budget::Steps,
        }
    }
    fn worker<'a>(&'a self, dir: &'a Path, context: &'a RunContext) -> work::TargetWorker<'a> {
        work::TargetWorker::new(self, dir, context)
    }
    /// Evaluations, search.csv and noise.csv rows of the trials that never finished.
    fn drop_unfinished(&self, dir: &Path, done: &BTreeSet<String>) -> Result<(), RunError> {
        drop_unfinished::<TrainEval>(&dir.join("results.csv"), done)?;
        drop_unfinished::<SearchRow>(&dir.join("search.csv"), done)?;
        drop_unfinished::<NoiseRow>(&dir.join("noise.csv"), done)
    }
    /// Its search.csv row (the metaparameters it was given), then its trials.csv row.
    fn record_failure(
        &self,
        dir: &Path,
        trial: &SearchTrial,
        status: batchlab_method::rows::Status,
        message: &str,
    ) -> Result<(), RunError> {
        let metaparameters = self.metaparameters(dir, trial)?;
        work::append_search_row(self, dir, trial, metaparameters)?;
        append_failure(dir, &self.labels(trial), status, message)
    }
}
