//! A batch-size finder's config: its experiment file's tables, each with its defaults.

use batchlab_models::ModelSpec;
use serde::{Deserialize, Serialize};

use super::limit::LimitChoice;
use crate::{
    config::{BackendConfig, ExperimentHeader, OutputConfig},
    optim::OptimizerConfig,
};

/// A batch-size finder's experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindBatchConfig {
    /// `[experiment]`.
    pub experiment: ExperimentHeader,
    /// `[model]`.
    #[serde(default)]
    pub model: ModelSpec,
    /// `[optimizer]`: its state is part of the memory.
    #[serde(default)]
    pub optimizer: OptimizerConfig,
    /// `[curve]`.
    #[serde(default)]
    pub curve: CurveConfig,
    /// `[search]`.
    #[serde(default)]
    pub search: SearchConfig,
    /// `[probe]`.
    #[serde(default)]
    pub probe: ProbeConfig,
    /// `[recommendation]`.
    #[serde(default)]
    pub recommendation: RecommendationConfig,
    /// `[analysis]`: the claims' thresholds (claims/registry.toml holds them).
    #[serde(default)]
    pub analysis: FindBatchAnalysisConfig,
    /// `[backend]`.
    #[serde(default)]
    pub backend: BackendConfig,
    /// `[output]`.
    #[serde(default)]
    pub output: OutputConfig,
}

crate::study_config!(FindBatchConfig);

/// `[curve]`: the batch sizes whose memory, time and utilization are measured (the memory
/// model is fitted to them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CurveConfig {
    /// Batch sizes, at least two.
    pub batch_sizes: Vec<u32>,
    /// Probes of every batch size, each in a fresh process.
    pub repeats: u32,
}

impl Default for CurveConfig {
    fn default() -> Self {
        Self {
            batch_sizes: vec![1, 2, 4, 8, 16, 32],
            repeats: 2,
        }
    }
}

/// `[search]`: the largest batch size under the budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// A size such as `"4GiB"` or `"512MiB"`, or `"available"`: the memory available when the
    /// run starts (saved as its value in the run's config.toml).
    pub memory_budget: String,
    /// The first batch size probed.
    pub start: u32,
    /// The largest batch size probed.
    pub max_batch: u32,
    /// How the budget is enforced.
    pub limit: LimitChoice,
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            memory_budget: "available".into(),
            start: 1,
            max_batch: 65_536,
            limit: LimitChoice::Auto,
        }
    }
}

/// `[probe]`: what one probe runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProbeConfig {
    /// Training steps run and dropped (the first allocates the optimizer's state).
    pub warmup_steps: usize,
    /// Timed steps kept.
    pub samples: usize,
    /// Seeds the model, the data and the curve's order.
    pub seed: u64,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        Self {
            warmup_steps: 1,
            samples: 3,
            seed: 0,
        }
    }
}

/// `[recommendation]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecommendationConfig {
    /// Fraction of the budget kept free by the recommended largest batch size.
    pub headroom: f64,
    /// The smallest batch size within this fraction of the best throughput is recommended.
    pub throughput_tolerance: f64,
}

impl Default for RecommendationConfig {
    fn default() -> Self {
        Self {
            headroom: 0.10,
            throughput_tolerance: 0.05,
        }
    }
}

/// `[analysis]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FindBatchAnalysisConfig {
    /// The change of utilization (a fraction, absolute) that counts as rising, and within
    /// which it counts as saturated (`utilization-saturates`).
    pub utilization_step: f64,
    /// Other models' finder experiments whose per-example memory cost this run's is compared
    /// with (`memory-growth-differs`), each by its newest complete run on this run's machine
    /// beside it; empty, the claim is not judged.
    pub memory_growth_differs_from: Vec<String>,
    /// "Largely": a ratio of the per-example costs beyond this either way (above 1).
    pub memory_growth_margin: f64,
}

impl Default for FindBatchAnalysisConfig {
    fn default() -> Self {
        Self {
            utilization_step: UTILIZATION_STEP,
            memory_growth_differs_from: Vec::new(),
            memory_growth_margin: MEMORY_GROWTH_MARGIN,
        }
    }
}

/// `[analysis] memory_growth_margin` where a config names none: the value claims/registry.toml
/// fixes for `memory-growth-depends-on-model` (a test keeps them equal).
pub const MEMORY_GROWTH_MARGIN: f64 = 1.5;

/// `[analysis] utilization_step` where a config names none (runs made before it was a key):
/// the value claims/registry.toml fixes for `utilization-rises-with-batch` (a test keeps them
/// equal).
pub const UTILIZATION_STEP: f64 = 0.05;
