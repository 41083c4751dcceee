//! A shardable study at scale: submitted as a Slurm job array (`batchlab submit`), and watched
//! from its files (`batchlab status`), with or without Slurm.

use std::path::{Path, PathBuf};

use batchlab_datasets::acquire::Acquire;

use crate::{
    backend,
    context::RunContext,
    error::RunError,
    run_dir::write_atomically,
    session::load_from_dir,
    shard::{
        sharded_run_name,
        status::{status, ShardedStatus},
    },
    slurm::{find_sbatch, script, slurm_dir, submit, SlurmOptions, TaskPaths},
    study::Study,
    sysinfo,
};

/// How `batchlab submit` was asked to submit a study.
#[derive(Debug, Clone)]
pub struct SubmitRequest {
    /// What to ask of Slurm.
    pub slurm: SlurmOptions,
    /// Report root (overrides the config's `output.dir`).
    pub out: Option<PathBuf>,
    /// `--data-dir` for the tasks.
    pub data_dir: PathBuf,
    /// What to do with missing data before submitting (the tasks run `--offline`).
    pub acquire: Acquire,
    /// The batchlab binary the tasks run.
    pub program: PathBuf,
    /// Print the script; create and submit nothing.
    pub dry_run: bool,
    /// Return once every task has ended (`sbatch --wait`).
    pub wait: bool,
}

/// What `batchlab submit` did.
#[derive(Debug, Clone)]
pub enum Submitted {
    /// `--dry-run`: the script that would be submitted.
    DryRun {
        /// The sbatch script.
        script: String,
    },
    /// The job array is in Slurm's queue (or, with `wait`, has ended).
    Queued {
        /// Slurm's job id.
        job: String,
        /// The study's sharded run directory.
        dir: PathBuf,
        /// The script, kept in the run directory.
        script_path: PathBuf,
    },
}

/// Checks everything `run` would check, writes the sbatch script into the study's sharded run
/// directory and submits it. Nothing is created when a check fails or on a dry run.
pub fn submit_study(study: &dyn Study, request: &SubmitRequest) -> Result<Submitted, RunError> {
    request.slurm.check()?;
    let name = &study.header().name;
    if !study.shardable() {
        return Err(RunError::Other(format!(
            "kind {:?} does not split into shards (its points are timed against each other on one machine): run it with `batchlab run {name}` on one node",
            study.header().kind
        )));
    }
    backend::ensure_available(study.backend())?;
    // The tasks never download: what they read is fetched here, on the submitting machine
    // (a dry run only says what it would fetch).
    let acquire = match &request.acquire {
        Acquire::Fetch { .. } if request.dry_run => Acquire::Plan,
        acquire => acquire.clone(),
    };
    let context = RunContext {
        acquire,
        ..RunContext::in_process(&request.data_dir)
    };
    context.ensure_datasets(&study.datasets())?;
    let workdir = std::env::current_dir()
        .map_err(|e| RunError::Other(format!("cannot read the current directory: {e}")))?;
    let absolute = |p: &Path| workdir.join(p);
    let out = absolute(
        &request
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(&study.output().dir)),
    );
    let resolved = study.resolved_toml();
    let run_dir = out.join(name).join(sharded_run_name(&resolved));
    let paths = TaskPaths {
        program: request.program.clone(),
        workdir: workdir.clone(),
        data_dir: absolute(&request.data_dir),
        out,
        run_dir: run_dir.clone(),
    };
    let text = script(name, &paths, &request.slurm);
    if request.dry_run {
        return Ok(Submitted::DryRun { script: text });
    }
    let sbatch = find_sbatch(name, request.slurm.array)?;
    let scripts = slurm_dir(&run_dir);
    std::fs::create_dir_all(&scripts).map_err(|e| RunError::io(&scripts, e))?;
    write_atomically(&run_dir.join("config.toml"), &resolved)?;
    let stamp = sysinfo::compact_timestamp(sysinfo::unix_seconds());
    let script_path = scripts.join(format!("{stamp}-{}.sbatch", std::process::id()));
    write_atomically(&script_path, &text)?;
    let job = submit(&sbatch, &script_path, request.wait)?;
    Ok(Submitted::Queued {
        job,
        dir: run_dir,
        script_path,
    })
}

/// Where the sharded run in `dir` stands.
pub fn sharded_status(dir: &Path) -> Result<ShardedStatus, RunError> {
    let study = load_from_dir(dir)?;
    if !study.shardable() {
        return Err(RunError::io(
            dir,
            format!(
                "a {} study, which does not split into shards: its meta.json says how it stands",
                study.header().kind
            ),
        ));
    }
    status(dir, &study.unit_ids())
}
