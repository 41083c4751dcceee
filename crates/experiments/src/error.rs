//! Why a run stopped: the one error type of every layer above (docs/ARCHITECTURE.md, "Layers").

use std::path::{Path, PathBuf};

use crate::{backend::BackendError, config::ConfigError};

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The config is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The backend cannot run here.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// Reading or writing results failed.
    #[error(transparent)]
    Report(#[from] batchlab_report::ReportError),
    /// A file operation failed.
    #[error("{path}: {message}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// SIGINT or SIGTERM asked the run to stop; what finished is kept and `--resume` goes on.
    #[error("interrupted by a signal (SIGINT or SIGTERM)")]
    Interrupted,
    /// Every unit of the run failed: nothing to report, and resuming would not retry them.
    #[error("{0}")]
    NothingSucceeded(String),
    /// Anything else, said in full.
    #[error("{0}")]
    Other(String),
}

impl From<batchlab_method::FileError> for RunError {
    fn from(e: batchlab_method::FileError) -> Self {
        RunError::Report(e.into())
    }
}

impl RunError {
    /// An I/O error about `path`.
    pub fn io(path: &Path, error: impl std::fmt::Display) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}
