//! Unpacks the downloaded archives (CIFAR-10's `.tar.gz`, cats-vs-dogs' `.zip`) so that an
//! interrupted extraction never looks finished and no entry lands outside the destination.
//!
//! Entries go to a sibling directory `<dest>.partial-<pid>`, which is renamed to `<dest>` only
//! when every entry is written; on an error it is removed. So `<dest>` exists only complete, and
//! its existence is what tells a later run that the archive was extracted (a run killed outright
//! leaves its `.partial-<pid>` behind, never a `<dest>`). Entries whose paths are absolute or have
//! a `..` component are refused, which fails the whole extraction; symbolic and hard links are
//! skipped, since neither dataset has any and a link is the other way to write outside the
//! destination.

use std::{
    fs::{self, File},
    io::{self, BufReader},
    path::{Component, Path, PathBuf},
};

use flate2::read::GzDecoder;

use crate::error::DatasetError;

/// Extracts a gzipped tar archive into the directory `dest`. A directory already at `dest` is
/// taken to be a finished extraction (nothing else creates it) and left as it is.
pub fn extract_tar_gz(archive: &Path, dest: &Path) -> Result<(), DatasetError> {
    extract_with(archive, dest, |partial| {
        let file = open(archive)?;
        let mut tar = tar::Archive::new(GzDecoder::new(BufReader::new(file)));
        let entries = tar
            .entries()
            .map_err(|e| archive_error(archive, "", format!("cannot read: {e}")))?;
        for entry in entries {
            let mut entry =
                entry.map_err(|e| archive_error(archive, "", format!("cannot read: {e}")))?;
            let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            let kind = entry.header().entry_type();
            if kind.is_symlink() || kind.is_hard_link() {
                continue;
            }
            let path = entry
                .path()
                .map_err(|e| archive_error(archive, &name, format!("unreadable path: {e}")))?;
            let Some(target) = enclosed(archive, &name, &path, partial)? else {
                continue;
            };
            if kind.is_dir() {
                create_dir(archive, &name, &target)?;
            } else if kind.is_file() || kind.is_contiguous() {
                write_entry(archive, &name, &target, &mut entry)?;
            }
            // Anything else (devices, FIFOs, global PAX headers) has no place in a dataset.
        }
        Ok(())
    })
}

/// Extracts a zip archive into the directory `dest`. A directory already at `dest` is taken to
/// be a finished extraction (nothing else creates it) and left as it is.
pub fn extract_zip(archive: &Path, dest: &Path) -> Result<(), DatasetError> {
    extract_with(archive, dest, |partial| {
        let mut zip = zip::ZipArchive::new(BufReader::new(open(archive)?))
            .map_err(|e| archive_error(archive, "", format!("not a readable zip archive: {e}")))?;
        for index in 0..zip.len() {
            let mut entry = zip.by_index(index).map_err(|e| {
                archive_error(archive, &format!("#{index}"), format!("cannot read: {e}"))
            })?;
            let name = match entry.name() {
                Ok(n) => n.into_owned(),
                Err(e) => {
                    let raw = String::from_utf8_lossy(entry.name_raw()).into_owned();
                    return Err(archive_error(
                        archive,
                        &raw,
                        format!("unreadable name: {e}"),
                    ));
                }
            };
            if entry.is_symlink() {
                continue;
            }
            let Some(target) = enclosed(archive, &name, Path::new(&name), partial)? else {
                continue;
            };
            if entry.is_dir() {
                create_dir(archive, &name, &target)?;
            } else {
                write_entry(archive, &name, &target, &mut entry)?;
            }
        }
        Ok(())
    })
}

/// Runs `unpack` into `<dest>.partial-<pid>` and renames that to `dest` when it succeeds.
fn extract_with(
    archive: &Path,
    dest: &Path,
    unpack: impl FnOnce(&Path) -> Result<(), DatasetError>,
) -> Result<(), DatasetError> {
    if dest.is_dir() {
        return Ok(());
    }
    if dest.exists() {
        return Err(DatasetError::format(
            dest,
            format!(
                "cannot extract {} here: a file (not a directory) is in the way",
                archive.display()
            ),
        ));
    }
    let Some(name) = dest.file_name() else {
        return Err(DatasetError::format(
            dest,
            format!(
                "cannot extract {} here: the destination must name a directory",
                archive.display()
            ),
        ));
    };
    let parent = dest.parent().unwrap_or(Path::new(""));
    let mut partial_name = name.to_os_string();
    partial_name.push(format!(".partial-{}", std::process::id()));
    let partial = parent.join(partial_name);
    let write = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DatasetError::Write { path, source }
    };
    // Left over from an earlier process that had the same id: not ours to resume.
    if partial.exists() {
        fs::remove_dir_all(&partial).map_err(write(&partial))?;
    }
    fs::create_dir_all(&partial).map_err(write(&partial))?;
    let guard = RemoveOnDrop(Some(partial.clone()));
    unpack(&partial)?;
    match fs::rename(&partial, dest) {
        Ok(()) => {
            guard.disarm();
            Ok(())
        }
        // Another process finished the same extraction first; ours is dropped with the guard.
        Err(_) if dest.exists() => Ok(()),
        Err(source) => Err(DatasetError::Write {
            path: dest.to_path_buf(),
            source,
        }),
    }
}

