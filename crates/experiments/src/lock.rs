//! One writer per run directory (docs/ARCHITECTURE.md, "Reliability rules").
//!
//! The process that runs a study (`run`, `run --resume`, each shard) holds an exclusive lock on
//! `<dir>/.batchlab.lock` for as long as it lives; a second writer is refused with the holder's
//! pid and host. Its worker processes hold `<dir>/.worker.lock` for as long as they live. A
//! supervisor killed with SIGKILL loses its lock at once, but its worker may take a moment to
//! notice (it exits when its stdin, the supervisor's end of a pipe, closes): so a new writer
//! also waits for the worker lock before it starts, and a killed run never has two processes
//! writing into one directory. The kernel drops both locks when their process dies, whatever
//! kills it: so a directory whose two locks are both free has no live process ([`IdleLock`]),
//! which is how a shard knows that another shard's claim on a trial is stale.

use std::{
    fs::{File, OpenOptions, TryLockError},
    io::{Read, Seek, Write},
    path::Path,
};

use crate::{error::RunError, sysinfo};

/// The lock of the process that writes a run directory.
pub const RUN_LOCK: &str = ".batchlab.lock";
/// The lock of the worker process that writes a run directory.
pub const WORKER_LOCK: &str = ".worker.lock";

/// An exclusive lock on a run directory, held until dropped (or the process dies).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the run directory's writer lock, or says who holds it; then waits until no worker
    /// of an earlier (killed) writer is left.
    pub fn writer(dir: &Path) -> Result<Self, RunError> {
        let path = dir.join(RUN_LOCK);
        let mut file = open(&path)?;
        match try_lock_patiently(&file) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(RunError::Other(format!(
                    "{} is being written by another batchlab process ({}); wait for it to finish or stop it, then run again",
                    dir.display(),
                    if holder.is_empty() { "its pid is not recorded yet" } else { holder }
                )));
            }
            Err(TryLockError::Error(e)) => {
                return Err(RunError::io(&path, format!("cannot lock: {e}")))
            }
        }
        let me = format!(
            "pid {} on {}, since {}",
            std::process::id(),
            sysinfo::hostname(),
            sysinfo::rfc3339(sysinfo::unix_seconds())
        );
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(me.as_bytes()))
            .and_then(|()| file.sync_all())
            .map_err(|e| RunError::io(&path, e))?;
        // A worker of a killed writer still holds its lock until it has noticed and exited.
        drop(Self::worker(dir)?);
        Ok(Self { _file: file })
    }

    /// Takes the worker lock of `dir`, waiting while another worker holds it.
    pub fn worker(dir: &Path) -> Result<Self, RunError> {
        let path = dir.join(WORKER_LOCK);
        let file = open(&path)?;
        file.lock()
            .map_err(|e| RunError::io(&path, format!("cannot lock: {e}")))?;
        Ok(Self { _file: file })
    }
}

/// Both locks of a run directory whose writer and worker are gone, held so that none starts
/// while the caller acts for them (a shard taking over a dead shard's claim).
#[derive(Debug)]
pub struct IdleLock {
    _run: File,
    _worker: File,
}

impl IdleLock {
    /// Both locks of `dir` if no process holds either (its writer and worker are gone, whatever
    /// killed them), else `None`. Never waits.
    pub fn of_idle(dir: &Path) -> Result<Option<Self>, RunError> {
        let try_take = |name: &str| -> Result<Option<File>, RunError> {
            let path = dir.join(name);
            let file = open(&path)?;
            match file.try_lock() {
                Ok(()) => Ok(Some(file)),
                Err(TryLockError::WouldBlock) => Ok(None),
                Err(TryLockError::Error(e)) => {
                    Err(RunError::io(&path, format!("cannot lock: {e}")))
                }
            }
        };
        let Some(run) = try_take(RUN_LOCK)? else {
            return Ok(None);
        };
        Ok(try_take(WORKER_LOCK)?.map(|worker| Self {
            _run: run,
            _worker: worker,
        }))
    }
}

/// Tries the lock for up to [`PATIENCE`]: another process may hold it for a moment only (a
/// shard checking whether this directory's writer is alive, see [`IdleLock`]), and a writer
/// starting just then must not be refused for it.
fn try_lock_patiently(file: &File) -> Result<(), TryLockError> {
    let start = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Err(TryLockError::WouldBlock) if start.elapsed() < PATIENCE => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            outcome => return outcome,
        }
    }
}

/// How long a writer waits for a lock held by someone else before it refuses to start.
const PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);

fn open(path: &Path) -> Result<File, RunError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| RunError::io(path, format!("cannot open the lock file: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_with_the_holders_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::writer(dir.path()).unwrap();
        let err = DirLock::writer(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert!(
            err.contains("being written by another batchlab process"),
            "{err}"
        );
        drop(first);
        DirLock::writer(dir.path()).unwrap();
    }

    #[test]
    fn a_directory_is_idle_only_while_neither_lock_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let writer = DirLock::writer(dir.path()).unwrap();
        assert!(IdleLock::of_idle(dir.path()).unwrap().is_none());
        drop(writer);
        let worker = DirLock::worker(dir.path()).unwrap();
        assert!(IdleLock::of_idle(dir.path()).unwrap().is_none());
        drop(worker);
        // A dropped lock can outlive its `File` for a moment here: a test on another thread
        // that starts a process forks this one, and the child holds a copy of the descriptor
        // until its exec closes it.
        let idle = (0..50).find_map(|_| {
            IdleLock::of_idle(dir.path()).unwrap().or_else(|| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                None
            })
        });
        assert!(idle.is_some());
        // While it is held, a writer waits for it a moment, then is refused.
        assert!(DirLock::writer(dir.path()).is_err());
        drop(idle);
        DirLock::writer(dir.path()).unwrap();
    }
}
