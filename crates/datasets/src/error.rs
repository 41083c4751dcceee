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
    /// A file could not be written (a download, an extracted archive entry).
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file could not be downloaded: no network, a refused connection, an HTTP error status,
    /// a dropped connection or a server that sends the wrong size.
    #[error("cannot download {file} from {url}: {message}. {help}")]
    Download {
        /// The file's name.
        file: String,
        /// The URL tried.
        url: String,
        /// What went wrong.
        message: String,
        /// Where to place a copy obtained some other way, with its size and checksum.
        help: String,
    },
    /// A file's bytes do not have the published checksum.
    #[error("{path}: checksum {found} does not match the published {expected}. {help}")]
    Checksum {
        /// The file that was checked.
        path: PathBuf,
        /// The published checksum, e.g. `md5 c32a1d4ab5d03f1284b67883e8d87530`.
        expected: String,
        /// The file's checksum, same algorithm.
        found: String,
        /// What happened to the file and what to do.
        help: String,
    },
    /// An archive entry cannot be extracted: a path that leaves the destination, a damaged
    /// archive.
    #[error("{archive}: entry {entry}: {message}")]
    Archive {
        /// The archive.
        archive: PathBuf,
        /// The entry's name as stored in the archive (empty if the entry cannot be read).
        entry: String,
        /// What is wrong.
        message: String,
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
