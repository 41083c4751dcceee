//! A sharded study as a Slurm job array (`batchlab submit`): the sbatch script, kept in the
//! study's sharded run directory beside its results, and its submission.
//!
//! Each array task runs one shard (`batchlab run CONFIG --shard $SLURM_ARRAY_TASK_ID/N`) into
//! the directory every shard of the config shares (see [`crate::shard`]); the shard that
//! finishes last merges and renders the report. A task cancelled mid-trial loses that trial
//! only (its claim goes stale and is taken over, see `shard::claims`), and submitting the same
//! study again continues it.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::{error::RunError, sysinfo};

/// Array tasks at most (Slurm's default `MaxArraySize` is 1001).
pub const MAX_ARRAY: usize = 1000;

/// What `batchlab submit` asks of Slurm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmOptions {
    /// Array tasks, one shard each.
    pub array: usize,
    /// `--partition`, if any.
    pub partition: Option<String>,
    /// `--time` (a task's time limit), if any.
    pub time: Option<String>,
    /// `--cpus-per-task`: also each shard's threads (`backend.threads`).
    pub cpus_per_task: usize,
    /// `--mem` (per task), if any.
    pub mem: Option<String>,
}

impl SlurmOptions {
    /// Checks the values before anything is created: counts in range, and Slurm values that
    /// cannot break the script (letters, digits and `:_.,-+` only).
    pub fn check(&self) -> Result<(), RunError> {
        if !(1..=MAX_ARRAY).contains(&self.array) {
            return Err(RunError::Other(format!(
                "--array {}: expected a number of array tasks from 1 to {MAX_ARRAY}",
                self.array
            )));
        }
        if !(1..=1024).contains(&self.cpus_per_task) {
            return Err(RunError::Other(format!(
                "--cpus-per-task {}: expected 1 to 1024",
                self.cpus_per_task
            )));
        }
        for (flag, value) in [
            ("--partition", &self.partition),
            ("--time", &self.time),
            ("--mem", &self.mem),
        ] {
            let Some(value) = value else { continue };
            let plain = |c: char| c.is_ascii_alphanumeric() || ":_.,-+".contains(c);
            if value.is_empty() || !value.chars().all(plain) {
                return Err(RunError::Other(format!(
                    "{flag} {value:?}: expected a Slurm value such as {}",
                    match flag {
                        "--time" => "2:00:00 or 1-12:00:00",
                        "--mem" => "8G",
                        _ => "gpu or debug",
                    }
                )));
            }
        }
        Ok(())
    }
}

/// Where the tasks find everything, as absolute paths.
#[derive(Debug, Clone)]
pub struct TaskPaths {
    /// The batchlab binary the tasks run.
    pub program: PathBuf,
    /// The directory the tasks start in (the repository, where `experiments/` is).
    pub workdir: PathBuf,
    /// `--data-dir`.
    pub data_dir: PathBuf,
    /// `--out`: the report root.
    pub out: PathBuf,
    /// The study's sharded run directory (under `out`), where the script and logs go.
    pub run_dir: PathBuf,
}

/// `<run>/slurm/`: the scripts submitted and the tasks' logs.
pub fn slurm_dir(run_dir: &Path) -> PathBuf {
    run_dir.join("slurm")
}

/// The sbatch script of `experiment` (its name) as an array of `options.array` shards.
pub fn script(experiment: &str, paths: &TaskPaths, options: &SlurmOptions) -> String {
    let q = |p: &Path| shell_quote(&p.display().to_string());
    let logs = slurm_dir(&paths.run_dir).join("%A_%a.out");
    let mut lines = vec![
        "#!/bin/bash".to_string(),
        format!("#SBATCH --job-name=batchlab-{experiment}"),
        format!("#SBATCH --array=0-{}", options.array - 1),
        format!("#SBATCH --cpus-per-task={}", options.cpus_per_task),
        format!("#SBATCH --chdir={}", paths.workdir.display()),
        format!("#SBATCH --output={}", logs.display()),
    ];
    for (flag, value) in [
        ("partition", &options.partition),
        ("time", &options.time),
        ("mem", &options.mem),
    ] {
        if let Some(value) = value {
            lines.push(format!("#SBATCH --{flag}={value}"));
        }
    }
    lines.extend([
        String::new(),
        format!("# Written by `batchlab submit` ({}).", sysinfo::rfc3339(sysinfo::unix_seconds())),
        "# One shard per array task. The shard count is written out rather than read from".into(),
        "# SLURM_ARRAY_TASK_COUNT, so `sbatch --array=3 THIS_FILE` reruns one task alone. Every".into(),
        "# shard writes into the run directory below; the last to finish merges and renders the".into(),
        "# report. Submitting this file again continues the study: finished trials are kept.".into(),
        "# Tasks never download (--offline): `batchlab submit` fetched the data beforehand.".into(),
        "set -euo pipefail".into(),
        format!(
            "exec {} --data-dir {} run {} --out {} \\",
            q(&paths.program),
            q(&paths.data_dir),
            q(&paths.run_dir.join("config.toml")),
            q(&paths.out)
        ),
        format!(
            "    --shard \"$SLURM_ARRAY_TASK_ID/{}\" --set \"backend.threads=${{SLURM_CPUS_PER_TASK:-{}}}\" --offline",
            options.array, options.cpus_per_task
        ),
    ]);
    lines.join("\n") + "\n"
}

