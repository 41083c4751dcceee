//! The step-time sweeps under a report root, read for predictions (`predict`) and for the
//! training reports' check of them (`train`): each complete step-time run with its model,
//! optimizer label, machine (backend, device, threads) and step-time curve.

use std::path::{Path, PathBuf};

use batchlab_method::rows::{read_rows, step_time::StepSample};
use batchlab_models::{Architecture, ModelSpec};
use batchlab_report::predict::{cross_model::ModelFeatures, CurvePoint, StepCurve};
use batchlab_report::step_time::summarize;
use batchlab_report::train::{PredictionInputs, StepTimes};
use serde::Deserialize;

use crate::{
    backend,
    config::BackendConfig,
    error::RunError,
    machine_id::{Autotune, FastPaths},
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

/// Where a sweep ran: what a prediction must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// burn backend, e.g. `flex`.
    pub backend: String,
    /// Device name as meta.json records it.
    pub device: String,
    /// Threads the run used.
    pub threads: usize,
    /// flex's matrix kernels (meta.json `flex_kernels`): AVX-512 and AVX2 kernels time
    /// differently, so a sweep predicts only runs made with the same ones. Empty in runs
    /// made before it was recorded (all of them built without the AVX-512 kernels).
    pub kernels: String,
    /// batchlab's fast paths (meta.json `fast_paths`), by identity: they change the step time,
    /// so a sweep predicts only runs made with the same ones. None in runs made before they
    /// existed.
    pub fast_paths: FastPaths,
    /// CubeCL's autotune level (meta.json `autotune`): it decides the kernels on cuda and wgpu.
    /// None on the CPU backends and in runs made before it was recorded.
    pub autotune: Autotune,
    /// The memory allocator (meta.json `allocator`): the system's malloc page-faults large
    /// tensors in afresh, so a sweep predicts only runs made with the same one. Empty in runs
    /// made before it was recorded, which read as the system's malloc.
    pub allocator: String,
}

impl Machine {
    /// Where a run on `config` would run on this machine.
    pub fn here(config: &BackendConfig) -> Self {
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

    /// "flex on AMD EPYC, 2 threads and avx512 kernels": where it ran, in one phrase.
    pub fn words(&self) -> String {
        let plural = if self.threads == 1 { "" } else { "s" };
        format!(
            "{} on {}, {} thread{plural}{}",
            self.backend,
            self.device,
            self.threads,
            kernels_note(&self.kernels)
        )
    }

    /// "; fast paths: ...; allocator: mimalloc": what else a sweep must share with a run to
    /// predict it, in one phrase (parts not recorded left out).
    pub fn build_words(&self) -> String {
        let mut words = String::new();
        if !self.fast_paths.is_empty() {
            words += &format!("; fast paths: {}", self.fast_paths.words());
        }
        if !self.autotune.is_empty() {
            words += &format!("; autotune: {}", self.autotune.words());
        }
        words + &format!("; allocator: {}", self.allocator)
    }

    /// What differs from `other`, in words ("threads", "fast paths", ...): empty exactly when
    /// the two are equal.
    pub fn differences(&self, other: &Machine) -> Vec<&'static str> {
        [
            (self.backend != other.backend, "backend"),
            (self.device != other.device, "device"),
            (self.threads != other.threads, "threads"),
            (self.kernels != other.kernels, "matrix kernels"),
            (self.fast_paths != other.fast_paths, "fast paths"),
            (self.autotune != other.autotune, "autotune"),
            (self.allocator != other.allocator, "allocator"),
        ]
        .into_iter()
        .filter_map(|(differs, what)| differs.then_some(what))
        .collect()
    }

    /// Where the run of `meta` ran.
    pub fn of(meta: Meta) -> Self {
        Machine {
            backend: meta.backend,
            device: meta.device,
            threads: meta.threads,
            kernels: meta.flex_kernels,
            fast_paths: FastPaths::read(&meta.fast_paths),
            autotune: Autotune::read(&meta.autotune),
            allocator: if meta.allocator.is_empty() {
                crate::sysinfo::SYSTEM_ALLOCATOR.into()
            } else {
                meta.allocator
            },
        }
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
        machine: Machine::of(meta),
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

/// ` and <kernels> kernels` where they are recorded.
pub fn kernels_note(kernels: &str) -> String {
    match kernels.split(' ').next() {
        Some(k) if !k.is_empty() => format!(" and {k} kernels"),
        _ => String::new(),
    }
}

/// The run `dir`'s machine, from its meta.json.
pub fn machine_of(dir: &Path) -> Option<Machine> {
    Meta::read(dir).ok().map(Machine::of)
}

/// The newest complete run of experiment `name` under `root` (`root/<name>/<run>/`) made on
/// `machine`, with its results.csv; only meta.json files are read.
pub fn newest_run_on(root: &Path, name: &str, machine: &Machine) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(root.join(name))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|dir| {
            dir.is_dir()
                && !dir.is_symlink()
                && batchlab_method::rows::stored::exists(&dir.join("results.csv"))
        })
        .filter(|dir| {
            Meta::read(dir)
                .is_ok_and(|m| m.status == RunStatus::Complete && Machine::of(m) == *machine)
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
    use crate::machine_id::{Autotune, FastPaths};

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
