//! `[anatomy]` of a step-time study: steps taken apart (`timed_step::dissect`) at each claimed
//! or suspected jump b and its neighbours b - 1 and b + 1, in shuffled rounds of their own after
//! the sweep's, written to `stages.csv` (the report attributes the jump to layers from it).

use batchlab_method::rows::step_time::{StagePhase, StageSample};
use batchlab_models::ModelSpec;
use serde::{Deserialize, Serialize};

use crate::config::{check_count, ConfigError, Source, MAX_UNITS};
use crate::timed_step::Dissection;

/// `[anatomy]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnatomyConfig {
    /// The batch sizes b to take apart, each with b - 1 and b + 1.
    pub around: Vec<u32>,
    /// Visits of every one of those batch sizes, each round in a new shuffled order.
    #[serde(default = "default_rounds")]
    pub rounds: usize,
    /// Steps taken apart per visit.
    #[serde(default = "default_samples")]
    pub samples: usize,
    /// Steps taken apart and dropped at every visit first.
    #[serde(default = "default_warmup")]
    pub warmup_steps: usize,
}

fn default_rounds() -> usize {
    5
}

fn default_samples() -> usize {
    3
}

fn default_warmup() -> usize {
    1
}

impl AnatomyConfig {
    /// b - 1, b, b + 1 for every b, sorted and distinct.
    pub fn batch_sizes(&self) -> Vec<u32> {
        let mut sizes: Vec<u32> = self
            .around
            .iter()
            .flat_map(|&b| [b.saturating_sub(1), b, b.saturating_add(1)])
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// Errors name `anatomy.KEY`.
    pub fn check(&self, model: &ModelSpec, source: &Source) -> Result<(), ConfigError> {
        if self.around.is_empty() || self.around.iter().any(|&b| b < 2) {
            return Err(source.error(
                "anatomy.around",
                "expected one or more batch sizes of at least 2 (each is taken apart with b - 1 and b + 1)",
            ));
        }
        if !model.architecture.has_stages() {
            return Err(source.error(
                "anatomy",
                format!(
                    "{} cannot be taken apart stage by stage yet; the networks that can: vgg16, vgg19, small-cnn, simple-cnn, mlp",
                    model.architecture
                ),
            ));
        }
        if self.rounds == 0 || self.samples == 0 {
            return Err(source.error("anatomy", "rounds and samples must be at least 1"));
        }
        let visits = self.batch_sizes().len() as u128 * self.rounds as u128;
        check_count(
            source,
            "anatomy.rounds",
            "visits (batch sizes x rounds)",
            visits,
            MAX_UNITS,
        )
    }
}

/// The rows of one dissecting visit: every stage's forward and backward, the optimizer and the
/// whole step, for every repetition.
pub fn stage_rows(batch_size: u32, round: u32, d: &Dissection) -> Vec<StageSample> {
    let row = |sample: usize, index: usize, stage: &str, phase: StagePhase, ms: f64| StageSample {
        batch_size,
        round,
        sample: sample as u32,
        stage_index: index as u32,
        stage: stage.into(),
        phase,
        ms,
    };
    let mut rows = vec![];
    for (k, s) in d.samples.iter().enumerate() {
        for (i, name) in d.stages.iter().enumerate() {
            rows.push(row(k, i, name, StagePhase::Forward, s.forward_ms[i]));
            rows.push(row(k, i, name, StagePhase::Backward, s.backward_ms[i]));
        }
        rows.push(row(
            k,
            0,
            "optimizer",
            StagePhase::Optimizer,
            s.optimizer_ms,
        ));
        rows.push(row(k, 0, "step", StagePhase::Step, s.step_ms));
    }
    rows
}
