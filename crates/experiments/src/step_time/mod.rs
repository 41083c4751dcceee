//! The step-time sweep (seeds 000/001, the Training Cost Calculator study): the wall time of one
//! training step (forward, loss, backward, optimizer step) at each batch size.
//!
//! Protocol: synthetic inputs are made on the device before timing; every visit of a batch size
//! runs `warmup_steps` dropped steps (they absorb allocation and, on CUDA, kernel compilation and
//! autotuning at the new shape) and then `samples` timed steps, each closed by a device sync
//! before the clock is read. Batch sizes are visited in `rounds`, each in a freshly shuffled
//! order, so drift over time cannot masquerade as a jump at one batch size.

pub mod anatomy;
mod plan;
mod work;

use std::path::Path;

use batchlab_models::ModelSpec;
use batchlab_report::about::About;
use batchlab_report::step_time::{AnatomyProtocol, Gap, StepTimeRules, SweepProtocol};
use serde::{Deserialize, Serialize};

use crate::{
    claim_registry::ConfigKey,
    claim_registry::Registry,
    config::{
        check_batch_sizes, check_count, check_model, BackendConfig, ConfigError, ExperimentHeader,
        OutputConfig, Source, MAX_BATCH_SIZE, MAX_LIST, MAX_UNITS,
    },
    context::RunContext,
    drive::StudyPlan,
    error::RunError,
    optim::OptimizerConfig,
    study::{PlannedSteps, Rendered, Study, StudyConfig},
    timed_step::{Warmup, SETTLE_SPREAD, SETTLE_WINDOW},
};

pub use anatomy::AnatomyConfig;
pub use plan::{remaining_visits, shuffled_rounds, Visit};

/// A step-time experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepTimeConfig {
    /// `[experiment]`.
    pub experiment: ExperimentHeader,
    /// `[model]`.
    #[serde(default)]
    pub model: ModelSpec,
    /// `[optimizer]`: part of the timed step.
    #[serde(default)]
    pub optimizer: OptimizerConfig,
    /// `[sweep]`.
    #[serde(default)]
    pub sweep: SweepConfig,
    /// `[analysis]`.
    #[serde(default)]
    pub analysis: AnalysisConfig,
    /// `[anatomy]`: steps taken apart around suspected jumps; none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anatomy: Option<AnatomyConfig>,
    /// `[backend]`.
    #[serde(default)]
    pub backend: BackendConfig,
    /// `[output]`.
    #[serde(default)]
    pub output: OutputConfig,
}

crate::study_config!(StepTimeConfig);

/// `[sweep]`: which batch sizes and how many samples of each. Defaults are the seed's harness:
/// 5 trials of 10 one-step epochs, the first 2 steps dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SweepConfig {
    /// Batch sizes listed one by one.
    pub batch_sizes: Vec<u32>,
    /// All batch sizes from..=to, added to `batch_sizes` (the seed swept 1..=70).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_range: Option<[u32; 2]>,
    /// Steps run and dropped at every visit of a batch size: the fewest, when
    /// `warmup_max_steps` lets warm-up go on until the step settles.
    pub warmup_steps: usize,
    /// The most warm-up steps of a visit: between `warmup_steps` and this, warm-up goes on
    /// until the last steps agree (`timed_step::Warmup`). The GPU configs set it: on the CubeCL
    /// backends (cuda, wgpu) a visit's first steps compile and tune kernels for a time no fixed
    /// count knows. Unset, warm-up is `warmup_steps` exactly (every run made before it existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_max_steps: Option<usize>,
    /// Timed steps kept at every visit.
    pub samples: usize,
    /// Visits of every batch size, each round in a new shuffled order.
    pub rounds: usize,
    /// Seeds the model's initialisation, the synthetic data and the visiting order.
    pub seed: u64,
}

impl Default for SweepConfig {
    fn default() -> Self {
        Self {
            batch_sizes: Vec::new(),
            batch_range: None,
            warmup_steps: 2,
            warmup_max_steps: None,
            samples: 10,
            rounds: 5,
            seed: 0,
        }
    }
}

