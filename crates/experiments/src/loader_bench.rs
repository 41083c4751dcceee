//! `batchlab bench --loader`: how fast the datasets crate feeds a training step, next to how fast
//! a flex training step of the seed's small CNN consumes images.
//!
//! The cats-vs-dogs figures run on a generated PetImages tree of photo-like JPEGs (the real zip
//! cannot be downloaded on CI machines); the Fashion-MNIST figures on the real set when it is
//! installed. Every figure is repeated and reported as the median with its range.

use std::{path::Path, sync::Arc, time::Instant};

use batchlab_datasets::{
    fixtures::write_pet_images,
    loader::{CropMode, Loader, Order, Pipeline},
    mnist::{self, MnistKind},
    pets::{self, PetsOptions},
    DatasetError, ImageSet,
};
use batchlab_method::stats::median;

/// One figure: images per second over the repeats.
#[derive(Debug, Clone)]
pub struct Rate {
    /// What was timed.
    pub name: String,
    /// Images per second, one per repeat.
    pub samples: Vec<f64>,
}

impl Rate {
    /// The median over the repeats.
    pub fn median(&self) -> f64 {
        median(&self.samples)
    }

    /// `name  median images/s (min .. max, n repeats)`.
    pub fn line(&self) -> String {
        let (lo, hi) = self
            .samples
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        format!(
            "{:<58} {:>9.0} images/s  ({lo:.0} .. {hi:.0}, {} repeats)",
            self.name,
            self.median(),
            self.samples.len()
        )
    }
}

/// The batch size and per-image pipeline of the seed-003 training loop with online flips.
fn pets_order(seed: u64) -> Order {
    Order {
        batch_size: 32,
        shuffle: true,
        drop_last: false,
        seed,
    }
}

/// Seconds to pull one epoch of `set` through a loader.
fn epoch_seconds(set: &Arc<ImageSet>, pipeline: &Pipeline, order: Order) -> f64 {
    let loader = Loader::new(Arc::clone(set), pipeline.clone(), order, 4);
    let start = Instant::now();
    let mut images = 0;
    for batch in loader.epoch(0) {
        images += batch.len();
    }
    assert_eq!(images, set.len(), "an epoch delivers every example");
    start.elapsed().as_secs_f64()
}

/// Cats vs dogs from JPEGs: the seed's selection (2 x 1,000 images, 600/200/200, offline
/// augmentation) from a cold decode cache and from a warm one, then batches of 32 with random
/// flips from memory. Returns (cold, warm, batches) rates.
pub fn pets_rates(root: &Path, repeats: usize) -> Result<[Rate; 3], DatasetError> {
    write_pet_images(&root.join("cats-vs-dogs"), 1_000, 0)?;
    let options = PetsOptions {
        augment: true,
        ..PetsOptions::default()
    };
    let flips = Pipeline {
        flip: true,
        crop_mode: CropMode::Random,
        ..Pipeline::default()
    };
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    let mut batches = Vec::new();
    for repeat in 0..repeats {
        let cache = root.join("cache");
        if cache.exists() {
            std::fs::remove_dir_all(&cache).map_err(|source| DatasetError::Io {
                path: cache.clone(),
                source,
            })?;
        }
        for (first, rates) in [(true, &mut cold), (false, &mut warm)] {
            let start = Instant::now();
            let loaded = pets::load(root, &options)?;
            let load = start.elapsed().as_secs_f64();
            debug_assert_eq!(loaded.decoded > 0, first, "cold decodes, warm does not");
            let train = Arc::new(loaded.splits.train);
            let epoch = epoch_seconds(&train, &flips, pets_order(repeat as u64));
            // The first epoch of a run: load (decoding every selected JPEG when cold), then
            // deliver every training image once.
            rates.push(train.len() as f64 / (load + epoch));
            if !first {
                batches.push(train.len() as f64 / epoch);
            }
        }
    }
    Ok([
        Rate {
            name: "cats-vs-dogs first epoch, cold cache (decode+resize+augment)".into(),
            samples: cold,
        },
        Rate {
            name: "cats-vs-dogs first epoch, warm cache".into(),
            samples: warm,
        },
        Rate {
            name: "cats-vs-dogs batches of 32 from memory, random flips".into(),
            samples: batches,
        },
    ])
}

/// Fashion-MNIST batches of 128 from the real set, plain and with the CPU variants' online
/// augmentation (pad 2, random 28x28 crop, flips). None when the set is not installed.
pub fn fashion_mnist_rates(data_dir: &Path, repeats: usize) -> Option<[Rate; 2]> {
    let splits = mnist::load(MnistKind::FashionMnist, data_dir, 5_000).ok()?;
    let train = Arc::new(splits.train);
    let augmented = Pipeline {
        crop: Some([28, 28]),
        crop_mode: CropMode::Random,
        padding: 2,
        flip: true,
        ..Pipeline::default()
    };
    let mut rates = [
        (
            "fashion-mnist batches of 128, plain",
            Pipeline::default(),
            Vec::new(),
        ),
        (
            "fashion-mnist batches of 128, pad-2 crop + flip",
            augmented,
            Vec::new(),
        ),
    ];
    for repeat in 0..repeats {
        for (_, pipeline, samples) in rates.iter_mut() {
            let order = Order {
                batch_size: 128,
                shuffle: true,
                drop_last: false,
                seed: repeat as u64,
            };
            samples.push(train.len() as f64 / epoch_seconds(&train, pipeline, order));
        }
    }
    Some(rates.map(|(name, _, samples)| Rate {
        name: name.into(),
        samples,
    }))
}
