//! Cats vs dogs: Microsoft's PetImages photos (`kagglecatsanddogs_5340.zip`), prepared as the
//! case study of seed 003 prepares them, but deterministically.
//!
//! The seed walks `listdir('PetImages/' + classe)` (file-system order), keeps names ending in
//! `.jpg`, loads each with Keras' `load_img(path, target_size=(200, 200))` (PIL, RGB, NEAREST)
//! and files the first 600 of a class under train, the next 200 under validation and the next
//! 200 under test. Here:
//!
//! - the files of a class are taken in numeric order of their names (`0.jpg`, `1.jpg`, `2.jpg`,
//!   ..., `10.jpg`; names that are not a number come after, by name), so every machine selects
//!   the same photos;
//! - the first `per_class` files that decode are taken; a file that is not a `.jpg` (the zip has
//!   a `Thumbs.db` per folder), is empty (`Cat/666.jpg`) or does not decode as a JPEG is skipped
//!   and listed with its reason in [`Pets::skipped`], where the seed's script would stop with an
//!   exception;
//! - grey and CMYK JPEGs become RGB (`load_img`'s `color_mode="rgb"`), then each image is resized
//!   to `size x size` with [`Filter::Nearest`] (`load_img`'s default interpolation);
//! - labels are Cat = 0, Dog = 1 (`flow_from_directory`'s alphabetical class indices, and the
//!   seed's `output`); each split holds its Cat examples, then its Dog examples.
//!
//! Decoding 2,000 JPEGs takes a while, so the decoded selection is cached (see [`crate::cache`])
//! under a key made of the options and the name, size and modification time of every file in the
//! two class folders; a second load reads the cache and decodes nothing ([`Pets::decoded`]).
//!
//! Decoders differ slightly: this one (the `image` crate's, zune-jpeg) and PIL's libjpeg can
//! disagree by a grey level or so per pixel (IDCT and chroma upsampling), and CMYK is converted
//! by zune-jpeg's formula rather than PIL's.

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicUsize, Ordering},
    time::UNIX_EPOCH,
};

use image::ImageFormat;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{
    cache::{self, CacheOutcome},
    error::DatasetError,
    images::{ImageSet, Splits},
    transform::{hwc_to_chw, resize, Filter},
};

/// The class folders, in label order.
pub const CLASSES: [&str; 2] = ["Cat", "Dog"];

/// Bumped whenever the decoding or resizing changes, so old cache files are not reused.
const PREPARATION_VERSION: u32 = 1;

/// How the photos are selected and prepared; the defaults are the seed's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PetsOptions {
    /// Readable photos taken per class (the seed's `files_per_class = 1000`).
    pub per_class: usize,
    /// Of those, how many go to train, validation and test, in that order (600, 200, 200).
    /// Must add up to `per_class`.
    pub split: [usize; 3],
    /// Side of the square the photos are resized to (200, the seed's `target_size`).
    pub size: usize,
    /// The seed's offline augmentation: every training and validation image plus a copy resized
    /// with [`Filter::Bicubic`] to 1.25 times `size` (250 for 200) and cropped to its top-left
    /// `size x size`. The test set is not augmented.
    pub augment: bool,
}

impl Default for PetsOptions {
    fn default() -> Self {
        Self {
            per_class: 1_000,
            split: [600, 200, 200],
            size: 200,
            augment: false,
        }
    }
}

impl PetsOptions {
    /// The side the augmentation resizes to before cropping: `size * 1.25` rounded (the seed's
    /// 250 for 200).
    pub fn augment_size(&self) -> usize {
        crate::images::enlarged_side(self.size)
    }
}

