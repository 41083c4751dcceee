//! Where a sharded run stands (`batchlab status DIR`): per shard, the trials done, claimed and
//! left, its failures and whether its process lives; for the run, what is left and whether the
//! merged report is up to date. Read from the files alone, so it works with or without Slurm
//! and while shards run.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
    time::SystemTime,
};

use batchlab_method::rows::Status;
use batchlab_method::rows::{read_rows_so_far, train::TrialRecord};

use super::{claims::owner_dir, shard_of, Shard};
use crate::{
    error::RunError,
    lock::IdleLock,
    run_dir::{Meta, RunStatus},
};

/// One shard of a sharded run.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardStatus {
    /// The shard (from its shard.json).
    pub shard: Shard,
    /// Where the shard stands.
    pub state: ShardState,
    /// Trials of its own slice.
    pub own: usize,
    /// Trials it recorded in trials.csv (its own and those it took from others), and how many
    /// of them failed (`oom` or `error`).
    pub done: usize,
    /// Of `done`, the failed ones.
    pub failed: usize,
    /// Trials it has claimed and not finished: the one it runs now, or, when it is not
    /// running, stale claims another shard (or its next run) will take over.
    pub in_flight: Vec<String>,
    /// Trials of its slice that no shard has finished or claimed.
    pub not_started: usize,
}

/// The merged report's state against the shards' rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportState {
    /// No report.md yet.
    NotRendered,
    /// report.md is older than a shard's last finished trial.
    Stale,
    /// report.md is at least as new as every shard's trials.csv.
    UpToDate,
}

/// Where one shard stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardState {
    /// A process holds the shard's directory.
    Running,
    /// Its meta.json still says running, but no process holds it.
    Killed,
    /// No meta.json yet.
    NotStarted,
    /// No process holds it, and its meta.json says how it ended (`complete`, `interrupted`,
    /// `failed`).
    Ended(RunStatus),
}

impl ShardState {
    /// The word `batchlab status` prints.
    pub fn name(self) -> &'static str {
        match self {
            ShardState::Running => "running",
            ShardState::Killed => "killed",
            ShardState::NotStarted => "not started",
            ShardState::Ended(status) => status.name(),
        }
    }
}

/// A sharded run.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardedStatus {
    /// Trials the study plans.
    pub planned: usize,
    /// Every shard that has a directory, by index.
    pub shards: Vec<ShardStatus>,
    /// Shard counts named by the shards' directories (normally one).
    pub counts: BTreeSet<usize>,
    /// Trials recorded by any shard.
    pub done: usize,
    /// Of `done`, the failed ones.
    pub failed: usize,
    /// Trials recorded by more than one shard (none, unless something is badly wrong).
    pub recorded_twice: Vec<String>,
    /// Trials neither done nor claimed.
    pub remaining: usize,
    /// The merged report.
    pub report: ReportState,
}

/// The status of the sharded run in `run` (its top directory), whose study plans the trial
/// ids `planned`, in order.
pub fn status(run: &Path, planned: &[String]) -> Result<ShardedStatus, RunError> {
    let dirs = shard_dirs(run)?;
    if dirs.is_empty() {
        return Err(RunError::io(
            run,
            "not a sharded run directory (no shards/ with a shard in it): status reads the shards of a run made with --shard or `batchlab submit`",
        ));
    }
    let claims = read_claims(run)?;
    let mut recorded: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed_ids = BTreeSet::new();
    let mut shards = Vec::new();
    let mut newest_rows = None;
    for (shard, dir) in &dirs {
        let trials_path = dir.join("trials.csv");
        let records: Vec<TrialRecord> = if batchlab_method::rows::stored::exists(&trials_path) {
            read_rows_so_far(&trials_path)?
        } else {
            Vec::new()
        };
        newest_rows = newest_rows.max(modified(&trials_path));
        let mine: BTreeSet<&str> = records.iter().map(|r| r.trial.as_str()).collect();
        for r in &records {
            *recorded.entry(r.trial.clone()).or_default() += 1;
            if r.status == Status::Oom || r.status == Status::Error {
                failed_ids.insert(r.trial.clone());
            }
        }
        let in_flight = claims
            .iter()
            .filter(|(id, owner)| {
                owner.as_deref() == Some(dir.as_path()) && !mine.contains(id.as_str())
            })
            .map(|(id, _)| id.clone())
            .collect();
        shards.push(ShardStatus {
            shard: *shard,
            state: state_of(dir)?,
            own: (0..planned.len()).filter(|&k| shard.includes(k)).count(),
            done: records.len(),
            failed: records
                .iter()
                .filter(|r| r.status == Status::Oom || r.status == Status::Error)
                .count(),
            in_flight,
            not_started: 0,
        });
    }
    let untouched = |id: &String| !recorded.contains_key(id) && !claims.contains_key(id);
    for s in &mut shards {
        s.not_started = planned
            .iter()
            .enumerate()
            .filter(|(k, id)| s.shard.includes(*k) && untouched(id))
            .count();
    }
    let in_flight: usize = shards.iter().map(|s| s.in_flight.len()).sum();
    let done = planned
        .iter()
        .filter(|id| recorded.contains_key(*id))
        .count();
    Ok(ShardedStatus {
        planned: planned.len(),
        counts: shards.iter().map(|s| s.shard.count).collect(),
        done,
        failed: failed_ids.len(),
        recorded_twice: recorded
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(id, _)| id)
            .collect(),
        remaining: planned.len().saturating_sub(done + in_flight),
        report: match modified(&run.join("report.md")) {
            None => ReportState::NotRendered,
            Some(report) if newest_rows.is_some_and(|rows| rows > report) => ReportState::Stale,
            Some(_) => ReportState::UpToDate,
        },
        shards,
    })
}

