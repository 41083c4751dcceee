//! Running a study's independent trials as `n` shards (Slurm array tasks, or several processes
//! on one machine) into one report directory.
//!
//! Every shard of a config finds the same directory, `<experiment>/sharded-<hash of the resolved
//! config>`, and works in its own `shards/<i>-of-<n>/` inside it (config.toml, shard.json,
//! meta.json and its own results files), so shards running at once never write the same file.
//! Trial `k` of the study's planned order belongs to shard `k % n`; a shard that has finished
//! its own then takes the trials no shard has started (work stealing through exclusive claim
//! files in `claims/`), so shards of uneven cost still keep every core busy to the end. Merging
//! concatenates the shards' complete rows into the top directory's results files, which the
//! report then reads.

use std::{
    collections::BTreeSet,
    fs,
    path::{Path, PathBuf},
};

use batchlab_method::rows::{merge::rows_of_finished_trials, stored, train::done_trials};
use serde::{Deserialize, Serialize};

use crate::{
    error::RunError,
    lock::IdleLock,
    run_dir::{write_atomically, Meta, RunStatus},
    sysinfo,
};

mod claims;
pub mod status;

pub use claims::{claim, release_unfinished_claims};

/// Slice `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

/// The results files shards write and merging concatenates.
pub const SHARDED_FILES: [&str; 4] = ["results.csv", "trials.csv", "search.csv", "noise.csv"];

/// The files a shard no longer keeps once its run is merged for good ([`prune_merged`]): every
/// one of [`SHARDED_FILES`] but `trials.csv`, the small ledger of which shard ran which trial
/// (`batchlab status`).
const PRUNED_FILES: [&str; 3] = ["results.csv", "search.csv", "noise.csv"];

/// `shards/merged.json`: present once the shards' rows live in the run directory alone.
const MERGED: &str = "merged.json";

/// What `shards/merged.json` records: the run was merged for good, and what was removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Merged {
    /// When (RFC 3339, UTC).
    pub at: String,
    /// Shards merged.
    pub shards: usize,
    /// The shard files removed, relative to `shards/`.
    pub removed: Vec<String>,
}

impl Shard {
    /// Parses `i/n` with `0 <= i < n`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let parsed = text
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((index, count)) if index < count => Ok(Self { index, count }),
            _ => Err(format!(
                "expected i/n with 0 <= i < n (e.g. 0/4, or $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT), got {text:?}"
            )),
        }
    }

    /// Whether the trial at `position` of the planned order is this shard's.
    pub fn includes(&self, position: usize) -> bool {
        position % self.count == self.index
    }

    /// `shards/<i>-of-<n>` under the run directory.
    pub fn dir(&self, run_dir: &Path) -> PathBuf {
        run_dir
            .join("shards")
            .join(format!("{}-of-{}", self.index, self.count))
    }
}

/// The shard a working directory belongs to (from its shard.json), or None for an unsharded run.
pub fn shard_of(dir: &Path) -> Result<Option<Shard>, RunError> {
    let path = dir.join("shard.json");
    if !path.exists() {
        return Ok(None);
    }
    let text = fs::read_to_string(&path).map_err(|e| RunError::io(&path, e))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| RunError::io(&path, format!("not a shard description: {e}")))
}

/// Every directory of the run `dir` works in: for a shard, each shard's directory (its own
/// included), for an unsharded run `dir` alone. What one shard needs to know of the others'
/// finished trials (the steps-to-target cutoff and refining stage) is read from these.
/// Once the run is merged for good ([`prune_merged`]), its rows are in the run directory alone,
/// which is then the one directory returned.
pub fn run_dirs(dir: &Path) -> Vec<PathBuf> {
    match (shard_of(dir), dir.parent()) {
        (Ok(Some(_)), Some(shards)) => match shards.parent() {
            Some(top) if is_merged(top) => vec![top.to_path_buf()],
            Some(top) => shard_dirs(top),
            None => vec![dir.to_path_buf()],
        },
        _ => vec![dir.to_path_buf()],
    }
}

/// The trials finished in any directory of the run `dir` works in ([`run_dirs`]).
pub fn done_in_run(dir: &Path) -> Result<BTreeSet<String>, RunError> {
    let mut done = BTreeSet::new();
    for d in run_dirs(dir) {
        done.extend(done_trials(&d)?);
    }
    Ok(done)
}

