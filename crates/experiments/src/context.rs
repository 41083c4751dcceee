//! What the command line decided once, carried down to every study: where datasets are read
//! from, whether a missing one is fetched, and how units of work are isolated. Nothing below the CLI reads the process environment
//! for these (docs/ARCHITECTURE.md, "Flow of a run").

use std::path::PathBuf;

use batchlab_datasets::{
    acquire::{ensure, Acquire},
    spec::DatasetName,
};

use crate::{error::RunError, isolate::Isolation};

/// The run context: built by the CLI, passed to every [`crate::study::Study`] method.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// Where datasets live (`--data-dir`).
    pub data_dir: PathBuf,
    /// What to do with a dataset that is missing (`--offline`, `--mirror`): fetched by `run`
    /// and `submit`, never by a worker or an array task.
    pub acquire: Acquire,
    /// See [`Isolation`].
    pub isolation: Isolation,
    /// Whether this process is a worker started by a supervisor (the hidden `worker` command):
    /// a unit may then change the process itself, such as limit its memory, since the process
    /// ends with the unit. False in the supervisor and in-process runs.
    pub in_worker_process: bool,
}

impl RunContext {
    /// Everything in this process, datasets under `data_dir` (tests, benchmarks, workers).
    pub fn in_process(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            acquire: Acquire::Offline,
            isolation: Isolation::InProcess,
            in_worker_process: false,
        }
    }

    /// The context of a worker process that a supervisor started.
    pub fn worker(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            in_worker_process: true,
            ..Self::in_process(data_dir)
        }
    }

    /// Makes sure every dataset in `names` is on this machine, as [`Self::acquire`] says: once
    /// each, before anything is created or trained. Returns what was done, one line per step.
    pub fn ensure_datasets(&self, names: &[DatasetName]) -> Result<Vec<String>, RunError> {
        let mut lines = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                continue;
            }
            let done = ensure(*name, &self.data_dir, &self.acquire)
                .map_err(|e| RunError::Other(e.to_string()))?;
            lines.extend(done);
        }
        Ok(lines)
    }
}
