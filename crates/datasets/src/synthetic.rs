//! Seeded synthetic image batches.
//!
//! The values are drawn on the host from a seeded generator (not from the backend's RNG), so the
//! same seed gives the same batch on every backend and device.

use burn::tensor::{backend::Backend, Int, Tensor, TensorData};
use rand::{rngs::StdRng, Rng, SeedableRng};

use crate::images::{ImageSet, Splits};

/// What a synthetic batch looks like: images `[C, H, W]` with values in [0, 1) and labels in
/// `0..classes` (labels 0/1 for a one-logit binary head).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticImages {
    /// Channels, height, width of one image.
    pub shape: [usize; 3],
    /// Number of classes of the model's head; 1 means a binary task with labels 0 and 1.
    pub classes: usize,
}

/// One batch on a device.
#[derive(Debug, Clone)]
pub struct SyntheticBatch<B: Backend> {
    /// `[batch, C, H, W]`, values uniform in [0, 1) like images scaled from u8.
    pub images: Tensor<B, 4>,
    /// `[batch]`, uniform over the classes.
    pub labels: Tensor<B, 1, Int>,
}

impl SyntheticImages {
    /// A batch of `batch_size` examples; the same `(batch_size, seed)` always gives the same values.
    pub fn batch<B: Backend>(
        &self,
        batch_size: usize,
        seed: u64,
        device: &B::Device,
    ) -> SyntheticBatch<B> {
        let mut rng = StdRng::seed_from_u64(seed);
        let [c, h, w] = self.shape;
        let pixels: Vec<f32> = (0..batch_size * c * h * w)
            .map(|_| rng.random::<f32>())
            .collect();
        // A one-logit head is trained on labels 0/1, so it needs two label values, not one.
        let label_values = self.classes.max(2) as i64;
        let labels: Vec<i64> = (0..batch_size)
            .map(|_| rng.random_range(0..label_values))
            .collect();
        SyntheticBatch {
            images: Tensor::from_data(TensorData::new(pixels, [batch_size, c, h, w]), device),
            labels: Tensor::from_data(TensorData::new(labels, [batch_size]), device),
        }
    }
}

/// A small learnable task: `counts` = train / validation / test examples of uniformly random
/// pixels, each labelled by a fixed random linear teacher (`argmax W (x - 1/2)` over the pixels
/// scaled to [0, 1]), with each class's mean logit removed so the classes come out about
/// balanced. A student that fits it learns something real, so training tests can check that
/// accuracy rises well above chance in seconds. The same seed gives the same examples.
pub fn teacher_task(shape: [usize; 3], classes: usize, counts: [usize; 3], seed: u64) -> Splits {
    let mut rng = StdRng::seed_from_u64(seed);
    let size: usize = shape.iter().product();
    let weights: Vec<f32> = (0..classes * size)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let total: usize = counts.iter().sum();
    let images: Vec<u8> = (0..total * size).map(|_| rng.random()).collect();
    let logits: Vec<f32> = images
        .chunks(size)
        .flat_map(|image| {
            weights.chunks(size).map(move |w| {
                w.iter()
                    .zip(image)
                    .map(|(w, &p)| w * (f32::from(p) / 255.0 - 0.5))
                    .sum::<f32>()
            })
        })
        .collect();
    let mut class_mean = vec![0.0f32; classes];
    for example in logits.chunks(classes) {
        for (m, l) in class_mean.iter_mut().zip(example) {
            *m += l / total as f32;
        }
    }
    let labels: Vec<u8> = logits
        .chunks(classes)
        .map(|example| {
            let centred = example.iter().zip(&class_mean).map(|(l, m)| l - m);
            let best = centred
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(0, |(i, _)| i);
            best as u8
        })
        .collect();
    let all = ImageSet {
        images,
        labels,
        shape,
    };
    let [train, validation, _] = counts;
    Splits {
        train: all.slice(0..train),
        validation: all.slice(train..train + validation),
        test: all.slice(train + validation..total),
        source: format!("synthetic (linear teacher, seed {seed})").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn_flex::Flex;

    fn values(batch: &SyntheticBatch<Flex>) -> (Vec<f32>, Vec<i64>) {
        let images = batch.images.to_data().to_vec::<f32>().unwrap();
        let labels = batch
            .labels
            .to_data()
            .convert::<i64>()
            .to_vec::<i64>()
            .unwrap();
        (images, labels)
    }

    #[test]
    fn shapes_and_ranges_follow_the_spec() {
        let spec = SyntheticImages {
            shape: [3, 8, 5],
            classes: 10,
        };
        let batch = spec.batch::<Flex>(4, 7, &Default::default());
        assert_eq!(batch.images.dims(), [4, 3, 8, 5]);
        assert_eq!(batch.labels.dims(), [4]);
        let (images, labels) = values(&batch);
        assert!(images.iter().all(|v| (0.0..1.0).contains(v)));
        assert!(labels.iter().all(|l| (0..10).contains(l)));
    }

    #[test]
    fn same_seed_same_batch_other_seed_other_batch() {
        let spec = SyntheticImages {
            shape: [1, 4, 4],
            classes: 1,
        };
        let device = Default::default();
        let a = values(&spec.batch::<Flex>(16, 1, &device));
        let b = values(&spec.batch::<Flex>(16, 1, &device));
        let c = values(&spec.batch::<Flex>(16, 2, &device));
        assert_eq!(a, b);
        assert_ne!(a.0, c.0);
        assert!(a.1.iter().all(|l| *l == 0 || *l == 1));
        assert!(a.1.contains(&0) && a.1.contains(&1));
    }

    #[test]
    fn teacher_task_is_reproducible_and_about_balanced() {
        let a = teacher_task([1, 8, 8], 4, [400, 50, 50], 3);
        assert_eq!(a, teacher_task([1, 8, 8], 4, [400, 50, 50], 3));
        assert_ne!(a.train, teacher_task([1, 8, 8], 4, [400, 50, 50], 4).train);
        assert_eq!(
            (a.train.len(), a.validation.len(), a.test.len()),
            (400, 50, 50)
        );
        for count in a.train.class_counts(4) {
            assert!((50..=150).contains(&count), "{:?}", a.train.class_counts(4));
        }
    }
}
