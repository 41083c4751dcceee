//! Decoded datasets cached as raw bytes under `<data dir>/cache/`, so a dataset that takes
//! minutes to decode (cats vs dogs: 2,000 JPEGs) loads in the time it takes to read its bytes.
//!
//! A cache file is named by the dataset and a digest of its key material: everything the bytes
//! depend on (a fingerprint of the source files, the preprocessing parameters, a version of the
//! preprocessing code). A changed source or parameter gives another file; nothing is ever
//! invalidated in place.
//!
//! Format, version 1:
//!
//! 1. the magic line `batchlab-cache 1\n`;
//! 2. one line of JSON: the source directory, `[count, C, H, W]` of each split, the length and
//!    checksum of the bytes that follow, and the caller's metadata;
//! 3. the bytes: train images, train labels, validation images, validation labels, test images,
//!    test labels (`[N, C, H, W]` and `[N]` u8 each).
//!
//! A file is written under a temporary name in the same directory and renamed into place, so a
//! reader sees a whole file or none. A file that is truncated, has another magic or header, or
//! whose bytes do not match the checksum is rebuilt, never an error.

use std::{
    fs::File,
    io::{BufRead, BufReader, BufWriter, Read, Write},
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{
    error::DatasetError,
    images::{ImageSet, Splits},
};

/// The first line of every cache file; the number is the format's version.
const MAGIC: &[u8] = b"batchlab-cache 1\n";

/// A header line longer than this is not ours (it holds a few shapes and the caller's metadata).
const MAX_HEADER: u64 = 64 << 20;

/// Whether [`load_or_build`] read the cache or built the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Read from the cache file; the build function was not called.
    Hit,
    /// Built (no cache file, or an unusable one) and written to the cache file.
    Built,
}

/// `<data_dir>/cache/<dataset>-<digest>.bin`, the digest being the first 128 bits of the
/// SHA-256 of `key_material` in hex.
pub fn cache_path(data_dir: &Path, dataset: &str, key_material: &str) -> PathBuf {
    let digest = Sha256::digest(key_material.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    data_dir.join("cache").join(format!("{dataset}-{hex}.bin"))
}

/// The splits and metadata cached at `path`, or, when there is no usable file there, those
/// returned by `build`, which are then written to `path` (creating its directory).
///
/// Errors are `build`'s own and failures to write the cache file; an unreadable, truncated or
/// corrupt cache file is rebuilt.
pub fn load_or_build<M: Serialize + DeserializeOwned>(
    path: &Path,
    build: impl FnOnce() -> Result<(Splits, M), DatasetError>,
) -> Result<(Splits, M, CacheOutcome), DatasetError> {
    if let Some((splits, meta)) = read(path) {
        return Ok((splits, meta, CacheOutcome::Hit));
    }
    let (splits, meta) = build()?;
    write(path, &splits, &meta)?;
    Ok((splits, meta, CacheOutcome::Built))
}

#[derive(Serialize, Deserialize)]
struct Header<M> {
    source: PathBuf,
    /// `[count, C, H, W]` of train, validation, test.
    sets: [[usize; 4]; 3],
    bytes: u64,
    checksum: String,
    meta: M,
}

/// Reads a cache file; `None` if it is missing or unusable for any reason (the caller rebuilds
/// it, so the reason does not matter).
pub fn read<M: DeserializeOwned>(path: &Path) -> Option<(Splits, M)> {
    let file = File::open(path).ok()?;
    let file_len = file.metadata().ok()?.len();
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut magic = vec![0; MAGIC.len()];
    reader.read_exact(&mut magic).ok()?;
    if magic != MAGIC {
        return None;
    }
    let mut line = Vec::new();
    (&mut reader)
        .take(MAX_HEADER)
        .read_until(b'\n', &mut line)
        .ok()?;
    if line.pop() != Some(b'\n') {
        return None;
    }
    let header: Header<M> = serde_json::from_slice(&line).ok()?;
    // Check the sizes before allocating anything they imply.
    let expected = header.sets.iter().try_fold(0u64, |sum, &[n, c, h, w]| {
        let n = n as u64;
        let image = (c as u64).checked_mul(h as u64)?.checked_mul(w as u64)?;
        sum.checked_add(n.checked_mul(image)?.checked_add(n)?)
    })?;
    let offset = (MAGIC.len() + line.len() + 1) as u64;
    if expected != header.bytes || offset.checked_add(expected)? != file_len {
        return None;
    }
    let mut checksum = Checksum::default();
    let mut sets = header.sets.iter().map(|&[n, c, h, w]| {
        let mut images = vec![0; n * c * h * w];
        let mut labels = vec![0; n];
        reader.read_exact(&mut images).ok()?;
        reader.read_exact(&mut labels).ok()?;
        checksum.update(&images);
        checksum.update(&labels);
        Some(ImageSet {
            images,
            labels,
            shape: [c, h, w],
        })
    });
    let (train, validation, test) = (sets.next()??, sets.next()??, sets.next()??);
    if checksum.hex() != header.checksum {
        return None;
    }
    Some((
        Splits {
            train,
            validation,
            test,
            source: header.source,
        },
        header.meta,
    ))
}

/// Writes a cache file atomically: to a temporary name in the same directory, then renamed.
pub fn write<M: Serialize>(path: &Path, splits: &Splits, meta: &M) -> Result<(), DatasetError> {
    let sets = [&splits.train, &splits.validation, &splits.test];
    let mut checksum = Checksum::default();
    for set in sets {
        checksum.update(&set.images);
        checksum.update(&set.labels);
    }
    let header = Header {
        source: splits.source.clone(),
        sets: sets.map(|s| [s.len(), s.shape[0], s.shape[1], s.shape[2]]),
        bytes: sets
            .iter()
            .map(|s| (s.images.len() + s.labels.len()) as u64)
            .sum(),
        checksum: checksum.hex(),
        meta,
    };
    let json = serde_json::to_vec(&header)
        .map_err(|e| DatasetError::format(path, format!("cannot encode the cache header: {e}")))?;
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DatasetError::Write { path, source }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(write_error(dir))?;
    // Unique per process and moment, so concurrent builders never write the same temporary.
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = path
        .file_name()
        .map_or_else(|| "cache".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let result = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        out.write_all(MAGIC)?;
        out.write_all(&json)?;
        out.write_all(b"\n")?;
        for set in sets {
            out.write_all(&set.images)?;
            out.write_all(&set.labels)?;
        }
        out.into_inner().map_err(|e| e.into_error())?;
        // No fsync: a file lost or cut short by a crash fails the size or checksum check and is
        // rebuilt.
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        // The temporary is useless now; failing to remove it leaves only a stray file, and the
        // write error is the one worth reporting.
        let _ = std::fs::remove_file(&tmp);
        write_error(path)(e)
    })
}

