//! The step-time sweeps under a report root, read for predictions (`predict`) and for the
//! training reports' check of them (`train`): each complete step-time run with its model,
//! optimizer label, machine (backend, device, threads) and step-time curve.

use std::path::{Path, PathBuf};

pub use batchlab_method::machine::Machine;
use batchlab_method::machine::{Autotune, FastPaths};
use batchlab_method::rows::{read_rows, step_time::StepSample};
use batchlab_models::{Architecture, ModelSpec};
use batchlab_report::predict::{cross_model::ModelFeatures, CurvePoint, StepCurve};
use batchlab_report::step_time::summarize;
use batchlab_report::train::{PredictionInputs, StepTimes};
use serde::Deserialize;

use crate::{
    backend,
    claim_registry::CAMPAIGN_BACKENDS,
    config::BackendConfig,
    error::RunError,
    optim::label,
    optim::OptimizerConfig,
    run_dir::{Meta, RunStatus},
};

/// The tables of a step-time run's config.toml a prediction needs (the rest is ignored).
#[derive(Debug, Deserialize)]
struct SweepConfig {
    experiment: KindOnly,
    model: ModelSpec,
    optimizer: OptimizerConfig,
}

#[derive(Debug, Deserialize)]
struct KindOnly {
    kind: crate::kind::Kind,
}

/// Where a run on `config` would run on this machine.
pub fn machine_here(config: &BackendConfig) -> Machine {
    Machine {
        backend: config.name.name().to_string(),
        device: backend::device_name(config),
        threads: backend::threads(config),
        kernels: backend::kernels(config),
        fast_paths: FastPaths::read(&backend::fast_paths(config)),
        autotune: Autotune::read(&backend::autotune(config)),
        allocator: crate::sysinfo::allocator().into(),
    }
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
        .filter_map(|dir| read_sweep(&dir).ok())
        .collect();
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out
}

/// The complete step-time run in `dir`, read; why not, where it cannot be.
pub fn read_sweep(dir: &Path) -> Result<Sweep, String> {
    let path = dir.join("config.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let config: SweepConfig =
        toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.message()))?;
    if config.experiment.kind != crate::kind::Kind::StepTime {
        return Err(format!(
            "{}: expected a step-time run, found kind {}",
            dir.display(),
            config.experiment.kind
        ));
    }
    let meta = Meta::read(dir).map_err(|e| e.to_string())?;
    if meta.status != RunStatus::Complete {
        return Err(format!(
            "{}: expected a complete run, meta.json says {:?}",
            dir.display(),
            meta.status.name()
        ));
    }
    let samples: Vec<StepSample> =
        read_rows(&dir.join("results.csv")).map_err(|e| e.to_string())?;
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
    let curve = StepCurve::new(dir.display().to_string(), points)
        .ok_or_else(|| format!("{}: no batch size with a step time", dir.display()))?;
    Ok(Sweep {
        dir: dir.to_path_buf(),
        optimizer: label(&config.optimizer),
        model: config.model,
        machine: meta.machine(),
        curve,
    })
}

/// A model's features for the cross-model fit.
pub fn features(model: &ModelSpec) -> Result<ModelFeatures, RunError> {
    let err = |e: batchlab_models::ModelError| RunError::Other(e.to_string());
    Ok(ModelFeatures {
        flops: model.forward_flops().map_err(err)? as f64,
        activations: model.activation_elements().map_err(err)? as f64,
        params: model.trainable_params().map_err(err)? as f64,
        grouped_flops: model.grouped_flops().map_err(err)? as f64,
        layers: model.layer_count().map_err(err)? as f64,
    })
}

/// `<architecture> CxHxW`, with the MLP's hidden widths and any width multiplier: the name of
/// a model in the prediction's output, telling apart the models a sweep may stand for.
pub fn model_name(model: &ModelSpec) -> String {
    let [c, h, w] = model.input;
    let mut name = format!("{} {c}x{h}x{w}", model.architecture);
    if model.architecture == Architecture::Mlp && !model.hidden.is_empty() {
        let widths: Vec<String> = model.hidden.iter().map(usize::to_string).collect();
        name += &format!(" hidden {}", widths.join("-"));
    }
    if model.width != 1.0 {
        name += &format!(" width {}", model.width);
    }
    name
}

/// The run `dir`'s machine, from its meta.json.
pub fn machine_of(dir: &Path) -> Option<Machine> {
    Meta::read(dir).ok().map(|m| m.machine())
}

/// The newest complete run of experiment `name` under `root` (`root/<name>/<run>/`) made on
/// `machine`, with its results.csv; only meta.json files are read.
pub fn newest_run_on(root: &Path, name: &str, machine: &Machine) -> Option<PathBuf> {
    newest_run_with(root, name, machine, "results.csv")
}

/// The newest complete run of experiment `name` in the report root that holds `dir`
/// (`<root>/<experiment>/<run>`) made on `dir`'s machine (backend, device, threads, kernels,
/// allocator), with its raw rows in `raw`: what a claim comparing this run with another
/// experiment reads, never that experiment's `latest`, since a run of another machine says
/// nothing about this one (how much a sweep fluctuates, a model's memory per example).
pub fn newest_run_beside(dir: &Path, name: &str, raw: &str) -> Option<PathBuf> {
    let root = dir.parent()?.parent()?;
    newest_run_with(root, name, &machine_of(dir)?, raw)
}

