//! `batchlab predict`: the training time of a configuration from the step-time sweeps under a
//! report root (`batchlab_report::predict` does the arithmetic; this module finds the sweeps and
//! the models' features).
//!
//! A sweep counts for a prediction when its run is complete and ran on the same backend, device
//! and number of threads as asked. The same model's sweep (same `[model]` table and optimizer
//! label) is used first; without one, the cross-model fit over every counting sweep, with its
//! leave-one-model-out error as the interval.

use std::path::{Path, PathBuf};

use batchlab_method::rows::{read_rows, step_time::StepSample};
use batchlab_models::ModelSpec;
use batchlab_report::predict::{
    cross_model::{fit, leave_one_out, LeftOut, ModelFeatures, Sample},
    predict, CurvePoint, StepCurve,
};
pub use batchlab_report::predict::{Origin, Prediction, TrainingPlan};
use batchlab_report::step_time::summarize;
use serde::Deserialize;

use crate::{error::RunError, optim::label, optim::OptimizerConfig, run_dir::Meta};

/// The tables of a step-time run's config.toml a prediction needs (the rest is ignored).
#[derive(Debug, Deserialize)]
struct SweepConfig {
    experiment: Kind,
    model: ModelSpec,
    optimizer: OptimizerConfig,
}

#[derive(Debug, Deserialize)]
struct Kind {
    kind: String,
}

/// Where a sweep ran: what a prediction must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// burn backend, e.g. `flex`.
    pub backend: String,
    /// Device name as meta.json records it.
    pub device: String,
    /// Threads the run used.
    pub threads: usize,
}

/// A complete step-time sweep found under a report root.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// Its run directory.
    pub dir: PathBuf,
    /// The model it timed.
    pub model: ModelSpec,
    /// The optimizer label.
    pub optimizer: String,
    /// Where it ran.
    pub machine: Machine,
    /// Its step times.
    pub curve: StepCurve,
}

/// Every complete step-time run directory under `root` (`root/<experiment>/<run>/`), read.
/// Directories that are not step-time runs, or cannot be read, are passed over.
pub fn sweeps(root: &Path) -> Vec<Sweep> {
    let Ok(experiments) = std::fs::read_dir(root) else {
        return vec![];
    };
    let mut out: Vec<Sweep> = experiments
        .flatten()
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .flat_map(|runs| runs.flatten().map(|r| r.path()))
        .filter(|p| p.is_dir() && !p.is_symlink())
        .filter_map(|dir| read_sweep(&dir))
        .collect();
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out
}

fn read_sweep(dir: &Path) -> Option<Sweep> {
    let text = std::fs::read_to_string(dir.join("config.toml")).ok()?;
    let config: SweepConfig = toml::from_str(&text).ok()?;
    if config.experiment.kind != "step-time" {
        return None;
    }
    let meta = Meta::read(dir).ok()?;
    if meta.status != "complete" {
        return None;
    }
    let samples: Vec<StepSample> = read_rows(&dir.join("results.csv")).ok()?;
    let points = summarize(&samples, 1000, 0)
        .into_iter()
        .filter(|p| p.is_ok())
        .map(|p| CurvePoint {
            batch_size: p.batch_size,
            median: p.median_ms / 1e3,
            low: p.ci_low_ms / 1e3,
            high: p.ci_high_ms / 1e3,
        })
        .collect();
    Some(Sweep {
        dir: dir.to_path_buf(),
        optimizer: label(&config.optimizer),
        model: config.model,
        machine: Machine {
            backend: meta.backend,
            device: meta.device,
            threads: meta.threads,
        },
        curve: StepCurve::new(dir.display().to_string(), points)?,
    })
}

/// A model's features for the cross-model fit.
pub fn features(model: &ModelSpec) -> Result<ModelFeatures, RunError> {
    let err = |e: batchlab_models::ModelError| RunError::Other(e.to_string());
    Ok(ModelFeatures {
        flops: model.forward_flops().map_err(err)? as f64,
        activations: model.activation_elements().map_err(err)? as f64,
        params: model.trainable_params().map_err(err)? as f64,
    })
}

/// `<architecture> CxHxW`, the name of a model in the prediction's output.
pub fn model_name(model: &ModelSpec) -> String {
    let [c, h, w] = model.input;
    format!("{} {c}x{h}x{w}", model.architecture)
}

/// Where a prediction came from.
#[derive(Debug, Clone)]
pub enum Basis {
    /// The same model's sweep.
    SameModel(PathBuf),
    /// The cross-model fit over these sweeps, with each model's leave-one-out error.
    CrossModel {
        /// The sweeps fitted.
        fitted: Vec<PathBuf>,
        /// Each fitted model predicted by the others.
        left_out: Vec<LeftOut>,
        /// The median of the left-out errors (the prediction's interval).
        error: f64,
    },
}

/// A prediction and where it came from.
#[derive(Debug, Clone)]
pub struct Predicted {
    /// The times.
    pub prediction: Prediction,
    /// Its source.
    pub basis: Basis,
}

/// Predicts `plan` for `model` trained with `optimizer` on `machine` from the sweeps under
/// `root`. Errors say what is missing (no sweep of the device at all, or too few for a
/// cross-model fit).
pub fn predict_training(
    root: &Path,
    model: &ModelSpec,
    optimizer: &str,
    machine: &Machine,
    plan: &TrainingPlan,
) -> Result<Predicted, RunError> {
    let on_machine: Vec<Sweep> = sweeps(root)
        .into_iter()
        .filter(|s| s.machine == *machine)
        .collect();
    // The newest sweep of the same model and optimizer (run directories sort by time).
    if let Some(same) = on_machine
        .iter()
        .rev()
        .find(|s| s.model == *model && s.optimizer == optimizer)
    {
        let prediction = predict(plan, |b| same.curve.at(b))
            .ok_or_else(|| RunError::Other("batch size 0 has no step time".into()))?;
        return Ok(Predicted {
            prediction,
            basis: Basis::SameModel(same.dir.clone()),
        });
    }
    let samples: Vec<Sample> = on_machine
        .iter()
        .map(|s| {
            Ok(Sample {
                label: format!("{} ({})", model_name(&s.model), s.optimizer),
                features: features(&s.model)?,
                curve: s.curve.clone(),
            })
        })
        .collect::<Result<_, RunError>>()?;
    let left_out = leave_one_out(&samples);
    if left_out.is_empty() {
        return Err(RunError::Other(format!(
            "no step-time sweep of {} with {optimizer} on {} / {} with {} threads under {}, and {} sweep(s) of other models there: a cross-model prediction needs at least 3 (run a step-time study of this model, e.g. `just run experiment=NAME` with its [model] table)",
            model_name(model),
            machine.backend,
            machine.device,
            machine.threads,
            root.display(),
            samples.len()
        )));
    }
    let all: Vec<&Sample> = samples.iter().collect();
    let costs = fit(&all).ok_or_else(|| RunError::Other("cross-model fit failed".into()))?;
    let errors: Vec<f64> = left_out.iter().map(|l| l.median_abs_error).collect();
    let error = batchlab_method::stats::median(&errors);
    let f = features(model)?;
    let prediction = predict(plan, |b| Some(costs.estimate(&f, b, error)))
        .ok_or_else(|| RunError::Other("batch size 0 has no step time".into()))?;
    Ok(Predicted {
        prediction,
        basis: Basis::CrossModel {
            fitted: on_machine.iter().map(|s| s.dir.clone()).collect(),
            left_out,
            error,
        },
    })
}
