//! A run's life: create (or resume) its report directory, record where and how it ran in
//! `meta.json`, run the study, render the report, and point `latest` at it.
//!
//! A report directory is write-once: a new run never touches an earlier one, and `--resume`
//! continues only an unfinished run made with the same resolved config.

use std::{
    fs,
    path::{Path, PathBuf},
};

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::{
    backend::{self, BackendError},
    config::{ConfigError, Source},
    isolate::{StdoutEvents, WorkerExit},
    progress::Progress,
    registry::{load_study, Study},
    shard::{merge_shards, sharded_run_name, Shard},
    sysinfo,
};

/// burn's version, as pinned in the workspace's Cargo.toml (a test keeps the two equal).
pub const BURN_VERSION: &str = "0.21.0";

/// How a runner protects the run from a point that crashes the process (an out-of-memory kill).
#[derive(Debug, Clone)]
pub enum Isolation {
    /// Everything in this process; a panic is caught, an abort ends the run (tests, benchmarks).
    InProcess,
    /// Work runs in child processes started as `program args... <report dir>`, which call
    /// [`run_worker`]; a child that dies is replaced and the point it was on is recorded failed.
    ChildProcess {
        /// Usually the batchlab binary itself.
        program: PathBuf,
        /// Arguments before the report directory (e.g. a hidden `worker` subcommand).
        args: Vec<String>,
    },
}

/// How `batchlab run` was asked to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Continue the newest unfinished run of this experiment instead of starting a new one.
    pub resume: bool,
    /// Report root (overrides the config's `output.dir`).
    pub out: Option<PathBuf>,
    /// See [`Isolation`].
    pub isolation: Isolation,
    /// Run only this slice of the study's trials (see [`crate::shard`]).
    pub shard: Option<Shard>,
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The config is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The backend cannot run here.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// Reading or writing results failed.
    #[error(transparent)]
    Report(#[from] batchlab_report::ReportError),
    /// A file operation failed.
    #[error("{path}: {message}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// Anything else, said in full.
    #[error("{0}")]
    Other(String),
}

impl From<batchlab_method::FileError> for RunError {
    fn from(e: batchlab_method::FileError) -> Self {
        RunError::Report(e.into())
    }
}

impl RunError {
    /// An I/O error about `path`.
    pub fn io(path: &Path, error: impl std::fmt::Display) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}

/// `meta.json`: where, when and how a run was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The experiment's name.
    pub experiment: String,
    /// batchlab's version.
    pub batchlab_version: String,
    /// Commit of the working directory when the run started (`-dirty` if modified).
    pub git_commit: String,
    /// burn's version.
    pub burn_version: String,
    /// `flex` or `cuda`.
    pub backend: String,
    /// The CPU model (flex) or the GPU's name, memory and driver (cuda).
    pub device: String,
    /// The host's CPU model.
    pub cpu: String,
    /// Threads the backend computes with.
    pub threads: usize,
    /// Operating system and kernel.
    pub os: String,
    /// UTC start time (RFC 3339).
    pub started: String,
    /// UTC end time, once finished.
    pub ended: Option<String>,
    /// Times the run was resumed.
    pub resumed: Vec<String>,
    /// `running`, `complete` or `failed`.
    pub status: String,
    /// Why the run failed, if it did.
    pub error: Option<String>,
}

impl Meta {
    fn new(study: &dyn Study) -> Self {
        Self {
            experiment: study.header().name.clone(),
            batchlab_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: sysinfo::git_commit(),
            burn_version: BURN_VERSION.into(),
            backend: study.backend().name.clone(),
            device: backend::device_name(study.backend()),
            cpu: sysinfo::cpu_model(),
            threads: backend::threads(study.backend()),
            os: sysinfo::os_description(),
            started: sysinfo::rfc3339(sysinfo::unix_seconds()),
            ended: None,
            resumed: Vec::new(),
            status: "running".into(),
            error: None,
        }
    }

    /// Reads `dir/meta.json`.
    pub fn read(dir: &Path) -> Result<Self, RunError> {
        let path = dir.join("meta.json");
        let text = fs::read_to_string(&path).map_err(|e| RunError::io(&path, e))?;
        serde_json::from_str(&text)
            .map_err(|e| RunError::io(&path, format!("not a batchlab meta.json: {e}")))
    }

    fn write(&self, dir: &Path) -> Result<(), RunError> {
        let text = serde_json::to_string_pretty(self).expect("Meta serializes");
        write_atomically(&dir.join("meta.json"), &text)
    }
}

