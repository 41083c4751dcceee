//! `batchlab predict`: the training time of a configuration from the step-time sweeps under a
//! report root (`batchlab_report::predict` does the arithmetic; this module finds the sweeps and
//! the models' features).
//!
//! A sweep counts for a prediction when its run is complete and ran on the same backend, device
//! and number of threads as asked. The same model's sweep (same `[model]` table and optimizer
//! label) is used first; without one, the cross-model fit over every counting sweep, with its
//! leave-one-model-out error as the interval.

mod sources;

pub use sources::{nearest_machine, suggestions, Suggestion};

use std::path::{Path, PathBuf};

use batchlab_method::rows::{prediction::PredictionRow, read_rows};
use batchlab_models::ModelSpec;
use batchlab_report::predict::{
    cross_model::{fit, leave_one_out, LeftOut, Sample},
    predict,
};
pub use batchlab_report::predict::{Origin, Prediction, TrainingPlan};

use crate::error::RunError;
use crate::sweeps::{features, model_name, sweeps, Machine, Sweep};

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
    if let Some(same) = same_model(&on_machine, model, optimizer) {
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
            "no step-time sweep of {} with {optimizer} on {} under {}, and {} sweep(s) of other models there: a cross-model prediction needs at least 3",
            model_name(model),
            machine.words(),
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

/// The newest sweep of `model` with `optimizer` on `machine` under `root`, if any.
pub fn same_model_sweep(
    root: &Path,
    model: &ModelSpec,
    optimizer: &str,
    machine: &Machine,
) -> Option<Sweep> {
    let on_machine: Vec<Sweep> = sweeps(root)
        .into_iter()
        .filter(|s| s.machine == *machine)
        .collect();
    same_model(&on_machine, model, optimizer).cloned()
}

/// The newest of `sweeps` of the same model and optimizer (run directories sort by time).
fn same_model<'a>(sweeps: &'a [Sweep], model: &ModelSpec, optimizer: &str) -> Option<&'a Sweep> {
    sweeps
        .iter()
        .rev()
        .find(|s| s.model == *model && s.optimizer == optimizer)
}

/// Every past check of the prediction under `root`: each run's `prediction.csv` rows (written
/// by its report), with the run directory, in directory order. `latest` links are passed
/// over so that no run counts twice.
pub fn history(root: &Path) -> Vec<(PathBuf, PredictionRow)> {
    let Ok(experiments) = std::fs::read_dir(root) else {
        return vec![];
    };
    let mut runs: Vec<PathBuf> = experiments
        .flatten()
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .flat_map(|runs| runs.flatten().map(|r| r.path()))
        .filter(|p| p.is_dir() && !p.is_symlink() && p.join("prediction.csv").is_file())
        .collect();
    runs.sort();
    runs.into_iter()
        .flat_map(|run| {
            let rows: Vec<PredictionRow> =
                read_rows(&run.join("prediction.csv")).unwrap_or_default();
            rows.into_iter().map(move |r| (run.clone(), r))
        })
        .collect()
}

/// The past checks in numbers: cells, runs, and the median and largest absolute error.
pub fn history_summary(past: &[(PathBuf, PredictionRow)]) -> (usize, usize, f64, f64) {
    let errors: Vec<f64> = past
        .iter()
        .map(|(_, r)| r.error.abs())
        .filter(|e| e.is_finite())
        .collect();
    let mut runs: Vec<&PathBuf> = past.iter().map(|(run, _)| run).collect();
    runs.dedup();
    (
        errors.len(),
        runs.len(),
        batchlab_method::stats::median(&errors),
        errors.iter().copied().fold(0.0, f64::max),
    )
}