/// A fast 64-bit checksum that catches truncation and accidental damage (not tampering): four
/// lanes of `(lane ^ word) * odd`, a bijection of the lane for each word, so any change confined
/// to one 8-byte word always changes the result. Reads several GB/s, so a 400 MB cache is
/// checked in a fraction of the time it takes to read it.
struct Checksum {
    lanes: [u64; 4],
    length: u64,
}

impl Default for Checksum {
    fn default() -> Self {
        Self {
            lanes: [
                0x243f_6a88_85a3_08d3,
                0x1319_8a2e_0370_7344,
                0xa409_3822_299f_31d0,
                0x082e_fa98_ec4e_6c89,
            ],
            length: 0,
        }
    }
}

const ODD: u64 = 0x9e37_79b9_7f4a_7c15;

impl Checksum {
    /// Adds `bytes`; each call is hashed on its own, padded, so the split into calls matters
    /// (the cache always makes the same calls).
    fn update(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(32);
        for chunk in &mut chunks {
            for (lane, word) in self.lanes.iter_mut().zip(chunk.chunks_exact(8)) {
                let word = u64::from_le_bytes(word.try_into().expect("8-byte chunk"));
                *lane = (*lane ^ word).wrapping_mul(ODD);
            }
        }
        let rest = chunks.remainder();
        for (lane, word) in self.lanes.iter_mut().zip(rest.chunks(8)) {
            let mut padded = [0u8; 8];
            padded[..word.len()].copy_from_slice(word);
            *lane = (*lane ^ u64::from_le_bytes(padded)).wrapping_mul(ODD);
        }
        self.length = self.length.wrapping_add(bytes.len() as u64);
        self.lanes[0] = (self.lanes[0] ^ self.length).wrapping_mul(ODD);
    }

