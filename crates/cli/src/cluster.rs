//! `batchlab submit` (a shardable study as a Slurm job array) and `batchlab status` (where a
//! sharded run stands).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use batchlab_experiments::{
    cluster::{sharded_status, submit_study, SubmitRequest, Submitted},
    load_study,
    shard::status::{ReportState, ShardState, ShardedStatus},
    slurm::SlurmOptions,
};

use crate::commands::source;
use crate::out::{out, outln};

/// `batchlab submit`'s arguments.
#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    /// An experiment name (experiments/NAME.toml) or a TOML file.
    experiment: String,
    /// Array tasks: the study runs as this many shards, one per task.
    #[arg(long)]
    array: usize,
    /// Slurm partition.
    #[arg(long)]
    partition: Option<String>,
    /// Time limit of each task, e.g. 2:00:00.
    #[arg(long)]
    time: Option<String>,
    /// CPUs per task; also each shard's threads (backend.threads).
    #[arg(long, default_value_t = 1)]
    cpus_per_task: usize,
    /// Memory per task, e.g. 8G.
    #[arg(long)]
    mem: Option<String>,
    /// Override a config value, e.g. --set grid.seeds=[0,1] (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Report root (overrides output.dir).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the sbatch script; create and submit nothing.
    #[arg(long)]
    dry_run: bool,
    /// Return only when every task has ended (sbatch --wait); fails if a task failed.
    #[arg(long)]
    wait: bool,
    /// Missing data is fetched here, before submitting; the tasks never download.
    #[command(flatten)]
    fetch: crate::data::FetchArgs,
}

pub fn submit(args: SubmitArgs, data_dir: &Path) -> Result<()> {
    let mut overrides = args.overrides;
    // The threads are part of the resolved config, hence of the shared run directory's name:
    // set here as each task will set them, so submit and the tasks name the same directory.
    overrides.push(format!("backend.threads={}", args.cpus_per_task));
    let study = load_study(&source(&args.experiment, &overrides)?)?;
    let request = SubmitRequest {
        slurm: SlurmOptions {
            array: args.array,
            partition: args.partition,
            time: args.time,
            cpus_per_task: args.cpus_per_task,
            mem: args.mem,
        },
        out: args.out,
        data_dir: data_dir.to_path_buf(),
        acquire: args.fetch.acquire(),
        program: std::env::current_exe().context("cannot find the batchlab executable")?,
        dry_run: args.dry_run,
        wait: args.wait,
    };
    match submit_study(study.as_ref(), &request)? {
        Submitted::DryRun { script } => out!("{script}"),
        Submitted::Queued {
            job,
            dir,
            script_path,
        } => {
            outln!(
                "submitted job {job}: {} array task(s), script {}",
                args.array,
                script_path.display()
            );
            outln!(
                "logs: {}/{job}_<task>.out; follow with: batchlab status {}",
                script_path.parent().unwrap_or(&dir).display(),
                dir.display()
            );
            if args.wait {
                outln!("every task has ended; the report is in the directory below");
            }
            outln!("{}", dir.display());
        }
    }
    Ok(())
}

pub fn status(dir: &Path) -> Result<()> {
    out!("{}", describe(dir, &sharded_status(dir)?));
    Ok(())
}

/// The status as a table, then the totals and the report's state.
fn describe(dir: &Path, s: &ShardedStatus) -> String {
    let mut text = format!(
        "{}: {} trial(s) planned, {} shard director{}\n\n",
        dir.display(),
        s.planned,
        s.shards.len(),
        if s.shards.len() == 1 { "y" } else { "ies" }
    );
    text += "shard      state        own  done  failed  in flight  not started\n";
    for shard in &s.shards {
        let in_flight = match (shard.in_flight.len(), shard.state) {
            (0, _) => "0".to_string(),
            (n, ShardState::Running) => n.to_string(),
            (n, _) => format!("{n} stale"),
        };
        text += &format!(
            "{:<10} {:<12} {:>3}  {:>4}  {:>6}  {:>9}  {:>11}\n",
            format!("{}/{}", shard.shard.index, shard.shard.count),
            shard.state.name(),
            shard.own,
            shard.done,
            shard.failed,
            in_flight,
            shard.not_started
        );
    }
    let in_flight: usize = s.shards.iter().map(|x| x.in_flight.len()).sum();
    text += &format!(
        "\ntrials: {} done ({} failed), {} in flight, {} remaining of {}\n",
        s.done, s.failed, in_flight, s.remaining, s.planned
    );
    if let [count] = s.counts.iter().copied().collect::<Vec<_>>()[..] {
        let missing = count.saturating_sub(s.shards.len());
        if missing > 0 {
            text += &format!("{missing} of {count} shards have not started yet\n");
        }
    }
    if !s.recorded_twice.is_empty() {
        text += &format!(
            "recorded by more than one shard: {}\n",
            s.recorded_twice.join(", ")
        );
    }
    let stale = s
        .shards
        .iter()
        .any(|x| x.state != ShardState::Running && !x.in_flight.is_empty());
    if stale {
        text += "stale claims (their shard stopped mid-trial) are taken over by a running shard, or by the shard's next run (submit the study again)\n";
    }
    text += match s.report {
        ReportState::NotRendered => "report: not rendered yet (the last shard to finish renders it; or `batchlab report DIR`)\n",
        ReportState::Stale => "report: older than the shards' last finished trial (`batchlab report DIR` merges and renders)\n",
        ReportState::UpToDate => "report: up to date with every shard's finished trials\n",
    };
    text
}
