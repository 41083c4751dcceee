//! The batch-size finder (seed 003's question, "what is the right batch size on this
//! device?"): memory per batch size measured in fresh processes, a memory model fitted to it,
//! the largest batch size that fits a budget found by doubling then bisection (as PyTorch
//! Lightning's `BatchSizeFinder` does), utilization and throughput per batch size, and a
//! recommendation.
//!
//! Every probe (a batch size: warm-up steps dropped, then timed steps) runs in a process of its
//! own under the enforced budget ([`limit`]), so no reading is inflated by an earlier, larger
//! probe and an overrun is recorded as `oom` from the process's end, never by crashing the
//! study.

mod config;
mod limit;
mod memory_budget;
mod plan;
mod work;

use std::path::Path;

use batchlab_method::batch_search::BatchSearch;
use batchlab_models::ModelSpec;
use batchlab_report::about::About;
use batchlab_report::find_batch::ProbeProtocol;
use bytesize::ByteSize;

use crate::{
    claim_registry::ConfigKey,
    claim_registry::Registry,
    config::{
        check_batch_sizes, check_count, check_model, BackendConfig, BackendKind, ConfigError,
        ExperimentHeader, OutputConfig, Source, MAX_BATCH_SIZE, MAX_UNITS,
    },
    context::RunContext,
    drive::StudyPlan,
    error::RunError,
    optim::OptimizerConfig,
    study::{Rendered, Study, StudyConfig},
};

pub use config::{
    CurveConfig, FindBatchAnalysisConfig, FindBatchConfig, ProbeConfig, RecommendationConfig,
    SearchConfig, MEMORY_GROWTH_MARGIN, UTILIZATION_STEP,
};
pub use limit::LimitChoice;
use memory_budget::MemoryBudget;

const MIB: f64 = 1024.0 * 1024.0;

/// A resolved batch-size finder.
#[derive(Debug, Clone)]
pub struct FindBatchStudy {
    /// The config, `search.memory_budget` written as its exact value in bytes.
    pub config: FindBatchConfig,
    /// The budget in bytes; `None` on cuda, where the device's own memory is the limit.
    pub budget: Option<u64>,
    /// Curve batch sizes, sorted and distinct.
    pub batch_sizes: Vec<u32>,
}

/// Parses and resolves a batch-size finder's config (the registry's entry point).
/// Where a find-batch config carries a registered parameter of `rule`'s claims (the table of
/// kinds reads it: `registry::config_key`).
pub fn config_key(rule: &str, param: &str) -> Option<ConfigKey> {
    match (rule, param) {
        ("utilization-saturates", "step") => Some(ConfigKey::Analysis(
            "utilization_step",
            Some(UTILIZATION_STEP),
        )),
        ("memory-growth-differs", "than") => {
            Some(ConfigKey::Analysis("memory_growth_differs_from", None))
        }
        ("memory-growth-differs", "margin") => Some(ConfigKey::Analysis(
            "memory_growth_margin",
            Some(MEMORY_GROWTH_MARGIN),
        )),
        ("largest-is-not-right", "tolerance") => Some(ConfigKey::Table(
            "recommendation",
            "throughput_tolerance",
            RecommendationConfig::default().throughput_tolerance,
        )),
        _ => None,
    }
}

pub fn load(source: &Source) -> Result<Box<dyn Study>, ConfigError> {
    Ok(Box::new(FindBatchStudy::resolve(source)?))
}

/// What `batchlab find-batch` asks: a model, an optimizer, a budget, the curve's batch sizes
/// and a backend; everything else takes the defaults.
#[derive(Debug, Clone)]
pub struct QuickFind {
    /// The model.
    pub model: ModelSpec,
    /// The optimizer.
    pub optimizer: crate::optim::OptimizerKind,
    /// A size, or `available`.
    pub memory_budget: String,
    /// The curve's batch sizes.
    pub curve: Vec<u32>,
    /// The backend.
    pub backend: BackendKind,
}