/// Why a file in a class folder was not used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SkipReason {
    /// Its name does not end in `.jpg` (the seed's `file.endswith(".jpg")`), e.g. `Thumbs.db`.
    NotJpg,
    /// A directory or something else that is not a file.
    NotAFile,
    /// Zero bytes long.
    Empty,
    /// Could not be read; the system's message.
    Unreadable(String),
    /// Does not decode as a JPEG (corrupt, or another format named `.jpg`); the decoder's message.
    NotJpeg(String),
    /// Decodes, but the file ends before the image data does (no end-of-image marker after it).
    /// The decoder fills the missing part in; PIL, and so the seed's `load_img`, refuses such a
    /// file ("image file is truncated").
    Truncated,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotJpg => write!(f, "not a .jpg file"),
            Self::NotAFile => write!(f, "not a file"),
            Self::Empty => write!(f, "empty file"),
            Self::Unreadable(e) => write!(f, "cannot read: {e}"),
            Self::NotJpeg(e) => write!(f, "does not decode as JPEG: {e}"),
            Self::Truncated => write!(
                f,
                "truncated JPEG (no end-of-image marker after the image data)"
            ),
        }
    }
}

/// A file that was not used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Relative to `PetImages/`, e.g. `Cat/666.jpg`.
    pub path: PathBuf,
    /// Why.
    pub reason: SkipReason,
}

/// The prepared dataset and what happened on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pets {
    /// `[3, size, size]` images, labels Cat = 0 and Dog = 1; `source` is the `PetImages` folder.
    pub splits: Splits,
    /// The photos used, relative to `PetImages/`, in selection order: the Cat ones, then the Dog
    /// ones; a class's first `split[0]` are its training examples, and so on.
    pub selected: Vec<PathBuf>,
    /// Files not used: every file of a class folder that is not a `.jpg`, and every `.jpg` up to
    /// the last one selected that could not be used (files after it were not looked at). Cat's,
    /// then Dog's, in file order.
    pub skipped: Vec<Skipped>,
    /// Whether the decoded selection came from the cache.
    pub cache: CacheOutcome,
    /// The cache file.
    pub cache_path: PathBuf,
    /// JPEG files this call decoded (0 on a cache hit; failed decodes count).
    pub decoded: usize,
}

/// What the cache keeps beside the pixels, so a warm load reports the same as a cold one.
#[derive(Serialize, Deserialize)]
struct Meta {
    selected: Vec<PathBuf>,
    skipped: Vec<Skipped>,
}

/// The `PetImages` folder: `<data_dir>/cats-vs-dogs/PetImages/`, with `Cat/` and `Dog/` in it.
pub fn locate(data_dir: &Path) -> Result<PathBuf, DatasetError> {
    let root = data_dir.join("cats-vs-dogs").join("PetImages");
    if CLASSES.iter().all(|c| root.join(c).is_dir()) {
        return Ok(root);
    }
    Err(DatasetError::Missing {
        dataset: "cats-vs-dogs".into(),
        help: format!(
            "Expected the folders {} and {}. Run `batchlab data fetch cats-vs-dogs`, or unzip \
             Microsoft's kagglecatsanddogs_5340.zip into {}/ so that PetImages/Cat exists there.",
            root.join("Cat").display(),
            root.join("Dog").display(),
            data_dir.join("cats-vs-dogs").display()
        ),
    })
}

/// Selects, decodes and splits the photos (or reads them from the cache), then augments if
/// asked.
pub fn load(data_dir: &Path, options: &PetsOptions) -> Result<Pets, DatasetError> {
    let root = locate(data_dir)?;
    let total: usize = options.split.iter().sum();
    if total != options.per_class || options.size == 0 {
        return Err(DatasetError::format(
            &root,
            format!(
                "cannot prepare with per_class {}, split {:?} (adds up to {total}) and size {}: \
                 the split must add up to per_class and the size be at least 1",
                options.per_class, options.split, options.size
            ),
        ));
    }
    let listings = CLASSES
        .iter()
        .map(|class| list(&root, class))
        .collect::<Result<Vec<_>, _>>()?;
    // Augmentation is applied after the cache: both variants share one decoded selection.
    let mut key = format!(
        "cats-vs-dogs preparation {PREPARATION_VERSION}: first {} readable .jpg per class in \
         numeric order, RGB, nearest to {}x{}, split {:?}\n",
        options.per_class, options.size, options.size, options.split
    );
    for entry in listings.iter().flatten() {
        key.push_str(&format!(
            "{}\t{}\t{}\n",
            entry.relative.display(),
            entry.len,
            entry.modified
        ));
    }
    let cache_path = cache::cache_path(data_dir, "cats-vs-dogs", &key);
    let decoded = AtomicUsize::new(0);
    let (mut splits, meta, outcome) =
        cache::load_or_build(&cache_path, || build(&root, &listings, options, &decoded))?;
    // The cache may have been written when the data directory was elsewhere.
    splits.source = root;
    if options.augment {
        splits.train.append_enlarged_crops();
        splits.validation.append_enlarged_crops();
    }
    Ok(Pets {
        splits,
        selected: meta.selected,
        skipped: meta.skipped,
        cache: outcome,
        cache_path,
        decoded: decoded.into_inner(),
    })
}