/// Removes a half-extracted directory unless disarmed.
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            // Nothing better to do if it fails: the error being returned matters more.
            let _ = fs::remove_dir_all(path);
        }
    }
}

fn open(archive: &Path) -> Result<File, DatasetError> {
    File::open(archive).map_err(|source| DatasetError::Io {
        path: archive.to_path_buf(),
        source,
    })
}

fn archive_error(archive: &Path, entry: &str, message: String) -> DatasetError {
    DatasetError::Archive {
        archive: archive.to_path_buf(),
        entry: entry.into(),
        message,
    }
}

/// Where entry `name` (stored path `path`) goes under `root`, None for the root itself (`./`),
/// or an error for a path that could leave `root`.
fn enclosed(
    archive: &Path,
    name: &str,
    path: &Path,
    root: &Path,
) -> Result<Option<PathBuf>, DatasetError> {
    if name.contains('\0') {
        return Err(archive_error(
            archive,
            name,
            "refused: the name contains a NUL byte".into(),
        ));
    }
    let mut relative = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => relative.push(part),
            Component::CurDir => {}
            // Refused outright rather than resolved: an archive that climbs out is not one of
            // the published ones.
            Component::ParentDir => {
                return Err(archive_error(
                    archive,
                    name,
                    "refused: a `..` component would place it outside the destination".into(),
                ))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(archive_error(
                    archive,
                    name,
                    "refused: an absolute path would place it outside the destination".into(),
                ))
            }
        }
    }
    Ok((!relative.as_os_str().is_empty()).then(|| root.join(relative)))
}

fn create_dir(archive: &Path, name: &str, target: &Path) -> Result<(), DatasetError> {
    fs::create_dir_all(target).map_err(|e| {
        archive_error(
            archive,
            name,
            format!("cannot create directory {}: {e}", target.display()),
        )
    })
}

