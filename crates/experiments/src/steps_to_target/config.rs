//! The TOML of a steps-to-target study.

use batchlab_datasets::DataConfig;
use batchlab_method::{budget::StepBudget, refine::RefineConfig};
use batchlab_models::ModelSpec;
use serde::{Deserialize, Serialize};

pub use super::analysis_config::{StepTimeSource, TargetAnalysis};
use crate::{
    config::{
        check_batch_sizes, check_count, check_model, BackendConfig, ConfigError, ExperimentHeader,
        OutputConfig, Source, MAX_UNITS,
    },
    optim::label,
    optim::OptimizerConfig,
};

/// A steps-to-target experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetConfig {
    /// `[experiment]`.
    pub experiment: ExperimentHeader,
    /// `[data]`: the dataset (its validation split decides when the target is reached).
    pub data: DataConfig,
    /// `[[workloads]]`: each a model and an optimizer, searched and measured separately.
    pub workloads: Vec<Workload>,
    /// `[search]`.
    pub search: SearchConfig,
    /// `[budget]`.
    pub budget: BudgetConfig,
    /// `[analysis]`.
    #[serde(default)]
    pub analysis: TargetAnalysis,
    /// `[backend]`.
    #[serde(default)]
    pub backend: BackendConfig,
    /// `[output]`.
    #[serde(default)]
    pub output: OutputConfig,
}

crate::study_config!(TargetConfig);

/// A model trained with an optimizer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// The network.
    pub model: ModelSpec,
    /// The optimizer; a momentum above 0 means momentum is searched (its value is ignored), and
    /// `learning_rate` is always searched.
    pub optimizer: OptimizerConfig,
    /// Its name in trial ids, rows and the report instead of its optimizer's label (the
    /// label is then `<model>/<name>`): for two workloads of the same model and optimizer
    /// searched differently, e.g. a two-stage search beside a long random one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Batch sizes for this workload instead of `search.batch_sizes` (e.g. a subset for a model
    /// that is costly on the device at hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_sizes: Option<Vec<u32>>,
    /// Trials per batch size for this workload instead of `search.trials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<usize>,
    /// Refining trials per batch size for this workload instead of `search.refine.trials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refine_trials: Option<usize>,
    /// Learning-rate range for this workload instead of `search.learning_rate` (the paper tuned
    /// each workload's search space).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate: Option<[f64; 2]>,
    /// 1 - momentum range for this workload instead of `search.one_minus_momentum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_minus_momentum: Option<[f64; 2]>,
    /// Epoch cap for this workload instead of `budget.max_epochs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_epochs: Option<f64>,
    /// Step floor under the epoch cap for this workload instead of `budget.min_steps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_steps: Option<u64>,
    /// Train on the first this many examples of the training split only (the same workload on
    /// a subset of the data: the dataset-size study); epochs count these examples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train_examples: Option<usize>,
}

impl Workload {
    /// The training examples this workload trains on, of `available` in the training split.
    pub fn train_count(&self, available: usize) -> usize {
        self.train_examples.map_or(available, |k| k.min(available))
    }

    /// `<model>` (the variant column of results files).
    pub fn model_label(&self) -> String {
        self.model.architecture.to_string()
    }

    /// `sgd`, `sgd-momentum` or `sgd-nesterov` (the searched values are not part of it), or
    /// the workload's `name` when it has one.
    pub fn optimizer_label(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        label(&OptimizerConfig {
            learning_rate: None,
            ..self.optimizer.clone()
        })
    }

