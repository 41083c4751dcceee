//! `batchlab data fetch` and `batchlab data info`: getting a dataset into the data directory and
//! saying what is there.
//!
//! Layout under the data directory: archives are downloaded to `downloads/` and extracted to
//! `<name>/` (`cifar10/cifar-10-batches-bin/`, `cats-vs-dogs/PetImages/`); the IDX sets are
//! single gzipped files downloaded straight to `<name>/`; decoded caches live in `cache/`.

use std::path::{Path, PathBuf};

use crate::{
    checksum::{digest_file, digest_gunzipped, Checksum},
    cifar10,
    download::download,
    error::DatasetError,
    extract::{extract_tar_gz, extract_zip},
    images::ImageSet,
    mnist::{self, MnistKind},
    pets,
    sources::{remotes, Remote},
    spec::{DataConfig, DatasetName},
};

/// Where archives are kept, under the data directory.
pub const DOWNLOADS: &str = "downloads";

/// Downloads, verifies and extracts `name` unless it is already present; returns what was done,
/// one line per step. `mirror`, when given, is a base URL serving the same file names (an
/// institute's mirror); the files are still verified against the official checksums.
pub fn fetch(
    name: DatasetName,
    data_dir: &Path,
    mirror: Option<&str>,
    progress: bool,
) -> Result<Vec<String>, DatasetError> {
    let files = remotes(name.as_str()).unwrap_or(&[]);
    fetch_files(name, files, data_dir, mirror, progress)
}

pub(crate) fn fetch_files(
    name: DatasetName,
    files: &[Remote],
    data_dir: &Path,
    mirror: Option<&str>,
    progress: bool,
) -> Result<Vec<String>, DatasetError> {
    if name == DatasetName::Synthetic {
        return Ok(vec![
            "synthetic data is generated in memory; nothing to fetch".into(),
        ]);
    }
    if let Ok(dir) = locate(name, data_dir) {
        return Ok(vec![format!(
            "{} is already present in {}; `batchlab data info {}` checks it",
            name.as_str(),
            dir.display(),
            name.as_str()
        )]);
    }
    let get = |remote: &Remote, dir: &Path| match mirror {
        Some(base) => {
            let url = format!("{}/{}", base.trim_end_matches('/'), remote.file);
            download(&url, remote, dir, progress)
        }
        None => download(remote.url, remote, dir, progress),
    };
    let mut lines = Vec::new();
    match name {
        DatasetName::FashionMnist | DatasetName::Mnist => {
            let dir = data_dir.join(name.as_str());
            for remote in files {
                let path = get(remote, &dir)?;
                lines.push(format!("{}: {}", path.display(), verified(remote)));
            }
        }
        DatasetName::Cifar10 | DatasetName::CatsVsDogs => {
            let remote = &files[0];
            let archive = get(remote, &data_dir.join(DOWNLOADS))?;
            lines.push(format!("{}: {}", archive.display(), verified(remote)));
            let dest = data_dir.join(name.as_str());
            if name == DatasetName::Cifar10 {
                extract_tar_gz(&archive, &dest)?;
            } else {
                extract_zip(&archive, &dest)?;
            }
            lines.push(format!("extracted to {}", dest.display()));
        }
        DatasetName::Synthetic => unreachable!("returned above"),
    }
    // An extraction into a directory left over from something else leaves the data incomplete.
    let dir = locate(name, data_dir).map_err(|e| DatasetError::Format {
        path: data_dir.join(name.as_str()),
        message: format!(
            "still incomplete after fetching ({e}); remove this directory and fetch again"
        ),
    })?;
    lines.push(format!("{} is ready in {}", name.as_str(), dir.display()));
    Ok(lines)
}

fn verified(remote: &Remote) -> String {
    match &remote.checksum {
        Some(c) => format!("{c} verified"),
        None => "downloaded (no published checksum to verify against)".into(),
    }
}

/// The directory holding the dataset's files, or the Missing error saying how to get them.
pub fn locate(name: DatasetName, data_dir: &Path) -> Result<PathBuf, DatasetError> {
    match name {
        DatasetName::Cifar10 => cifar10::locate(data_dir),
        DatasetName::CatsVsDogs => pets::locate(data_dir),
        DatasetName::FashionMnist => mnist::locate(MnistKind::FashionMnist, data_dir),
        DatasetName::Mnist => mnist::locate(MnistKind::Mnist, data_dir),
        DatasetName::Synthetic => Ok(PathBuf::from("(generated in memory)")),
    }
}