/// The trials still to run in `dir`: those of its shard (all of them when unsharded), in the
/// planned order, without the ones in `done`.
pub fn pending<'a, T>(
    trials: &'a [T],
    id: impl Fn(&T) -> &str,
    dir: &Path,
    done: &BTreeSet<String>,
) -> Result<Vec<&'a T>, RunError> {
    let shard = shard_of(dir)?;
    Ok(trials
        .iter()
        .enumerate()
        .filter(|(k, t)| shard.is_none_or(|s| s.includes(*k)) && !done.contains(id(t)))
        .map(|(_, t)| t)
        .collect())
}

/// What a worker in `dir` tries, in order: its [`pending`] trials, then (for a shard) the other
/// shards' ([`stealable`]), leaving out those in `done`. Each must be [`claim`]ed before it
/// runs.
pub fn to_try<'a, T>(
    trials: &'a [T],
    id: impl Fn(&T) -> &str + Copy,
    dir: &Path,
    done: &BTreeSet<String>,
) -> Result<Vec<&'a T>, RunError> {
    let mut todo = pending(trials, id, dir, done)?;
    todo.extend(
        stealable(trials, dir)?
            .into_iter()
            .filter(|t| !done.contains(id(t))),
    );
    Ok(todo)
}

/// The other shards' trials, for a shard that has finished its own: every trial outside its
/// slice, last first (their owners work from the front, so a thief and an owner meet once).
/// Each must be [`claim`]ed before it runs. Empty for an unsharded run.
pub fn stealable<'a, T>(trials: &'a [T], dir: &Path) -> Result<Vec<&'a T>, RunError> {
    let Some(shard) = shard_of(dir)? else {
        return Ok(Vec::new());
    };
    Ok(trials
        .iter()
        .enumerate()
        .rev()
        .filter(|(k, _)| !shard.includes(*k))
        .map(|(_, t)| t)
        .collect())
}

/// `sharded-<16 hex digits of a hash of the resolved config>`: the same for every shard of a
/// config, different for another config.
pub fn sharded_run_name(resolved_toml: &str) -> String {
    // FNV-1a: stable across Rust versions and platforms, unlike std's DefaultHasher.
    let hash = resolved_toml
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("sharded-{hash:016x}")
}

/// Concatenates every shard's rows of each results file into `run_dir`; returns how many shard
/// directories were found. A shard contributes the complete rows of the trials it finished (in
/// its trials.csv): not a row still being written, nor those of a trial it was stopped in
/// (another shard, or its own next run, runs that trial whole).
///
/// A run merged for good ([`prune_merged`]) is left as it is; a shard that wrote rows again
/// since is an error, as merging it would lose the rows its pruned files held.
pub fn merge_shards(run_dir: &Path) -> Result<usize, RunError> {
    let shard_dirs = shard_dirs(run_dir);
    if is_merged(run_dir) {
        if let Some(late) = shard_dirs
            .iter()
            .flat_map(|d| PRUNED_FILES.map(|f| d.join(f)))
            .find(|p| stored::exists(p))
        {
            return Err(RunError::io(
                &late,
                "written after the run was merged for good (shards/merged.json); move these rows into a new run",
            ));
        }
        return Ok(shard_dirs.len());
    }
    for name in SHARDED_FILES {
        let mut header: Option<String> = None;
        let mut rows = String::new();
        for dir in &shard_dirs {
            let path = dir.join(name);
            let Some(text) = stored::read_text(&path)? else {
                continue;
            };
            let finished = done_trials(dir)?;
            let Some((first, kept)) = rows_of_finished_trials(&text, &finished)
                .map_err(|e| RunError::io(&path, format!("not a readable CSV file: {e}")))?
            else {
                continue;
            };
            match &header {
                None => header = Some(first),
                Some(h) if *h != first => {
                    return Err(RunError::io(
                        &path,
                        "its header differs from the other shards'",
                    ))
                }
                Some(_) => {}
            }
            rows.push_str(&kept);
        }
        if let Some(header) = header {
            let path = run_dir.join(name);
            let temporary = run_dir.join(format!(".{name}.{}", std::process::id()));
            fs::write(&temporary, header + &rows).map_err(|e| RunError::io(&temporary, e))?;
            fs::rename(&temporary, &path).map_err(|e| RunError::io(&path, e))?;
            // A compacted copy from an earlier merge is stale now.
            let stale = stored::parquet_path(&path);
            if stale.exists() {
                fs::remove_file(&stale).map_err(|e| RunError::io(&stale, e))?;
            }
        }
    }
    Ok(shard_dirs.len())
}

/// Whether the sharded run `run_dir` was merged for good ([`prune_merged`]).
pub fn is_merged(run_dir: &Path) -> bool {
    run_dir.join("shards").join(MERGED).exists()
}