/// A file of a class folder.
struct Entry {
    path: PathBuf,
    /// `Cat/0.jpg`.
    relative: PathBuf,
    name: String,
    is_file: bool,
    len: u64,
    /// Nanoseconds since the Unix epoch, 0 where the system has none.
    modified: u128,
}

impl Entry {
    /// Numeric names (`<digits>.jpg`) by number, then the others by name.
    fn order(&self) -> (bool, u64, &str) {
        let number = self
            .name
            .strip_suffix(".jpg")
            .filter(|stem| !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|stem| stem.parse::<u64>().ok());
        (number.is_none(), number.unwrap_or(0), &self.name)
    }
}

/// The entries of `root/class`, in selection order.
fn list(root: &Path, class: &str) -> Result<Vec<Entry>, DatasetError> {
    let dir = root.join(class);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DatasetError::Io { path, source }
    };
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
        let entry = entry.map_err(io(&dir))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        // Follows links, as opening the file would.
        let meta = std::fs::metadata(&path).ok();
        entries.push(Entry {
            relative: Path::new(class).join(&name),
            name,
            is_file: meta.as_ref().is_some_and(|m| m.is_file()),
            len: meta.as_ref().map_or(0, |m| m.len()),
            modified: meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos()),
            path,
        });
    }
    entries.sort_by(|a, b| a.order().cmp(&b.order()));
    Ok(entries)
}

/// Decodes the first `per_class` readable photos of each class and splits them.
fn build(
    root: &Path,
    listings: &[Vec<Entry>],
    options: &PetsOptions,
    decoded: &AtomicUsize,
) -> Result<(Splits, Meta), DatasetError> {
    let size = options.size;
    let mut selected = Vec::new();
    let mut skipped = Vec::new();
    let mut images: Vec<Vec<Vec<u8>>> = Vec::new();
    for (class, entries) in CLASSES.iter().zip(listings) {
        let mut found: Vec<Vec<u8>> = Vec::with_capacity(options.per_class);
        let mut class_skipped: Vec<(usize, Skipped)> = Vec::new();
        let mut candidates = Vec::new();
        for (position, entry) in entries.iter().enumerate() {
            let reason = if !entry.is_file {
                SkipReason::NotAFile
            } else if !entry.name.ends_with(".jpg") {
                SkipReason::NotJpg
            } else {
                candidates.push((position, entry));
                continue;
            };
            class_skipped.push((
                position,
                Skipped {
                    path: entry.relative.clone(),
                    reason,
                },
            ));
        }
        let mut next = 0;
        // Each round decodes, in parallel, exactly as many files as photos are still needed, so
        // nothing is decoded past the last photo selected; files that fail are made up for in the
        // next round.
        while found.len() < options.per_class && next < candidates.len() {
            let round =
                &candidates[next..(next + options.per_class - found.len()).min(candidates.len())];
            next += round.len();
            let results: Vec<_> = round
                .par_iter()
                .map(|(_, entry)| prepare(&entry.path, size, decoded))
                .collect();
            for (&(position, entry), result) in round.iter().zip(results) {
                match result {
                    Ok(pixels) => {
                        selected.push(entry.relative.clone());
                        found.push(pixels);
                    }
                    Err(reason) => class_skipped.push((
                        position,
                        Skipped {
                            path: entry.relative.clone(),
                            reason,
                        },
                    )),
                }
            }
        }
        if found.len() < options.per_class {
            let unusable = class_skipped.len();
            return Err(DatasetError::format(
                &root.join(class),
                format!(
                    "only {} readable JPEGs, {} needed (per_class): {} entries, {} of them \
                     .jpg files, {unusable} entries not usable",
                    found.len(),
                    options.per_class,
                    entries.len(),
                    candidates.len()
                ),
            ));
        }
        class_skipped.sort_by_key(|(position, _)| *position);
        skipped.extend(class_skipped.into_iter().map(|(_, s)| s));
        images.push(found);
    }
    let shape = [3, size, size];
    let [n_train, n_validation, _] = options.split;
    let bounds = [0, n_train, n_train + n_validation, options.per_class];
    let mut sets = (0..3).map(|s| {
        let mut set = ImageSet {
            images: Vec::with_capacity(2 * (bounds[s + 1] - bounds[s]) * 3 * size * size),
            labels: Vec::new(),
            shape,
        };
        for (label, class_images) in images.iter().enumerate() {
            for image in &class_images[bounds[s]..bounds[s + 1]] {
                set.images.extend_from_slice(image);
                set.labels.push(label as u8);
            }
        }
        set
    });
    let (train, validation, test) = (
        sets.next().expect("three splits"),
        sets.next().expect("three splits"),
        sets.next().expect("three splits"),
    );
    Ok((
        Splits {
            train,
            validation,
            test,
            source: root.to_path_buf(),
        },
        Meta { selected, skipped },
    ))
}