impl QuickFind {
    /// The experiment file this amounts to, named after the model and input, ready for
    /// [`crate::registry::load_study`] (which checks it like any file).
    pub fn source(&self) -> Source {
        let [c, h, w] = self.model.input;
        let config = FindBatchConfig {
            experiment: ExperimentHeader {
                name: format!("find-batch-{}-{c}x{h}x{w}", self.model.architecture),
                kind: crate::kind::Kind::FindBatch,
                description: format!(
                    "The largest batch size of {} at {c}x{h}x{w} under a memory budget of {}, and the right one (batchlab find-batch)",
                    self.model.architecture, self.memory_budget
                ),
                reproduces: None,
                claim: None,
            },
            model: self.model.clone(),
            optimizer: OptimizerConfig {
                name: self.optimizer,
                ..OptimizerConfig::default()
            },
            curve: CurveConfig {
                batch_sizes: self.curve.clone(),
                ..CurveConfig::default()
            },
            search: SearchConfig {
                memory_budget: self.memory_budget.clone(),
                ..SearchConfig::default()
            },
            probe: ProbeConfig::default(),
            recommendation: RecommendationConfig::default(),
            analysis: FindBatchAnalysisConfig::default(),
            backend: BackendConfig {
                name: self.backend,
                ..BackendConfig::default()
            },
            output: OutputConfig::default(),
        };
        Source {
            origin: "the batchlab find-batch command line".into(),
            text: config.resolved_toml(),
            overrides: Vec::new(),
        }
    }
}

impl FindBatchStudy {
    /// Validates every table once; resolves `available` to bytes.
    pub fn resolve(source: &Source) -> Result<Self, ConfigError> {
        let config: FindBatchConfig = source.parse()?;
        check_model(&config.model, source)?;
        config.optimizer.resolve(source)?;
        let curve = &config.curve;
        check_batch_sizes(source, "curve.batch_sizes", &curve.batch_sizes)?;
        let mut batch_sizes = curve.batch_sizes.clone();
        batch_sizes.sort_unstable();
        if batch_sizes.len() < 2 {
            return Err(source.error(
                "curve.batch_sizes",
                format!("expected at least two batch sizes (the memory model is a line through them), got {:?}", curve.batch_sizes),
            ));
        }
        if curve.repeats == 0 {
            return Err(source.error("curve.repeats", "expected at least 1"));
        }
        check_count(
            source,
            "curve.repeats",
            "probes (batch sizes x repeats)",
            batch_sizes.len() as u128 * u128::from(curve.repeats),
            MAX_UNITS,
        )?;
        let search = &config.search;
        if search.start == 0 || search.start > search.max_batch || search.max_batch > MAX_BATCH_SIZE
        {
            return Err(source.error(
                "search",
                format!(
                    "expected 1 <= search.start <= search.max_batch <= {MAX_BATCH_SIZE}, got start {} and max_batch {}",
                    search.start, search.max_batch
                ),
            ));
        }
        if config.probe.samples == 0 {
            return Err(source.error("probe.samples", "expected at least 1"));
        }
        let margin = config.analysis.memory_growth_margin;
        if !(margin > 1.0 && margin.is_finite()) {
            return Err(source.error(
                "analysis.memory_growth_margin",
                format!("expected a ratio above 1 (a per-example cost this many times another's), got {margin}"),
            ));
        }
        for (key, value) in [
            (
                "analysis.utilization_step",
                config.analysis.utilization_step,
            ),
            ("recommendation.headroom", config.recommendation.headroom),
            (
                "recommendation.throughput_tolerance",
                config.recommendation.throughput_tolerance,
            ),
        ] {
            if !(0.0..1.0).contains(&value) {
                return Err(
                    source.error(key, format!("expected a fraction in [0, 1), got {value}"))
                );
            }
        }
        if matches!(config.backend.name, BackendKind::Tch | BackendKind::TchCuda) {
            // A probe's budget is a cgroup limit or, without one, an address-space limit; the
            // CUDA build of libtorch maps about 5.7 GB of libraries at start-up (measured: a
            // tch training process's VmSize), which such a limit would count as the probe's own.
            return Err(source.error(
                "backend.name",
                "find-batch does not run on tch or tch-cuda: its memory limit would count the several GB of libraries libtorch maps at start-up; use flex or cuda",
            ));
        }
        let memory_budget = MemoryBudget::parse(&search.memory_budget);
        if !config.backend.name.on_cpu() && memory_budget != Ok(MemoryBudget::Available) {
            return Err(source.error(
                "search.memory_budget",
                "on a GPU the device's own memory is the limit and a smaller budget cannot be enforced on it: set \"available\"",
            ));
        }
        let mut study = Self {
            budget: None,
            batch_sizes,
            config: config.clone(),
        };
        if !config.backend.name.on_cpu() {
            return Ok(study);
        }
        let budget = memory_budget
            .and_then(MemoryBudget::bytes)
            .map_err(|e| source.error("search.memory_budget", e))?;
        if budget as f64 <= study.fixed_estimate_bytes() {
            return Err(source.error(
                "search.memory_budget",
                format!(
                    "{} is below the model's own memory before any batch: {} (no probe could fit)",
                    ByteSize(budget).display().iec(),
                    study.fixed_estimate_line()
                ),
            ));
        }
        // Saved as its value, so the workers and a later `report` read the same budget.
        study.config.search.memory_budget = format!("{budget} B");
        study.budget = Some(budget);
        Ok(study)
    }

