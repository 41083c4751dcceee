//! The fast convolution + ReLU against burn's `relu(conv.forward(x))` on any autodiff backend:
//! the output and the gradients of the input, the kernel and the bias, on random inputs of
//! shapes that take each route (odd batch and image sizes, Winograd's forward, input gradient
//! and weight gradient); and the plain convolution ([`conv2d`]: libtorch's backward on LibTorch)
//! against `conv.forward(x)` on the convolutions a BatchNorm follows (depthwise with Keras'
//! uneven padding, pointwise and strided, without a bias). Both compute the same sums by other routes, so they agree to f32
//! rounding: the stated tolerance is [`TOLERANCE`] relative to the largest magnitude of each
//! tensor. The crate's tests run it on flex (and LibTorch); `batchlab check-fast-paths` runs it
//! on the backend a run would use, e.g. on a lent GPU before its sweeps.

use burn::{
    nn::{
        conv::{Conv2d, Conv2dConfig},
        PaddingConfig2d,
    },
    tensor::{
        activation::relu, backend::AutodiffBackend, backend::Backend, Distribution, Tensor,
        TensorData,
    },
};

use super::{conv2d, conv2d_relu};
use crate::{counts, Kind};

/// Largest difference allowed, relative to the largest magnitude of the tensor compared.
pub const TOLERANCE: f32 = 1e-4;

/// The same on a GPU, where LibTorch computes convolutions in TF32 (cuDNN's default on Ampere
/// and later cards, as PyTorch leaves it, the PyTorch reference included): TF32 keeps 10 bits of
/// mantissa (unit roundoff 2^-11, about 4.9e-4), so two routes to one sum differ by a few of
/// those, where a wrong route differs by the sum's own size. Measured on an H200 on 2026-11-27:
/// 3.1e-4 on one weight gradient, every other tensor within 1e-4.
pub const TOLERANCE_GPU: f32 = 2e-3;

/// One shape compared: where it is, whether the fast path ran, and the largest relative
/// difference of each tensor (output, dx, dw, db).
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    /// `batch x in -> out channels, image, kernel k, padding p`.
    pub case: String,
    /// Whether the fast path ran (else both sides are burn's).
    pub fast_path_ran: bool,
    /// A convolution + ReLU ([`conv2d_relu`]), else a plain convolution ([`conv2d`]).
    pub relu: bool,
    /// Largest |fast - burn| over the largest |burn|, per tensor: output, dx, dw, db.
    pub relative: [f32; 4],
}

impl Agreement {
    /// Whether every tensor agrees within [`TOLERANCE`].
    pub fn agrees(&self) -> bool {
        self.agrees_within(TOLERANCE)
    }

    /// Whether every tensor agrees within `tolerance` ([`TOLERANCE`], or [`TOLERANCE_GPU`]).
    pub fn agrees_within(&self, tolerance: f32) -> bool {
        self.relative.iter().all(|&r| r <= tolerance)
    }
}

/// One shape compared: batch, [in, out] channels, image [height, width], kernel, padding.
type Shape = (usize, [usize; 2], [usize; 2], usize, usize);

/// The shapes compared.
const CASES: [Shape; 6] = [
    (17, [3, 8], [11, 13], 3, 1),
    (2, [5, 4], [9, 7], 5, 2),
    (3, [4, 6], [8, 10], 3, 0),
    (1, [16, 32], [20, 20], 3, 1),
    // Winograd's forward and input gradient (at least 64 tiles of 4x4, 16 channels).
    (4, [16, 32], [17, 19], 3, 1),
    // ... and its weight gradient (at least 128 x 128 channels).
    (8, [128, 128], [9, 9], 3, 1),
];

/// A plain convolution compared: batch, [in, out] channels, image [height, width], kernel,
/// padding (top, left, bottom, right), stride, groups, bias.
type Plain = (
    usize,
    [usize; 2],
    [usize; 2],
    usize,
    [usize; 4],
    usize,
    usize,
    bool,
);

/// The plain convolutions compared.
const PLAIN: [Plain; 4] = [
    // A depthwise 3x3 (MobileNet), padded below and right as Keras' stride-2 layers are.
    (3, [8, 8], [9, 10], 3, [0, 0, 1, 1], 2, 8, false),
    // A pointwise 1x1 without a bias (ResNet's and MobileNet's).
    (4, [6, 10], [7, 7], 1, [0, 0, 0, 0], 1, 1, false),
    // A strided 7x7 stem (ResNet's).
    (2, [3, 8], [15, 13], 7, [3, 3, 3, 3], 2, 1, false),
    // Two groups, with a bias.
    (3, [4, 6], [8, 8], 3, [1, 1, 1, 1], 1, 2, true),
];

/// Compares the fast paths with burn's on every case, on `device` of backend `B`.
pub fn check<B: AutodiffBackend>(device: &B::Device) -> Vec<Agreement> {
    let mut out = with_relu::<B>(device);
    out.extend(plain::<B>(device));
    out
}

