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

use serde::{Deserialize, Serialize};

use crate::error::RunError;

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

/// `<run>/claims/`: one empty-named file per trial some shard has started, holding its index.
fn claims_dir(dir: &Path) -> Option<PathBuf> {
    Some(dir.parent()?.parent()?.join("claims"))
}

/// Claims trial `id` for this directory's shard before running it: true if no shard had
/// (the claim file is created exclusively, so two shards never both get true), or if this
/// shard itself had. Always true for an unsharded run. This is what lets a shard that finished
/// its slice take trials another shard has not started, so no core idles while trials remain.
pub fn claim(dir: &Path, id: &str) -> Result<bool, RunError> {
    let Some(shard) = shard_of(dir)? else {
        return Ok(true);
    };
    let claims = claims_dir(dir).ok_or_else(|| RunError::io(dir, "not inside shards/"))?;
    fs::create_dir_all(&claims).map_err(|e| RunError::io(&claims, e))?;
    let path = claims.join(id);
    // The claim appears whole or not at all: written under a private name, then hard-linked
    // to its own, which fails if it exists. (Created empty and then written, a kill in
    // between would leave a claim nobody owns, and its trial would never run.)
    let draft = claims.join(format!(".{id}.{}", std::process::id()));
    fs::write(&draft, shard.index.to_string()).map_err(|e| RunError::io(&draft, e))?;
    let linked = fs::hard_link(&draft, &path);
    let _ = fs::remove_file(&draft);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let owner = fs::read_to_string(&path).unwrap_or_default();
            Ok(owner.trim() == shard.index.to_string())
        }
        Err(e) => Err(RunError::io(&path, e)),
    }
}

/// Gives up this shard's claims on trials it has not finished (not in `done`): a shard that
/// was interrupted and runs again, or whose trial another run of it will redo.
pub fn release_unfinished_claims(dir: &Path, done: &BTreeSet<String>) -> Result<(), RunError> {
    let (Some(shard), Some(claims)) = (shard_of(dir)?, claims_dir(dir)) else {
        return Ok(());
    };
    let Ok(entries) = fs::read_dir(&claims) else {
        return Ok(());
    };
    for entry in entries.filter_map(Result::ok) {
        let id = entry.file_name().to_string_lossy().into_owned();
        if id.starts_with('.') {
            // A draft of a claim (see `claim`): another shard's in progress, or a killed one's.
            continue;
        }
        let owner = fs::read_to_string(entry.path()).unwrap_or_default();
        if owner.trim() == shard.index.to_string() && !done.contains(&id) {
            fs::remove_file(entry.path()).map_err(|e| RunError::io(&entry.path(), e))?;
        }
    }
    Ok(())
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

/// Concatenates every shard's complete rows of each results file into `run_dir`; returns how
/// many shard directories were found. A row still being written (no final newline) is left out.
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
            let mut lines = text.split_inclusive('\n');
            let Some(first) = lines.next() else { continue };
            match &header {
                None => header = Some(first.to_string()),
                Some(h) if h != first => {
                    return Err(RunError::io(
                        &path,
                        "its header differs from the other shards'",
                    ))
                }
                Some(_) => {}
            }
            rows.extend(lines.filter(|l| l.ends_with('\n')));
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
        for (i, body) in ["h\n1\n2\n", "h\n3\n4-half"].iter().enumerate() {
            let dir = Shard { index: i, count: 2 }.dir(run.path());
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("trials.csv"), body).unwrap();
        }
        assert_eq!(merge_shards(run.path()).unwrap(), 2);
        assert_eq!(
            fs::read_to_string(run.path().join("trials.csv")).unwrap(),
            "h\n1\n2\n3\n"
        );
        assert!(!run.path().join("results.csv").exists());
    }
}
