//! The training study (kind `train`, seeds 002 and 003): a grid of real training runs, batch
//! sizes x optimizers x data variants x budgets x seeds, each evaluated on the validation split
//! as it trains and on the test split at the end.
//!
//! Two budgets: `epochs` (the seeds' setup: every batch size sees the data `grid.epochs` times,
//! so a larger batch takes fewer steps) and, with `grid.steps_matched`, `steps` (the control:
//! every batch size takes the same number of optimizer steps).

pub(crate) mod config;
pub mod epoch_bench;
mod plan;
pub(crate) mod trial;
pub(crate) mod work;

use std::path::Path;

use batchlab_datasets::DataConfig;
use batchlab_models::ModelSpec;

use crate::{
    config::{BackendConfig, ConfigError, ExperimentHeader, OutputConfig, Source},
    isolate::{UnitEvents, WorkerExit},
    progress::Progress,
    registry::Study,
    session::{Isolation, RunError},
};

pub use config::{GridConfig, ScheduleConfig, TrainAnalysis, TrainConfig};
pub use plan::{Budget, Trial};

/// A resolved training study.
#[derive(Debug, Clone)]
pub struct TrainStudy {
    /// The config as written, defaults filled in.
    pub config: TrainConfig,
    /// The model, validated.
    pub spec: ModelSpec,
    /// Each variant's label and its `[data]` table (the base with the variant's keys applied).
    pub variants: Vec<(String, DataConfig)>,
    /// Every trial, in the (shuffled) order they run.
    pub trials: Vec<Trial>,
}

/// Parses and resolves a training config (the registry's entry point).
pub fn load(source: &Source) -> Result<Box<dyn Study>, ConfigError> {
    Ok(Box::new(TrainStudy::resolve(source)?))
}

impl TrainStudy {
    /// Validates every table once.
    pub fn resolve(source: &Source) -> Result<Self, ConfigError> {
        let config: TrainConfig = source.parse()?;
        let spec = config.model.resolve(source)?;
        let variants = config.resolve_variants(source)?;
        config.check(source, &spec)?;
        let trials = plan::trials(&config, &variants);
        Ok(Self {
            config,
            spec,
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
        let [c, h, w] = self.spec.input;
        let params = self.spec.trainable_params().unwrap_or(0) as f64;
        format!(
            "{}, input {c}x{h}x{w}, {} classes, {:.2} M trainable parameters",
            self.spec.architecture,
            self.spec.classes,
            params / 1e6
        )
    }

    fn protocol(&self) -> String {
        let g = &self.config.grid;
        let schedule = &self.config.schedule;
        let budgets = if g.steps_matched {
            format!(
                "two budgets: {} epochs, and the same number of steps for every batch size ({})",
                g.epochs,
                g.steps.map_or(
                    "what the smallest batch size takes in those epochs".into(),
                    |s| { format!("{s} steps") }
                )
            )
        } else {
            format!("{} epochs", g.epochs)
        };
        format!(
            "{budgets}; learning-rate schedule {}; evaluation on the validation split {} (timed apart from training), test split at the end; {} order of trials shuffled (seed {}); a trial whose loss turns non-finite or exceeds {}x its first loss is recorded as diverged",
            schedule.describe(),
            match (g.evaluate_every, g.evaluations) {
                (Some(every), _) => format!("every {every} steps and at the end"),
                (None, Some(n)) => format!("{n} times evenly spaced"),
                (None, None) => "after every epoch".into(),
            },
            if g.drop_last { "last partial batch dropped;" } else { "last partial batch kept;" },
            g.order_seed,
            g.divergence_factor
        )
    }
}

impl Study for TrainStudy {
    fn header(&self) -> &ExperimentHeader {
        &self.config.experiment
    }
    fn backend(&self) -> &BackendConfig {
        &self.config.backend
    }
    fn output(&self) -> &OutputConfig {
        &self.config.output
    }
    fn resolved_toml(&self) -> String {
        toml::to_string(&self.config).expect("a parsed config serializes")
    }
    fn plan(&self) -> Vec<String> {
        let g = &self.config.grid;
        let optimizers: Vec<String> = self.config.optimizers.iter().map(config::label).collect();
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
    fn shardable(&self) -> bool {
        true
    }
    fn check_inputs(&self) -> Result<(), RunError> {
        let data_dir = work::data_dir();
        for (_, data) in &self.variants {
            data.check(&data_dir)
                .map_err(|e| RunError::Other(e.to_string()))?;
        }
        Ok(())
    }
    fn run(
        &self,
        dir: &Path,
        isolation: &Isolation,
        progress: &dyn Progress,
    ) -> Result<(), RunError> {
        work::run(self, dir, isolation, progress)
    }
    fn work(&self, dir: &Path, events: &dyn UnitEvents) -> Result<WorkerExit, RunError> {
        work::work(self, dir, events)
    }
    fn render(&self, dir: &Path) -> Result<Vec<String>, RunError> {
        work::render(self, dir)
    }
}
