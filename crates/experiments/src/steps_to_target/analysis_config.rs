//! `[analysis]` of a steps-to-target study: what the report sets beside the steps, the regime
//! bands it judges with, the replicates it checks coverage on, and the claims.

use batchlab_report::steps_to_target::RegimeBands;
use serde::{Deserialize, Serialize};

use super::claims::TargetClaimConfig;

/// `[analysis]`: what the report sets beside the steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TargetAnalysis {
    /// `[[analysis.step_times]]`: step-time sweeps of the workloads' models on the device of
    /// interest; with them the report gives time to result = steps(B) x step time(B).
    pub step_times: Vec<StepTimeSource>,
    /// `[[analysis.claims]]`: the claims the report judges.
    pub claims: Vec<TargetClaimConfig>,
    /// Perfect scaling is a log-log slope of steps to result from this (-1.25) ...
    pub perfect_slope_from: f64,
    /// ... to this (-0.75); diminishing returns lie above it ...
    pub perfect_slope_to: f64,
    /// ... and below this (-0.25), where maximal data parallelism begins (see
    /// `batchlab_report::steps_to_target::scaling::bands`).
    pub plateau_slope_from: f64,
    /// Workloads that repeat one search with other points: the report checks how often each
    /// one's intervals hold the others' values.
    pub replicates: Vec<String>,
}

impl Default for TargetAnalysis {
    fn default() -> Self {
        let bands = RegimeBands::default();
        TargetAnalysis {
            step_times: vec![],
            claims: vec![],
            perfect_slope_from: bands.perfect_from,
            perfect_slope_to: bands.perfect_to,
            plateau_slope_from: bands.plateau_from,
            replicates: vec![],
        }
    }
}

impl TargetAnalysis {
    /// The regime bands these keys state.
    pub fn bands(&self) -> RegimeBands {
        RegimeBands {
            perfect_from: self.perfect_slope_from,
            perfect_to: self.perfect_slope_to,
            plateau_from: self.plateau_slope_from,
        }
    }
}

/// A step-time report to take a model's step times from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepTimeSource {
    /// The workload it times: a model label (every optimizer of it) or `model/optimizer`.
    pub workload: String,
    /// The step-time run's report directory (e.g. `reports/mlp-step-time-cpu/latest`).
    pub report: String,
}

impl StepTimeSource {
    /// Whether `workload` is one it names: its label, or its model's label.
    pub fn names(&self, workload: &super::Workload) -> bool {
        self.workload == workload.label() || self.workload == workload.model_label()
    }
}
