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

use batchlab_method::rows::{merge::rows_of_finished_trials, train::done_trials};
use serde::{Deserialize, Serialize};

use crate::error::RunError;

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
pub fn run_dirs(dir: &Path) -> Vec<PathBuf> {
    match (shard_of(dir), dir.parent()) {
        (Ok(Some(_)), Some(shards)) => {
            let mut dirs: Vec<PathBuf> = fs::read_dir(shards)
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
pub fn merge_shards(run_dir: &Path) -> Result<usize, RunError> {
    let shards_dir = run_dir.join("shards");
    let mut shard_dirs: Vec<PathBuf> = match fs::read_dir(&shards_dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect(),
        Err(_) => return Ok(0),
    };
    shard_dirs.sort();
    for name in SHARDED_FILES {
        let mut header: Option<String> = None;
        let mut rows = String::new();
        for dir in &shard_dirs {
            let path = dir.join(name);
            let Ok(text) = fs::read_to_string(&path) else {
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
        }
    }
    Ok(shard_dirs.len())
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
