//! The training study (kind `train`, seeds 002 and 003): a grid of real training runs, batch
//! sizes x optimizers x data variants x budgets x seeds, each evaluated on the validation split
//! as it trains and on the test split at the end.
//!
//! Two budgets: `epochs` (the seeds' setup: every batch size sees the data `grid.epochs` times,
//! so a larger batch takes fewer steps) and, with `grid.steps_matched`, `steps` (the control:
//! every batch size takes the same number of optimizer steps).

mod budget;
mod claims;
pub(crate) mod config;
mod eval_batch;
mod plan;
mod work;

use std::path::Path;

use batchlab_datasets::{spec::DatasetName, DataConfig};

use batchlab_report::about::About;
use batchlab_report::train::{Evaluations, TrainProtocol};

use crate::{
    claim_registry::ConfigKey,
    claim_registry::Registry,
    config::{check_model, ConfigError, Source},
    context::RunContext,
    drive::StudyPlan,
    error::RunError,
    optim::label,
    study::{PlannedSteps, Rendered, Study, StudyConfig},
    trial::{ScheduleKind, TrialLabels, TrialStudy},
};

pub use budget::Budget;
pub use claims::{ClaimConfig, RuleName};
pub use config::{GridConfig, TrainAnalysis, TrainConfig};
pub use eval_batch::EvalBatchSize;
pub use plan::Trial;

/// A resolved training study.
#[derive(Debug, Clone)]
pub struct TrainStudy {
    /// The config as written, defaults filled in.
    pub config: TrainConfig,
    /// Each variant's label and its `[data]` table (the base with the variant's keys applied).
    pub variants: Vec<(String, DataConfig)>,
    /// Every trial, in the (shuffled) order they run.
    pub trials: Vec<Trial>,
}

/// Parses and resolves a training config (the registry's entry point).
/// Where a training config carries a registered parameter (the table of kinds reads it:
/// `registry::config_key`): the claim's own `[[analysis.claims]]` entry, under the same name,
/// whatever the rule (`from` and `to` as positions of its `batch_sizes`, or `batch_sizes`
/// whole: local-minimum-at's three).
pub fn config_key(_rule: &str, param: &str) -> Option<ConfigKey> {
    ConfigKey::in_entry(
        &[
            "series",
            "budget",
            "batch_sizes",
            "margin",
            "tolerance",
            "reference",
            "versus",
        ],
        param,
    )
}

pub fn load(source: &Source) -> Result<Box<dyn Study>, ConfigError> {
    Ok(Box::new(TrainStudy::resolve(source)?))
}

impl TrainStudy {
    /// Validates every table once.
    pub fn resolve(source: &Source) -> Result<Self, ConfigError> {
        let config: TrainConfig = source.parse()?;
        check_model(&config.model, source)?;
        let variants = config.resolve_variants(source)?;
        config.check(source, &config.model)?;
        let trials = plan::trials(&config, &variants);
        Ok(Self {
            config,
            variants,
            trials,
        })
    }

    /// The `[data]` of a variant.
    pub fn variant(&self, label: &str) -> &DataConfig {
        &self
            .variants
            .iter()
            .find(|(l, _)| l == label)
            .expect("trials name only known variants")
            .1
    }

    fn model_line(&self) -> String {
        crate::study::model_line(&self.config.model).words()
    }
}

impl StudyPlan for TrainStudy {
    fn config(&self) -> &dyn StudyConfig {
        &self.config
    }
    fn plan(&self) -> Vec<String> {
        let g = &self.config.grid;
        let optimizers: Vec<String> = self.config.optimizers.iter().map(label).collect();
        let variants: Vec<&str> = self.variants.iter().map(|(l, _)| l.as_str()).collect();
        vec![
            format!("model: {}", self.model_line()),
            format!("data: {}", self.config.data.name.as_str()),
            format!(
                "grid: batch sizes {:?} x optimizers [{}] x variants [{}] x seeds {:?} = {} trials",
                g.batch_sizes,
                optimizers.join(", "),
                variants.join(", "),
                g.seeds,
                self.trials.len()
            ),
            format!("protocol: {}", self.protocol()),
            format!("backend: {}", self.config.backend.name),
        ]
    }
    fn datasets(&self) -> Vec<DatasetName> {
        self.variants.iter().map(|(_, data)| data.name).collect()
    }
    fn planned_steps(&self) -> Vec<PlannedSteps> {
        let g = &self.config.grid;
        let per_epoch = |n: u64, b: u32| {
            let b = u64::from(b.max(1));
            if g.drop_last {
                n / b
            } else {
                n.div_ceil(b)
            }
        };
        let smallest = g.batch_sizes.iter().copied().min().unwrap_or(1);
        let epochs = g.epochs as u64;
        self.trials
            .iter()
            .filter_map(|t| {
                let (_, data) = self
                    .variants
                    .iter()
                    .find(|(label, _)| *label == t.variant)?;
                let n = data.train_size();
                let steps = match t.budget {
                    Budget::Epochs => epochs * per_epoch(n, t.batch_size),
                    Budget::Steps => g.steps.unwrap_or(epochs * per_epoch(n, smallest)),
                };
                Some(PlannedSteps {
                    model: self.config.model.clone(),
                    optimizer: self.config.optimizers.get(t.optimizer)?.clone(),
                    batch_size: t.batch_size,
                    steps,
                    cap: false,
                })
            })
            .collect()
    }
    /// The budgets, the schedule, the evaluations and the order of trials.
    fn protocol(&self) -> String {
        let g = &self.config.grid;
        let schedule = &self.config.schedule;
        TrainProtocol {
            epochs: g.epochs,
            matched_steps: g.steps_matched.then_some(g.steps),
            decay: match schedule.kind {
                ScheduleKind::Constant => None,
                kind => Some((kind.name().to_string(), schedule.end_factor)),
            },
            evaluations: match (g.evaluate_every, g.evaluations) {
                (Some(every), _) => Evaluations::EverySteps(every),
                (None, Some(n)) => Evaluations::Times(n),
                (None, None) => Evaluations::EveryEpoch,
            },
            eval_at_train_batch: g.eval_batch_size == EvalBatchSize::Train,
            drop_last: g.drop_last,
            order_seed: g.order_seed,
            divergence_factor: g.divergence_factor,
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

impl TrialStudy for TrainStudy {
    type Trial = Trial;
    type Worker<'a> = work::TrainWorker<'a>;
    const WHAT: &'static str = "training trials";

    fn trials(&self) -> &[Trial] {
        &self.trials
    }
    fn id(trial: &Trial) -> &str {
        &trial.id
    }
    fn labels(&self, trial: &Trial) -> TrialLabels {
        trial.labels()
    }
    fn worker<'a>(&'a self, dir: &'a Path, context: &'a RunContext) -> work::TrainWorker<'a> {
        work::TrainWorker::new(self, dir, context)
    }
}