    fn hex(&self) -> String {
        let mut h = self.length;
        for (i, lane) in self.lanes.iter().enumerate() {
            h = (h ^ lane.rotate_left(17 * i as u32)).wrapping_mul(ODD);
            h ^= h >> 29;
        }
        format!("{h:016x}")
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn splits(seed: u8) -> Splits {
        let set = |n: usize, shape: [usize; 3], k: u8| ImageSet {
            images: (0..n * shape.iter().product::<usize>())
                .map(|i| (i as u8).wrapping_mul(31).wrapping_add(k))
                .collect(),
            labels: (0..n).map(|i| i as u8 % 2).collect(),
            shape,
        };
        Splits {
            train: set(5, [3, 4, 2], seed),
            validation: set(2, [3, 4, 2], seed + 1),
            test: set(0, [3, 4, 2], seed + 2),
            source: PathBuf::from("/somewhere/PetImages"),
        }
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Meta {
        skipped: Vec<String>,
    }

    #[test]
    fn paths_name_the_dataset_and_digest_the_key() {
        let a = cache_path(Path::new("/d"), "cats-vs-dogs", "size=200");
        let b = cache_path(Path::new("/d"), "cats-vs-dogs", "size=201");
        assert_ne!(a, b);
        assert_eq!(a, cache_path(Path::new("/d"), "cats-vs-dogs", "size=200"));
        assert_eq!(a.parent().unwrap(), Path::new("/d/cache"));
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("cats-vs-dogs-") && name.ends_with(".bin"),
            "{name}"
        );
        assert_eq!(name.len(), "cats-vs-dogs-".len() + 32 + ".bin".len());
    }

    #[test]
    fn a_second_load_hits_and_damaged_files_are_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = cache_path(dir.path(), "test", "key");
        let builds = Cell::new(0);
        let build = || {
            builds.set(builds.get() + 1);
            Ok((
                splits(7),
                Meta {
                    skipped: vec!["Cat/666.jpg".into()],
                },
            ))
        };
        let (s, m, outcome) = load_or_build(&path, build).unwrap();
        assert_eq!((outcome, builds.get()), (CacheOutcome::Built, 1));
        let (s2, m2, outcome) = load_or_build(&path, build).unwrap();
        assert_eq!((outcome, builds.get()), (CacheOutcome::Hit, 1));
        assert_eq!((s2, m2), (s.clone(), m));
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "no temporary left: {leftovers:?}");

        let good = std::fs::read(&path).unwrap();
        let header_end = good
            .iter()
            .skip(MAGIC.len())
            .position(|&b| b == b'\n')
            .unwrap();
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let mut header_damaged = good.clone();
        header_damaged[MAGIC.len() + 3] = b'#';
        let damaged: [(&str, Vec<u8>); 6] = [
            ("truncated", good[..good.len() - 5].to_vec()),
            (
                "cut in the header",
                good[..MAGIC.len() + header_end / 2].to_vec(),
            ),
            ("one payload bit flipped", flipped),
            ("header not JSON", header_damaged),
            (
                "other magic",
                [b"batchlab-cache 0\n", &good[MAGIC.len()..]].concat(),
            ),
            ("empty", Vec::new()),
        ];
        for (what, bytes) in damaged {
            std::fs::write(&path, bytes).unwrap();
            let before = builds.get();
            let (again, _, outcome) = load_or_build(&path, build).unwrap();
            assert_eq!(outcome, CacheOutcome::Built, "{what}");
            assert_eq!(builds.get(), before + 1, "{what}");
            assert_eq!(again, s, "{what}");
            assert_eq!(
                std::fs::read(&path).unwrap(),
                good,
                "{what}: rewritten whole"
            );
        }
        // A build error is returned and nothing is written.
        let other = cache_path(dir.path(), "test", "other key");
        let err = load_or_build::<Meta>(&other, || Err(DatasetError::format(Path::new("x"), "no")));
        assert!(err.is_err());
        assert!(!other.exists());
    }

    #[test]
    fn an_unwritable_cache_directory_is_a_write_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the cache directory should be.
        std::fs::write(dir.path().join("cache"), b"").unwrap();
        let path = cache_path(dir.path(), "test", "key");
        let err = load_or_build(&path, || Ok((splits(1), ())))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot write"), "{err}");
        assert!(
            err.contains(&dir.path().join("cache").display().to_string()),
            "{err}"
        );
    }
}