    /// `<model>/<optimizer>`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.model_label(), self.optimizer_label())
    }

    /// Whether 1 - momentum is part of the search.
    pub fn searches_momentum(&self) -> bool {
        self.optimizer.momentum > 0.0
    }

    /// The start of the ids of this workload's trials at `batch_size`: `<model>-<optimizer>-b<B>-t`.
    pub fn cell_prefix(&self, batch_size: u32) -> String {
        format!(
            "{}-{}-b{batch_size}-t",
            self.model_label(),
            self.optimizer_label()
        )
    }

    /// Its batch sizes (its own, or the search's).
    pub fn batch_sizes<'a>(&'a self, search: &'a SearchConfig) -> &'a [u32] {
        self.batch_sizes.as_deref().unwrap_or(&search.batch_sizes)
    }

    /// Its learning-rate range (its own, or the search's).
    pub fn learning_rate(&self, search: &SearchConfig) -> [f64; 2] {
        self.learning_rate.unwrap_or(search.learning_rate)
    }

    /// Its 1 - momentum range (its own, or the search's).
    pub fn one_minus_momentum(&self, search: &SearchConfig) -> [f64; 2] {
        self.one_minus_momentum.unwrap_or(search.one_minus_momentum)
    }

    /// Its first-stage trials per batch size (its own, or the search's).
    pub fn trials(&self, search: &SearchConfig) -> usize {
        self.trials.unwrap_or(search.trials)
    }

    /// Its refining trials per batch size (its own, or the search's; 0 without a refining
    /// stage).
    pub fn refine_trials(&self, search: &SearchConfig) -> usize {
        self.refine_trials
            .unwrap_or(search.refine.map_or(0, |r| r.trials))
    }
}

/// Where a cell's first-stage points come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Points {
    /// One sequence for the whole study: point i is the same at every batch size (batch sizes
    /// compared on identical draws; studies before the per-batch-size design).
    #[default]
    Shared,
    /// Each (workload, batch size) scrambles its own sequence (`batchlab_method::refine`):
    /// the search's luck is independent between batch sizes.
    PerBatchSize,
}

/// `[search]`: the quasi-random metaparameter search run at every batch size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// Batch sizes (powers of two in the paper).
    pub batch_sizes: Vec<u32>,
    /// First-stage trials per batch size and workload: the first this many points of the
    /// sequence.
    pub trials: usize,
    /// Seed of the scrambled Halton sequences.
    #[serde(default)]
    pub seed: u64,
    /// `shared` (the default: the same points at every batch size) or `per-batch-size`.
    #[serde(default)]
    pub points: Points,
    /// `[search.refine]`: a second stage around the first stage's best point; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refine: Option<RefineConfig>,
    /// Learning rate, sampled log-uniformly in `[min, max]`.
    pub learning_rate: [f64; 2],
    /// 1 - momentum, sampled log-uniformly in `[min, max]` (momentum workloads only).
    #[serde(default = "default_one_minus_momentum")]
    pub one_minus_momentum: [f64; 2],
}

fn default_one_minus_momentum() -> [f64; 2] {
    // The paper's range for its momentum workloads' "reverse log" search.
    [1e-3, 1.0]
}

/// `[budget]`: when a trial stops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// Validation error to reach (e.g. 0.1 for the paper's Fashion-MNIST simple CNN).
    pub target_error: f64,
    /// A trial stops after this many steps if it has not reached the target.
    pub max_steps: u64,
    /// Evaluate on the validation split every this many steps at first (and never closer).
    pub evaluate_every: u64,
    /// Once `evaluate_every` is less than `evaluate_growth - 1` of the step, evaluation steps
    /// grow geometrically by this factor (1: a fixed grid). See `batchlab_method::budget`.
    #[serde(default = "default_growth")]
    pub evaluate_growth: f64,
    /// Also stop a trial after this many epochs (bounds the cost of a missed trial at large
    /// batch sizes); unset: `max_steps` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_epochs: Option<f64>,
    /// The fewest steps a trial trains whatever `max_epochs` says (at most `max_steps`): the
    /// epoch cap leaves large batch sizes few steps, and a cap below what their neighbours
    /// needed decides the answer. Unset: no floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_steps: Option<u64>,
    /// Stop a trial once another trial of its batch size has reached the target at an earlier
    /// or equal step (it can no longer lower steps to result; see `steps_to_target::cutoff`).
    #[serde(default = "default_true")]
    pub stop_when_beaten: bool,
    /// With `stop_when_beaten`, how far past the best known steps a beaten trial trains: it
    /// stops at `beaten_factor` x the steps another trial of its batch size reached the
    /// target in (1: at those steps). Above 1 the stopped trial is right-censored further
    /// out, so the report's interval of steps to result rests on fewer unknowns.
    #[serde(default = "default_beaten_factor")]
    pub beaten_factor: f64,
    /// Batch size of evaluation passes (speed only).
    #[serde(default = "default_eval_batch")]
    pub eval_batch_size: usize,
    /// Measure the gradient noise scale (B_simple, McCandlish et al. 2018) every this many
    /// steps, from the half-batch and whole-batch gradients; written to noise.csv. Costs about
    /// one and a half extra steps per measurement, outside the training clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_every: Option<u64>,
    /// A trial diverged (infeasible) when its loss is non-finite or above this multiple of its
    /// first loss.
    #[serde(default = "default_divergence")]
    pub divergence_factor: f64,
    /// Evaluate every trial's final model on the test split (the solution-quality claims
    /// report the test error of the trial chosen on validation); off by default, as steps to
    /// result need validation only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub evaluate_test: bool,
}

