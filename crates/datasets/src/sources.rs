//! Where each dataset is published, with the size and checksum of every file.
//!
//! Every size and checksum below was copied from a published source named in the comment beside
//! it; none was computed here from a download. A file whose checksum is not published has
//! `checksum: None`, and the downloader then says so rather than pretending to have checked it.

use crate::checksum::Checksum;

/// One file to download.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remote {
    /// The official download location.
    pub url: &'static str,
    /// The file's name, under which it is stored locally.
    pub file: &'static str,
    /// The size in bytes, if published.
    pub size: Option<u64>,
    /// The checksum of the file as served, if published.
    pub checksum: Option<Checksum>,
    /// For a `.gz` file, the checksum of its decompressed bytes, if published: it identifies the
    /// content of a copy that was recompressed (Debian's Fashion-MNIST package).
    pub decompressed: Option<Checksum>,
}

/// The dataset names [`remotes`] knows.
pub const DATASETS: [&str; 4] = ["cifar10", "fashion-mnist", "mnist", "cats-vs-dogs"];

/// The files of a dataset by its name (`cifar10`, `fashion-mnist`, `mnist`, `cats-vs-dogs`).
pub fn remotes(dataset: &str) -> Option<&'static [Remote]> {
    match dataset {
        "cifar10" => Some(&CIFAR10),
        "fashion-mnist" => Some(&FASHION_MNIST),
        "mnist" => Some(&MNIST),
        "cats-vs-dogs" => Some(&CATS_VS_DOGS),
        _ => None,
    }
}

/// One file of a dataset by the file's name.
pub fn remote(dataset: &str, file: &str) -> Option<&'static Remote> {
    remotes(dataset)?.iter().find(|r| r.file == file)
}

/// CIFAR-10, the binary version (Krizhevsky 2009): `cifar-10-batches-bin/` with five training
/// batches and one test batch of 10,000 records `<label byte><3072 pixel bytes>`.
pub const CIFAR10: [Remote; 1] = [Remote {
    url: "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
    file: "cifar-10-binary.tar.gz",
    // Size: tensorflow/datasets, tensorflow_datasets/url_checksums/cifar10.txt (which also gives
    // sha256 c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd); TensorFlow's
    // cifar10 tutorial prints the same "Successfully downloaded cifar-10-binary.tar.gz 170052171
    // bytes".
    size: Some(170_052_171),
    // The MD5 published by the author on https://www.cs.toronto.edu/~kriz/cifar.html, next to
    // the download link ("CIFAR-10 binary version (suitable for C programs)").
    checksum: Some(Checksum::Md5("c32a1d4ab5d03f1284b67883e8d87530")),
    decompressed: None,
}];

/// Fashion-MNIST (Xiao, Rasul & Vollgraf 2017), the four IDX files, gzipped.
pub const FASHION_MNIST: [Remote; 4] = [
    // MD5s: the "MD5 Checksum" column of "Get the Data" in zalandoresearch/fashion-mnist's
    // README.md; torchvision's FashionMNIST.resources (torchvision/datasets/mnist.py) has the same.
    // Sizes: tensorflow/datasets, tensorflow_datasets/url_checksums/fashion_mnist.txt (same URLs).
    // Decompressed MD5s: measured on Debian's dataset-fashion-mnist files and equal to the
    // `raw_data` MD5s that projects using the upstream files list (e.g. a torchvision
    // FashionMNIST ImageFolder wrapper's `raw_data`); the README itself publishes none.
    Remote {
        url:
            "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/train-images-idx3-ubyte.gz",
        file: "train-images-idx3-ubyte.gz",
        size: Some(26_421_880),
        checksum: Some(Checksum::Md5("8d4fb7e6c68d591d4c3dfef9ec88bf0d")),
        decompressed: Some(Checksum::Md5("f4a8712d7a061bf5bd6d2ca38dc4d50a")),
    },
    Remote {
        url:
            "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/train-labels-idx1-ubyte.gz",
        file: "train-labels-idx1-ubyte.gz",
        size: Some(29_515),
        checksum: Some(Checksum::Md5("25c81989df183df01b3e8a0aad5dffbe")),
        decompressed: Some(Checksum::Md5("9018921c3c673c538a1fc5bad174d6f9")),
    },
    Remote {
        url: "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/t10k-images-idx3-ubyte.gz",
        file: "t10k-images-idx3-ubyte.gz",
        size: Some(4_422_102),
        checksum: Some(Checksum::Md5("bef4ecab320f06d8554ea6380940ec79")),
        decompressed: Some(Checksum::Md5("8181f5470baa50b63fa0f6fddb340f0a")),
    },
    Remote {
        url: "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/t10k-labels-idx1-ubyte.gz",
        file: "t10k-labels-idx1-ubyte.gz",
        size: Some(5_148),
        checksum: Some(Checksum::Md5("bb300cfdad3c16e7a12a480ee83cd310")),
        decompressed: Some(Checksum::Md5("15d484375f8d13e6eb1aabb0c3f46965")),
    },
];

