//! Claims: which shard runs which trial, so that every trial runs once across shards.
//!
//! `<run>/claims/<trial id>` is created exclusively by the shard that starts the trial and holds
//! that shard's directory name (`i-of-n`; runs before this format hold the index alone). A shard
//! stopped mid-trial (a Slurm `scancel`, a time limit, preemption, a kill) leaves its claim on
//! the trial it was running. That claim is *stale* once the shard has no live process (neither
//! its writer's nor its worker's lock is held: the kernel drops both when their process dies,
//! whatever kills it) and the shard did not finish the trial: a running shard then takes it
//! over, and the stopped shard, run again, gives it up. Either way the trial runs once more,
//! whole, and its stopped attempt's rows are never merged (see [`super::merge_shards`]).

use std::{
    collections::BTreeSet,
    fs,
    path::{Path, PathBuf},
};

use batchlab_method::rows::train::done_trials;

use super::{shard_of, Shard};
use crate::{error::RunError, lock::IdleLock};

/// `<run>/claims/` for a shard's directory `<run>/shards/<i>-of-<n>`.
pub(super) fn claims_dir(dir: &Path) -> Option<PathBuf> {
    Some(dir.parent()?.parent()?.join("claims"))
}

/// Who holds a claim: the claiming shard's directory name, as written in the claim file.
fn owner_name(shard: Shard) -> String {
    format!("{}-of-{}", shard.index, shard.count)
}

/// The shard directory a claim's text names, under `run` (the sharded run's top directory):
/// `i-of-n`, or for claims written before that format, the one shard directory numbered `i`.
pub(super) fn owner_dir(run: &Path, text: &str) -> Option<PathBuf> {
    let text = text.trim();
    if text.contains("-of-") {
        return Some(run.join("shards").join(text));
    }
    let prefix = format!("{text}-of-");
    let mut numbered = fs::read_dir(run.join("shards"))
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix));
    let only = numbered.next()?;
    numbered.next().is_none().then(|| only.path())
}

/// Whether a claim's text names `shard` (in either format).
fn is_mine(text: &str, shard: Shard) -> bool {
    let text = text.trim();
    text == owner_name(shard) || text == shard.index.to_string()
}

/// Claims trial `id` for this directory's shard before running it: true if no shard had (the
/// claim file is created exclusively, so two shards never both get true), if this shard itself
/// had, or if the shard that had is gone without finishing it (a stale claim, taken over).
/// Always true for an unsharded run.
pub fn claim(dir: &Path, id: &str) -> Result<bool, RunError> {
    let Some(shard) = shard_of(dir)? else {
        return Ok(true);
    };
    let claims = claims_dir(dir).ok_or_else(|| RunError::io(dir, "not inside shards/"))?;
    fs::create_dir_all(&claims).map_err(|e| RunError::io(&claims, e))?;
    let path = claims.join(id);
    // The claim appears whole or not at all: written under a private name, then hard-linked
    // to its own, which fails if it exists. (Created empty and then written, a kill in
    // between would leave a claim nobody owns.)
    let draft = write_draft(&claims, id, shard)?;
    let linked = fs::hard_link(&draft, &path);
    match linked {
        Ok(()) => {
            let _ = fs::remove_file(&draft);
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let taken = take_over_if_stale(&claims, &path, &draft, id, shard);
            let _ = fs::remove_file(&draft);
            taken
        }
        Err(e) => {
            let _ = fs::remove_file(&draft);
            Err(RunError::io(&path, e))
        }
    }
}

fn write_draft(claims: &Path, id: &str, shard: Shard) -> Result<PathBuf, RunError> {
    let draft = claims.join(format!(".{id}.{}", std::process::id()));
    fs::write(&draft, owner_name(shard)).map_err(|e| RunError::io(&draft, e))?;
    Ok(draft)
}

