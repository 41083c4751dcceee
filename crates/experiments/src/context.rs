//! What the command line decided once, carried down to every study: where datasets are read
//! from and how units of work are isolated. Nothing below the CLI reads the process environment
//! for these (docs/ARCHITECTURE.md, "Flow of a run").

use std::path::PathBuf;

use crate::isolate::Isolation;

/// The run context: built by the CLI, passed to every [`crate::study::Study`] method.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// Where datasets live (`--data-dir`).
    pub data_dir: PathBuf,
    /// See [`Isolation`].
    pub isolation: Isolation,
}

impl RunContext {
    /// Everything in this process, datasets under `data_dir` (tests, benchmarks, workers).
    pub fn in_process(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            isolation: Isolation::InProcess,
        }
    }
}
