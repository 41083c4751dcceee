//! Tests of [`super`] (pets.rs).

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
            let original =
                image::RgbImage::from_raw(200, 200, chw_to_hwc(plain_set.image(i), [3, 200, 200]))
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
