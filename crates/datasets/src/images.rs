//! The in-memory form every dataset is loaded into: u8 images, channel-major, with labels.
//!
//! Images stay as bytes (a quarter of the f32 size) until the loader turns a batch into floats,
//! so CIFAR-10 (50,000 x 3x32x32) takes 150 MB and the cats-vs-dogs selection 240 MB.

use std::path::PathBuf;

use rayon::prelude::*;

use crate::transform::{crop_into, Filter, Resizer};

/// The side an image is enlarged to by the seed's offline augmentation: 1.25 times `side`,
/// rounded (250 for 200, 35 for 28).
pub fn enlarged_side(side: usize) -> usize {
    (side * 5 + 2) / 4
}

/// Images and labels, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSet {
    /// `[N, C, H, W]` bytes, row-major.
    pub images: Vec<u8>,
    /// `[N]` labels.
    pub labels: Vec<u8>,
    /// `[C, H, W]` of one image.
    pub shape: [usize; 3],
}

impl ImageSet {
    /// Number of examples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no examples.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Bytes in one image (`C * H * W`).
    pub fn image_size(&self) -> usize {
        self.shape.iter().product()
    }

    /// The pixels of example `index`, `[C, H, W]`.
    pub fn image(&self, index: usize) -> &[u8] {
        let size = self.image_size();
        &self.images[index * size..(index + 1) * size]
    }

    /// Examples per label value `0..classes`.
    pub fn class_counts(&self, classes: usize) -> Vec<usize> {
        let mut counts = vec![0; classes];
        for &label in &self.labels {
            if let Some(c) = counts.get_mut(usize::from(label)) {
                *c += 1;
            }
        }
        counts
    }

    /// Seed 003's offline augmentation: appends a copy of each image resized with
    /// [`Filter::Bicubic`] to [`enlarged_side`] of its height and width and cropped to its
    /// top-left original size (the seed's `photo.resize((250, 250)).crop((0, 0, 200, 200))`),
    /// labels repeated: example `i + n` is the copy of example `i`. The set doubles.
    pub fn append_enlarged_crops(&mut self) {
        let n = self.len();
        let [c, h, w] = self.shape;
        let big = [enlarged_side(h), enlarged_side(w)];
        let resizer = Resizer::new(self.shape, big, Filter::Bicubic);
        let size = self.image_size().max(1);
        let mut copies = vec![0u8; self.images.len()];
        copies
            .par_chunks_mut(size)
            .zip(self.images.par_chunks(size))
            .for_each_init(
                || (vec![0u8; c * big[0] * big[1]], Vec::new()),
                |(resized, scratch), (copy, image)| {
                    resizer.resize_into(image, resized, scratch);
                    crop_into(resized, [c, big[0], big[1]], 0, 0, [h, w], copy);
                },
            );
        self.images.extend_from_slice(&copies);
        self.labels.extend_from_within(0..n);
    }

    /// The examples `range` (by position) as a new set.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
        let size: usize = self.shape.iter().product();
        Self {
            images: self.images[range.start * size..range.end * size].to_vec(),
            labels: self.labels[range.clone()].to_vec(),
            shape: self.shape,
        }
    }
}

/// Train / validation / test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splits {
    /// Training examples.
    pub train: ImageSet,
    /// Held out from the training examples.
    pub validation: ImageSet,
    /// The test examples.
    pub test: ImageSet,
    /// The directory the files were read from.
    pub source: PathBuf,
}

/// One example as burn's dataset abstraction sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageItem {
    /// `[C, H, W]` bytes.
    pub pixels: Vec<u8>,
    /// The class.
    pub label: u8,
}

/// So an [`ImageSet`] plugs into burn's `Dataset` tools (`ShuffledDataset`, `PartialDataset`,
/// burn's own `DataLoader`) where a study wants them.
impl burn::data::dataset::Dataset<ImageItem> for ImageSet {
    fn get(&self, index: usize) -> Option<ImageItem> {
        (index < self.len()).then(|| ImageItem {
            pixels: self.image(index).to_vec(),
            label: self.labels[index],
        })
    }

    fn len(&self) -> usize {
        self.labels.len()
    }
}