/// What `batchlab data info` prints: location, checksum state, counts per split and class, and
/// (cats vs dogs) the files skipped. Loads the data with its default split to count it.
pub fn info(name: DatasetName, data_dir: &Path) -> Result<Vec<String>, DatasetError> {
    let dir = locate(name, data_dir)?;
    let mut lines = vec![format!("{}: {}", name.as_str(), dir.display())];
    lines.extend(checksum_lines(name, data_dir, &dir)?);
    let data = DataConfig::named(name).load(data_dir)?;
    let splits = &data.splits;
    let [c, h, w] = splits.train.shape;
    lines.push(format!("images: {c}x{h}x{w}, {} classes", data.classes));
    for (split, set) in [
        ("train", &splits.train),
        ("validation", &splits.validation),
        ("test", &splits.test),
    ] {
        lines.push(split_line(split, set, data.classes));
    }
    lines.extend(data.notes.into_iter().skip(1));
    Ok(lines)
}

fn split_line(split: &str, set: &ImageSet, classes: usize) -> String {
    let counts = set.class_counts(classes);
    let per_class = if counts.iter().all(|&n| n == counts[0]) {
        format!("{} per class", counts[0])
    } else {
        let each: Vec<String> = counts.iter().map(usize::to_string).collect();
        format!("per class {}", each.join(" / "))
    };
    format!("{split:<10} {:>6} examples, {per_class}", set.len())
}

/// One line per file with a published checksum: verified, mismatched, or not checkable.
fn checksum_lines(
    name: DatasetName,
    data_dir: &Path,
    dir: &Path,
) -> Result<Vec<String>, DatasetError> {
    let Some(files) = remotes(name.as_str()) else {
        return Ok(Vec::new());
    };
    let mut lines = Vec::new();
    for remote in files {
        let candidates = match name {
            DatasetName::Cifar10 | DatasetName::CatsVsDogs => {
                vec![data_dir.join(DOWNLOADS).join(remote.file)]
            }
            _ => vec![
                dir.join(remote.file),
                dir.join(remote.file.trim_end_matches(".gz")),
            ],
        };
        let Some(path) = candidates.into_iter().find(|p| p.is_file()) else {
            lines.push(format!(
                "{}: not kept on disk, so the extracted files cannot be checked against {}",
                remote.file,
                remote
                    .checksum
                    .map_or("a checksum".into(), |c| c.to_string())
            ));
            continue;
        };
        lines.push(format!(
            "{}: {}",
            path.display(),
            file_state(&path, remote)?
        ));
    }
    Ok(lines)
}

fn file_state(path: &Path, remote: &Remote) -> Result<String, DatasetError> {
    let gzipped = path.extension().is_some_and(|e| e == "gz");
    if gzipped {
        if let Some(expected) = remote.checksum {
            let found = digest_file(path, expected.algorithm())?;
            if expected.matches(&found) {
                return Ok(format!("{expected} verified (as published)"));
            }
            if remote.decompressed.is_none() {
                return Ok(mismatch(expected, &found));
            }
        }
    }
    match remote.decompressed {
        Some(expected) => {
            let found = if gzipped {
                digest_gunzipped(path, expected.algorithm())?
            } else {
                digest_file(path, expected.algorithm())?
            };
            Ok(if expected.matches(&found) {
                format!("decompressed {expected} verified (a recompressed or unpacked copy)")
            } else {
                mismatch(expected, &found)
            })
        }
        None => Ok("no published checksum for this form of the file".into()),
    }
}

