//! The IDX format of MNIST and Fashion-MNIST (LeCun et al.): a big-endian header
//! `0x00 0x00 <type> <dims>`, one u32 size per dimension, then the values. Only unsigned bytes
//! (type 0x08) occur in these datasets. Files may be gzipped (as distributed) or not.

use std::{
    fs::File,
    io::{BufReader, Read},
    path::Path,
};

use flate2::read::GzDecoder;

use crate::error::DatasetError;

/// An IDX array of unsigned bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxArray {
    /// Size of each dimension; the first is the number of items.
    pub dims: Vec<usize>,
    /// The values, row-major.
    pub data: Vec<u8>,
}

impl IdxArray {
    /// Number of items (the first dimension).
    pub fn len(&self) -> usize {
        self.dims.first().copied().unwrap_or(0)
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values per item (the product of the other dimensions).
    pub fn item_size(&self) -> usize {
        self.dims.iter().skip(1).product()
    }
}

/// Reads an IDX file of unsigned bytes, gzipped or raw (told apart by the gzip magic bytes).
pub fn read_idx(path: &Path) -> Result<IdxArray, DatasetError> {
    let io = |source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut raw = Vec::new();
    BufReader::new(File::open(path).map_err(io)?)
        .read_to_end(&mut raw)
        .map_err(io)?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        GzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| DatasetError::format(path, format!("not a valid gzip file: {e}")))?;
        out
    } else {
        raw
    };
    parse_idx(path, &bytes)
}

fn parse_idx(path: &Path, bytes: &[u8]) -> Result<IdxArray, DatasetError> {
    if bytes.len() < 4 || bytes[0] != 0 || bytes[1] != 0 {
        return Err(DatasetError::format(
            path,
            "not an IDX file: expected the magic bytes 00 00 <type> <dims>",
        ));
    }
    if bytes[2] != 0x08 {
        return Err(DatasetError::format(
            path,
            format!(
                "IDX value type 0x{:02x}; expected 0x08 (unsigned bytes, as in MNIST and Fashion-MNIST)",
                bytes[2]
            ),
        ));
    }
    let ndim = usize::from(bytes[3]);
    let header = 4 + 4 * ndim;
    if ndim == 0 || bytes.len() < header {
        return Err(DatasetError::format(
            path,
            format!("IDX header for {ndim} dimensions is truncated"),
        ));
    }
    let dims: Vec<usize> = bytes[4..header]
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
        .collect();
    let expected: usize = dims.iter().product();
    let found = bytes.len() - header;
    if found != expected {
        return Err(DatasetError::format(
            path,
            format!(
                "IDX dimensions {dims:?} need {expected} bytes of values, the file has {found} (truncated or corrupt)"
            ),
        ));
    }
    Ok(IdxArray {
        dims,
        data: bytes[header..].to_vec(),
    })
}

/// Encodes an IDX array of unsigned bytes (for fixtures and caches).
pub fn encode_idx(array: &IdxArray) -> Vec<u8> {
    let mut out = vec![0, 0, 0x08, array.dims.len() as u8];
    for d in &array.dims {
        out.extend_from_slice(&(*d as u32).to_be_bytes());
    }
    out.extend_from_slice(&array.data);
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::{write::GzEncoder, Compression};

    use super::*;

    fn sample() -> IdxArray {
        IdxArray {
            dims: vec![3, 2, 2],
            data: (0..12).collect(),
        }
    }

    #[test]
    fn raw_and_gzipped_files_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let raw = dir.path().join("x-idx3-ubyte");
        std::fs::write(&raw, encode_idx(&sample())).unwrap();
        let gz = dir.path().join("x-idx3-ubyte.gz");
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(&encode_idx(&sample())).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        for path in [&raw, &gz] {
            let a = read_idx(path).unwrap();
            assert_eq!(a, sample());
            assert_eq!((a.len(), a.item_size()), (3, 4));
        }
    }

    #[test]
    fn malformed_files_are_named_and_explained() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad");
        let mut truncated = encode_idx(&sample());
        truncated.pop();
        let cases: [(Vec<u8>, &str); 4] = [
            (b"PK\x03\x04".to_vec(), "not an IDX file"),
            (
                vec![0, 0, 0x0d, 1, 0, 0, 0, 1, 0, 0, 0, 0],
                "value type 0x0d",
            ),
            (truncated, "need 12 bytes of values, the file has 11"),
            (vec![0x1f, 0x8b, 1, 2, 3], "not a valid gzip file"),
        ];
        for (bytes, expected) in cases {
            std::fs::write(&path, bytes).unwrap();
            let err = read_idx(&path).unwrap_err().to_string();
            assert!(err.starts_with(&path.display().to_string()), "{err}");
            assert!(err.contains(expected), "{expected:?} not in {err}");
        }
        let missing = read_idx(&dir.path().join("nope")).unwrap_err().to_string();
        assert!(missing.contains("nope: cannot read"), "{missing}");
    }
}