/// Every shard directory under `run/shards/` with its shard, by index.
fn shard_dirs(run: &Path) -> Result<Vec<(Shard, PathBuf)>, RunError> {
    let Ok(entries) = fs::read_dir(run.join("shards")) else {
        return Ok(Vec::new());
    };
    let mut dirs = Vec::new();
    for dir in entries.filter_map(Result::ok).map(|e| e.path()) {
        if let Some(shard) = shard_of(&dir)? {
            dirs.push((shard, dir));
        }
    }
    dirs.sort_by_key(|(s, _)| (s.count, s.index));
    Ok(dirs)
}

/// Every claim: trial id -> the directory of the shard that holds it (None if it names none).
fn read_claims(run: &Path) -> Result<BTreeMap<String, Option<PathBuf>>, RunError> {
    let Ok(entries) = fs::read_dir(run.join("claims")) else {
        return Ok(BTreeMap::new());
    };
    Ok(entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            let holder = fs::read_to_string(e.path()).unwrap_or_default();
            (
                e.file_name().to_string_lossy().into_owned(),
                owner_dir(run, &holder),
            )
        })
        .collect())
}

/// Running if a process holds the shard's directory, else what its meta.json says.
fn state_of(dir: &Path) -> Result<ShardState, RunError> {
    if IdleLock::of_idle(dir)?.is_none() {
        return Ok(ShardState::Running);
    }
    Ok(match Meta::read(dir) {
        Ok(meta) if meta.status == RunStatus::Running => ShardState::Killed,
        Ok(meta) => ShardState::Ended(meta.status),
        Err(_) => ShardState::NotStarted,
    })
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlab_method::rows::Row;

    fn record(id: &str, status: &str) -> String {
        format!("{id},0,8,sgd,standard,epochs,{status},1,32,256,0.5,0.1,0.1,0.1,0.9,0.7,\n")
    }

    #[test]
    fn counts_done_claimed_and_left_per_shard() {
        let run = tempfile::tempdir().unwrap();
        let planned: Vec<String> = ["t0", "t1", "t2", "t3", "t4"].map(String::from).to_vec();
        let dirs: Vec<PathBuf> = (0..2)
            .map(|index| {
                let shard = Shard { index, count: 2 };
                let dir = shard.dir(run.path());
                fs::create_dir_all(&dir).unwrap();
                fs::write(
                    dir.join("shard.json"),
                    serde_json::to_string(&shard).unwrap(),
                )
                .unwrap();
                dir
            })
            .collect();
        let header = format!("{}\n", TrialRecord::HEADER);
        // Shard 0 did t0 and failed t2; shard 1 did t1 and holds a claim on t3 it never finished.
        fs::write(
            dirs[0].join("trials.csv"),
            format!("{header}{}{}", record("t0", "ok"), record("t2", "oom")),
        )
        .unwrap();
        fs::write(
            dirs[1].join("trials.csv"),
            format!("{header}{}", record("t1", "ok")),
        )
        .unwrap();
        fs::create_dir_all(run.path().join("claims")).unwrap();
        for (id, holder) in [
            ("t0", "0-of-2"),
            ("t1", "1-of-2"),
            ("t2", "0-of-2"),
            ("t3", "1-of-2"),
        ] {
            fs::write(run.path().join("claims").join(id), holder).unwrap();
        }
        let s = status(run.path(), &planned).unwrap();
        assert_eq!((s.planned, s.done, s.failed, s.remaining), (5, 3, 1, 1));
        assert_eq!(s.shards[0].own, 3);
        assert_eq!((s.shards[0].done, s.shards[0].failed), (2, 1));
        assert_eq!(s.shards[0].not_started, 1, "t4");
        assert_eq!(s.shards[1].in_flight, ["t3"]);
        assert_eq!(s.shards[1].state, ShardState::NotStarted);
        assert_eq!(s.report, ReportState::NotRendered);
        assert!(s.recorded_twice.is_empty());
        assert!(status(&run.path().join("shards"), &planned).is_err());
    }
}
