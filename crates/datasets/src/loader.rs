//! The batch loader: turns an [`ImageSet`] into float batches off the training thread.
//!
//! One background thread per epoch assembles batches in order and keeps `prefetch` of them ready
//! in a bounded channel; inside a batch the examples are prepared in parallel (rayon; a wait for
//! a batch on one of rayon's threads runs the pool's work meanwhile). The
//! training thread only moves finished batches onto the device, and the time it spends waiting
//! for one is measured ([`Epoch::waited`]) so a runner can report data time apart from step time.
//!
//! Everything random (the epoch's shuffle, each example's crop and flip) is drawn from generators
//! seeded by `(seed, epoch)` and `(seed, epoch, position)`, never from a shared generator, so the
//! batches are the same whatever the number of threads and however the work is scheduled.

use std::{
    sync::{mpsc, Arc},
    time::{Duration, Instant},
};

use burn::tensor::{backend::Backend, Int, Tensor, TensorData};
use rand::{rngs::StdRng, seq::SliceRandom, Rng, SeedableRng};
use rayon::prelude::*;

use crate::{
    images::ImageSet,
    transform::{centre_offset, Filter, Resizer},
};

/// How each example becomes floats: optional resize, a crop (random when training, centred when
/// evaluating), an optional random horizontal flip, then `(x / 255 - mean[c]) / std[c]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    /// Resize to `(height, width)` first, with this filter.
    pub resize: Option<([usize; 2], Filter)>,
    /// Crop to `(height, width)` after resizing.
    pub crop: Option<[usize; 2]>,
    /// Where the crop is taken.
    pub crop_mode: CropMode,
    /// Zero pixels added on every side before a random crop (the CIFAR-style "pad 4, crop 32").
    pub padding: usize,
    /// Mirror left-right with probability 1/2.
    pub flip: bool,
    /// Per-channel mean subtracted after scaling to [0, 1] (one value or one per channel).
    pub mean: Vec<f32>,
    /// Per-channel divisor after subtracting the mean (one value or one per channel).
    pub std: Vec<f32>,
}

/// Where a crop window sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CropMode {
    /// Uniformly random offset per example and epoch (training).
    Random,
    /// Centred (evaluation).
    Centre,
}

impl Default for Pipeline {
    /// Pixels scaled to [0, 1], nothing else.
    fn default() -> Self {
        Self {
            resize: None,
            crop: None,
            crop_mode: CropMode::Centre,
            padding: 0,
            flip: false,
            mean: vec![0.0],
            std: vec![1.0],
        }
    }
}

impl Pipeline {
    /// The `[C, H, W]` of a prepared example from a source image of `shape`.
    pub fn output_shape(&self, shape: [usize; 3]) -> [usize; 3] {
        let [c, mut h, mut w] = shape;
        if let Some(([rh, rw], _)) = self.resize {
            (h, w) = (rh, rw);
        }
        if let Some([ch, cw]) = self.crop {
            (h, w) = (ch, cw);
        }
        [c, h, w]
    }

    /// Whether anything in the pipeline is random.
    pub fn is_random(&self) -> bool {
        self.flip || (self.crop.is_some() && self.crop_mode == CropMode::Random)
    }

    /// The resampler for source images of `shape`, if the pipeline resizes them. Built once per
    /// batch: its weights depend only on the shapes.
    pub fn resizer(&self, shape: [usize; 3]) -> Option<Resizer> {
        match self.resize {
            Some(([h, w], filter)) if [h, w] != [shape[1], shape[2]] => {
                Some(Resizer::new(shape, [h, w], filter))
            }
            _ => None,
        }
    }

