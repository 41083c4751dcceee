//! MNIST and Fashion-MNIST from their IDX files: 60,000 training and 10,000 test images of
//! 28x28 grey pixels with labels 0..9.
//!
//! Files are looked for in `<data dir>/<name>/` first, then in the system directory where a
//! Debian package installs them (`dataset-fashion-mnist` -> `/usr/share/datasets/fashion-mnist/`;
//! no package ships MNIST). Each file may be gzipped (`.gz`, as distributed) or not.

use std::path::{Path, PathBuf};

use crate::{
    error::DatasetError,
    idx::{read_idx, IdxArray},
    images::{ImageSet, Splits},
};

/// Which of the two datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MnistKind {
    /// LeCun et al.'s handwritten digits.
    Mnist,
    /// Zalando's Fashion-MNIST (Xiao et al. 2017), the same format.
    FashionMnist,
}

/// The four IDX files, by their distributed names without `.gz`.
pub const FILES: [&str; 4] = [
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
];

impl MnistKind {
    /// The name used in configs and under the data directory.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Mnist => "mnist",
            Self::FashionMnist => "fashion-mnist",
        }
    }

    /// Where a system package installs the files, if one exists.
    pub fn system_dir(&self) -> Option<&'static Path> {
        match self {
            Self::Mnist => None,
            Self::FashionMnist => Some(Path::new("/usr/share/datasets/fashion-mnist")),
        }
    }
}

/// Loads the dataset and holds out the first `validation` training examples, as TensorFlow's
/// `read_data_sets(validation_size=5000)` did for the MNIST workloads of Shallue et al. 2018
/// (55,000 / 5,000 / 10,000 with the default of 5,000).
pub fn load(kind: MnistKind, data_dir: &Path, validation: usize) -> Result<Splits, DatasetError> {
    let dir = locate(kind, data_dir)?;
    let file = |name: &str| find_file(&dir, name).expect("locate checked every file");
    let train = image_set(&file(FILES[0]), &file(FILES[1]))?;
    let test = image_set(&file(FILES[2]), &file(FILES[3]))?;
    if validation >= train.len() {
        return Err(DatasetError::format(
            &file(FILES[0]),
            format!(
                "cannot hold out {validation} validation examples from {} training examples",
                train.len()
            ),
        ));
    }
    Ok(Splits {
        validation: train.slice(0..validation),
        train: train.slice(validation..train.len()),
        test,
        source: dir,
    })
}

/// The first directory that has all four files: `<data_dir>/<name>/`, then the system one.
pub fn locate(kind: MnistKind, data_dir: &Path) -> Result<PathBuf, DatasetError> {
    let mut candidates = vec![data_dir.join(kind.name())];
    candidates.extend(kind.system_dir().map(Path::to_path_buf));
    if let Some(dir) = candidates
        .iter()
        .find(|d| FILES.iter().all(|f| find_file(d, f).is_some()))
    {
        return Ok(dir.clone());
    }
    let mut help = format!(
        "Put {} (each gzipped with .gz or not) in {}/",
        FILES
            .iter()
            .map(|f| format!("{f}.gz"))
            .collect::<Vec<_>>()
            .join(", "),
        candidates[0].display()
    );
    if let Some(system) = kind.system_dir() {
        help.push_str(&format!(
            ", or install Debian's package: apt-get install dataset-fashion-mnist (it puts them in {}/)",
            system.display()
        ));
    }
    help.push('.');
    Err(DatasetError::Missing {
        dataset: kind.name().into(),
        help,
    })
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    [dir.join(format!("{name}.gz")), dir.join(name)]
        .into_iter()
        .find(|p| p.is_file())
}

fn image_set(images_path: &Path, labels_path: &Path) -> Result<ImageSet, DatasetError> {
    let images = read_idx(images_path)?;
    let labels = read_idx(labels_path)?;
    let shape = image_shape(images_path, &images)?;
    if labels.dims.len() != 1 || labels.len() != images.len() {
        return Err(DatasetError::format(
            labels_path,
            format!(
                "expected {} labels (one per image in {}), found dimensions {:?}",
                images.len(),
                images_path.display(),
                labels.dims
            ),
        ));
    }
    if let Some(bad) = labels.data.iter().find(|&&l| l > 9) {
        return Err(DatasetError::format(
            labels_path,
            format!("label {bad} outside 0..9"),
        ));
    }
    Ok(ImageSet {
        images: images.data,
        labels: labels.data,
        shape,
    })
}