/// The existing claim at `path`: true if it is this shard's, or if its shard is gone without
/// finishing the trial (then the claim is replaced by `draft`, atomically).
fn take_over_if_stale(
    claims: &Path,
    path: &Path,
    draft: &Path,
    id: &str,
    shard: Shard,
) -> Result<bool, RunError> {
    let holder = fs::read_to_string(path).unwrap_or_default();
    if is_mine(&holder, shard) {
        return Ok(true);
    }
    let run = claims.parent().unwrap_or(claims);
    let Some(owner) = owner_dir(run, &holder) else {
        return Ok(false);
    };
    // Holding the owner's locks keeps it from starting again while its claim changes hands,
    // and keeps a second thief out: only the holder of these locks may replace its claims.
    let Some(_idle) = IdleLock::of_idle(&owner)? else {
        return Ok(false);
    };
    let still = fs::read_to_string(path).unwrap_or_default();
    if still != holder || done_trials(&owner)?.contains(id) {
        return Ok(false);
    }
    fs::rename(draft, path).map_err(|e| RunError::io(path, e))?;
    Ok(true)
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
        let holder = fs::read_to_string(entry.path()).unwrap_or_default();
        if is_mine(&holder, shard) && !done.contains(&id) {
            fs::remove_file(entry.path()).map_err(|e| RunError::io(&entry.path(), e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::DirLock;

    /// A sharded run with shards 0/2 and 1/2 in `run`.
    fn two_shards(run: &Path) -> [PathBuf; 2] {
        [0, 1].map(|index| {
            let shard = Shard { index, count: 2 };
            let dir = shard.dir(run);
            fs::create_dir_all(&dir).unwrap();
            fs::write(
                dir.join("shard.json"),
                serde_json::to_string(&shard).unwrap(),
            )
            .unwrap();
            dir
        })
    }

    #[test]
    fn a_live_shards_claim_holds_and_a_dead_ones_is_taken_over() {
        let run = tempfile::tempdir().unwrap();
        let [a, b] = two_shards(run.path());
        let alive = DirLock::writer(&a).unwrap();
        assert!(claim(&a, "t1").unwrap());
        assert!(claim(&a, "t1").unwrap(), "a shard's own claim is its own");
        assert!(!claim(&b, "t1").unwrap(), "the owner is alive");
        drop(alive);
        assert!(
            eventually(|| claim(&b, "t1").unwrap()),
            "the owner is gone: stale"
        );
        let holder = fs::read_to_string(run.path().join("claims/t1")).unwrap();
        assert_eq!(holder, "1-of-2");
        let thief = DirLock::writer(&b).unwrap();
        assert!(!claim(&a, "t1").unwrap(), "now the other's, alive");
        drop(thief);
        assert!(
            eventually(|| claim(&a, "t1").unwrap()),
            "and taken back once that one is gone too"
        );
    }

    /// Whether `check` holds within a second. A dropped lock can outlive its `File` for a
    /// moment here: a test on another thread that starts a process forks this one, and the
    /// child holds a copy of every descriptor, the lock's included, until its exec closes them.
    fn eventually(mut check: impl FnMut() -> bool) -> bool {
        (0..50).any(|_| {
            check() || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                false
            }
        })
    }

    #[test]
    fn a_dead_shard_keeps_the_claims_of_trials_it_finished() {
        let run = tempfile::tempdir().unwrap();
        let [a, b] = two_shards(run.path());
        assert!(claim(&a, "b8-s0").unwrap());
        use batchlab_method::rows::{train::TrialRecord, Row};
        let row = "b8-s0,0,8,sgd,standard,epochs,ok,1,32,256,0.5,0.1,0.1,0.1,0.9,0.7,";
        fs::write(
            a.join("trials.csv"),
            format!("{}\n{row}\n", TrialRecord::HEADER),
        )
        .unwrap();
        assert!(done_trials(&a).unwrap().contains("b8-s0"));
        assert!(!claim(&b, "b8-s0").unwrap());
        release_unfinished_claims(&a, &done_trials(&a).unwrap()).unwrap();
        assert!(run.path().join("claims/b8-s0").exists());
    }

    #[test]
    fn claims_in_the_index_only_format_still_name_their_shard() {
        let run = tempfile::tempdir().unwrap();
        let [a, b] = two_shards(run.path());
        fs::create_dir_all(run.path().join("claims")).unwrap();
        fs::write(run.path().join("claims/old"), "0").unwrap();
        assert_eq!(owner_dir(run.path(), "0"), Some(a.clone()));
        assert!(claim(&a, "old").unwrap());
        release_unfinished_claims(&a, &BTreeSet::new()).unwrap();
        assert!(!run.path().join("claims/old").exists());
        assert!(claim(&b, "new").unwrap());
    }
}
