//! One writer per run directory (docs/ARCHITECTURE.md, "Reliability rules").
//!
//! The process that runs a study (`run`, `run --resume`, each shard) holds an exclusive lock on
//! `<dir>/.batchlab.lock` for as long as it lives; a second writer is refused with the holder's
//! pid and host. Its worker processes hold `<dir>/.worker.lock` for as long as they live. A
//! supervisor killed with SIGKILL loses its lock at once, but its worker may take a moment to
//! notice (it exits when its stdin, the supervisor's end of a pipe, closes): so a new writer
//! also waits for the worker lock before it starts, and a killed run never has two processes
//! writing into one directory. The kernel drops both locks when their process dies, whatever
//! kills it.

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
        match file.try_lock() {
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
}