/// The plain convolution against `conv.forward(x)`.
fn plain<B: AutodiffBackend>(device: &B::Device) -> Vec<Agreement> {
    PLAIN
        .iter()
        .enumerate()
        .map(|(i, &(batch, channels, [h, w], kernel, pad, stride, groups, bias))| {
            B::seed(device, 70 + i as u64);
            let [top, left, bottom, right] = pad;
            let conv = Conv2dConfig::new(channels, [kernel, kernel])
                .with_padding(PaddingConfig2d::Explicit(top, left, bottom, right))
                .with_stride([stride, stride])
                .with_groups(groups)
                .with_bias(bias)
                .init::<B>(device);
            let (x, r, fast, fast_path_ran) =
                fast_run(&conv, [batch, channels[0], h, w], device, conv2d);
            let burn = run(&conv, &x, &r, |c: &Conv2d<B>, x| c.forward(x));
            Agreement {
                case: format!(
                    "{batch} x {} -> {} channels, {h}x{w}, kernel {kernel}, padding {pad:?}, stride {stride}, {groups} group(s), {}",
                    channels[0],
                    channels[1],
                    if bias { "a bias" } else { "no bias" }
                ),
                fast_path_ran,
                relu: false,
                relative: [0, 1, 2, 3].map(|t| relative(&fast[t], &burn[t])),
            }
        })
        .collect()
}

/// The convolution + ReLU against `relu(conv.forward(x))`.
fn with_relu<B: AutodiffBackend>(device: &B::Device) -> Vec<Agreement> {
    CASES
        .iter()
        .enumerate()
        .map(|(i, &(batch, channels, [h, w], kernel, pad))| {
            B::seed(device, 7 + i as u64);
            let padding = if pad == 0 {
                PaddingConfig2d::Valid
            } else {
                PaddingConfig2d::Explicit(pad, pad, pad, pad)
            };
            let conv = Conv2dConfig::new(channels, [kernel, kernel])
                .with_padding(padding)
                .init::<B>(device);
            let (x, r, fast, fast_path_ran) =
                fast_run(&conv, [batch, channels[0], h, w], device, conv2d_relu);
            let burn = run(&conv, &x, &r, |c: &Conv2d<B>, x| relu(c.forward(x)));
            // The gradients through the ReLU's mask as the fast path drew it: where its output
            // rounds to the other side of zero from burn's (Winograd sums in another basis),
            // the two masks differ, and a gradient with either mask is right.
            let mask: Vec<f32> = fast[0].iter().map(|&v| f32::from(v > 0.0)).collect();
            let shape = r.shape();
            let mask = Tensor::<B, 4>::from_data(TensorData::new(mask, shape), device);
            let masked = run(&conv, &x, &r, |c: &Conv2d<B>, x| {
                c.forward(x) * mask.clone()
            });
            Agreement {
                case: format!(
                    "{batch} x {} -> {} channels, {h}x{w}, kernel {kernel}, padding {pad}",
                    channels[0], channels[1]
                ),
                fast_path_ran,
                relu: true,
                relative: [
                    relative(&fast[0], &burn[0]),
                    relative(&fast[1], &masked[1]),
                    relative(&fast[2], &masked[2]),
                    relative(&fast[3], &masked[3]),
                ],
            }
        })
        .collect()
}

/// A random input of `shape` for `conv` and a random weighting of its output, then `fast` on a
/// fresh graph (output, dx, dw, db), and whether it took a fast path.
fn fast_run<B: AutodiffBackend>(
    conv: &Conv2d<B>,
    shape: [usize; 4],
    device: &B::Device,
    fast: impl Fn(&Conv2d<B>, Tensor<B, 4>) -> Tensor<B, 4>,
) -> (Tensor<B, 4>, Tensor<B, 4>, [Vec<f32>; 4], bool) {
    let x = Tensor::random(shape, Distribution::Normal(0.0, 1.0), device);
    let y = conv.forward(x.clone());
    let r = Tensor::random(y.shape(), Distribution::Normal(0.0, 1.0), device);
    let before = counts(Kind::Convolution).fast;
    let out = run(conv, &x, &r, fast);
    let ran = counts(Kind::Convolution).fast > before;
    (x, r, out, ran)
}

fn values<B: Backend, const D: usize>(t: Tensor<B, D>) -> Vec<f32> {
    t.into_data()
        .convert::<f32>()
        .to_vec::<f32>()
        .expect("f32 values")
}

/// Largest |a - b| over the largest |b| (at least 1e-6).
fn relative(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return f32::INFINITY;
    }
    let scale = b.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-6);
    a.iter()
        .zip(b)
        .fold(0f32, |m, (x, y)| m.max((x - y).abs() / scale))
}

/// Output, dx, dw, db of `forward` on a fresh graph, the output weighted by `r`.
fn run<B: AutodiffBackend>(
    conv: &Conv2d<B>,
    x: &Tensor<B, 4>,
    r: &Tensor<B, 4>,
    forward: impl Fn(&Conv2d<B>, Tensor<B, 4>) -> Tensor<B, 4>,
) -> [Vec<f32>; 4] {
    let x = x.clone().detach().require_grad();
    let y = forward(conv, x.clone());
    let grads = (y.clone() * r.clone()).sum().backward();
    // No bias: an empty gradient on both sides.
    let bias = conv
        .bias
        .as_ref()
        .map(|b| values(b.val().grad(&grads).expect("the bias takes part")));
    [
        values(y.inner()),
        values(x.grad(&grads).expect("x takes part")),
        values(
            conv.weight
                .val()
                .grad(&grads)
                .expect("the kernel takes part"),
        ),
        bias.unwrap_or_default(),
    ]
}