/// `[analysis]`: what the report compares against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AnalysisConfig {
    /// Batch sizes where the source claims the step time jumps (seed 000: 16, 32, 48, 64).
    pub claimed_jumps: Vec<u32>,
    /// Batch sizes where the source claims this model has no jump (seed 000: MobileNet at 16,
    /// 32, 48, 64, where VGG16 jumps).
    pub no_jumps_at: Vec<u32>,
    /// `[below, at, above]`: a batch size the source claims is faster per example than both
    /// its neighbours (seed 002: 127 and 129 slower than 128); empty, none is claimed.
    pub local_minimum_at: Vec<u32>,
    /// Another step-time experiment the source claims this model's step time fluctuates more
    /// than; judged against that experiment's newest complete run beside this one.
    pub fluctuates_more_than: Option<String>,
    /// Another step-time experiment the source claims this model is slightly slower than;
    /// judged against that experiment's newest complete run beside this one.
    pub slower_than: Option<String>,
    /// "Slightly slower" holds when this model's step time is at most this ratio of the
    /// reference's (a stated convention; see claims/registry.toml).
    pub slower_max_ratio: f64,
    /// "Grows linearly" holds when the upper half's marginal cost is within this fraction of
    /// the lower half's (a stated convention; see claims/registry.toml).
    pub linear_margin: f64,
    /// "No jumps at ..." holds when each step is within this fraction of the step time: the
    /// jump detector's own size floor (`JumpOptions::min_relative`), what counts as a jump.
    pub no_jumps_margin: f64,
    /// "Jumps at ...": the smallest step, as a fraction of the step time, that counts as a jump
    /// (the same floor: one standard for presence and absence; claims/registry.toml).
    pub jump_margin: f64,
    /// Which gap a named position means: `after` (b to the next batch size, the default: seed
    /// 000's "another round once a batch exceeds 16") or `before` (the previous one to b).
    pub jump_gap: Gap,
    /// The seed's "why not double": the claimed jumps must keep the step time below this
    /// ratio of the time before them (claims/registry.toml: 2, from the seed's text); unset,
    /// the claim is not judged.
    pub max_jump_ratio: Option<f64>,
    /// "Slightly faster with cuDNN's benchmark mode" (seed 002): the smallest gain that counts
    /// as faster, judged from the same go's PyTorch references (the GPU campaign's
    /// `pytorch.csv` against `pytorch-cudnn-benchmark.csv`); unset, the claim is not judged.
    pub autotune_margin: Option<f64>,
    /// ... and the largest gain that is still slight.
    pub autotune_max_gain: f64,
    /// Bootstrap resamples for the interval of each median.
    pub bootstrap_resamples: usize,
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        Self {
            claimed_jumps: Vec::new(),
            no_jumps_at: Vec::new(),
            local_minimum_at: Vec::new(),
            fluctuates_more_than: None,
            slower_than: None,
            slower_max_ratio: StepTimeRules::default().slower_max_ratio,
            linear_margin: StepTimeRules::default().linear_margin,
            no_jumps_margin: StepTimeRules::default().no_jumps_margin,
            jump_margin: StepTimeRules::default().jump_margin,
            jump_gap: Gap::default(),
            max_jump_ratio: None,
            autotune_margin: None,
            autotune_max_gain: 0.25,
            // 2000 resamples put the percentile interval's own noise well below a sample's.
            bootstrap_resamples: 2000,
        }
    }
}

impl AnalysisConfig {
    /// `local_minimum_at` as the rule takes it (checked to be three sizes by `resolve`).
    pub fn local_minimum_at(&self) -> Option<[u32; 3]> {
        self.local_minimum_at.as_slice().try_into().ok()
    }
}

/// A resolved step-time study.
#[derive(Debug, Clone)]
pub struct StepTimeStudy {
    /// The config as written, defaults filled in.
    pub config: StepTimeConfig,
    /// Batch sizes, sorted and distinct.
    pub batch_sizes: Vec<u32>,
}

/// Parses and resolves a step-time config (the registry's entry point).
/// Where a step-time config carries a registered parameter of `rule`'s claims (the table of
/// kinds reads it: `registry::config_key`): keys of `[analysis]`, with the defaults a config
/// without them gets.
pub fn config_key(rule: &str, param: &str) -> Option<ConfigKey> {
    use ConfigKey::{Analysis, AnalysisText};
    let defaults = StepTimeRules::default();
    match (rule, param) {
        ("jumps-at" | "jump-below-ratio", "positions") => Some(Analysis("claimed_jumps", None)),
        ("jump-below-ratio", "max_ratio") => Some(Analysis("max_jump_ratio", None)),
        ("jumps-at" | "jump-below-ratio", "margin") => {
            Some(Analysis("jump_margin", Some(defaults.jump_margin)))
        }
        ("jumps-at" | "jump-below-ratio" | "no-jumps-at", "gap") => {
            Some(AnalysisText("jump_gap", Gap::default().name()))
        }
        ("no-jumps-at", "positions") => Some(Analysis("no_jumps_at", None)),
        ("local-minimum-at", "batch_sizes") => Some(Analysis("local_minimum_at", None)),
        ("no-jumps-at", "margin") => {
            Some(Analysis("no_jumps_margin", Some(defaults.no_jumps_margin)))
        }
        ("linear", "margin") => Some(Analysis("linear_margin", Some(defaults.linear_margin))),
        ("fluctuates-more", "than") => Some(Analysis("fluctuates_more_than", None)),
        ("slower-than", "than") => Some(Analysis("slower_than", None)),
        ("slower-than", "max_ratio") => Some(Analysis(
            "slower_max_ratio",
            Some(defaults.slower_max_ratio),
        )),
        ("autotune-faster", "margin") => Some(Analysis("autotune_margin", None)),
        ("autotune-faster", "max_gain") => Some(Analysis(
            "autotune_max_gain",
            Some(AnalysisConfig::default().autotune_max_gain),
        )),
        _ => None,
    }
}