fn image_shape(path: &Path, images: &IdxArray) -> Result<[usize; 3], DatasetError> {
    match images.dims[..] {
        [_, h, w] => Ok([1, h, w]),
        _ => Err(DatasetError::format(
            path,
            format!(
                "expected images of dimensions [count, height, width], found {:?}",
                images.dims
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idx::encode_idx;

    /// Writes a tiny dataset in the real file layout: `n_train` + `n_test` 4x3 images whose
    /// first pixel is the example's index and whose label is index % 10.
    fn fixture(dir: &Path, n_train: usize, n_test: usize, gz: bool) {
        std::fs::create_dir_all(dir).unwrap();
        let write = |name: &str, array: IdxArray| {
            let bytes = encode_idx(&array);
            if gz {
                use std::io::Write;
                let mut enc =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                enc.write_all(&bytes).unwrap();
                std::fs::write(dir.join(format!("{name}.gz")), enc.finish().unwrap()).unwrap();
            } else {
                std::fs::write(dir.join(name), bytes).unwrap();
            }
        };
        for (images, labels, n) in [(FILES[0], FILES[1], n_train), (FILES[2], FILES[3], n_test)] {
            let data = (0..n).flat_map(|i| {
                let mut img = vec![0u8; 12];
                img[0] = i as u8;
                img
            });
            write(
                images,
                IdxArray {
                    dims: vec![n, 4, 3],
                    data: data.collect(),
                },
            );
            write(
                labels,
                IdxArray {
                    dims: vec![n],
                    data: (0..n).map(|i| (i % 10) as u8).collect(),
                },
            );
        }
    }

    #[test]
    fn splits_hold_out_the_first_training_examples() {
        for gz in [true, false] {
            let root = tempfile::tempdir().unwrap();
            fixture(&root.path().join("mnist"), 30, 7, gz);
            let s = load(MnistKind::Mnist, root.path(), 5).unwrap();
            assert_eq!(
                (s.train.len(), s.validation.len(), s.test.len()),
                (25, 5, 7)
            );
            assert_eq!(s.train.shape, [1, 4, 3]);
            assert_eq!(s.validation.images[0], 0);
            assert_eq!(
                s.train.images[0], 5,
                "training starts after the held-out examples"
            );
            assert_eq!(s.train.images[12], 6);
            assert_eq!(s.train.labels[..3], [5, 6, 7]);
            assert_eq!(s.test.class_counts(10), vec![1, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
        }
    }

    #[test]
    fn missing_and_inconsistent_files_say_what_to_do() {
        let root = tempfile::tempdir().unwrap();
        let err = load(MnistKind::Mnist, root.path(), 5)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("mnist is not on this machine"), "{err}");
        assert!(err.contains("t10k-labels-idx1-ubyte.gz"), "{err}");
        assert!(
            err.contains(&root.path().join("mnist").display().to_string()),
            "{err}"
        );
        let fashion = locate(MnistKind::FashionMnist, root.path());
        if let Err(e) = fashion {
            assert!(
                e.to_string()
                    .contains("apt-get install dataset-fashion-mnist"),
                "{e}"
            );
        }

        let dir = root.path().join("mnist");
        fixture(&dir, 10, 4, false);
        std::fs::write(
            dir.join(FILES[3]),
            encode_idx(&IdxArray {
                dims: vec![3],
                data: vec![1, 2, 3],
            }),
        )
        .unwrap();
        let err = load(MnistKind::Mnist, root.path(), 5)
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected 4 labels"), "{err}");
        fixture(&dir, 10, 4, false);
        let err = load(MnistKind::Mnist, root.path(), 10)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot hold out 10"), "{err}");
    }

    /// The real Fashion-MNIST from Debian's `dataset-fashion-mnist`. CI installs the package and
    /// sets BATCHLAB_REQUIRE_FASHION_MNIST=1, so there this test cannot be skipped.
    #[test]
    fn real_fashion_mnist_from_debian() {
        let empty = tempfile::tempdir().unwrap();
        let located = locate(MnistKind::FashionMnist, empty.path());
        if located.is_err() && std::env::var_os("BATCHLAB_REQUIRE_FASHION_MNIST").is_none() {
            eprintln!("skipped: dataset-fashion-mnist is not installed");
            return;
        }
        let s = load(MnistKind::FashionMnist, empty.path(), 0).expect("Fashion-MNIST loads");
        assert_eq!(s.train.len(), 60_000);
        assert_eq!(s.test.len(), 10_000);
        assert_eq!(s.train.shape, [1, 28, 28]);
        assert_eq!(s.train.class_counts(10), vec![6_000; 10]);
        assert_eq!(s.test.class_counts(10), vec![1_000; 10]);
        let split = load(MnistKind::FashionMnist, empty.path(), 5_000).unwrap();
        assert_eq!((split.train.len(), split.validation.len()), (55_000, 5_000));
    }
}
