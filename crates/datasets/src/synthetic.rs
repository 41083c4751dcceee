//! Seeded synthetic image batches.
//!
//! The values are drawn on the host from a seeded generator (not from the backend's RNG), so the
//! same seed gives the same batch on every backend and device.

use burn::tensor::{backend::Backend, Int, Tensor, TensorData};
use rand::{rngs::StdRng, Rng, SeedableRng};

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
}