pub fn load(source: &Source) -> Result<Box<dyn Study>, ConfigError> {
    Ok(Box::new(StepTimeStudy::resolve(source)?))
}

impl StepTimeStudy {
    /// Validates every table once.
    pub fn resolve(source: &Source) -> Result<Self, ConfigError> {
        let config: StepTimeConfig = source.parse()?;
        check_model(&config.model, source)?;
        config.optimizer.resolve(source)?;
        let sweep = &config.sweep;
        check_batch_sizes(source, "sweep.batch_sizes", &sweep.batch_sizes)?;
        let mut batch_sizes = sweep.batch_sizes.clone();
        if let Some([from, to]) = sweep.batch_range {
            if from == 0 || from > to || to > MAX_BATCH_SIZE {
                return Err(source.error(
                    "sweep.batch_range",
                    format!("expected [from, to] with 1 <= from <= to <= {MAX_BATCH_SIZE}, got [{from}, {to}]"),
                ));
            }
            // Bounded before the range is materialised.
            check_count(
                source,
                "sweep.batch_range",
                "batch sizes",
                u128::from(to - from) + 1,
                MAX_LIST as u64,
            )?;
            batch_sizes.extend(from..=to);
        }
        batch_sizes.sort_unstable();
        batch_sizes.dedup();
        if batch_sizes.is_empty() {
            return Err(source.error(
                "sweep",
                "no batch sizes: give sweep.batch_sizes = [..] and/or sweep.batch_range = [from, to]",
            ));
        }
        if batch_sizes[0] == 0 {
            return Err(source.error("sweep.batch_sizes", "batch sizes must be at least 1"));
        }
        for (key, value) in [
            ("sweep.samples", sweep.samples),
            ("sweep.rounds", sweep.rounds),
        ] {
            if value == 0 {
                return Err(source.error(key, "expected at least 1"));
            }
        }
        if sweep
            .warmup_max_steps
            .is_some_and(|max| max < sweep.warmup_steps)
        {
            return Err(source.error(
                "sweep.warmup_max_steps",
                format!(
                    "expected at least sweep.warmup_steps ({}): the cap of a warm-up that drops at least that many",
                    sweep.warmup_steps
                ),
            ));
        }
        let visits = batch_sizes.len() as u128 * sweep.rounds as u128;
        check_count(
            source,
            "sweep.rounds",
            "visits (batch sizes x rounds)",
            visits,
            MAX_UNITS,
        )?;
        let most_warmup = sweep.warmup_max_steps.unwrap_or(sweep.warmup_steps);
        let steps = visits * (sweep.samples as u128 + most_warmup as u128);
        // A step is milliseconds to seconds: ten million is already weeks.
        check_count(
            source,
            "sweep.samples",
            "steps (visits x (warm-up + samples))",
            steps,
            10 * MAX_UNITS,
        )?;
        if config.analysis.bootstrap_resamples < 100 {
            return Err(source.error(
                "analysis.bootstrap_resamples",
                "expected at least 100 resamples",
            ));
        }
        let autotune = [
            config
                .analysis
                .autotune_margin
                .map(|m| ("analysis.autotune_margin", m)),
            Some((
                "analysis.autotune_max_gain",
                config.analysis.autotune_max_gain,
            )),
        ];
        for (key, margin) in [
            ("analysis.linear_margin", config.analysis.linear_margin),
            ("analysis.no_jumps_margin", config.analysis.no_jumps_margin),
            ("analysis.jump_margin", config.analysis.jump_margin),
        ]
        .into_iter()
        .chain(autotune.into_iter().flatten())
        {
            if !(margin > 0.0 && margin < 1.0) {
                return Err(source.error(key, format!("{margin} is not a fraction in (0, 1)")));
            }
        }
        if config
            .analysis
            .max_jump_ratio
            .is_some_and(|r| !(r > 1.0 && r.is_finite()))
        {
            return Err(source.error(
                "analysis.max_jump_ratio",
                "expected a ratio above 1 (the step time after a jump over the time before it)",
            ));
        }
        let trio = &config.analysis.local_minimum_at;
        if !(trio.is_empty() || trio.len() == 3 && trio[0] > 0 && trio.is_sorted_by(|a, b| a < b)) {
            return Err(source.error(
                "analysis.local_minimum_at",
                "expected three increasing batch sizes >= 1: [below, at, above]",
            ));
        }
        if let Some(anatomy) = &config.anatomy {
            anatomy.check(&config.model, source)?;
        }
        Ok(Self {
            config,
            batch_sizes,
        })
    }

