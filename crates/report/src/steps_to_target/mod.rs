//! The analysis of a steps-to-target study (EXPERIMENTS.md section 6; Shallue et al. 2018,
//! "Measuring the Effects of Data Parallelism on Neural Network Training", arXiv 1811.03600),
//! and of its companion measurement, the gradient noise scale (McCandlish et al. 2018, "An
//! Empirical Model of Large-Batch Training", arXiv 1812.06162).
//!
//! The analysis is pure functions on numbers the runner hands over; only [`search`] and
//! the report ([`render_target`]) read or write files.
//!
//! - [`quasi`]: the seeded scrambled Halton sequence that proposes metaparameters, and the
//!   log-uniform and "reverse log" scales they are drawn on.
//! - [`steps`]: steps to result per batch size, from every trial's validation curve.
//! - [`scaling`]: the fit S(B) = S_min (1 + B_crit / B) and the three regimes of the curve.
//! - [`noise`]: the simple gradient noise scale B_simple = tr(Sigma) / |G|^2, estimated
//!   during training from gradients of two batch sizes.
//! - [`budget`]: a trial's step budget and evaluation steps.
//! - [`search`]: `search.csv`, each trial's metaparameters, appended while a study runs.
//! - [`render_target`]: a study's run directory to `summary.csv`, figures and `report.md`.

pub mod budget;
pub mod noise;
pub mod noise_log;
pub mod quasi;
mod render;
pub mod scaling;
pub mod search;
pub mod steps;

pub use budget::StepBudget;
pub use noise::{NoiseRecord, NoiseScale};
pub use noise_log::{append_noise, read_noise, NoiseRow, NOISE_HEADER};
pub use quasi::{log_uniform, reverse_log_uniform, QuasiRandom, MAX_DIMS};
pub use render::{
    render_target, write_summary, LearningRateScaling, TargetCell, TargetContext, TargetFindings,
    TimePoint, TimeToResult, WorkloadFindings, OUTPUT_FILES, TIME_FILES,
};
pub use scaling::{
    fit_scaling, perfect_scaling_line, regimes, Regime, RegimeOptions, Regimes, ScalingFit,
    ScalingFitOptions, Segment,
};
pub use search::{append_search, latest_search, read_search, SearchRow, SEARCH_HEADER};
pub use steps::{
    classify, steps_to_result, trials_from_train, Evaluation, StepsToResult, Trial, TrialOutcome,
    TrialStatus,
};

/// Bad input to one of this module's functions: an argument outside its domain, or data
/// that cannot be analysed. Says which argument and what was expected, because the runner
/// passes its config's values straight through.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TargetError {
    /// An argument is outside its domain.
    #[error("{name} = {value}: expected {expected}")]
    Argument {
        /// The argument's name, e.g. `dims`.
        name: &'static str,
        /// Its value as given.
        value: String,
        /// What it must be, e.g. `1 to 8`.
        expected: &'static str,
    },
    /// The data as a whole cannot be analysed, e.g. too few points for a fit.
    #[error("{0}")]
    Data(String),
}

impl TargetError {
    /// Shorthand for [`TargetError::Argument`].
    pub(crate) fn argument(
        name: &'static str,
        value: impl std::fmt::Display,
        expected: &'static str,
    ) -> Self {
        TargetError::Argument {
            name,
            value: value.to_string(),
            expected,
        }
    }
}
