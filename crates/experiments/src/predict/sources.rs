//! Where a prediction's sweeps could come from when this machine has none: the step-time
//! experiments that would time the model (with how long their committed runs took, and where),
//! and the nearest machine whose sweeps could stand in (`batchlab predict --any-machine`).

use std::path::Path;

use batchlab_models::ModelSpec;
use serde::Deserialize;

use crate::config::{ExperimentHeader, Source};
use crate::run_dir::{Meta, RunStatus};
use crate::sweeps::{sweeps, Machine};
use crate::sysinfo::parse_rfc3339;

/// A step-time experiment that would give a sweep of the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// Its name (`experiments/<name>.toml`).
    pub name: String,
    /// Whether its `[model]` is exactly the model asked for (else only the architecture is).
    pub same_model: bool,
    /// Its complete runs under the report root: where each ran and its wall time in seconds.
    pub runs: Vec<(Machine, Option<u64>)>,
}

/// The tables of an experiment TOML a suggestion reads (the rest is passed over).
#[derive(Deserialize)]
struct Head {
    experiment: ExperimentHeader,
    model: Option<ModelSpec>,
}

/// The step-time experiments under `experiments` whose `[model]` is `model` (first) or has its
/// architecture, with their complete runs under `root`.
pub fn suggestions(experiments: &Path, root: &Path, model: &ModelSpec) -> Vec<Suggestion> {
    let Ok(entries) = std::fs::read_dir(experiments) else {
        return vec![];
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    let mut out: Vec<Suggestion> = paths
        .iter()
        .filter_map(|path| {
            let head: Head = Source::from_file(path).ok()?.parse().ok()?;
            let spec = head.model?;
            let kind_fits = head.experiment.kind == crate::kind::Kind::StepTime;
            (kind_fits && spec.architecture == model.architecture).then(|| Suggestion {
                runs: runs_of(&root.join(&head.experiment.name)),
                name: head.experiment.name,
                same_model: spec == *model,
            })
        })
        .collect();
    out.sort_by_key(|s| !s.same_model);
    out
}

/// Every complete run under `dir`: where it ran and how long it took.
fn runs_of(dir: &Path) -> Vec<(Machine, Option<u64>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut runs: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.is_symlink())
        .collect();
    runs.sort();
    runs.iter()
        .filter_map(|run| Meta::read(run).ok())
        .filter(|meta| meta.status == RunStatus::Complete)
        .map(|meta| {
            let took = meta
                .ended
                .as_deref()
                .and_then(parse_rfc3339)
                .zip(parse_rfc3339(&meta.started))
                .map(|(end, start)| end.saturating_sub(start));
            (meta.machine(), took)
        })
        .collect()
}

/// The machine whose sweeps under `root` best stand in for `asked`'s: one with a sweep of the
/// same model and optimizer first, then the same backend, the same threads, the same device
/// (another build's kernels), then the most sweeps. `None` when no other machine has a sweep.
pub fn nearest_machine(
    root: &Path,
    model: &ModelSpec,
    optimizer: &str,
    asked: &Machine,
) -> Option<Machine> {
    let all = sweeps(root);
    let mut machines: Vec<Machine> = all.iter().map(|s| s.machine.clone()).collect();
    machines.sort_by(|a, b| {
        (&a.backend, &a.device, a.threads).cmp(&(&b.backend, &b.device, b.threads))
    });
    machines.dedup();
    machines.into_iter().filter(|m| m != asked).max_by_key(|m| {
        let on: Vec<_> = all.iter().filter(|s| s.machine == *m).collect();
        (
            on.iter()
                .any(|s| s.model == *model && s.optimizer == optimizer),
            m.backend == asked.backend,
            m.threads == asked.threads,
            m.device == asked.device,
            on.len(),
        )
    })
}
