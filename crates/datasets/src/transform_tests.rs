//! Tests of [`super`] (transform.rs).

use image::{imageops, imageops::FilterType, GrayImage, RgbImage};

use super::*;

/// A 2-channel 3x4 image whose value encodes (channel, row, column): 100c + 10y + x.
fn hand_made() -> (Vec<u8>, [usize; 3]) {
    let shape = [2, 3, 4];
    let mut v = Vec::new();
    for c in 0..2u8 {
        for y in 0..3u8 {
            for x in 0..4u8 {
                v.push(100 * c + 10 * y + x);
            }
        }
    }
    (v, shape)
}

#[test]
fn crop_flip_and_centre_crop_are_exact() {
    let (img, shape) = hand_made();
    assert_eq!(
        crop(&img, shape, 1, 1, [2, 2]),
        [11, 12, 21, 22, 111, 112, 121, 122]
    );
    // Reaching outside gives zeros (zero padding).
    assert_eq!(
        crop(&img, shape, -1, 2, [2, 3]),
        [0, 0, 0, 2, 3, 0, 0, 0, 0, 102, 103, 0]
    );
    assert_eq!(crop(&img, shape, 5, 0, [1, 2]), [0; 4]);
    assert_eq!(crop(&img, shape, 0, -9, [1, 2]), [0; 4]);
    assert_eq!(crop(&img, shape, 0, 0, [3, 4]), img);

    let mut flipped = img.clone();
    flip_horizontal(&mut flipped, shape);
    assert_eq!(flipped[..8], [3, 2, 1, 0, 13, 12, 11, 10]);
    assert_eq!(flipped[12..16], [103, 102, 101, 100]);
    flip_horizontal(&mut flipped, shape);
    assert_eq!(flipped, img);

    // 3x4 -> 1x2: rows round((3-1)/2) = 1, columns round((4-2)/2) = 1.
    assert_eq!(centre_crop(&img, shape, [1, 2]), [11, 12, 111, 112]);
    // torchvision's placement: round half to even, and padding when larger.
    let offsets: Vec<isize> = [(5, 2), (7, 2), (4, 1), (6, 1), (256, 224), (2, 5), (3, 6)]
        .iter()
        .map(|&(s, c)| centre_offset(s, c))
        .collect();
    assert_eq!(offsets, [2, 2, 2, 2, 16, -1, -1]);
    assert_eq!(
        centre_crop(&img, shape, [3, 6])[..6],
        [0, 0, 1, 2, 3, 0],
        "a wider window is zero-padded, one column before"
    );
}

#[test]
fn layout_conversions_round_trip() {
    let (img, shape) = hand_made();
    let hwc = chw_to_hwc(&img, shape);
    assert_eq!(hwc[..4], [0, 100, 1, 101]);
    assert_eq!(hwc_to_chw(&hwc, [3, 4, 2]), img);
}

#[test]
fn resize_shapes_and_identities() {
    let (img, shape) = hand_made();
    for filter in [Filter::Nearest, Filter::Bilinear, Filter::Bicubic] {
        assert_eq!(resize(&img, shape, [5, 7], filter).len(), 2 * 5 * 7);
        assert_eq!(resize(&img, shape, [1, 1], filter).len(), 2);
        assert_eq!(resize(&img, shape, [3, 4], filter), img);
        assert!(resize(&img, shape, [0, 4], filter).is_empty());
        assert_eq!(resize(&[], [3, 0, 0], [2, 2], filter), [0; 12]);
        let r = Resizer::new(shape, [6, 8], filter);
        assert_eq!(r.output_shape(), [2, 6, 8]);
    }
    // Doubling with nearest repeats each pixel.
    let up = resize(&img, shape, [6, 8], Filter::Nearest);
    assert_eq!(up[..8], [0, 0, 1, 1, 2, 2, 3, 3]);
    assert_eq!(up[8..16], up[..8]);
    // A constant image stays constant whatever the filter.
    let flat = vec![77u8; 3 * 5 * 9];
    for filter in [Filter::Bilinear, Filter::Bicubic] {
        assert!(resize(&flat, [3, 5, 9], [13, 4], filter)
            .iter()
            .all(|&v| v == 77));
    }
}

fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 56) as u8
        })
        .collect()
}

/// Golden test: every filter, enlarging, shrinking and mixed, RGB and grey, equals
/// `image::imageops::resize` to the byte.
#[test]
fn resize_equals_imageops_to_the_byte() {
    let filters = [
        (Filter::Nearest, FilterType::Nearest),
        (Filter::Bilinear, FilterType::Triangle),
        (Filter::Bicubic, FilterType::CatmullRom),
    ];
    let sizes = [
        ([7, 5], [16, 11]),
        ([32, 32], [256, 256]),
        ([200, 200], [250, 250]),
        ([37, 50], [12, 9]),
        ([20, 30], [20, 47]),
        ([20, 30], [9, 30]),
        ([31, 17], [64, 8]),
    ];
    for (seed, &([h, w], [oh, ow])) in sizes.iter().enumerate() {
        let hwc = noise(h * w * 3, seed as u64);
        let rgb = RgbImage::from_raw(w as u32, h as u32, hwc.clone()).unwrap();
        let grey = GrayImage::from_raw(w as u32, h as u32, hwc[..h * w].to_vec()).unwrap();
        let chw = hwc_to_chw(&hwc, [h, w, 3]);
        for (ours, theirs) in filters {
            let expected = imageops::resize(&rgb, ow as u32, oh as u32, theirs);
            let got = resize(&chw, [3, h, w], [oh, ow], ours);
            assert_eq!(
                chw_to_hwc(&got, [3, oh, ow]),
                expected.into_raw(),
                "{ours:?} {h}x{w} -> {oh}x{ow}"
            );
            let expected = imageops::resize(&grey, ow as u32, oh as u32, theirs);
            let got = resize(&hwc[..h * w], [1, h, w], [oh, ow], ours);
            assert_eq!(
                got,
                expected.into_raw(),
                "grey {ours:?} {h}x{w} -> {oh}x{ow}"
            );
        }
    }
}

#[test]
fn a_resizer_is_reusable_across_images() {
    let r = Resizer::new([3, 10, 12], [7, 7], Filter::Bicubic);
    let mut scratch = Vec::new();
    let mut out = vec![0; 3 * 49];
    for seed in 0..3 {
        let img = noise(360, seed);
        r.resize_into(&img, &mut out, &mut scratch);
        assert_eq!(out, resize(&img, [3, 10, 12], [7, 7], Filter::Bicubic));
    }
}

/// Resize cost per image, for information:
/// `cargo test --release -p batchlab-datasets resize_speed -- --ignored --nocapture`
#[test]
#[ignore]
fn resize_speed() {
    for (shape, size, filter) in [
        ([3, 32, 32], [256, 256], Filter::Nearest),
        ([3, 32, 32], [256, 256], Filter::Bilinear),
        ([3, 32, 32], [256, 256], Filter::Bicubic),
        ([3, 200, 200], [250, 250], Filter::Bicubic),
        ([3, 375, 500], [200, 200], Filter::Nearest),
    ] {
        let image = noise(shape.iter().product(), 1);
        let resizer = Resizer::new(shape, size, filter);
        let mut out = vec![0; 3 * size[0] * size[1]];
        let mut scratch = Vec::new();
        let n = 500;
        let start = std::time::Instant::now();
        for _ in 0..n {
            resizer.resize_into(std::hint::black_box(&image), &mut out, &mut scratch);
        }
        let us = start.elapsed().as_secs_f64() / f64::from(n) * 1e6;
        eprintln!("{filter:?} {shape:?} -> {size:?}: {us:.0} us per image, one thread");
    }
}