/// `sbatch` on the PATH, or an error that says how to run the shards without Slurm.
pub fn find_sbatch(experiment: &str, array: usize) -> Result<PathBuf, RunError> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("sbatch"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            RunError::Other(format!(
                "sbatch not found on the PATH: Slurm is not installed here (or not loaded: try `module load slurm`). \
                 Without Slurm, run the shards as processes on this machine: `just run-parallel {experiment} {array}`, \
                 or start `batchlab run {experiment} --shard i/{array}` for each i yourself"
            ))
        })
}

/// Submits `script_path` with `sbatch` and returns the job id. With `wait`, returns once
/// every task has ended (`sbatch --wait`), and an error if any failed.
pub fn submit(sbatch: &Path, script_path: &Path, wait: bool) -> Result<String, RunError> {
    let mut command = Command::new(sbatch);
    command.arg("--parsable");
    if wait {
        command.arg("--wait");
    }
    let output = command
        .arg(script_path)
        .output()
        .map_err(|e| RunError::Other(format!("cannot start {}: {e}", sbatch.display())))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    // `--parsable` prints "id" or "id;cluster" first.
    let job = stdout
        .lines()
        .next()
        .and_then(|l| l.split(';').next())
        .map(str::trim)
        .filter(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()));
    match (job, output.status.success()) {
        (Some(job), true) => Ok(job.to_string()),
        (Some(job), false) if wait => Err(RunError::Other(format!(
            "job {job} ended with a failed task ({}); see the logs in {}",
            output.status,
            script_path.parent().unwrap_or(script_path).display()
        ))),
        _ => Err(RunError::Other(format!(
            "sbatch refused {} ({}): {}",
            script_path.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))),
    }
}

/// `text` in single quotes for bash.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> SlurmOptions {
        SlurmOptions {
            array: 4,
            partition: Some("debug".into()),
            time: Some("1:00:00".into()),
            cpus_per_task: 2,
            mem: None,
        }
    }

    #[test]
    fn the_script_runs_one_shard_per_task_into_the_run_directory() {
        let paths = TaskPaths {
            program: "/opt/bl/batchlab".into(),
            workdir: "/home/me/batchlab".into(),
            data_dir: "/data/it's here".into(),
            out: "/home/me/batchlab/reports".into(),
            run_dir: "/home/me/batchlab/reports/x/sharded-00".into(),
        };
        let text = script("x", &paths, &options());
        for line in [
            "#SBATCH --array=0-3",
            "#SBATCH --cpus-per-task=2",
            "#SBATCH --partition=debug",
            "#SBATCH --time=1:00:00",
            "#SBATCH --output=/home/me/batchlab/reports/x/sharded-00/slurm/%A_%a.out",
            "exec '/opt/bl/batchlab' --data-dir '/data/it'\\''s here' run '/home/me/batchlab/reports/x/sharded-00/config.toml'",
            "--shard \"$SLURM_ARRAY_TASK_ID/4\" --set \"backend.threads=${SLURM_CPUS_PER_TASK:-2}\" --offline",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        assert!(!text.contains("--mem"));
    }

    #[test]
    fn options_that_could_break_the_script_are_refused() {
        assert!(options().check().is_ok());
        let bad = [
            SlurmOptions {
                array: 0,
                ..options()
            },
            SlurmOptions {
                array: MAX_ARRAY + 1,
                ..options()
            },
            SlurmOptions {
                cpus_per_task: 0,
                ..options()
            },
            SlurmOptions {
                time: Some("1:00\n#SBATCH --x".into()),
                ..options()
            },
            SlurmOptions {
                partition: Some(String::new()),
                ..options()
            },
            SlurmOptions {
                mem: Some("8 G".into()),
                ..options()
            },
        ];
        for options in bad {
            assert!(options.check().is_err(), "{options:?}");
        }
    }
}