/// MNIST (LeCun et al. 1998), the four IDX files, gzipped, from torchvision's mirror
/// (yann.lecun.com no longer serves them reliably).
pub const MNIST: [Remote; 4] = [
    // MD5s: torchvision's MNIST.resources (torchvision/datasets/mnist.py), used for both its
    // mirrors, yann.lecun.com and ossci-datasets. Sizes: the file list on
    // http://yann.lecun.com/exdb/mnist/ ("training set images (9912422 bytes)", ...), equal to
    // tensorflow/datasets' tensorflow_datasets/url_checksums/mnist.txt for its own mirror.
    // No published MD5 of the decompressed files was found.
    Remote {
        url: "https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz",
        file: "train-images-idx3-ubyte.gz",
        size: Some(9_912_422),
        checksum: Some(Checksum::Md5("f68b3c2dcbeaaa9fbdd348bbdeb94873")),
        decompressed: None,
    },
    Remote {
        url: "https://ossci-datasets.s3.amazonaws.com/mnist/train-labels-idx1-ubyte.gz",
        file: "train-labels-idx1-ubyte.gz",
        size: Some(28_881),
        checksum: Some(Checksum::Md5("d53e105ee54ea40749a09fcbcd1e9432")),
        decompressed: None,
    },
    Remote {
        url: "https://ossci-datasets.s3.amazonaws.com/mnist/t10k-images-idx3-ubyte.gz",
        file: "t10k-images-idx3-ubyte.gz",
        size: Some(1_648_877),
        checksum: Some(Checksum::Md5("9fb629c4189551a2d022fa330f9573f3")),
        decompressed: None,
    },
    Remote {
        url: "https://ossci-datasets.s3.amazonaws.com/mnist/t10k-labels-idx1-ubyte.gz",
        file: "t10k-labels-idx1-ubyte.gz",
        size: Some(4_542),
        checksum: Some(Checksum::Md5("ec29112dd5afa0611ce80d1b7f02629c")),
        decompressed: None,
    },
];

/// Microsoft's Kaggle cats-vs-dogs images (Asirra, Elson et al. 2007): `PetImages/Cat/*.jpg`
/// and `PetImages/Dog/*.jpg`, 12,500 each, some of them corrupt.
pub const CATS_VS_DOGS: [Remote; 1] = [Remote {
    url: "https://download.microsoft.com/download/3/E/1/3E1C3F21-ECDB-4869-8368-6DEBA77B919F/kagglecatsanddogs_5340.zip",
    file: "kagglecatsanddogs_5340.zip",
    // Size: the Content-Length download.microsoft.com answers, as recorded by wget in published
    // notebooks ("Length: 824887076 (787M)", "saved [824887076/824887076]").
    size: Some(824_887_076),
    // Microsoft publishes no checksum. This SHA-256 is the one gomlx verifies the same URL
    // against (examples/dogsvscats, `DownloadChecksum`). tensorflow/datasets' checksum file for
    // this URL could not be read here; its older url_checksums/cats_vs_dogs.txt is for the
    // previous archive, kagglecatsanddogs_3367a.zip, and does not apply.
    checksum: Some(Checksum::Sha256(
        "b7974bd00a84a99921f36ee4403f089853777b5ae8d151c76a86e64900334af9",
    )),
    decompressed: None,
}];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dataset_has_well_formed_entries() {
        for name in DATASETS {
            let files = remotes(name).expect(name);
            assert!(!files.is_empty());
            for r in files {
                assert!(r.url.ends_with(&format!("/{}", r.file)), "{r:?}");
                for c in r.checksum.iter().chain(r.decompressed.iter()) {
                    let len = match c {
                        Checksum::Md5(_) => 32,
                        Checksum::Sha256(_) => 64,
                    };
                    assert_eq!(c.hex().len(), len, "{r:?}");
                    assert!(
                        c.hex()
                            .bytes()
                            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                        "lowercase hex: {r:?}"
                    );
                }
            }
        }
        assert!(remotes("imagenet").is_none());
        assert_eq!(
            remote("mnist", "t10k-labels-idx1-ubyte.gz").and_then(|r| r.size),
            Some(4_542)
        );
    }

    /// The Fashion-MNIST installed by Debian's `dataset-fashion-mnist` (recompressed, so its own
    /// MD5s differ) has the published decompressed content.
    #[test]
    fn debian_fashion_mnist_matches_the_decompressed_checksums() {
        let dir = std::path::Path::new("/usr/share/datasets/fashion-mnist");
        if !dir.is_dir() {
            eprintln!("skipped: dataset-fashion-mnist is not installed");
            return;
        }
        for r in &FASHION_MNIST {
            let path = dir.join(r.file);
            let expected = r.decompressed.expect("every Fashion-MNIST file has one");
            assert!(
                crate::checksum::verify_gunzipped(&path, &expected).unwrap(),
                "{}",
                path.display()
            );
        }
    }
}
