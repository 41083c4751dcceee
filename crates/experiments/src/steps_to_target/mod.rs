//! Steps to a target error versus batch size (kind `steps-to-target`, seed 004: Shallue et al.
//! 2018). For every workload (model, optimizer) and batch size, a quasi-random search over the
//! learning rate (and 1 - momentum) runs `search.trials` trials; each trains until its validation
//! error reaches `budget.target_error` (checked every `budget.evaluate_every` steps) or
//! `budget.max_steps` runs out. Steps to result for a batch size is the earliest evaluation step
//! at which any of its trials reached the target; diverged trials are infeasible.

pub mod config;
mod cutoff;
mod noise;
mod work;

use std::{collections::BTreeSet, path::Path};

use batchlab_method::{
    budget::StepBudget,
    quasi::{log_uniform, reverse_log_uniform, QuasiRandom},
    rows::{
        steps_to_target::{NoiseRow, SearchRow},
        train::TrainEval,
    },
};
use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};

use crate::{
    config::{ConfigError, Source},
    context::RunContext,
    error::RunError,
    study::{Study, StudyConfig},
    trial::{append_failure, drop_unfinished, TrialLabels, TrialStudy},
};

pub use config::{
    BudgetConfig, SearchConfig, StepTimeSource, TargetAnalysis, TargetConfig, Workload,
};

/// One trial of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchTrial {
    /// `<model>-<optimizer>-b<batch>-t<index>`.
    pub id: String,
    /// Index into `[[workloads]]`.
    pub workload: usize,
    /// The batch size.
    pub batch_size: u32,
    /// Position in the quasi-random sequence (also the seed of the initialisation).
    pub index: u64,
    /// The sampled learning rate.
    pub learning_rate: f64,
    /// The sampled momentum (0 for plain SGD).
    pub momentum: f64,
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
pub fn load(source: &Source) -> Result<Box<dyn Study>, ConfigError> {
    let config: TargetConfig = source.parse()?;
    config.check(source)?;
    let trials = search_trials(&config).map_err(|e| source.error("search", e))?;
    Ok(Box::new(TargetStudy { config, trials }))
}

/// The search: point i of the sequence is the same at every batch size (so batch sizes are
/// compared on identical metaparameter draws); the run order is shuffled.
fn search_trials(config: &TargetConfig) -> Result<Vec<SearchTrial>, String> {
    let s = &config.search;
    let mut trials = Vec::new();
    for (w, workload) in config.workloads.iter().enumerate() {
        let dims = if workload.searches_momentum() { 2 } else { 1 };
        let sequence = QuasiRandom::new(dims, s.seed).map_err(|e| e.to_string())?;
        for &batch_size in workload.batch_sizes(s) {
            for index in 0..workload.trials(s) as u64 {
                let u = sequence.point(index);
                let [lo, hi] = workload.learning_rate(s);
                let learning_rate = log_uniform(u[0], lo, hi).map_err(|e| e.to_string())?;
                let momentum = if workload.searches_momentum() {
                    let [lo, hi] = workload.one_minus_momentum(s);
                    reverse_log_uniform(u[1], lo, hi).map_err(|e| e.to_string())?
                } else {
                    0.0
                };
                trials.push(SearchTrial {
                    id: format!("{}{index}", workload.cell_prefix(batch_size)),
                    workload: w,
                    batch_size,
                    index,
                    learning_rate,
                    momentum,
                });
            }
        }
    }
    trials.shuffle(&mut StdRng::seed_from_u64(s.seed));
    Ok(trials)
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
        .map_err(|e| format!("budget: {e}"))
    }

    fn protocol(&self) -> String {
        let b = &self.config.budget;
        let s = &self.config.search;
        let trials: Vec<String> = self
            .config
            .workloads
            .iter()
            .map(|w| {
                let cap = w
                    .max_epochs
                    .map_or(String::new(), |e| format!(" (at most {e} epochs)"));
                format!(
                    "{}: {} x {:?}{cap}",
                    w.label(),
                    w.trials(s),
                    w.batch_sizes(s)
                )
            })
            .collect();
        let beaten = if b.stop_when_beaten {
            "; a trial also stops once another trial of its batch size has reached the target at an earlier or equal evaluation step (it can no longer lower steps to result; counted as missed)"
        } else {
            ""
        };
        format!(
            "quasi-random trials (scrambled Halton, seed {}) per batch size, for each workload in order: {}; {}; each trial stops when its validation error is at or below {} or its step budget is spent{beaten}; a loss that turns non-finite or exceeds {}x the first loss makes the trial infeasible; trials run in shuffled order",
            s.seed,
            trials.join(", "),
            self.config
                .workloads
                .iter()
                .map(|w| w.search_space(s))
                .collect::<Vec<_>>()
                .join("; "),
            b.target_error,
            b.divergence_factor
        )
    }
}

impl TrialStudy for TargetStudy {
    type Trial = SearchTrial;
    type Worker<'a> = work::TargetWorker<'a>;
    const WHAT: &'static str = "steps-to-target trials";

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
                    w.trials(s)
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
    fn check_inputs(&self, context: &RunContext) -> Result<(), RunError> {
        self.config
            .data
            .check(&context.data_dir)
            .map_err(|e| RunError::Other(e.to_string()))
    }
    fn render(&self, dir: &Path, context: &RunContext) -> Result<Vec<String>, RunError> {
        work::render(self, dir, context)
    }
    fn trials(&self) -> &[SearchTrial] {
        &self.trials
    }
    fn id(trial: &SearchTrial) -> &str {
        &trial.id
    }
    fn labels(&self, trial: &SearchTrial) -> TrialLabels {
        let w = &self.config.workloads[trial.workload];
        TrialLabels {
            id: trial.id.clone(),
            seed: trial.index,
            batch_size: trial.batch_size,
            optimizer: w.optimizer_label(),
            variant: w.model_label(),
            budget: "steps",
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
        status: &'static str,
        message: &str,
    ) -> Result<(), RunError> {
        work::append_search_row(self, dir, trial)?;
        append_failure(dir, &self.labels(trial), status, message)
    }
}