    /// Prepares one image of `shape` into `out` (`output_shape(shape)` floats). `resizer` is
    /// [`Pipeline::resizer`]`(shape)`; `scratch` is reused between calls.
    pub fn prepare(
        &self,
        image: &[u8],
        shape: [usize; 3],
        resizer: Option<&Resizer>,
        scratch: &mut Scratch,
        rng: &mut StdRng,
        out: &mut [f32],
    ) {
        let (pixels, [c, h, w]) = match resizer {
            Some(resizer) => {
                let resized_shape = resizer.output_shape();
                scratch.resized.resize(resized_shape.iter().product(), 0);
                resizer.resize_into(image, &mut scratch.resized, &mut scratch.floats);
                (scratch.resized.as_slice(), resized_shape)
            }
            None => (image, shape),
        };
        let [oc, oh, ow] = self.output_shape(shape);
        debug_assert_eq!(oc, c);
        // The crop window's top-left corner in the (virtually) padded image.
        let (top, left) = match (self.crop, self.crop_mode) {
            (None, _) => (0, 0),
            (Some(_), CropMode::Centre) => (centre_offset(h, oh), centre_offset(w, ow)),
            (Some(_), CropMode::Random) => {
                let p = self.padding as isize;
                let span_h = (h + 2 * self.padding).saturating_sub(oh);
                let span_w = (w + 2 * self.padding).saturating_sub(ow);
                (
                    rng.random_range(0..=span_h) as isize - p,
                    rng.random_range(0..=span_w) as isize - p,
                )
            }
        };
        let flip = self.flip && rng.random_bool(0.5);
        for ch in 0..c {
            let mean = channel_value(&self.mean, ch);
            let scale = 1.0 / (255.0 * channel_value(&self.std, ch));
            let shift = mean / channel_value(&self.std, ch);
            let zero = -shift;
            for y in 0..oh {
                let sy = top + y as isize;
                let row = &mut out[(ch * oh + y) * ow..(ch * oh + y + 1) * ow];
                if sy < 0 || sy >= h as isize {
                    row.fill(zero);
                    continue;
                }
                let src = &pixels[(ch * h + sy as usize) * w..(ch * h + sy as usize + 1) * w];
                for (x, value) in row.iter_mut().enumerate() {
                    let xx = if flip { ow - 1 - x } else { x };
                    let sx = left + xx as isize;
                    *value = if sx < 0 || sx >= w as isize {
                        zero
                    } else {
                        f32::from(src[sx as usize]) * scale - shift
                    };
                }
            }
        }
    }
}

/// Per-thread buffers of [`Pipeline::prepare`].
#[derive(Debug, Default)]
pub struct Scratch {
    resized: Vec<u8>,
    floats: Vec<f32>,
}

fn channel_value(values: &[f32], channel: usize) -> f32 {
    values
        .get(channel)
        .or(values.last())
        .copied()
        .unwrap_or(0.0)
}

/// How an epoch walks the examples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    /// Examples per batch.
    pub batch_size: usize,
    /// Shuffle the examples each epoch (seeded by `(seed, epoch)`).
    pub shuffle: bool,
    /// Leave out the last batch when it is smaller than `batch_size`.
    pub drop_last: bool,
    /// Seed of the shuffle and of the random transforms.
    pub seed: u64,
}

impl Order {
    /// Batches in one epoch over `examples` examples.
    pub fn batches(&self, examples: usize) -> usize {
        if self.batch_size == 0 {
            return 0;
        }
        if self.drop_last {
            examples / self.batch_size
        } else {
            examples.div_ceil(self.batch_size)
        }
    }

    /// The example indices of `epoch`, in the order they are visited.
    pub fn permutation(&self, examples: usize, epoch: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..examples).collect();
        if self.shuffle {
            order.shuffle(&mut StdRng::seed_from_u64(mix(self.seed, epoch, u64::MAX)));
        }
        order
    }
}