    /// How each visit warms up: `sweep.warmup_steps`, up to `sweep.warmup_max_steps` until the
    /// step settles.
    pub fn warmup(&self) -> Warmup {
        let s = &self.config.sweep;
        Warmup {
            min: s.warmup_steps,
            max: s.warmup_max_steps.unwrap_or(s.warmup_steps),
        }
    }

    /// Every visit, in the planned order: the sweep's shuffled rounds, then those of
    /// `[anatomy]`.
    fn visits(&self) -> Vec<Visit> {
        let mut visits = shuffled_rounds(
            &self.batch_sizes,
            self.config.sweep.rounds,
            self.config.sweep.seed,
            false,
        );
        if let Some(a) = &self.config.anatomy {
            visits.extend(shuffled_rounds(
                &a.batch_sizes(),
                a.rounds,
                self.config.sweep.seed.wrapping_add(1),
                true,
            ));
        }
        visits
    }

    fn model_line(&self) -> String {
        batchlab_report::about::ModelLine {
            forward_flops: Some(self.config.model.forward_flops().unwrap_or(0)),
            ..crate::study::model_line(&self.config.model)
        }
        .words()
    }
}

impl StudyPlan for StepTimeStudy {
    fn config(&self) -> &dyn StudyConfig {
        &self.config
    }
    /// Every visit's warm-up and timed steps (a dissected step counts as one, although taking
    /// it apart costs more than the step).
    fn planned_steps(&self) -> Vec<PlannedSteps> {
        let s = &self.config.sweep;
        let mut visits: Vec<(u32, u64)> = self
            .batch_sizes
            .iter()
            .map(|&b| (b, (s.rounds * (s.warmup_steps + s.samples)) as u64))
            .collect();
        if let Some(a) = &self.config.anatomy {
            visits.extend(
                a.batch_sizes()
                    .into_iter()
                    .map(|b| (b, (a.rounds * (a.warmup_steps + a.samples)) as u64)),
            );
        }
        visits
            .into_iter()
            .map(|(batch_size, steps)| PlannedSteps {
                model: self.config.model.clone(),
                optimizer: self.config.optimizer.clone(),
                batch_size,
                steps,
                cap: false,
            })
            .collect()
    }
    fn plan(&self) -> Vec<String> {
        let s = &self.config.sweep;
        let visits = self.batch_sizes.len() * s.rounds;
        vec![
            format!("model: {}", self.model_line()),
            format!(
                "batch sizes: {} ({} .. {}), {} visits, {} timed steps in all",
                self.batch_sizes.len(),
                self.batch_sizes[0],
                self.batch_sizes[self.batch_sizes.len() - 1],
                visits,
                visits * s.samples
            ),
            format!("protocol: {}", self.protocol()),
            format!("backend: {}", self.config.backend.name),
        ]
    }
    /// The rounds, the warm-up and the timed steps, and the anatomy's visits.
    fn protocol(&self) -> String {
        let s = &self.config.sweep;
        let w = self.warmup();
        SweepProtocol {
            rounds: s.rounds,
            seed: s.seed,
            warmup_min: w.min,
            warmup_max: w.max,
            settle: (SETTLE_WINDOW, SETTLE_SPREAD),
            samples: s.samples,
            optimizer: self.config.optimizer.name.to_string(),
            anatomy: self.config.anatomy.as_ref().map(|a| AnatomyProtocol {
                rounds: a.rounds,
                batch_sizes: a.batch_sizes(),
                around: a.around.clone(),
                warmup_steps: a.warmup_steps,
                samples: a.samples,
            }),
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