/// One photo as `[3, size, size]`, or why it cannot be used.
fn prepare(path: &Path, size: usize, decoded: &AtomicUsize) -> Result<Vec<u8>, SkipReason> {
    let bytes = std::fs::read(path).map_err(|e| SkipReason::Unreadable(e.to_string()))?;
    if bytes.is_empty() {
        return Err(SkipReason::Empty);
    }
    decoded.fetch_add(1, Ordering::Relaxed);
    let image = image::load_from_memory_with_format(&bytes, ImageFormat::Jpeg)
        .map_err(|e| SkipReason::NotJpeg(e.to_string()))?
        .to_rgb8();
    if is_truncated(&bytes) {
        return Err(SkipReason::Truncated);
    }
    let (w, h) = (image.width() as usize, image.height() as usize);
    let chw = hwc_to_chw(image.as_raw(), [h, w, 3]);
    Ok(resize(&chw, [3, h, w], [size, size], Filter::Nearest))
}

/// Whether a JPEG that decoded ends before its image data does. The `image` crate decodes
/// leniently (a file cut to a tenth of its length still "decodes", the rest filled in), so the
/// end is checked here: the marker segments are walked by their lengths up to the first
/// start-of-scan (skipping embedded EXIF thumbnails, which have their own end marker), and an
/// end-of-image marker (`FF D9`, which stuffing keeps out of the entropy-coded data) must follow.
/// A file whose headers cannot be walked is given the benefit of the doubt: it decoded.
fn is_truncated(bytes: &[u8]) -> bool {
    let mut pos = 2;
    loop {
        match bytes.get(pos..pos + 2) {
            None => return true,
            Some(&[0xFF, 0xFF]) => pos += 1,
            Some(&[0xFF, 0xDA]) => break,
            Some(&[0xFF, 0x01 | 0xD0..=0xD7]) => pos += 2,
            Some(&[0xFF, _]) => match bytes.get(pos + 2..pos + 4) {
                Some(&[hi, lo]) => pos += 2 + usize::from(u16::from_be_bytes([hi, lo])),
                _ => return true,
            },
            Some(_) => return false,
        }
    }
    !bytes[pos + 2..].windows(2).any(|w| w == [0xFF, 0xD9])
}

#[cfg(test)]
#[path = "pets_tests.rs"]
mod tests;