fn default_growth() -> f64 {
    1.0
}

fn default_true() -> bool {
    true
}

fn default_beaten_factor() -> f64 {
    1.0
}

fn default_eval_batch() -> usize {
    1024
}

fn default_divergence() -> f64 {
    100.0
}

impl TargetConfig {
    /// Range and cross-table checks, each error pointing at its key.
    pub fn check(&self, source: &Source) -> Result<(), ConfigError> {
        self.data
            .validate()
            .map_err(|(k, message)| source.error(&format!("data.{k}"), message))?;
        if self.workloads.is_empty() {
            return Err(source.error("workloads", "expected at least one [[workloads]] table"));
        }
        let mut labels = Vec::new();
        for (i, w) in self.workloads.iter().enumerate() {
            let key = format!("workloads[{i}]");
            check_model(&w.model, source).map_err(|e| ConfigError {
                key: Some(format!("{key}.model")),
                ..e
            })?;
            w.optimizer.resolve(source).map_err(|e| ConfigError {
                key: Some(format!("{key}.optimizer")),
                ..e
            })?;
            if w.batch_sizes
                .as_ref()
                .is_some_and(|b| b.is_empty() || b.contains(&0))
            {
                return Err(source.error(
                    &format!("{key}.batch_sizes"),
                    "expected one or more batch sizes >= 1",
                ));
            }
            if let Some(sizes) = &w.batch_sizes {
                check_batch_sizes(source, &format!("{key}.batch_sizes"), sizes)?;
            }
            if w.max_epochs.is_some_and(|e| !(e > 0.0 && e.is_finite())) {
                return Err(source.error(&format!("{key}.max_epochs"), "expected a number above 0"));
            }
            if w.min_steps.is_some_and(|m| m > self.budget.max_steps) {
                return Err(source.error(
                    &format!("{key}.min_steps"),
                    format!(
                        "expected at most budget.max_steps ({})",
                        self.budget.max_steps
                    ),
                ));
            }
            if w.trials == Some(0) {
                return Err(source.error(&format!("{key}.trials"), "expected at least 1"));
            }
            if w.train_examples == Some(0) {
                return Err(source.error(&format!("{key}.train_examples"), "expected at least 1"));
            }
            if w.name.as_ref().is_some_and(|n| {
                n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            }) {
                return Err(source.error(
                    &format!("{key}.name"),
                    "expected letters, digits and dashes (it becomes part of trial ids)",
                ));
            }
            if w.refine_trials.is_some_and(|n| n > 0) && self.search.refine.is_none() {
                return Err(source.error(
                    &format!("{key}.refine_trials"),
                    "a refining stage needs [search.refine] (its factor)",
                ));
            }
            if labels.contains(&w.label()) {
                return Err(source.error(&key, format!("two workloads are both {}", w.label())));
            }
            labels.push(w.label());
        }
        if !self.analysis.bands().is_valid() {
            return Err(source.error(
                "analysis.perfect_slope_to",
                "expected perfect_slope_from < perfect_slope_to < plateau_slope_from, all finite",
            ));
        }
        if let Some(r) = self
            .analysis
            .replicates
            .iter()
            .find(|r| !labels.contains(r))
        {
            return Err(source.error(
                "analysis.replicates",
                format!(
                    "{r:?} names no workload; expected some of {}",
                    labels.join(", ")
                ),
            ));
        }
        for (i, times) in self.analysis.step_times.iter().enumerate() {
            if !self.workloads.iter().any(|w| times.names(w)) {
                let mut names = labels.clone();
                for model in self.workloads.iter().map(Workload::model_label) {
                    if !names.contains(&model) {
                        names.push(model);
                    }
                }
                return Err(source.error(
                    &format!("analysis.step_times[{i}].workload"),
                    format!(
                        "{:?} names no workload; expected a workload or model label: {}",
                        times.workload,
                        names.join(", ")
                    ),
                ));
            }
        }
        for (i, claim) in self.analysis.claims.iter().enumerate() {
            claim.check(i, source, &labels)?;
        }
        let s = &self.search;
        if s.batch_sizes.is_empty() || s.batch_sizes.contains(&0) {
            return Err(source.error(
                "search.batch_sizes",
                "expected one or more batch sizes >= 1",
            ));
        }
        check_batch_sizes(source, "search.batch_sizes", &s.batch_sizes)?;
        if s.trials == 0 {
            return Err(source.error("search.trials", "expected at least 1"));
        }
        if let Some(refine) = &s.refine {
            refine
                .check()
                .map_err(|e| source.error("search.refine.factor", e.to_string()))?;
        }
        let trials: u128 = self
            .workloads
            .iter()
            .map(|w| w.batch_sizes(s).len() as u128 * (w.trials(s) + w.refine_trials(s)) as u128)
            .sum();
        check_count(
            source,
            "search.trials",
            "trials (batch sizes x trials, summed over workloads)",
            trials,
            MAX_UNITS,
        )?;
        let mut ranges = vec![
            ("search.learning_rate".to_string(), s.learning_rate),
            (
                "search.one_minus_momentum".to_string(),
                s.one_minus_momentum,
            ),
        ];
        for (i, w) in self.workloads.iter().enumerate() {
            let key = |name: &str| format!("workloads[{i}].{name}");
            ranges.extend(w.learning_rate.map(|r| (key("learning_rate"), r)));
            ranges.extend(w.one_minus_momentum.map(|r| (key("one_minus_momentum"), r)));
        }
        for (key, [lo, hi]) in ranges {
            if !(lo > 0.0 && lo <= hi && hi.is_finite()) {
                return Err(source.error(&key, "expected [min, max] with 0 < min <= max"));
            }
            if key.ends_with("one_minus_momentum") && hi > 1.0 {
                return Err(source.error(&key, "1 - momentum is at most 1"));
            }
        }
        let b = &self.budget;
        if !(b.target_error > 0.0 && b.target_error < 1.0) {
            return Err(source.error("budget.target_error", "expected an error between 0 and 1"));
        }
        if b.max_steps == 0 || b.evaluate_every == 0 || b.eval_batch_size == 0 {
            return Err(source.error(
                "budget",
                "max_steps, evaluate_every and eval_batch_size must be at least 1",
            ));
        }
        StepBudget::new(
            b.evaluate_every,
            b.evaluate_growth,
            b.max_steps,
            b.max_epochs,
            1,
        )
        .and_then(|budget| budget.with_min_steps(b.min_steps.unwrap_or(0)))
        .map_err(|e| source.error("budget", e.to_string()))?;
        if !(b.beaten_factor >= 1.0 && b.beaten_factor.is_finite()) {
            return Err(source.error("budget.beaten_factor", "expected a number >= 1"));
        }
        if b.noise_every == Some(0) {
            return Err(source.error("budget.noise_every", "expected at least 1"));
        }
        if b.divergence_factor.is_nan() || b.divergence_factor <= 1.0 {
            return Err(source.error("budget.divergence_factor", "expected a number above 1"));
        }
        Ok(())
    }
}