fn write_entry(
    archive: &Path,
    name: &str,
    target: &Path,
    reader: &mut impl io::Read,
) -> Result<(), DatasetError> {
    if let Some(parent) = target.parent() {
        create_dir(archive, name, parent)?;
    }
    let fail = |e: io::Error| {
        archive_error(
            archive,
            name,
            format!("cannot extract to {}: {e}", target.display()),
        )
    };
    let mut out = File::create(target).map_err(fail)?;
    io::copy(reader, &mut out).map_err(fail)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tar_gz(path: &Path, build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) {
        let mut builder = tar::Builder::new(Vec::new());
        build(&mut builder);
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        fs::write(path, gz.finish().unwrap()).unwrap();
    }

    fn add_file(builder: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]) {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, name, data).unwrap();
    }

    /// An entry whose stored name is written byte for byte, bypassing the builder's own checks
    /// (which refuse `..`), as a hostile archive would have it.
    fn add_raw(builder: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]) {
        let mut header = tar::Header::new_old();
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, data).unwrap();
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn tar_gz_is_extracted_whole_without_links() {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("a.tar.gz");
        tar_gz(&archive, |b| {
            let mut dir = tar::Header::new_gnu();
            dir.set_entry_type(tar::EntryType::Directory);
            dir.set_mode(0o755);
            dir.set_size(0);
            b.append_data(&mut dir, "top/", io::empty()).unwrap();
            add_file(b, "top/a.txt", b"alpha");
            add_file(b, "./top/sub/b.bin", &[0, 1, 2, 255]);
            let mut link = tar::Header::new_gnu();
            link.set_entry_type(tar::EntryType::Symlink);
            link.set_size(0);
            b.append_link(&mut link, "top/link", "/etc/passwd").unwrap();
        });
        let dest = tmp.path().join("out");
        extract_tar_gz(&archive, &dest).unwrap();
        assert_eq!(fs::read(dest.join("top/a.txt")).unwrap(), b"alpha");
        assert_eq!(
            fs::read(dest.join("top/sub/b.bin")).unwrap(),
            [0, 1, 2, 255]
        );
        assert!(fs::symlink_metadata(dest.join("top/link")).is_err());
        assert_eq!(listing(tmp.path()), ["a.tar.gz", "out"]);

        // A finished destination is left alone.
        fs::write(dest.join("top/a.txt"), b"edited").unwrap();
        extract_tar_gz(&archive, &dest).unwrap();
        assert_eq!(fs::read(dest.join("top/a.txt")).unwrap(), b"edited");
    }

    #[test]
    fn zip_is_extracted_whole_without_links() {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("a.zip");
        {
            let mut zip = zip::ZipWriter::new(File::create(&archive).unwrap());
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            zip.add_directory("PetImages/", options).unwrap();
            zip.start_file("PetImages/Cat/0.jpg", options).unwrap();
            zip.write_all(b"not really a jpeg").unwrap();
            zip.start_file("readme[1].txt", options).unwrap();
            zip.write_all(b"hello").unwrap();
            zip.add_symlink("PetImages/escape", "/etc", options)
                .unwrap();
            zip.finish().unwrap();
        }
        let dest = tmp.path().join("cats");
        extract_zip(&archive, &dest).unwrap();
        assert_eq!(
            fs::read(dest.join("PetImages/Cat/0.jpg")).unwrap(),
            b"not really a jpeg"
        );
        assert_eq!(fs::read(dest.join("readme[1].txt")).unwrap(), b"hello");
        assert!(fs::symlink_metadata(dest.join("PetImages/escape")).is_err());
        assert_eq!(listing(tmp.path()), ["a.zip", "cats"]);
    }

    #[test]
    fn entries_that_escape_are_refused_and_leave_nothing() {
        for name in ["../evil", "ok/../../evil", "/tmp/evil"] {
            let tmp = tempfile::tempdir().unwrap();
            let archive = tmp.path().join("bad.tar.gz");
            tar_gz(&archive, |b| {
                add_file(b, "fine.txt", b"fine");
                add_raw(b, name, b"evil");
            });
            let dest = tmp.path().join("out");
            let err = extract_tar_gz(&archive, &dest).unwrap_err();
            assert!(matches!(err, DatasetError::Archive { .. }), "{err:?}");
            let err = err.to_string();
            assert!(err.contains(&archive.display().to_string()), "{err}");
            assert!(err.contains(name) && err.contains("refused"), "{err}");
            assert_eq!(listing(tmp.path()), ["bad.tar.gz"], "{name}");
        }

        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("bad.zip");
        {
            let mut zip = zip::ZipWriter::new(File::create(&archive).unwrap());
            let options = zip::write::SimpleFileOptions::default();
            zip.start_file("fine.txt", options).unwrap();
            zip.write_all(b"fine").unwrap();
            zip.start_file("../evil", options).unwrap();
            zip.write_all(b"evil").unwrap();
            zip.finish().unwrap();
        }
        let dest = tmp.path().join("out");
        let err = extract_zip(&archive, &dest).unwrap_err().to_string();
        assert!(err.contains("../evil") && err.contains("bad.zip"), "{err}");
        assert_eq!(listing(tmp.path()), ["bad.zip"]);
    }

    #[test]
    fn a_damaged_archive_names_itself_and_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("cut.tar.gz");
        tar_gz(&archive, |b| add_file(b, "big.bin", &vec![7u8; 100_000]));
        let bytes = fs::read(&archive).unwrap();
        fs::write(&archive, &bytes[..bytes.len() / 2]).unwrap();
        let err = extract_tar_gz(&archive, &tmp.path().join("out"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cut.tar.gz"), "{err}");
        assert_eq!(listing(tmp.path()), ["cut.tar.gz"]);

        let not_zip = tmp.path().join("x.zip");
        fs::write(&not_zip, b"hello").unwrap();
        let err = extract_zip(&not_zip, &tmp.path().join("out"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("x.zip") && err.contains("zip"), "{err}");
        assert_eq!(listing(tmp.path()), ["cut.tar.gz", "x.zip"]);

        // A file where the directory should go is not mistaken for a finished extraction.
        let in_the_way = tmp.path().join("in-the-way");
        fs::write(&in_the_way, b"").unwrap();
        let err = extract_zip(&not_zip, &in_the_way).unwrap_err().to_string();
        assert!(err.contains("not a directory"), "{err}");
    }
}
