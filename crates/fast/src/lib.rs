//! batchlab's own fast paths, built on burn's public extension points (no fork of burn, no
//! unsafe code): optimizers whose update is one fused, parallel, in-place pass over a flex
//! tensor's storage (in-place libtorch ops on LibTorch), and burn's own tensor ops on every other
//! backend. docs/ARCHITECTURE.md ("Fast paths") says where each path applies and why.
//!
//! Whether the fast paths run is one process-wide switch ([`set_enabled`]), set from a study's
//! `backend.fast_paths` before any step, so that a study can measure burn's own ops; every
//! update and convolution counts which path it took ([`counts`]), so tests can say what ran.

mod buffer;
pub mod choice;
pub mod conv;
pub mod dense;
mod fused;
pub mod optim;
mod outer;
pub mod packed;
pub mod pool;
mod simd;
mod storage;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(true);
/// (fast, fallback) per [`Kind`], in its order.
static COUNTS: [[AtomicU64; 2]; 4] = [
    [AtomicU64::new(0), AtomicU64::new(0)],
    [AtomicU64::new(0), AtomicU64::new(0)],
    [AtomicU64::new(0), AtomicU64::new(0)],
    [AtomicU64::new(0), AtomicU64::new(0)],
];

/// Turns the fast paths on or off for this process (on by default).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether the fast paths are on in this process.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// What a fast path does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An optimizer's update of one parameter tensor.
    Update,
    /// A convolution, with or without its ReLU (forward and backward counted once, at the
    /// forward).
    Convolution,
    /// A max-pooling (likewise).
    Pooling,
    /// A dense layer + ReLU, or a dense layer that is a network's head (likewise).
    Dense,
}

/// How often a kind of operation took its fast path, and how often burn's ops, since the
/// process started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Done by a fast path.
    pub fast: u64,
    /// Done with burn's ops (another backend, the switch off, a case the fast path does not
    /// cover, or a tensor it may not write in place).
    pub fallback: u64,
}

/// The counts of `kind` so far.
pub fn counts(kind: Kind) -> Counts {
    let [fast, fallback] = &COUNTS[kind as usize];
    Counts {
        fast: fast.load(Ordering::Relaxed),
        fallback: fallback.load(Ordering::Relaxed),
    }
}

fn count(kind: Kind, fast: bool) {
    COUNTS[kind as usize][usize::from(!fast)].fetch_add(1, Ordering::Relaxed);
}