/// A generator seed from three numbers (SplitMix64 finaliser), so nearby inputs give unrelated
/// streams.
fn mix(a: u64, b: u64, c: u64) -> u64 {
    let mut z = a
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(b.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(c.wrapping_mul(0x94D0_49BB_1331_11EB));
    z ^= z >> 30;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^= z >> 27;
    z = z.wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One batch in host memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// `[n, C, H, W]` prepared pixels.
    pub images: Vec<f32>,
    /// `[n]` labels.
    pub labels: Vec<u8>,
    /// `[n, C, H, W]`.
    pub shape: [usize; 4],
}

impl Batch {
    /// Examples in the batch.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Moves the batch onto `device`: images `[n, C, H, W]` and integer labels `[n]`.
    pub fn to_device<B: Backend>(self, device: &B::Device) -> (Tensor<B, 4>, Tensor<B, 1, Int>) {
        let n = self.labels.len();
        let labels: Vec<i64> = self.labels.iter().map(|&l| i64::from(l)).collect();
        (
            Tensor::from_data(TensorData::new(self.images, self.shape), device),
            Tensor::from_data(TensorData::new(labels, [n]), device),
        )
    }
}

/// Feeds batches of one image set through one pipeline.
#[derive(Debug, Clone)]
pub struct Loader {
    set: Arc<ImageSet>,
    pipeline: Arc<Pipeline>,
    order: Order,
    prefetch: usize,
}

impl Loader {
    /// A loader keeping `prefetch` batches ready ahead of the consumer (at least 1).
    pub fn new(set: Arc<ImageSet>, pipeline: Pipeline, order: Order, prefetch: usize) -> Self {
        Self {
            set,
            pipeline: Arc::new(pipeline),
            order,
            prefetch: prefetch.max(1),
        }
    }

    /// The image set behind the loader.
    pub fn set(&self) -> &ImageSet {
        &self.set
    }

    /// Batches per epoch.
    pub fn batches_per_epoch(&self) -> usize {
        self.order.batches(self.set.len())
    }

    /// Starts producing the batches of `epoch` in the background.
    pub fn epoch(&self, epoch: u64) -> Epoch {
        let (sender, receiver) = mpsc::sync_channel(self.prefetch);
        let set = Arc::clone(&self.set);
        let pipeline = Arc::clone(&self.pipeline);
        let order = self.order;
        let worker = std::thread::Builder::new()
            .name(format!("batchlab-loader-epoch-{epoch}"))
            .spawn(move || {
                let permutation = order.permutation(set.len(), epoch);
                for batch in 0..order.batches(set.len()) {
                    let start = batch * order.batch_size;
                    let end = (start + order.batch_size).min(set.len());
                    let built = build_batch(
                        &set,
                        &pipeline,
                        &permutation[start..end],
                        start,
                        (order.seed, epoch),
                    );
                    // The consumer stopped early (dropped the epoch): nothing left to do.
                    if sender.send(built).is_err() {
                        return;
                    }
                }
            })
            .expect("the OS refused to start the loader thread");
        Epoch {
            receiver,
            _worker: worker,
            waited: Duration::ZERO,
        }
    }
}

fn build_batch(
    set: &ImageSet,
    pipeline: &Pipeline,
    indices: &[usize],
    first_position: usize,
    (seed, epoch): (u64, u64),
) -> Batch {
    let [c, h, w] = pipeline.output_shape(set.shape);
    let size = c * h * w;
    let resizer = pipeline.resizer(set.shape);
    let mut images = vec![0.0f32; indices.len() * size];
    images
        .par_chunks_mut(size.max(1))
        .zip(indices.par_iter().enumerate())
        .for_each_init(Scratch::default, |scratch, (out, (offset, &index))| {
            let position = (first_position + offset) as u64;
            let mut rng = StdRng::seed_from_u64(mix(seed, epoch, position));
            let image = set.image(index);
            pipeline.prepare(image, set.shape, resizer.as_ref(), scratch, &mut rng, out);
        });
    Batch {
        images,
        labels: indices.iter().map(|&i| set.labels[i]).collect(),
        shape: [indices.len(), c, h, w],
    }
}

/// The batches of one epoch, in order; dropping it stops the background thread.
#[derive(Debug)]
pub struct Epoch {
    receiver: mpsc::Receiver<Batch>,
    _worker: std::thread::JoinHandle<()>,
    waited: Duration,
}

impl Epoch {
    /// Total time `next` spent waiting for the background thread: the data time a training loop
    /// would see. Near zero when the loader keeps ahead of the steps.
    pub fn waited(&self) -> Duration {
        self.waited
    }
}

impl Iterator for Epoch {
    type Item = Batch;

    fn next(&mut self) -> Option<Batch> {
        let start = Instant::now();
        let batch = receive(&self.receiver);
        self.waited += start.elapsed();
        batch
    }
}

/// How long a wait on one of rayon's threads blocks between looks for the pool's work.
const LOOK_EVERY: Duration = Duration::from_micros(200);

/// The next batch, `None` once the background thread is done. On one of rayon's threads (where
/// batchlab runs its commands) the wait runs the pool's work meanwhile: the background thread
/// prepares each batch's examples on that same pool, and a pool of one thread, blocked here,
/// would wait for itself (a training study with `threads = 1` hung so).
fn receive(receiver: &mpsc::Receiver<Batch>) -> Option<Batch> {
    if rayon::current_thread_index().is_none() {
        return receiver.recv().ok();
    }
    loop {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            match receiver.try_recv() {
                Ok(batch) => return Some(batch),
                Err(mpsc::TryRecvError::Empty) => continue,
                Err(mpsc::TryRecvError::Disconnected) => return None,
            }
        }
        match receiver.recv_timeout(LOOK_EVERY) {
            Ok(batch) => return Some(batch),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
        }
    }
}

#[cfg(test)]
#[path = "loader_tests.rs"]
mod tests;
