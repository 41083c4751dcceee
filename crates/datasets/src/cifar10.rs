//! CIFAR-10 (Krizhevsky 2009) from its official binary files: 50,000 training and 10,000 test
//! 32x32 colour images of 10 classes.
//!
//! `cifar-10-binary.tar.gz` extracts to `cifar-10-batches-bin/` with `data_batch_1.bin` ..
//! `data_batch_5.bin` (training) and `test_batch.bin`, 10,000 records each. A record is one
//! label byte (0..9) and 3,072 pixel bytes: the 1,024 red values of the 32x32 image row by row,
//! then green, then blue, which is already the channel-major `[3, 32, 32]` of an
//! [`ImageSet`].

use std::path::{Path, PathBuf};

use crate::{
    error::DatasetError,
    images::{ImageSet, Splits},
};

/// The training files, in the order their records are concatenated.
pub const TRAIN_FILES: [&str; 5] = [
    "data_batch_1.bin",
    "data_batch_2.bin",
    "data_batch_3.bin",
    "data_batch_4.bin",
    "data_batch_5.bin",
];

/// The test file.
pub const TEST_FILE: &str = "test_batch.bin";

/// `[C, H, W]` of one image.
pub const SHAPE: [usize; 3] = [3, 32, 32];

/// Bytes of one record: the label, then the pixels.
pub const RECORD: usize = 1 + 3 * 32 * 32;

/// Number of classes (airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck).
pub const CLASSES: usize = 10;

/// The directory holding the six files: `<data_dir>/cifar10/cifar-10-batches-bin/`.
pub fn locate(data_dir: &Path) -> Result<PathBuf, DatasetError> {
    let dir = data_dir.join("cifar10").join("cifar-10-batches-bin");
    let missing: Vec<&str> = TRAIN_FILES
        .iter()
        .chain([&TEST_FILE])
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if missing.is_empty() {
        return Ok(dir);
    }
    Err(DatasetError::Missing {
        dataset: "cifar10".into(),
        help: format!(
            "Missing {} in {}/. Run `batchlab data fetch cifar10`, or extract \
             cifar-10-binary.tar.gz (the \"CIFAR-10 binary version\" of \
             https://www.cs.toronto.edu/~kriz/cifar.html) into {}/.",
            missing.join(", "),
            dir.display(),
            data_dir.join("cifar10").display()
        ),
    })
}

/// Loads the 50,000 training images, holding out the last `validation` of them (in file order:
/// `data_batch_1.bin` first), and the 10,000 test images.
///
/// Raschka's benchmark (seed 002) trained on 45,000 with 5,000 held out. The article does not
/// say which 5,000; its code (`rasbt/b3-basic-batchsize-benchmark`, `main.py`) uses a
/// `Cifar10DataModule` which, in the versions Raschka published elsewhere, takes
/// `random_split(train, lengths=[45000, 5000])` with torch's global generator, a random subset
/// that cannot be reproduced outside torch. The training batches are themselves in random order
/// ("The training batches contain the remaining images in random order", the dataset's page),
/// so the last 5,000 are a random subset of the same kind, and a fixed one: every run and every
/// batch size validates on the same images.
pub fn load(data_dir: &Path, validation: usize) -> Result<Splits, DatasetError> {
    let dir = locate(data_dir)?;
    let mut train = ImageSet {
        images: Vec::new(),
        labels: Vec::new(),
        shape: SHAPE,
    };
    for name in TRAIN_FILES {
        read_batch(&dir.join(name), &mut train)?;
    }
    let mut test = ImageSet {
        images: Vec::new(),
        labels: Vec::new(),
        shape: SHAPE,
    };
    read_batch(&dir.join(TEST_FILE), &mut test)?;
    let n = train.len();
    if validation >= n {
        return Err(DatasetError::format(
            &dir.join(TRAIN_FILES[4]),
            format!("cannot hold out {validation} validation examples from {n} training examples"),
        ));
    }
    Ok(Splits {
        validation: train.slice(n - validation..n),
        train: train.slice(0..n - validation),
        test,
        source: dir,
    })
}

