//! The two error types of this crate: bad arguments to the study logic, and files that
//! cannot be read or written. A file error names its file, because a study is assembled
//! from several files and "invalid data" alone does not say which.

use std::path::PathBuf;

/// Bad input to one of this crate's functions: an argument outside its domain, or data
/// that cannot be analysed. Says which argument and what was expected, because the runner
/// passes its config's values straight through.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TargetError {
    /// An argument is outside its domain.
    #[error("{name} = {value}: expected {expected}")]
    Argument {
        /// The argument's name, e.g. `dims`.
        name: &'static str,
        /// Its value as given.
        value: String,
        /// What it must be, e.g. `1 to 8`.
        expected: &'static str,
    },
    /// The data as a whole cannot be analysed, e.g. too few points for a fit.
    #[error("{0}")]
    Data(String),
}

impl TargetError {
    /// Shorthand for [`TargetError::Argument`].
    pub fn argument(
        name: &'static str,
        value: impl std::fmt::Display,
        expected: &'static str,
    ) -> Self {
        TargetError::Argument {
            name,
            value: value.to_string(),
            expected,
        }
    }
}

/// A file that could not be read or written, or whose content is not what was written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
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
    /// A file was read but its content is not what this crate writes.
    #[error("{}: {message}", path.display())]
    Format {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong, and where in the file.
        message: String,
    },
}

impl FileError {
    /// Shorthand for [`FileError::Io`], used with `map_err`.
    pub fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| FileError::Io {
            action,
            path,
            source,
        }
    }

    /// Shorthand for [`FileError::Format`].
    pub fn format(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        FileError::Format {
            path: path.into(),
            message: message.into(),
        }
    }
}
