//! MD5 and SHA-256 checksums of files, streamed so an 800 MB archive never sits in memory.
//!
//! MD5 is kept because it is what dataset authors publish (CIFAR-10, Fashion-MNIST,
//! torchvision's MNIST mirror); it guards against truncated and corrupted downloads, which is all
//! that is asked of it here.

use std::{
    fmt,
    fs::File,
    io::{self, Read},
    path::Path,
};

use flate2::read::MultiGzDecoder;
use md5::Md5;
use sha2::{Digest, Sha256};

use crate::error::DatasetError;

/// Read size for hashing: large enough that system calls do not dominate, small enough to stay
/// in cache.
const BUFFER: usize = 64 * 1024;

/// Which hash function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// MD5 (RFC 1321), 32 hex digits.
    Md5,
    /// SHA-256 (FIPS 180-4), 64 hex digits.
    Sha256,
}

impl Algorithm {
    /// The name used in messages: `md5` or `sha256`, as the `md5sum`/`sha256sum` tools are named.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Md5 => "md5",
            Self::Sha256 => "sha256",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A published checksum: the algorithm and the digest in lowercase hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Checksum {
    /// An MD5 digest, 32 lowercase hex digits.
    Md5(&'static str),
    /// A SHA-256 digest, 64 lowercase hex digits.
    Sha256(&'static str),
}

impl Checksum {
    /// The hash function.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            Self::Md5(_) => Algorithm::Md5,
            Self::Sha256(_) => Algorithm::Sha256,
        }
    }

    /// The expected digest, hex.
    pub fn hex(&self) -> &'static str {
        match self {
            Self::Md5(hex) | Self::Sha256(hex) => hex,
        }
    }

    /// Whether `hex` (any case) is this digest.
    pub fn matches(&self, hex: &str) -> bool {
        self.hex().eq_ignore_ascii_case(hex)
    }
}

/// `md5 c32a1d4ab5d03f1284b67883e8d87530`: the form used in every message about a checksum.
impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.algorithm(), self.hex())
    }
}

/// An incremental hash of either kind.
enum Hasher {
    Md5(Md5),
    Sha256(Sha256),
}

impl Hasher {
    fn new(algorithm: Algorithm) -> Self {
        match algorithm {
            Algorithm::Md5 => Self::Md5(Md5::new()),
            Algorithm::Sha256 => Self::Sha256(Sha256::new()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Md5(h) => h.update(bytes),
            Self::Sha256(h) => h.update(bytes),
        }
    }

    fn finish_hex(self) -> String {
        match self {
            Self::Md5(h) => hex(&h.finalize()),
            Self::Sha256(h) => hex(&h.finalize()),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The digest of everything `reader` yields, lowercase hex.
pub fn digest_reader(mut reader: impl Read, algorithm: Algorithm) -> io::Result<String> {
    let mut hasher = Hasher::new(algorithm);
    let mut buffer = vec![0u8; BUFFER];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return Ok(hasher.finish_hex()),
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn open(path: &Path) -> Result<File, DatasetError> {
    File::open(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The digest of a file's bytes, lowercase hex.
pub fn digest_file(path: &Path, algorithm: Algorithm) -> Result<String, DatasetError> {
    digest_reader(open(path)?, algorithm).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Whether a file's bytes have the checksum `expected`.
pub fn verify(path: &Path, expected: &Checksum) -> Result<bool, DatasetError> {
    Ok(expected.matches(&digest_file(path, expected.algorithm())?))
}

/// The digest of a gzip file's decompressed bytes, lowercase hex.
///
/// For files whose compressed bytes differ between copies although the content is the same:
/// Debian's `dataset-fashion-mnist` rewrote the upstream `.gz` files (each is shorter by the
/// length of its name plus one: the gzip header no longer carries the original file name, and the
/// timestamp differs), so their MD5s differ from the published ones while the decompressed MD5s
/// agree.
pub fn digest_gunzipped(path: &Path, algorithm: Algorithm) -> Result<String, DatasetError> {
    // MultiGzDecoder reads concatenated gzip members as `gunzip` does.
    digest_reader(MultiGzDecoder::new(open(path)?), algorithm)
        .map_err(|e| DatasetError::format(path, format!("cannot decompress as gzip: {e}")))
}

/// Whether a gzip file's decompressed bytes have the checksum `expected`.
pub fn verify_gunzipped(path: &Path, expected: &Checksum) -> Result<bool, DatasetError> {
    Ok(expected.matches(&digest_gunzipped(path, expected.algorithm())?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn digests_match_the_reference_vectors() {
        // RFC 1321 and FIPS 180-2 test vectors.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("abc");
        std::fs::write(&path, b"abc").unwrap();
        assert_eq!(
            digest_file(&path, Algorithm::Md5).unwrap(),
            "900150983cd24fb0d6963f7d28e17f72"
        );
        assert_eq!(
            digest_file(&path, Algorithm::Sha256).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(verify(&path, &Checksum::Md5("900150983CD24FB0D6963F7D28E17F72")).unwrap());
        assert!(!verify(&path, &Checksum::Md5("00000000000000000000000000000000")).unwrap());

        // Longer than one buffer, so the streaming loop runs more than once.
        let big: Vec<u8> = (0..3 * BUFFER + 17).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &big).unwrap();
        let mut reference = Md5::new();
        reference.update(&big);
        assert_eq!(
            digest_file(&path, Algorithm::Md5).unwrap(),
            hex(&reference.finalize())
        );
    }

    #[test]
    fn gunzipped_digest_ignores_the_compression() {
        let dir = tempfile::tempdir().unwrap();
        let content = b"the same bytes, compressed twice".repeat(100);
        let mut digests = Vec::new();
        for (name, level) in [("fast.gz", 1), ("best.gz", 9)] {
            let path = dir.path().join(name);
            let mut enc =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
            enc.write_all(&content).unwrap();
            std::fs::write(&path, enc.finish().unwrap()).unwrap();
            digests.push(digest_gunzipped(&path, Algorithm::Md5).unwrap());
        }
        assert_eq!(digests[0], digests[1]);
        assert_eq!(
            digests[0],
            digest_reader(content.as_slice(), Algorithm::Md5).unwrap()
        );

        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"not gzip").unwrap();
        let err = digest_gunzipped(&plain, Algorithm::Md5)
            .unwrap_err()
            .to_string();
        assert!(err.contains("plain") && err.contains("gzip"), "{err}");
        let missing = digest_file(&dir.path().join("missing"), Algorithm::Md5).unwrap_err();
        assert!(missing.to_string().contains("missing"), "{missing}");
    }

    #[test]
    fn checksums_display_algorithm_then_hex() {
        assert_eq!(
            Checksum::Md5("c32a1d4ab5d03f1284b67883e8d87530").to_string(),
            "md5 c32a1d4ab5d03f1284b67883e8d87530"
        );
        assert_eq!(Checksum::Sha256("ab").to_string(), "sha256 ab");
    }
}