/// Appends the records of one batch file to `set`.
pub fn read_batch(path: &Path, set: &mut ImageSet) -> Result<(), DatasetError> {
    let bytes = std::fs::read(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if bytes.is_empty() || bytes.len() % RECORD != 0 {
        return Err(DatasetError::format(
            path,
            format!(
                "{} bytes is not a whole number of {RECORD}-byte records (1 label + 3x32x32 \
                 pixels; the official files have 10,000 records, 30,730,000 bytes): truncated, \
                 or not the binary version of CIFAR-10",
                bytes.len()
            ),
        ));
    }
    let count = bytes.len() / RECORD;
    set.images.reserve(count * (RECORD - 1));
    set.labels.reserve(count);
    for (i, record) in bytes.chunks_exact(RECORD).enumerate() {
        if usize::from(record[0]) >= CLASSES {
            return Err(DatasetError::format(
                path,
                format!(
                    "record {i} (byte offset {}) has label {}; expected 0..9",
                    i * RECORD,
                    record[0]
                ),
            ));
        }
        set.labels.push(record[0]);
        set.images.extend_from_slice(&record[1..]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes the six files with `per_file` records each. Record `i` (counting across the
    /// training files in order, then from 0 in the test file) has label `i % 10`, red plane
    /// `[i, 1, ...]`, green plane `[i, 2, ...]`, blue plane `[i, 3, ...]` and, for the test file,
    /// 200 added to the first red byte.
    fn fixture(data_dir: &Path, per_file: usize) -> PathBuf {
        let dir = data_dir.join("cifar10").join("cifar-10-batches-bin");
        std::fs::create_dir_all(&dir).unwrap();
        let record = |i: usize, test: bool| {
            let mut r = vec![0u8; RECORD];
            r[0] = (i % 10) as u8;
            for c in 0..3 {
                r[1 + c * 1024] = i as u8 + if test && c == 0 { 200 } else { 0 };
                r[2 + c * 1024] = c as u8 + 1;
            }
            r
        };
        for (f, name) in TRAIN_FILES.iter().enumerate() {
            let bytes: Vec<u8> = (0..per_file)
                .flat_map(|r| record(f * per_file + r, false))
                .collect();
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        let bytes: Vec<u8> = (0..per_file).flat_map(|r| record(r, true)).collect();
        std::fs::write(dir.join(TEST_FILE), bytes).unwrap();
        dir
    }

    #[test]
    fn records_parse_channel_major_and_the_last_examples_are_held_out() {
        let root = tempfile::tempdir().unwrap();
        let dir = fixture(root.path(), 3);
        let s = load(root.path(), 4).unwrap();
        assert_eq!(s.source, dir);
        assert_eq!(
            (s.train.len(), s.validation.len(), s.test.len()),
            (11, 4, 3)
        );
        assert_eq!(s.train.shape, [3, 32, 32]);
        let first = s.train.image(0);
        assert_eq!(
            (
                first[0],
                first[1],
                first[1024],
                first[1025],
                first[2048],
                first[2049]
            ),
            (0, 1, 0, 2, 0, 3),
            "red plane, then green, then blue"
        );
        // Training keeps file order; validation is the last 4 of the 15 (records 11..15, from
        // data_batch_4.bin's last and data_batch_5.bin).
        let firsts = |set: &ImageSet| (0..set.len()).map(|i| set.image(i)[0]).collect::<Vec<_>>();
        assert_eq!(firsts(&s.train), (0..11).collect::<Vec<u8>>());
        assert_eq!(firsts(&s.validation), [11, 12, 13, 14]);
        assert_eq!(s.validation.labels, [1, 2, 3, 4]);
        assert_eq!(firsts(&s.test), [200, 201, 202]);
        assert_eq!(s.test.labels, [0, 1, 2]);

        let none_held = load(root.path(), 0).unwrap();
        assert_eq!((none_held.train.len(), none_held.validation.len()), (15, 0));
        let err = load(root.path(), 15).unwrap_err().to_string();
        assert!(err.contains("cannot hold out 15"), "{err}");
    }

    #[test]
    fn bad_sizes_labels_and_missing_files_are_named() {
        let root = tempfile::tempdir().unwrap();
        let err = load(root.path(), 0).unwrap_err().to_string();
        assert!(err.starts_with("cifar10 is not on this machine"), "{err}");
        assert!(err.contains("batchlab data fetch cifar10"), "{err}");
        assert!(
            err.contains("data_batch_1.bin, data_batch_2.bin, data_batch_3.bin, data_batch_4.bin, data_batch_5.bin, test_batch.bin"),
            "{err}"
        );

        let dir = fixture(root.path(), 2);
        std::fs::remove_file(dir.join("data_batch_3.bin")).unwrap();
        let err = locate(root.path()).unwrap_err().to_string();
        assert!(err.contains("Missing data_batch_3.bin in"), "{err}");

        fixture(root.path(), 2);
        let bad = dir.join("data_batch_2.bin");
        let mut bytes = std::fs::read(&bad).unwrap();
        bytes.truncate(RECORD + 100);
        std::fs::write(&bad, &bytes).unwrap();
        let err = load(root.path(), 0).unwrap_err().to_string();
        assert!(err.starts_with(&bad.display().to_string()), "{err}");
        assert!(
            err.contains("3173 bytes is not a whole number of 3073-byte records"),
            "{err}"
        );
        std::fs::write(&bad, b"").unwrap();
        assert!(load(root.path(), 0).is_err());

        fixture(root.path(), 2);
        let bad = dir.join(TEST_FILE);
        let mut bytes = std::fs::read(&bad).unwrap();
        bytes[RECORD] = 10;
        std::fs::write(&bad, &bytes).unwrap();
        let err = load(root.path(), 0).unwrap_err().to_string();
        assert!(err.starts_with(&bad.display().to_string()), "{err}");
        assert!(
            err.contains("record 1 (byte offset 3073) has label 10; expected 0..9"),
            "{err}"
        );
    }
}