/// The shard directories under `run_dir/shards`, sorted.
pub fn shard_dirs(run_dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(run_dir.join("shards"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// Merges the sharded run `run_dir` for good once it is finished: when every shard named by
/// the shards' count has a directory whose meta.json says `complete` and no process holds any
/// of them, merges their rows, removes each shard's copy of the merged rows ([`PRUNED_FILES`])
/// and the work-stealing claims, and records `shards/merged.json`. From then on the run's rows
/// live in `run_dir` alone ([`run_dirs`], [`merge_shards`]). Returns whether it did so now.
pub fn prune_merged(run_dir: &Path) -> Result<bool, RunError> {
    let shards = run_dir.join("shards");
    if is_merged(run_dir) {
        return Ok(false);
    }
    let dirs = shard_dirs(run_dir);
    let counts: BTreeSet<usize> = dirs
        .iter()
        .filter_map(|d| shard_of(d).ok().flatten())
        .map(|s| s.count)
        .collect();
    let complete = |d: &PathBuf| Meta::read(d).is_ok_and(|m| m.status == RunStatus::Complete);
    if dirs.is_empty()
        || counts.len() != 1
        || counts.first() != Some(&dirs.len())
        || !dirs.iter().all(complete)
    {
        return Ok(false);
    }
    // Held while pruning, so that no shard starts again meanwhile.
    let mut idle = Vec::new();
    for d in &dirs {
        match IdleLock::of_idle(d)? {
            Some(lock) => idle.push(lock),
            None => return Ok(false),
        }
    }
    merge_shards(run_dir)?;
    let mut removed = Vec::new();
    for d in &dirs {
        for name in PRUNED_FILES {
            for path in [d.join(name), stored::parquet_path(&d.join(name))] {
                if path.exists() {
                    fs::remove_file(&path).map_err(|e| RunError::io(&path, e))?;
                    removed.push(
                        path.strip_prefix(&shards)
                            .unwrap_or(&path)
                            .display()
                            .to_string(),
                    );
                }
            }
        }
    }
    let merged = Merged {
        at: sysinfo::rfc3339(sysinfo::unix_seconds()),
        shards: dirs.len(),
        removed,
    };
    let text = serde_json::to_string_pretty(&merged).expect("a merge record serializes");
    write_atomically(&shards.join(MERGED), &text)?;
    let claims = run_dir.join("claims");
    if claims.exists() {
        fs::remove_dir_all(&claims).map_err(|e| RunError::io(&claims, e))?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition_the_trials() {
        let s = Shard::parse("1/3").unwrap();
        assert_eq!(s, Shard { index: 1, count: 3 });
        let mine: Vec<usize> = (0..10).filter(|&k| s.includes(k)).collect();
        assert_eq!(mine, [1, 4, 7]);
        for bad in ["3/3", "1", "a/b", "-1/2", "1/0"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(sharded_run_name("a"), sharded_run_name("a"));
        assert_ne!(sharded_run_name("a"), sharded_run_name("b"));
    }

    #[test]
    fn merging_keeps_one_header_and_only_complete_rows() {
        let run = tempfile::tempdir().unwrap();
        use batchlab_method::rows::{train::TrialRecord, Row};
        let record = |id: &str| {
            format!("{id},0,8,sgd,standard,epochs,ok,1,32,256,0.5,0.1,0.1,0.1,0.9,0.7,\n")
        };
        let header = format!("{}\n", TrialRecord::HEADER);
        let trials = [
            format!("{header}{}{}", record("a"), record("b")),
            format!("{header}{}{}", record("c"), &record("d")[..20]),
        ];
        // Shard 1 was stopped in trial "x": its evaluations of it are not merged.
        let results = ["trial,v\na,1\nb,2\n", "trial,v\nc,3\nx,4\n"];
        for i in 0..2 {
            let dir = Shard { index: i, count: 2 }.dir(run.path());
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("trials.csv"), &trials[i]).unwrap();
            fs::write(dir.join("results.csv"), results[i]).unwrap();
        }
        assert_eq!(merge_shards(run.path()).unwrap(), 2);
        assert_eq!(
            fs::read_to_string(run.path().join("trials.csv")).unwrap(),
            format!("{header}{}{}{}", record("a"), record("b"), record("c"))
        );
        assert_eq!(
            fs::read_to_string(run.path().join("results.csv")).unwrap(),
            "trial,v\na,1\nb,2\nc,3\n"
        );
        assert!(!run.path().join("search.csv").exists());
    }
}
