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
    transform::{crop_into, hwc_to_chw, resize, Filter, Resizer},
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
        (self.size * 5 + 2) / 4
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
        augment(&mut splits.train, options);
        augment(&mut splits.validation, options);
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

/// Appends to `set` a copy of each of its images resized to `augment_size()` with bicubic and
/// cropped to its top-left `size x size` (the seed's `photo.resize((250, 250))` then
/// `.crop((0, 0, 200, 200))`), labels repeated: example `i + n` is the copy of example `i`.
fn augment(set: &mut ImageSet, options: &PetsOptions) {
    let n = set.len();
    let image_size = set.image_size();
    let big = options.augment_size();
    let resizer = Resizer::new(set.shape, [big, big], Filter::Bicubic);
    let mut copies = vec![0u8; set.images.len()];
    copies
        .par_chunks_mut(image_size.max(1))
        .zip(set.images.par_chunks(image_size.max(1)))
        .for_each_init(
            || (vec![0u8; 3 * big * big], Vec::new()),
            |(resized, scratch), (copy, image)| {
                resizer.resize_into(image, resized, scratch);
                crop_into(resized, [3, big, big], 0, 0, [options.size; 2], copy);
            },
        );
    set.images.extend_from_slice(&copies);
    set.labels.extend_from_within(0..n);
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use image::{codecs::jpeg::JpegEncoder, imageops, imageops::FilterType, ExtendedColorType};

    use super::*;
    use crate::transform::chw_to_hwc;

    /// A JPEG of `w x h` (RGB, or grey when `grey`) whose pixels depend on `seed`.
    fn jpeg(w: u32, h: u32, seed: u32, grey: bool) -> Vec<u8> {
        let channels = if grey { 1 } else { 3 };
        let pixels: Vec<u8> = (0..w * h * channels)
            .map(|i| {
                let (p, c) = (i / channels, i % channels);
                let (x, y) = (p % w, p / w);
                ((x * (3 + seed) + y * (5 + c) + seed * 40) % 256) as u8
            })
            .collect();
        let mut bytes = Vec::new();
        let colour = if grey {
            ExtendedColorType::L8
        } else {
            ExtendedColorType::Rgb8
        };
        JpegEncoder::new_with_quality(&mut bytes, 90)
            .encode(&pixels, w, h, colour)
            .unwrap();
        bytes
    }

    /// A PetImages tree in the real layout:
    ///
    /// - Cat: 0.jpg (RGB 60x45), 1.jpg (grey 40x50), 2.jpg (RGB 64x48), 3.jpg (corrupt: a JPEG
    ///   header and then noise), 4.jpg (zero bytes), 5.jpg (text), 6.jpg (RGB, cut at 60%),
    ///   10.jpg (RGB 30x70),
    ///   11.jpg (RGB), Thumbs.db, a.jpg (RGB, a non-numeric name);
    /// - Dog: 0.jpg .. 4.jpg (RGB, mixed sizes), 7.jpg (RGB), Thumbs.db.
    fn tree(data_dir: &Path) -> PathBuf {
        let root = data_dir.join("cats-vs-dogs").join("PetImages");
        for class in CLASSES {
            std::fs::create_dir_all(root.join(class)).unwrap();
        }
        let put = |rel: &str, bytes: &[u8]| std::fs::write(root.join(rel), bytes).unwrap();
        put("Cat/0.jpg", &jpeg(60, 45, 0, false));
        put("Cat/1.jpg", &jpeg(40, 50, 1, true));
        put("Cat/2.jpg", &jpeg(64, 48, 2, false));
        let mut corrupt = jpeg(50, 50, 3, false);
        for (i, b) in corrupt.iter_mut().enumerate().skip(2) {
            *b = (i * 37 % 251) as u8;
        }
        put("Cat/3.jpg", &corrupt);
        put("Cat/4.jpg", b"");
        put("Cat/5.jpg", b"<html>not a photo</html>");
        let whole = jpeg(50, 40, 6, false);
        put("Cat/6.jpg", &whole[..whole.len() * 6 / 10]);
        put("Cat/10.jpg", &jpeg(30, 70, 10, false));
        put("Cat/11.jpg", &jpeg(30, 30, 11, false));
        put("Cat/Thumbs.db", b"\xd0\xcf\x11\xe0 thumbnails");
        put("Cat/a.jpg", &jpeg(30, 30, 12, false));
        for (i, (w, h)) in [(50, 40), (44, 66), (80, 30), (33, 33), (61, 47)]
            .into_iter()
            .enumerate()
        {
            put(&format!("Dog/{i}.jpg"), &jpeg(w, h, 20 + i as u32, false));
        }
        put("Dog/7.jpg", &jpeg(20, 20, 27, false));
        put("Dog/Thumbs.db", b"\xd0\xcf\x11\xe0");
        root
    }

    fn options(augment: bool) -> PetsOptions {
        PetsOptions {
            per_class: 4,
            split: [2, 1, 1],
            size: 200,
            augment,
        }
    }

    /// The file at `root/rel`, decoded and resized by `image` directly, as `[3, 200, 200]`.
    fn expected(root: &Path, rel: &str) -> Vec<u8> {
        let decoded = image::load_from_memory(&std::fs::read(root.join(rel)).unwrap())
            .unwrap()
            .to_rgb8();
        let resized = imageops::resize(&decoded, 200, 200, FilterType::Nearest);
        hwc_to_chw(resized.as_raw(), [200, 200, 3])
    }

    fn paths(list: &[PathBuf]) -> Vec<String> {
        list.iter().map(|p| p.display().to_string()).collect()
    }

    #[test]
    fn selection_skips_unreadable_files_in_numeric_order_and_is_cached() {
        let data = tempfile::tempdir().unwrap();
        let root = tree(data.path());
        let pets = load(data.path(), &options(false)).unwrap();
        assert_eq!(pets.cache, CacheOutcome::Built);
        assert_eq!(
            paths(&pets.selected),
            [
                "Cat/0.jpg",
                "Cat/1.jpg",
                "Cat/2.jpg",
                "Cat/10.jpg",
                "Dog/0.jpg",
                "Dog/1.jpg",
                "Dog/2.jpg",
                "Dog/3.jpg"
            ],
            "2.jpg before 10.jpg; 3 to 6 skipped; 11.jpg and a.jpg not needed"
        );
        let skipped: Vec<(String, String)> = pets
            .skipped
            .iter()
            .map(|s| {
                let kind = match &s.reason {
                    SkipReason::NotJpeg(_) => "not jpeg".to_string(),
                    other => other.to_string(),
                };
                (s.path.display().to_string(), kind)
            })
            .collect();
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            skipped,
            pairs(&[
                ("Cat/3.jpg", "not jpeg"),
                ("Cat/4.jpg", "empty file"),
                ("Cat/5.jpg", "not jpeg"),
                (
                    "Cat/6.jpg",
                    "truncated JPEG (no end-of-image marker after the image data)"
                ),
                ("Cat/Thumbs.db", "not a .jpg file"),
                ("Dog/Thumbs.db", "not a .jpg file"),
            ])
        );
        // Cat: 0 1 2 3 in the first round, then 4 (empty, not decoded), 5, 6, 10; Dog: 0 1 2 3.
        assert_eq!(pets.decoded, 11);

        let s = &pets.splits;
        assert_eq!(s.source, root);
        assert_eq!((s.train.len(), s.validation.len(), s.test.len()), (4, 2, 2));
        assert_eq!(s.train.shape, [3, 200, 200]);
        assert_eq!(s.train.labels, [0, 0, 1, 1]);
        assert_eq!(s.validation.labels, [0, 1]);
        assert_eq!(s.test.labels, [0, 1]);
        // Which photo is where, each checked against an independent decode + resize.
        let placed = [
            (&s.train, 0, "Cat/0.jpg"),
            (&s.train, 1, "Cat/1.jpg"),
            (&s.train, 2, "Dog/0.jpg"),
            (&s.train, 3, "Dog/1.jpg"),
            (&s.validation, 0, "Cat/2.jpg"),
            (&s.validation, 1, "Dog/2.jpg"),
            (&s.test, 0, "Cat/10.jpg"),
            (&s.test, 1, "Dog/3.jpg"),
        ];
        for (set, i, rel) in placed {
            assert!(set.image(i) == expected(&root, rel), "{rel}");
        }
        // The grey photo became RGB with three equal planes.
        let grey = s.train.image(1);
        assert_eq!(grey[..40_000], grey[40_000..80_000]);

        // A second load decodes nothing and gives the same bytes and report.
        let warm = load(data.path(), &options(false)).unwrap();
        assert_eq!((warm.cache, warm.decoded), (CacheOutcome::Hit, 0));
        assert_eq!(warm.splits, pets.splits);
        assert_eq!(
            (&warm.selected, &warm.skipped),
            (&pets.selected, &pets.skipped)
        );
        assert_eq!(warm.cache_path, pets.cache_path);

        // A damaged cache file is rebuilt.
        let bytes = std::fs::read(&pets.cache_path).unwrap();
        std::fs::write(&pets.cache_path, &bytes[..bytes.len() / 2]).unwrap();
        let rebuilt = load(data.path(), &options(false)).unwrap();
        assert_eq!((rebuilt.cache, rebuilt.decoded), (CacheOutcome::Built, 11));
        assert_eq!(rebuilt.splits, pets.splits);
        assert_eq!(std::fs::read(&pets.cache_path).unwrap(), bytes);

        // A changed source file gives another key, so it is decoded again.
        std::fs::write(root.join("Dog/3.jpg"), jpeg(35, 35, 99, false)).unwrap();
        let changed = load(data.path(), &options(false)).unwrap();
        assert_eq!(changed.cache, CacheOutcome::Built);
        assert_ne!(changed.cache_path, pets.cache_path);
        assert!(changed.splits.test.image(1) == expected(&root, "Dog/3.jpg"));
    }

    #[test]
    fn augmentation_doubles_train_and_validation_with_bicubic_top_left_crops() {
        let data = tempfile::tempdir().unwrap();
        tree(data.path());
        let plain = load(data.path(), &options(false)).unwrap();
        let aug = load(data.path(), &options(true)).unwrap();
        assert_eq!(options(true).augment_size(), 250);
        assert_eq!(
            (aug.cache, aug.decoded),
            (CacheOutcome::Hit, 0),
            "augmenting reuses the decoded selection"
        );
        let (p, a) = (&plain.splits, &aug.splits);
        assert_eq!((a.train.len(), a.validation.len(), a.test.len()), (8, 4, 2));
        assert_eq!(a.train.labels, [0, 0, 1, 1, 0, 0, 1, 1]);
        assert_eq!(a.validation.labels, [0, 1, 0, 1]);
        assert_eq!(a.test, p.test, "the test set is not augmented");
        for (plain_set, aug_set) in [(&p.train, &a.train), (&p.validation, &a.validation)] {
            let n = plain_set.len();
            assert_eq!(
                aug_set.images[..plain_set.images.len()],
                plain_set.images[..]
            );
            for i in 0..n {
                // The seed's photo.resize((250, 250)).crop((0, 0, 200, 200)), computed with
                // image::imageops on the 200x200 original.
                let original = image::RgbImage::from_raw(
                    200,
                    200,
                    chw_to_hwc(plain_set.image(i), [3, 200, 200]),
                )
                .unwrap();
                let big = imageops::resize(&original, 250, 250, FilterType::CatmullRom);
                let cropped = imageops::crop_imm(&big, 0, 0, 200, 200).to_image();
                let expected = hwc_to_chw(cropped.as_raw(), [200, 200, 3]);
                assert!(aug_set.image(n + i) == expected, "copy of example {i}");
                assert_ne!(aug_set.image(n + i), aug_set.image(i));
            }
        }
    }

    #[test]
    fn missing_trees_too_few_photos_and_bad_options_are_explained() {
        let data = tempfile::tempdir().unwrap();
        let err = load(data.path(), &PetsOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cats-vs-dogs is not on this machine"),
            "{err}"
        );
        assert!(err.contains("batchlab data fetch cats-vs-dogs"), "{err}");
        assert!(err.contains("kagglecatsanddogs_5340.zip"), "{err}");
        assert!(err.contains("PetImages/Cat"), "{err}");

        let root = tree(data.path());
        let opts = PetsOptions {
            per_class: 7,
            split: [5, 1, 1],
            size: 8,
            augment: false,
        };
        let err = load(data.path(), &opts).unwrap_err().to_string();
        assert!(
            err.starts_with(&root.join("Cat").display().to_string()),
            "{err}"
        );
        assert!(
            err.contains("only 6 readable JPEGs, 7 needed (per_class): 11 entries, 10 of them .jpg files, 5 entries not usable"),
            "{err}"
        );
        let opts = PetsOptions {
            per_class: 4,
            split: [2, 1, 2],
            size: 8,
            augment: false,
        };
        let err = load(data.path(), &opts).unwrap_err().to_string();
        assert!(err.contains("split [2, 1, 2] (adds up to 5)"), "{err}");
    }

    #[test]
    fn truncation_is_told_from_thumbnails_and_trailing_bytes() {
        let whole = jpeg(40, 30, 5, false);
        // An EXIF segment holding a thumbnail, with its own end marker, before the main image.
        let payload = [&b"Exif\0\0"[..], &[0xFF, 0xD8, 0x01, 0xFF, 0xD9]].concat();
        let length = (payload.len() + 2) as u16;
        let with_exif = [
            &whole[..2],
            &[0xFF, 0xE1],
            &length.to_be_bytes(),
            &payload,
            &whole[2..],
        ]
        .concat();
        assert!(image::load_from_memory(&with_exif).is_ok());
        for (what, bytes, truncated) in [
            ("whole", whole.clone(), false),
            ("trailing bytes", [&whole[..], b"\0\0junk"].concat(), false),
            ("with a thumbnail", with_exif.clone(), false),
            ("cut", whole[..whole.len() - 40].to_vec(), true),
            (
                "cut, thumbnail",
                with_exif[..with_exif.len() - 40].to_vec(),
                true,
            ),
            ("cut in the headers", whole[..30].to_vec(), true),
        ] {
            assert_eq!(is_truncated(&bytes), truncated, "{what}");
        }
    }

    /// Decode speed on photo-sized JPEGs (~500x375, quality 90), for information:
    /// `cargo test --release -p batchlab-datasets pets::tests::decode_speed -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn decode_speed() {
        let data = tempfile::tempdir().unwrap();
        let root = data.path().join("cats-vs-dogs").join("PetImages");
        let per_class = 200;
        let mut s = 1u32;
        let mut total_bytes = 0;
        for class in CLASSES {
            std::fs::create_dir_all(root.join(class)).unwrap();
            for i in 0..per_class {
                let (w, h) = (480 + (i % 5) as u32 * 10, 360 + (i % 3) as u32 * 10);
                let pixels: Vec<u8> = (0..w * h * 3)
                    .map(|k| {
                        s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        let (p, c) = (k / 3, k % 3);
                        let (x, y) = (p % w, p / w);
                        let wave = ((x as f32 * 0.05).sin() + (y as f32 * 0.03).cos()) * 50.0;
                        (120.0 + wave + (c * 20) as f32 + (s >> 28) as f32) as u8
                    })
                    .collect();
                let mut bytes = Vec::new();
                JpegEncoder::new_with_quality(&mut bytes, 90)
                    .encode(&pixels, w, h, ExtendedColorType::Rgb8)
                    .unwrap();
                total_bytes += bytes.len();
                std::fs::write(root.join(class).join(format!("{i}.jpg")), bytes).unwrap();
            }
        }
        let opts = PetsOptions {
            per_class,
            split: [120, 40, 40],
            size: 200,
            augment: false,
        };
        let start = Instant::now();
        let cold = load(data.path(), &opts).unwrap();
        let cold_s = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let warm = load(data.path(), &opts).unwrap();
        let warm_s = start.elapsed().as_secs_f64();
        let aug = PetsOptions {
            augment: true,
            ..opts
        };
        let start = Instant::now();
        load(data.path(), &aug).unwrap();
        let aug_s = start.elapsed().as_secs_f64();
        assert_eq!((cold.decoded, warm.decoded), (2 * per_class, 0));
        eprintln!(
            "{} threads: decode + resize {} JPEGs (mean {} kB): {cold_s:.2} s ({:.0} images/s); cache hit: \
             {warm_s:.3} s; cache hit + augmentation of {} images: {aug_s:.2} s",
            rayon::current_num_threads(),
            cold.decoded,
            total_bytes / cold.decoded / 1000,
            cold.decoded as f64 / cold_s,
            2 * (120 + 40)
        );
    }
}
