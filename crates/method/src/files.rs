//! Writing files so that a reader never sees half of one: write a temporary sibling, sync
//! it, rename it over the final name (a rename within a directory is atomic). The one
//! atomic writer of runners and reports.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::FileError;

/// Writes `bytes` to a temporary sibling of `path`, syncs it and renames it over `path`.
/// An error names `path`, the file being written, not its temporary sibling (which is removed).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let tmp = temporary_sibling(path);
    let written = std::fs::File::create(&tmp)
        .map_err(FileError::io("create (as a temporary sibling)", path))
        .and_then(|mut file| {
            file.write_all(bytes)
                .map_err(FileError::io("write", path))?;
            file.sync_all().map_err(FileError::io("sync", path))
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    rename(&tmp, path)
}

/// `dir/name.ext` -> `dir/.name.tmp<pid>.ext`: hidden, keeping the extension, which plotters'
/// bitmap backend reads to choose the image format, and unique to the process, so shards that
/// write one directory at once never write the same temporary file.
pub fn temporary_sibling(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!(
            ".{stem}.tmp{}.{}",
            std::process::id(),
            ext.to_string_lossy()
        ),
        None => format!(".{stem}.tmp{}", std::process::id()),
    };
    path.with_file_name(name)
}

/// Renames `from` over `to`, naming the destination on failure.
pub fn rename(from: &Path, to: &Path) -> Result<(), FileError> {
    std::fs::rename(from, to).map_err(FileError::io("move a finished file onto", to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.md");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failed_write_names_the_file_not_its_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing-dir").join("figure.svg");
        let err = write_atomic(&path, b"x").unwrap_err().to_string();
        assert!(err.contains("figure.svg"), "{err}");
        assert!(!err.contains(".figure.tmp"), "{err}");
    }
}