/// A finished run: its report directory and the headline findings.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The report directory.
    pub dir: PathBuf,
    /// A few lines of findings for the terminal.
    pub findings: Vec<String>,
}

/// Runs `study` into a new report directory (or resumes one) and renders its report.
pub fn run_study(
    study: &dyn Study,
    options: &RunOptions,
    progress: &dyn Progress,
) -> Result<Finished, RunError> {
    backend::ensure_available(study.backend())?;
    // Missing data stops the run here, before a report directory exists.
    study.check_inputs()?;
    let root = options
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(&study.output().dir));
    let experiment_dir = root.join(&study.header().name);
    if let Some(shard) = options.shard {
        return run_shard(study, shard, &experiment_dir, &options.isolation, progress);
    }
    let (dir, mut meta) = if options.resume {
        let dir = unfinished_run(&experiment_dir, study)?;
        let mut meta = Meta::read(&dir)?;
        meta.resumed.push(sysinfo::rfc3339(sysinfo::unix_seconds()));
        meta.status = "running".into();
        meta.error = None;
        progress.note(&format!("resuming {}", dir.display()));
        (dir, meta)
    } else {
        let dir = new_run_dir(&experiment_dir)?;
        write_atomically(&dir.join("config.toml"), &study.resolved_toml())?;
        (dir, Meta::new(study))
    };
    meta.write(&dir)?;

    let outcome = study
        .run(&dir, &options.isolation, progress)
        .and_then(|()| study.render(&dir));
    meta.ended = Some(sysinfo::rfc3339(sysinfo::unix_seconds()));
    match outcome {
        Ok(findings) => {
            meta.status = "complete".into();
            meta.write(&dir)?;
            point_latest_at(&experiment_dir, &dir)?;
            Ok(Finished { dir, findings })
        }
        Err(e) => {
            meta.status = "failed".into();
            meta.error = Some(e.to_string());
            meta.write(&dir)?;
            Err(RunError::Other(format!(
                "{e}\n(the run's results so far are in {}; continue it with --resume)",
                dir.display()
            )))
        }
    }
}

/// Runs one shard of `study` in its own directory under the config's shared run directory,
/// then merges every shard's results so far and renders the (possibly partial) report there.
/// Running a shard again continues it.
fn run_shard(
    study: &dyn Study,
    shard: Shard,
    experiment_dir: &Path,
    isolation: &Isolation,
    progress: &dyn Progress,
) -> Result<Finished, RunError> {
    if !study.shardable() {
        return Err(RunError::Other(format!(
            "kind {:?} does not split into shards: its points are timed against each other on one machine",
            study.header().kind
        )));
    }
    let resolved = study.resolved_toml();
    let top = experiment_dir.join(sharded_run_name(&resolved));
    let dir = shard.dir(&top);
    fs::create_dir_all(&dir).map_err(|e| RunError::io(&dir, e))?;
    write_atomically(&top.join("config.toml"), &resolved)?;
    write_atomically(&dir.join("config.toml"), &resolved)?;
    let description = serde_json::to_string(&shard).expect("a shard serializes");
    write_atomically(&dir.join("shard.json"), &description)?;
    let mut meta = match Meta::read(&dir) {
        Ok(mut meta) => {
            meta.resumed.push(sysinfo::rfc3339(sysinfo::unix_seconds()));
            progress.note(&format!("continuing {}", dir.display()));
            meta
        }
        Err(_) => Meta::new(study),
    };
    meta.status = "running".into();
    meta.error = None;
    meta.write(&dir)?;
    let outcome = study.run(&dir, isolation, progress);
    meta.ended = Some(sysinfo::rfc3339(sysinfo::unix_seconds()));
    meta.status = if outcome.is_ok() {
        "complete"
    } else {
        "failed"
    }
    .into();
    meta.error = outcome.as_ref().err().map(ToString::to_string);
    meta.write(&dir)?;
    outcome?;
    // The shared directory's meta.json tells the report which backend and device ran.
    meta.status = "sharded".into();
    meta.write(&top)?;
    let findings = render_report(&top)?;
    Ok(Finished { dir: top, findings })
}

/// The backend and device a run in `dir` used, from its meta.json; for a directory without
/// one, what `config` would use on this machine.
pub fn backend_and_device(dir: &Path, config: &crate::config::BackendConfig) -> (String, String) {
    match Meta::read(dir) {
        Ok(meta) => (meta.backend, meta.device),
        Err(_) => (config.name.clone(), backend::device_name(config)),
    }
}

