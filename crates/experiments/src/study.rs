//! What every kind of study is to the session: the [`Study`] trait, which only the one driver
//! implements ([`crate::drive`]: a kind supplies its plan and its units); the tables every kind
//! shares come from its config through [`StudyConfig`] (docs/ARCHITECTURE.md, "The one
//! driver", "Adding things").

use batchlab_datasets::spec::DatasetName;
use batchlab_models::ModelSpec;
use std::path::Path;

use crate::{
    claim_registry::Registry,
    config::{BackendConfig, ExperimentHeader, OutputConfig},
    context::RunContext,
    error::RunError,
    isolate::{UnitEvents, WorkerExit},
    optim::OptimizerConfig,
    progress::Progress,
};

/// Training steps a run will take at one batch size of one model (for the wall-time estimate
/// `run` and `check` state, `crate::estimate`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedSteps {
    /// The model trained.
    pub model: ModelSpec,
    /// Its optimizer.
    pub optimizer: OptimizerConfig,
    /// The batch size.
    pub batch_size: u32,
    /// Training steps at this batch size, over the whole study.
    pub steps: u64,
    /// Whether `steps` is a cap its units may stop before (a steps-to-target trial stops at
    /// the target), so that the estimate is an upper bound.
    pub cap: bool,
}

/// The model of a study, to be worded by the report ([`batchlab_report::about::ModelLine`]);
/// a kind adds what else it states.
pub fn model_line(model: &ModelSpec) -> batchlab_report::about::ModelLine {
    batchlab_report::about::ModelLine {
        architecture: model.architecture.to_string(),
        input: model.input,
        classes: model.classes,
        params: model.trainable_params().unwrap_or(0),
        ..Default::default()
    }
}

pub use batchlab_report::Rendered;

/// The tables every kind's config has, and the config as TOML.
pub trait StudyConfig {
    /// `[experiment]`.
    fn experiment(&self) -> &ExperimentHeader;
    /// `[backend]`.
    fn backend(&self) -> &BackendConfig;
    /// `[output]`.
    fn output(&self) -> &OutputConfig;
    /// The resolved config (every default filled in) as TOML: saved as the report's
    /// config.toml, from which the experiment can be run again.
    fn resolved_toml(&self) -> String;
}

/// Implements [`StudyConfig`] for a config struct with `experiment`, `backend` and `output`
/// fields that serializes to TOML.
#[macro_export]
macro_rules! study_config {
    ($config:ty) => {
        impl $crate::study::StudyConfig for $config {
            fn experiment(&self) -> &$crate::config::ExperimentHeader {
                &self.experiment
            }
            fn backend(&self) -> &$crate::config::BackendConfig {
                &self.backend
            }
            fn output(&self) -> &$crate::config::OutputConfig {
                &self.output
            }
            fn resolved_toml(&self) -> String {
                toml::to_string(self).expect("a parsed config serializes")
            }
        }
    };
}

/// A resolved experiment, ready to run: what the session holds (`Box<dyn Study>`), made from a
/// kind's plan and units by the driver.
pub trait Study {
    /// The study's config.
    fn config(&self) -> &dyn StudyConfig;
    /// A few lines on what a run will do (`batchlab check`).
    fn plan(&self) -> Vec<String>;
    /// The datasets the study reads, which a run makes sure of before anything is created or
    /// trained ([`RunContext::ensure_datasets`]). None for studies on synthetic data.
    fn datasets(&self) -> Vec<DatasetName> {
        Vec::new()
    }
    /// The training steps a whole run takes, per model, optimizer and batch size; empty where
    /// a kind cannot say (the batch-size finder's probes depend on what fits).
    fn planned_steps(&self) -> Vec<PlannedSteps> {
        Vec::new()
    }
    /// Whether `--shard i/n` may split the study (its units are independent trials, not
    /// measurements timed against each other).
    fn shardable(&self) -> bool {
        false
    }
    /// The ids of the study's independent units, in the planned order, for a shardable study
    /// (what `--shard` splits and `batchlab status` counts); empty otherwise.
    fn unit_ids(&self) -> Vec<String> {
        Vec::new()
    }
    /// Runs, or continues, the study in `dir`, appending raw results as they are produced.
    fn run(
        &self,
        dir: &Path,
        context: &RunContext,
        progress: &dyn Progress,
    ) -> Result<(), RunError>;
    /// Does the remaining work in `dir`, announcing each unit: the worker side of
    /// [`crate::isolate`], in a child process or in this one.
    fn work(
        &self,
        dir: &Path,
        context: &RunContext,
        events: &dyn UnitEvents,
    ) -> Result<WorkerExit, RunError>;
    /// Writes summary.csv, the figures and report.md from `dir`'s raw results; returns the
    /// findings in a few lines for the terminal and the claims judged, each registered claim in
    /// `registry`'s words (the one its ids come from).
    fn render(
        &self,
        dir: &Path,
        context: &RunContext,
        registry: &Registry,
    ) -> Result<Rendered, RunError>;

    /// `[experiment]`.
    fn header(&self) -> &ExperimentHeader {
        self.config().experiment()
    }
    /// `[backend]`.
    fn backend(&self) -> &BackendConfig {
        self.config().backend()
    }
    /// `[output]`.
    fn output(&self) -> &OutputConfig {
        self.config().output()
    }
    /// See [`StudyConfig::resolved_toml`].
    fn resolved_toml(&self) -> String {
        self.config().resolved_toml()
    }
}
