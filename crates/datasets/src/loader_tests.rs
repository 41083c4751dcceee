//! Tests of [`super`] (loader.rs).

use super::*;

/// `n` images of shape [c, h, w] whose pixels encode (example, channel, row, column).
fn ramp_set(n: usize, shape: [usize; 3]) -> ImageSet {
    let [c, h, w] = shape;
    let mut images = Vec::with_capacity(n * c * h * w);
    for i in 0..n {
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    images.push((i * 50 + ch * 20 + y * 4 + x) as u8);
                }
            }
        }
    }
    ImageSet {
        images,
        labels: (0..n).map(|i| (i % 3) as u8).collect(),
        shape,
    }
}

fn collect(loader: &Loader, epoch: u64) -> Vec<Batch> {
    loader.epoch(epoch).collect()
}

#[test]
fn plain_pipeline_scales_pixels_and_keeps_file_order() {
    let set = Arc::new(ramp_set(5, [1, 2, 3]));
    let order = Order {
        batch_size: 2,
        shuffle: false,
        drop_last: false,
        seed: 0,
    };
    let loader = Loader::new(set.clone(), Pipeline::default(), order, 2);
    let batches = collect(&loader, 0);
    assert_eq!(batches.len(), 3);
    assert_eq!(batches[2].shape, [1, 1, 2, 3]);
    let all: Vec<f32> = batches.iter().flat_map(|b| b.images.clone()).collect();
    assert_eq!(all.len(), set.images.len());
    for (got, &pixel) in all.iter().zip(&set.images) {
        assert!(
            (got - f32::from(pixel) / 255.0).abs() < 1e-6,
            "{got} for {pixel}"
        );
    }
    let labels: Vec<u8> = batches.iter().flat_map(|b| b.labels.clone()).collect();
    assert_eq!(labels, set.labels);
    let dropped = Loader::new(
        set,
        Pipeline::default(),
        Order {
            drop_last: true,
            ..order
        },
        1,
    );
    assert_eq!(collect(&dropped, 0).len(), 2);
    assert_eq!(dropped.batches_per_epoch(), 2);
}

#[test]
fn shuffling_is_seeded_per_epoch_and_covers_every_example_once() {
    let set = Arc::new(ramp_set(40, [1, 1, 1]));
    let order = Order {
        batch_size: 8,
        shuffle: true,
        drop_last: false,
        seed: 7,
    };
    let loader = Loader::new(set, Pipeline::default(), order, 3);
    let pixels_of = |epoch| -> Vec<f32> {
        collect(&loader, epoch)
            .iter()
            .flat_map(|b| b.images.clone())
            .collect()
    };
    let (a, again, next) = (pixels_of(0), pixels_of(0), pixels_of(1));
    assert_eq!(a, again, "same seed and epoch, same order");
    assert_ne!(a, next, "a new epoch reshuffles");
    let mut seen: Vec<u32> = a.iter().map(|v| (v * 255.0).round() as u32).collect();
    seen.sort_unstable();
    let mut expected: Vec<u32> = (0..40).map(|i| i * 50 % 256).collect();
    expected.sort_unstable();
    assert_eq!(seen, expected, "every example exactly once");
    let other = Loader::new(
        Arc::new(ramp_set(40, [1, 1, 1])),
        Pipeline::default(),
        Order { seed: 8, ..order },
        1,
    );
    assert_ne!(
        a,
        collect(&other, 0)
            .iter()
            .flat_map(|b| b.images.clone())
            .collect::<Vec<_>>()
    );
}

#[test]
fn random_transforms_do_not_depend_on_threads_or_prefetch() {
    let set = Arc::new(ramp_set(12, [2, 6, 6]));
    let pipeline = Pipeline {
        crop: Some([4, 4]),
        crop_mode: CropMode::Random,
        padding: 2,
        flip: true,
        ..Pipeline::default()
    };
    let order = Order {
        batch_size: 5,
        shuffle: true,
        drop_last: false,
        seed: 3,
    };
    let parallel = collect(&Loader::new(set.clone(), pipeline.clone(), order, 4), 2);
    // The same batches assembled on one thread, example by example.
    let permutation = order.permutation(set.len(), 2);
    let single: Vec<Batch> = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| {
            permutation
                .chunks(order.batch_size)
                .enumerate()
                .map(|(b, chunk)| build_batch(&set, &pipeline, chunk, b * order.batch_size, (3, 2)))
                .collect()
        });
    assert_eq!(parallel, single);
    assert_eq!(parallel[0].shape, [5, 2, 4, 4]);
}

#[test]
fn centre_crop_padding_flip_and_normalisation_are_exact() {
    // One 1x4x4 image with pixels 0..16.
    let set = ImageSet {
        images: (0..16).collect(),
        labels: vec![0],
        shape: [1, 4, 4],
    };
    let mut rng = StdRng::seed_from_u64(0);
    let centre = Pipeline {
        crop: Some([2, 2]),
        mean: vec![0.5],
        std: vec![0.25],
        ..Pipeline::default()
    };
    let mut out = vec![0.0; 4];
    centre.prepare(
        set.image(0),
        set.shape,
        None,
        &mut Scratch::default(),
        &mut rng,
        &mut out,
    );
    let expect: Vec<f32> = [5.0f32, 6.0, 9.0, 10.0]
        .iter()
        .map(|p| (p / 255.0 - 0.5) / 0.25)
        .collect();
    for (a, b) in out.iter().zip(&expect) {
        assert!((a - b).abs() < 1e-5, "{out:?} vs {expect:?}");
    }

    // With padding 1 and a 6x6 window every random crop is the padded image itself, so the
    // border is zero and the inside is the image (mirrored when flipped).
    let padded = Pipeline {
        crop: Some([6, 6]),
        crop_mode: CropMode::Random,
        padding: 1,
        flip: true,
        ..Pipeline::default()
    };
    let (mut plain, mut mirrored) = (0, 0);
    for seed in 0..20 {
        let mut out = vec![9.0; 36];
        let mut rng = StdRng::seed_from_u64(seed);
        padded.prepare(
            set.image(0),
            set.shape,
            None,
            &mut Scratch::default(),
            &mut rng,
            &mut out,
        );
        assert!(out[..6].iter().all(|&v| v == 0.0));
        let inner: Vec<u8> = (1..5)
            .flat_map(|y| (1..5).map(move |x| (y, x)))
            .map(|(y, x)| (out[y * 6 + x] * 255.0).round() as u8)
            .collect();
        if inner[0] == 0 {
            assert_eq!(inner, (0..16).collect::<Vec<u8>>());
            plain += 1;
        } else {
            assert_eq!(inner[..4], [3, 2, 1, 0]);
            mirrored += 1;
        }
    }
    assert!(
        plain > 0 && mirrored > 0,
        "{plain} plain, {mirrored} mirrored"
    );
}

#[test]
fn a_consumer_that_stops_early_stops_the_worker() {
    let set = Arc::new(ramp_set(100, [1, 2, 2]));
    let order = Order {
        batch_size: 1,
        shuffle: false,
        drop_last: false,
        seed: 0,
    };
    let loader = Loader::new(set, Pipeline::default(), order, 2);
    let mut epoch = loader.epoch(0);
    assert!(epoch.next().is_some());
    drop(epoch); // must not hang or panic
}
