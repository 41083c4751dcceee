//! Getting a study's dataset before it runs: `batchlab run` fetches what is missing, as
//! torchvision's `download=True` does, once per data directory and under a lock, so that shards
//! started together download it once. Workers and Slurm array tasks never download (compute
//! nodes are often offline, and locks over network filesystems are unreliable): they run
//! [`Acquire::Offline`], and `batchlab submit` fetches on the submitting machine.

use std::{
    fs::{self, OpenOptions},
    path::Path,
};

use crate::{
    catalog::{fetch_files, locate},
    error::DatasetError,
    sources::{remotes, Remote},
    spec::DatasetName,
};

/// What to do with a dataset that is not on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquire {
    /// Download, verify and extract it, from `mirror` (a base URL serving the same file names)
    /// when given; a progress bar on stderr when `progress`.
    Fetch {
        /// See [`crate::catalog::fetch`].
        mirror: Option<String>,
        /// Show a progress bar.
        progress: bool,
    },
    /// Say what a run would fetch and fetch nothing (`batchlab check`).
    Plan,
    /// Stop with the error that names the files to put where (`--offline`, workers, array
    /// tasks).
    Offline,
}

/// Makes sure `name` is where [`locate`] finds it. Returns what was done, one line per step:
/// nothing when it was there already, what would be fetched under [`Acquire::Plan`].
pub fn ensure(
    name: DatasetName,
    data_dir: &Path,
    acquire: &Acquire,
) -> Result<Vec<String>, DatasetError> {
    ensure_from(
        name,
        remotes(name.as_str()).unwrap_or(&[]),
        data_dir,
        acquire,
    )
}

fn ensure_from(
    name: DatasetName,
    files: &[Remote],
    data_dir: &Path,
    acquire: &Acquire,
) -> Result<Vec<String>, DatasetError> {
    let missing = match locate(name, data_dir) {
        Ok(_) => return Ok(Vec::new()),
        Err(e @ DatasetError::Missing { .. }) => e,
        Err(e) => return Err(e),
    };
    let Acquire::Fetch { mirror, progress } = acquire else {
        return match acquire {
            Acquire::Plan => Ok(vec![plan(name, files, data_dir)]),
            _ => Err(missing),
        };
    };
    let write = |source| DatasetError::Write {
        path: data_dir.to_path_buf(),
        source,
    };
    fs::create_dir_all(data_dir).map_err(write)?;
    // One fetch per data directory and dataset: a second process waits here, then finds the
    // data in place.
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(data_dir.join(format!(".fetch-{}.lock", name.as_str())))
        .map_err(write)?;
    lock.lock().map_err(write)?;
    if let Ok(dir) = locate(name, data_dir) {
        return Ok(vec![format!(
            "{} was fetched into {} by another process meanwhile",
            name.as_str(),
            dir.display()
        )]);
    }
    fetch_files(name, files, data_dir, mirror.as_deref(), *progress)
}

/// "cats-vs-dogs is not in datasets/: `run` fetches it (1 file, 824.9 MB, from ...)".
fn plan(name: DatasetName, files: &[Remote], data_dir: &Path) -> String {
    let bytes: u64 = files.iter().filter_map(|f| f.size).sum();
    let host = files
        .first()
        .and_then(|f| f.url.split('/').nth(2))
        .unwrap_or("its source");
    format!(
        "{} is not in {}: `run` fetches it first ({} file{}, {:.1} MB, from {host}; `--offline` stops instead)",
        name.as_str(),
        data_dir.display(),
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        bytes as f64 / 1e6
    )
}

#[cfg(test)]
#[path = "acquire_tests.rs"]
mod tests;
