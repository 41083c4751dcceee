//! The one error type of this crate. Every variant names the file it is about, because a
//! report is assembled from several files and "invalid data" alone does not say which.

use std::path::PathBuf;

/// An error while reading results or writing a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A filesystem operation failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. "append to".
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// polars could not read or write a table.
    #[error("could not {action} {}: {source}", path.display())]
    Table {
        /// What was being done, e.g. "read the CSV table".
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: polars_core::error::PolarsError,
    },
    /// A file was read but its content is not what this crate wrote.
    #[error("{}: {message}", path.display())]
    Format {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong, and where in the file.
        message: String,
    },
    /// plotters failed to draw or encode a figure.
    #[error("could not draw the figure {}: {message}", path.display())]
    Plot {
        /// The figure file concerned.
        path: PathBuf,
        /// plotters' message.
        message: String,
    },
}

impl From<batchlab_method::FileError> for ReportError {
    fn from(e: batchlab_method::FileError) -> Self {
        match e {
            batchlab_method::FileError::Io {
                action,
                path,
                source,
            } => ReportError::Io {
                action,
                path,
                source,
            },
            batchlab_method::FileError::Format { path, message } => {
                ReportError::Format { path, message }
            }
        }
    }
}

impl ReportError {
    /// Shorthand for [`ReportError::Io`], used with `map_err`.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| ReportError::Io {
            action,
            path,
            source,
        }
    }

    /// Shorthand for [`ReportError::Table`], used with `map_err`.
    pub(crate) fn table(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(polars_core::error::PolarsError) -> Self {
        let path = path.into();
        move |source| ReportError::Table {
            action,
            path,
            source,
        }
    }
}
