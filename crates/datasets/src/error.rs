//! Errors about data, each naming the file and what was expected.

use std::path::PathBuf;

/// Why a dataset cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not in the expected format.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What was expected and what was found.
        message: String,
    },
    /// The dataset is not on this machine.
    #[error("{dataset} is not on this machine. {help}")]
    Missing {
        /// The dataset's name.
        dataset: String,
        /// Which files to put where (or which package to install).
        help: String,
    },
}

impl DatasetError {
    pub(crate) fn format(path: &std::path::Path, message: impl Into<String>) -> Self {
        Self::Format {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