/// [`newest_run_beside`] for a study named by its CPU config (`vgg16-step-time-cpu`, as the
/// registry's `than` names it), under every name that study's sweep takes: `name` itself, its
/// GPU config (`name` without `-cpu`) and that config's GPU campaign runs
/// (`<config>-<backend>`, scripts/gpu-campaign.sh). Only `dir`'s machine counts, so on a CPU
/// this is `name`'s run and on a GPU the same card's and backend's. Returns the name the run
/// was found under with it.
pub fn newest_study_run_beside(dir: &Path, name: &str, raw: &str) -> Option<(String, PathBuf)> {
    let config = name.strip_suffix("-cpu").unwrap_or(name);
    let mut names = vec![name.to_string(), config.to_string()];
    names.extend(CAMPAIGN_BACKENDS.map(|b| format!("{config}-{}", b.name())));
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| newest_run_beside(dir, &n, raw).map(|run| (n, run)))
        .max_by(|(_, a), (_, b)| a.file_name().cmp(&b.file_name()))
}

/// [`newest_run_on`] for a kind whose raw rows are in `raw` (a finder's probes.csv).
fn newest_run_with(root: &Path, name: &str, machine: &Machine, raw: &str) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(root.join(name))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|dir| {
            dir.is_dir()
                && !dir.is_symlink()
                && batchlab_method::rows::stored::exists(&dir.join(raw))
        })
        .filter(|dir| {
            Meta::read(dir)
                .is_ok_and(|m| m.status == RunStatus::Complete && m.machine() == *machine)
        })
        .collect();
    runs.sort();
    runs.pop()
}

/// What a training run in `dir` (under `<root>/<experiment>/`) is checked against: for each
/// series (a name, its model and its optimizer; optimizers compared without the learning rate,
/// which a step's cost does not depend on), the newest complete sweep of that model with that
/// optimizer on the run's machine. Also says where it looked, and which sweeps of the series
/// left unchecked exist only on another machine or build, with what differs.
pub fn prediction_inputs(
    dir: &Path,
    series: &[(String, &ModelSpec, &OptimizerConfig)],
    train_examples: u64,
    drop_last: bool,
) -> PredictionInputs {
    let mut inputs = PredictionInputs {
        train_examples,
        drop_last,
        ..PredictionInputs::default()
    };
    let root = dir.parent().and_then(Path::parent).unwrap_or(dir);
    let Some(machine) = machine_of(dir) else {
        inputs.searched = format!("{} has no readable meta.json", dir.display());
        return inputs;
    };
    let mut models: Vec<String> = vec![];
    for name in series.iter().map(|(_, m, _)| model_name(m)) {
        if !models.contains(&name) {
            models.push(name);
        }
    }
    inputs.searched = format!(
        "looked under {} for {} on {}{}",
        root.display(),
        models.join(", "),
        machine.words(),
        machine.build_words()
    );
    let found = sweeps(root);
    for (name, model, optimizer) in series {
        let bare = label(&OptimizerConfig {
            learning_rate: None,
            ..(*optimizer).clone()
        });
        let same = |s: &&Sweep| s.model == **model && s.optimizer == bare;
        let Some(sweep) = found
            .iter()
            .rev()
            .filter(same)
            .find(|s| s.machine == machine)
        else {
            // Say why a sweep of it that exists does not count: the newest one, and what differs.
            if let Some(other) = found.iter().rev().find(same) {
                let why = format!(
                    "{} ({} with {}; other {})",
                    other.dir.display(),
                    model_name(model),
                    bare,
                    other.machine.differences(&machine).join(", ")
                );
                if !inputs.elsewhere.contains(&why) {
                    inputs.elsewhere.push(why);
                }
            }
            continue;
        };
        match inputs
            .step_times
            .iter_mut()
            .find(|t| t.curve == sweep.curve)
        {
            Some(t) => t.optimizers.push(name.clone()),
            None => inputs.step_times.push(StepTimes {
                optimizers: vec![name.clone()],
                curve: sweep.curve.clone(),
            }),
        }
    }
    inputs
}

#[cfg(test)]
mod tests {
    use super::Machine;
    use batchlab_method::machine::{Autotune, FastPaths};

    fn machine() -> Machine {
        Machine {
            backend: "flex".into(),
            device: "AMD EPYC".into(),
            threads: 1,
            kernels: "avx512".into(),
            fast_paths: FastPaths::read("in-place optimizers (SGD, Adam, AdamW)"),
            autotune: Autotune::default(),
            allocator: "mimalloc".into(),
        }
    }

    /// Every field a sweep must share with a run is named when it differs, and only then.
    #[test]
    fn differences_name_what_keeps_a_sweep_from_predicting_a_run() {
        let here = machine();
        assert!(here.differences(&machine()).is_empty());
        let other = Machine {
            threads: 2,
            fast_paths: FastPaths::read(
                "in-place optimizers (SGD, Adam, AdamW); 2x2 max-pooling with its own backward",
            ),
            ..machine()
        };
        assert_eq!(here.differences(&other), ["threads", "fast paths"]);
        assert_ne!(here, other);
        let every = Machine {
            backend: "tch".into(),
            device: "Xeon".into(),
            threads: 2,
            kernels: "avx2".into(),
            fast_paths: FastPaths::default(),
            autotune: Autotune::read("balanced (cubecl's default)"),
            allocator: "system malloc".into(),
        };
        assert_eq!(here.differences(&every).len(), 7);
    }
}