/// The child-process entry point: continues the study whose report directory is `dir`.
pub fn run_worker(dir: &Path) -> Result<WorkerExit, RunError> {
    load_from_dir(dir)?.work(dir, &StdoutEvents)
}

/// Re-renders summary, figures and report.md of a finished (or partial) run from its raw results.
pub fn render_report(dir: &Path) -> Result<Vec<String>, RunError> {
    // A sharded run: first gather what every shard has finished.
    merge_shards(dir)?;
    load_from_dir(dir)?.render(dir)
}

fn load_from_dir(dir: &Path) -> Result<Box<dyn Study>, RunError> {
    let config = dir.join("config.toml");
    if !config.exists() {
        return Err(RunError::io(
            &config,
            "missing: not a batchlab report directory (expected config.toml, meta.json, results.csv)",
        ));
    }
    Ok(load_study(&Source::from_file(&config)?)?)
}

/// The newest run of the experiment that did not complete, if made with the same config.
fn unfinished_run(experiment_dir: &Path, study: &dyn Study) -> Result<PathBuf, RunError> {
    let mut runs: Vec<PathBuf> = fs::read_dir(experiment_dir)
        .map_err(|e| RunError::io(experiment_dir, format!("no runs to resume ({e})")))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("meta.json").is_file() && !p.is_symlink())
        .collect();
    runs.sort();
    let newest = runs
        .into_iter()
        .rev()
        .find(|dir| Meta::read(dir).is_ok_and(|m| m.status != "complete"))
        .ok_or_else(|| {
            RunError::Other(format!(
                "nothing to resume: every run under {} is complete (drop --resume to start a new one)",
                experiment_dir.display()
            ))
        })?;
    let config_path = newest.join("config.toml");
    let saved = fs::read_to_string(&config_path).map_err(|e| RunError::io(&config_path, e))?;
    if saved != study.resolved_toml() {
        return Err(RunError::Other(format!(
            "{} was made with a different config than the one given now; resume it with exactly its own config: batchlab run {} --resume",
            newest.display(),
            config_path.display()
        )));
    }
    Ok(newest)
}

/// `<experiment_dir>/<UTC timestamp>-<random suffix>`: sorts by time, never collides.
fn new_run_dir(experiment_dir: &Path) -> Result<PathBuf, RunError> {
    fs::create_dir_all(experiment_dir).map_err(|e| RunError::io(experiment_dir, e))?;
    let stamp = sysinfo::compact_timestamp(sysinfo::unix_seconds());
    loop {
        let suffix: u32 = rand::rng().random_range(0..0x100_0000);
        let dir = experiment_dir.join(format!("{stamp}-{suffix:06x}"));
        // create_dir (not _all) fails if it exists, so two runs can never share a directory.
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(RunError::io(&dir, e)),
        }
    }
}

/// Makes `<experiment_dir>/latest` a relative symlink to `dir`, replacing it atomically.
fn point_latest_at(experiment_dir: &Path, dir: &Path) -> Result<(), RunError> {
    let latest = experiment_dir.join("latest");
    let name = dir.file_name().expect("run dirs have a name");
    let temporary = experiment_dir.join(format!(".latest-{}", std::process::id()));
    let _ = fs::remove_file(&temporary);
    #[cfg(unix)]
    std::os::unix::fs::symlink(name, &temporary).map_err(|e| RunError::io(&temporary, e))?;
    #[cfg(not(unix))]
    fs::write(&temporary, name.to_string_lossy().as_bytes())
        .map_err(|e| RunError::io(&temporary, e))?;
    fs::rename(&temporary, &latest).map_err(|e| RunError::io(&latest, e))
}

/// Writes `text` to `path` through a synced temporary file and a rename, so readers never see half.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), RunError> {
    Ok(batchlab_method::files::write_atomic(path, text.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burn_version_matches_the_workspace_pin() {
        let manifest = include_str!("../../../Cargo.toml");
        assert!(
            manifest.contains(&format!("burn = {{ version = \"={BURN_VERSION}\"")),
            "update BURN_VERSION with the pin in Cargo.toml"
        );
    }

    #[test]
    fn run_dirs_sort_by_time_and_never_collide() {
        let root = tempfile::tempdir().unwrap();
        let a = new_run_dir(root.path()).unwrap();
        let b = new_run_dir(root.path()).unwrap();
        assert_ne!(a, b);
        point_latest_at(root.path(), &b).unwrap();
        point_latest_at(root.path(), &a).unwrap();
        assert_eq!(
            fs::canonicalize(root.path().join("latest")).unwrap(),
            fs::canonicalize(&a).unwrap()
        );
    }
}