/// The fast paths a flex run takes, in words (meta.json `fast_paths`).
/// Since 2026-11-26 it names Winograd's algorithm and the max-pooling, which changed the step
/// times of every convolutional model: a step-time sweep timed before predicts none after.
/// Since 2026-11-27 Winograd runs where this machine measured it faster (`conv::choice`), not by
/// fixed thresholds: a new phrase, so sweeps timed before predict none after.
/// Since 2026-11-28 convolutions of at most 4 input channels (an image's first layer) take
/// batchlab's own direct kernels (`conv::narrow`), and a dense + ReLU whose product is small
/// and long shares its inner dimension out among the threads (`dense`): two new phrases.
/// Later on 2026-11-28 Winograd's forward and input gradient run block by block of tiles on
/// batchlab's own product kernel (`conv::winograd`, "fused"), and a dense + ReLU over a short
/// batch computes its kernel's and input's gradients on batchlab's own kernel (`outer`), and
/// the direct convolutions run as one product per slice of samples (`conv::direct`), where
/// flex's multiplied each sample on its own: three new phrases.
/// Later still on 2026-11-28 a dense + ReLU over a long batch runs its three products on
/// batchlab's packed kernel or flex's, as this machine measured (`dense`, `choice`), and on the
/// packed kernel without a file of measurements: two new phrases.
/// On 2026-11-28 (the night) every dense + ReLU, at every batch, runs each of its three
/// products on the kernel this machine measured fastest for its shape, among all four (`dense`),
/// where the batch's thresholds had decided, and burn's path had taken the batches between
/// short and long: one phrase for the three, measured or by the thresholds. The narrow
/// convolutions' kernels are raced against the other paths too (`conv`): a new phrase.
/// On 2026-11-29 the packed kernel adds a dense + ReLU's bias and ReLU in its stores, the mask
/// and the bias's gradient are one pass, and the races run longer (`choice::GENERATION` 6): the
/// MLP's step fell by a sixth, a new phrase for the dense layers, measured or by the thresholds.
/// Later on 2026-11-29 the packed kernel's products are raced in two orders (`packed::Order`),
/// the BLAS libraries' beside its own: a new phrase for the measured dense layers (by the
/// thresholds, the packed kernel keeps its own order).
/// Later still on 2026-11-29 a network's head, a dense layer no ReLU follows, takes the
/// dense layers' path too, where it took burn's ops: a new phrase, measured or by the
/// thresholds.
/// On 2026-12-01 a dense layer's forward over a short batch is raced on a kernel of batchlab's
/// that streams the weights (`outer::x_w`): VGG16's step 3-4% shorter on an Intel Xeon, a new
/// phrase for the measured dense layers (by the thresholds, nothing changed).
/// On 2026-12-02 a product with few columns or a short inner dimension (a network's head) is
/// raced on a kernel of batchlab's that reads the left side where it is (`dense::narrow`): the
/// MLP's head 1.3-2.3x faster, a new phrase for the measured dense layers (by the thresholds,
/// nothing changed).
pub const ON_FLEX: &str = "in-place optimizers (SGD, Adam, AdamW); convolution + ReLU with its own backward, Winograd F(4x4, 3x3) where this machine measured it faster; Winograd's forward in blocks of tiles on batchlab's own product kernel; Winograd position by position where the transformed kernels outweigh the tiles; direct convolutions as one product per slice of samples; direct kernels for convolutions of at most 4 input channels where this machine measured them faster; dense layers' three products (with their ReLU, or a network's head) at every batch on the kernel this machine measured fastest (batchlab's packed kernel in either of its orders, its short-batch kernels, the forward's streaming the weights, or its narrow one for few columns or a short inner dimension, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores; 2x2 max-pooling with its own backward";
/// The same with Winograd chosen by the fixed thresholds (no file to keep measurements in, or
/// `BATCHLAB_CONV_PATHS=thresholds`): the words of runs before 2026-11-27 (with the narrow
/// convolutions, the dense layers and the blocked forward since 2026-11-28, Winograd position
/// by position since 2026-11-28, the long batch's dense layers since 2026-11-28, every batch's
/// dense layers through the fast path since 2026-11-28).
pub const ON_FLEX_THRESHOLDS: &str = "in-place optimizers (SGD, Adam, AdamW); convolution + ReLU with its own backward, Winograd F(4x4, 3x3) where it pays; Winograd's forward in blocks of tiles on batchlab's own product kernel; Winograd position by position where the transformed kernels outweigh the tiles; direct convolutions as one product per slice of samples; direct kernels for convolutions of at most 4 input channels; dense layers' three products (with their ReLU, or a network's head) at every batch on the kernel the batch's fixed thresholds pick (batchlab's packed or short-batch kernel, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores; 2x2 max-pooling with its own backward";
/// The fast paths a LibTorch run takes, in words.
/// Since 2026-11-26 it names libtorch's convolution backward, which changed the step times of
/// every convolutional model on tch.
/// Since 2026-11-28 (the evening) a dense layer (with its ReLU, or a network's head) runs as
/// libtorch's `addmm` and the ReLU's own backward, a narrow one with its products in PyTorch's
/// order (`dense`), which changed the step times of every model on tch: a new phrase.
/// On 2026-11-28 (the night) each of a dense layer's products runs in the operand order this
/// machine measured faster for its shape, on the CPU (`choice`): a new phrase; without a file
/// of measurements (on a GPU, or with the thresholds asked for) the words before it.
/// Later on 2026-11-29 every convolution takes libtorch's own backward (`conv::conv2d`: any
/// stride, groups, with or without a bias; the ones BatchNorm follows in ResNet and MobileNet),
/// where only a convolution + ReLU had: MobileNet v1's step fell 3x on the CPU and ResNet-50's
/// by a quarter (docs/bench/20261129-1925-amd-epyc-f26-m2-tch-every-conv.log): a new phrase.
pub const ON_LIBTORCH: &str = "in-place optimizers (SGD, Adam, AdamW); every convolution with libtorch's own backward, its ReLU's too where one follows; dense layers as libtorch's addmm with the ReLU's own backward, each product in the operand order this machine measured faster";
/// The same without a file of measurements: narrow dense layers in PyTorch's order.
pub const ON_LIBTORCH_THRESHOLDS: &str = "in-place optimizers (SGD, Adam, AdamW); every convolution with libtorch's own backward, its ReLU's too where one follows; dense layers as libtorch's addmm with the ReLU's own backward, narrow ones in PyTorch's order";