fn mismatch(expected: Checksum, found: &str) -> String {
    format!(
        "CHECKSUM MISMATCH: expected {expected}, found {} {found}",
        expected.algorithm().name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::{remote_for, Behaviour, Server};

    #[test]
    fn fetch_of_a_present_dataset_does_not_download() {
        let Ok(dir) = mnist::locate(MnistKind::FashionMnist, Path::new("/nonexistent")) else {
            eprintln!("skipped: dataset-fashion-mnist is not installed");
            return;
        };
        let lines = fetch(
            DatasetName::FashionMnist,
            Path::new("/nonexistent"),
            None,
            false,
        )
        .unwrap();
        assert!(lines[0].contains("already present"), "{lines:?}");
        assert!(lines[0].contains(&dir.display().to_string()), "{lines:?}");
    }

    #[test]
    fn info_reports_checksums_and_counts_of_the_real_fashion_mnist() {
        if mnist::locate(MnistKind::FashionMnist, Path::new("/nonexistent")).is_err()
            && std::env::var_os("BATCHLAB_REQUIRE_FASHION_MNIST").is_none()
        {
            eprintln!("skipped: dataset-fashion-mnist is not installed");
            return;
        }
        let lines = info(DatasetName::FashionMnist, Path::new("/nonexistent")).unwrap();
        let text = lines.join("\n");
        assert_eq!(text.matches("verified").count(), 4, "{text}");
        assert!(text.contains("train       55000 examples"), "{text}");
        assert!(
            text.contains("test        10000 examples, 1000 per class"),
            "{text}"
        );
        assert!(text.contains("images: 1x28x28, 10 classes"), "{text}");
    }

    #[test]
    fn a_corrupted_local_copy_is_reported_as_a_mismatch() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("mnist");
        std::fs::create_dir_all(&dir).unwrap();
        let remote = &remotes("mnist").unwrap()[0];
        let path = dir.join(remote.file);
        std::fs::write(&path, b"not the real file").unwrap();
        let state = file_state(&path, remote).unwrap();
        assert!(
            state.starts_with("CHECKSUM MISMATCH: expected md5"),
            "{state}"
        );
    }

    #[test]
    fn missing_data_gives_the_fetch_hint_and_synthetic_needs_nothing() {
        let root = tempfile::tempdir().unwrap();
        let err = info(DatasetName::Cifar10, root.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("batchlab data fetch cifar10"), "{err}");
        let lines = fetch(DatasetName::Synthetic, root.path(), None, false).unwrap();
        assert!(lines[0].contains("nothing to fetch"));
        let lines = info(DatasetName::Synthetic, root.path()).unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("train") && l.contains(" 2000 examples")),
            "{lines:?}"
        );
    }

    /// A tiny `cifar-10-binary.tar.gz` in the real layout: `records` records per batch file, the
    /// label of record i of file f being (f + i) % 10.
    fn cifar_tarball(records: usize) -> Vec<u8> {
        let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        let names = cifar10::TRAIN_FILES.iter().chain([&cifar10::TEST_FILE]);
        for (f, name) in names.enumerate() {
            let mut bytes = Vec::new();
            for i in 0..records {
                bytes.push(((f + i) % 10) as u8);
                bytes.extend((0..cifar10::RECORD - 1).map(|p| (p % 251) as u8));
            }
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            let path = format!("cifar-10-batches-bin/{name}");
            tar.append_data(&mut header, path, bytes.as_slice())
                .unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn fetch_downloads_resumes_verifies_and_extracts_an_archive() {
        let tarball = cifar_tarball(20);
        let server = Server::start(Behaviour {
            body: tarball.clone(),
            ranges: true,
            cut_first_after: Some(tarball.len() / 2),
            ..Default::default()
        });
        let files = [remote_for(&tarball, "cifar-10-binary.tar.gz", true)];
        let root = tempfile::tempdir().unwrap();
        let data_dir = root.path();
        let fetch = || {
            fetch_files(
                DatasetName::Cifar10,
                &files,
                data_dir,
                Some(&server.base),
                false,
            )
        };

        // The first attempt is cut off half-way: only the .part exists, nothing is extracted.
        let err = fetch().unwrap_err().to_string();
        assert!(err.contains("cifar-10-binary.tar.gz"), "{err}");
        assert!(data_dir
            .join("downloads/cifar-10-binary.tar.gz.part")
            .is_file());
        assert!(!data_dir.join("downloads/cifar-10-binary.tar.gz").exists());
        assert!(!data_dir.join("cifar10").exists());

        // The second resumes from the cut, verifies, extracts.
        let lines = fetch().unwrap();
        assert_eq!(
            server.ranges()[1].as_deref(),
            Some(format!("bytes={}-", tarball.len() / 2).as_str())
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("md5") && l.ends_with("verified")),
            "{lines:?}"
        );
        assert!(lines.last().unwrap().contains("is ready in"), "{lines:?}");
        let splits = cifar10::load(data_dir, 10).unwrap();
        assert_eq!(
            (
                splits.train.len(),
                splits.validation.len(),
                splits.test.len()
            ),
            (90, 10, 20)
        );
        assert_eq!(splits.train.labels[..3], [0, 1, 2]);

        // A third does nothing.
        let again = fetch().unwrap();
        assert!(again[0].contains("already present"), "{again:?}");
        assert_eq!(
            server.ranges().len(),
            2,
            "no request once the data is present"
        );
    }
}