    /// The budget as text.
    fn budget_line(&self) -> String {
        match self.budget {
            Some(b) => format!(
                "{} ({b} bytes), enforced by the {:?} limit",
                ByteSize(b).display().iec(),
                self.config.search.limit
            ),
            None => {
                "the device's own memory (the CubeCL allocator's out-of-memory error ends a probe)"
                    .into()
            }
        }
    }

    /// Weights, gradients and optimizer state: 4 bytes per parameter, each.
    fn fixed_estimate_bytes(&self) -> f64 {
        let params = self.config.model.trainable_params().unwrap_or(0) as f64;
        4.0 * params * (2 + self.config.optimizer.state_per_parameter()) as f64
    }

    fn fixed_estimate_line(&self) -> String {
        let params = self.config.model.trainable_params().unwrap_or(0);
        format!(
            "{:.1} MiB = {params} parameters x 4 bytes x (weights, gradients and {} optimizer state tensors per parameter)",
            self.fixed_estimate_bytes() / MIB,
            self.config.optimizer.state_per_parameter()
        )
    }

    fn search(&self) -> BatchSearch {
        BatchSearch {
            start: self.config.search.start,
            cap: self.config.search.max_batch,
        }
    }

    fn curve(&self) -> Vec<plan::Probe> {
        plan::curve(
            &self.batch_sizes,
            self.config.curve.repeats,
            self.config.probe.seed,
        )
    }

    fn model_line(&self) -> String {
        batchlab_report::about::ModelLine {
            optimizer: Some(self.config.optimizer.name.to_string()),
            ..crate::study::model_line(&self.config.model)
        }
        .words()
    }
}

impl StudyPlan for FindBatchStudy {
    fn config(&self) -> &dyn StudyConfig {
        &self.config
    }
    fn plan(&self) -> Vec<String> {
        let search = self.search();
        vec![
            format!("model: {}", self.model_line()),
            format!("memory budget: {}", self.budget_line()),
            format!("fixed memory, analytic: {}", self.fixed_estimate_line()),
            format!(
                "curve: batch sizes {:?}, {} probes each",
                self.batch_sizes, self.config.curve.repeats
            ),
            format!(
                "search: from {} doubling up to {}, then bisection; at most {} probes",
                search.start,
                search.cap,
                search.max_probes()
            ),
            format!("protocol: {}", self.protocol()),
            format!("backend: {}", self.config.backend.name),
        ]
    }
    fn protocol(&self) -> String {
        let p = &self.config.probe;
        ProbeProtocol {
            warmup_steps: p.warmup_steps,
            samples: p.samples,
            curve_probes: self.batch_sizes.len() as u32 * self.config.curve.repeats,
            seed: p.seed,
        }
        .words()
    }
    fn render(
        &self,
        dir: &Path,
        about: About,
        _context: &RunContext,
        registry: &Registry,
    ) -> Result<Rendered, RunError> {
        work::render(self, dir, about, registry)
    }
}
