//! The fused convolution + ReLU on flex: its forward and its own backward (`op` records it on
//! the autodiff graph).

use burn::{
    backend::{
        autodiff::{
            checkpoint::base::Checkpointer,
            grads::Gradients,
            ops::{Backward, Ops},
        },
        flex::FlexTensor,
        Flex,
    },
    tensor::{Tensor, TensorData, TensorMetadata, TensorPrimitive},
};

use rayon::prelude::*;

use super::{
    choice::{self, Path, Site},
    direct::{self, im2col_slices, SLICE_ELEMENTS},
    kernels::{channels_first, relu_mask_and_bias, transpose_flip, Geometry},
    narrow,
    winograd::{self, positions, TapMajor},
};
use crate::{
    buffer::keep,
    fused::{Fused, Saved},
};

impl Fused<Flex> for ConvRelu {
    /// The padding.
    type Params = [usize; 2];

    /// The path this machine measured fastest (`choice`): the direct convolution (`direct`),
    /// Winograd's, by blocks of tiles or position by position, or over at most 4 input channels
    /// batchlab's narrow kernels (`narrow`); the ReLU in its write-back.
    fn forward(x: FlexTensor, w: FlexTensor, b: FlexTensor, padding: [usize; 2]) -> FlexTensor {
        let (g, n, k) = geometry(&x, &w, padding);
        let [p, q] = g.output();
        let (x, w, b) = (x.to_contiguous(), w.to_contiguous(), b.to_contiguous());
        let (xs, ws, bs) = (slice(&x), slice(&w), slice(&b));
        let run = |path| match path {
            Path::Narrow => flex(narrow::conv_relu(xs, g, ws, k, bs), [n, k, p, q]),
            Path::Direct => direct_conv_relu(x.clone(), w.clone(), b.clone(), padding),
            path => {
                let wt = TapMajor::forward(ws, k, g.channels);
                let conv = winograd_conv(path);
                flex(conv(xs, g, &wt, k, Some(bs), true), [n, k, p, q])
            }
        };
        run(chosen(Site::Forward, g, k, n, |path| drop(run(path))))
    }
}

/// The path of a convolution's site (`choice::path`), among those that can compute it: the
/// narrow kernels too over at most 4 input channels, but for the input gradient (a forward
/// convolution over the output's channels, without bias or ReLU, which they do not compute);
/// without a machine's file, the narrow kernels where they may run, else the thresholds.
fn chosen(site: Site, g: Geometry, k: usize, n: usize, run: impl Fn(Path)) -> Path {
    let mut paths = winograd::paths(g, k, n);
    let narrow = narrow::applies(g) && site != Site::InputGrad;
    if narrow {
        paths.push(Path::Narrow);
    }
    let default = match narrow {
        true => Path::Narrow,
        false => winograd::default_path(site, g, k, n),
    };
    choice::path(site, g, [k, n], &paths, default, run)
}

/// Winograd's convolution on `path`: block by block of tiles, or position by position.
fn winograd_conv(path: Path) -> WinogradConv {
    match path {
        Path::Winograd => winograd::conv3x3,
        Path::Positions => positions::conv3x3,
        Path::Direct | Path::Narrow => unreachable!("{path:?} is not one of Winograd's paths"),
    }
}

/// Both Winograd convolutions' signature: `(x, g, wt, k, bias, relu)`.
type WinogradConv = fn(&[f32], Geometry, &TapMajor, usize, Option<&[f32]>, bool) -> Vec<f32>;

/// The direct convolution and ReLU: one matrix product per slice of samples (`direct`).
fn direct_conv_relu(
    x: FlexTensor,
    w: FlexTensor,
    b: FlexTensor,
    padding: [usize; 2],
) -> FlexTensor {
    let (g, n, k) = geometry(&x, &w, padding);
    let [p, q] = g.output();
    let (x, b) = (x.to_contiguous(), b.to_contiguous());
    let kernel =
        Tensor::<Flex, 4>::from_primitive(TensorPrimitive::Float(w)).reshape([k, g.rows()]);
    let y = direct::conv(slice(&x), g, kernel, Some(slice(&b)), true);
    flex(y, [n, k, p, q])
}

/// The fused operation on flex.
#[derive(Debug, Default)]
pub(super) struct ConvRelu;

impl Backward<Flex, 3> for ConvRelu {
    type State = Saved<FlexTensor, [usize; 2]>;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w, node_b] = ops.parents;
        let grad = grads.consume::<Flex>(&ops.node);
        let Saved {
            x,
            w,
            out,
            params: padding,
        } = ops.state;
        let [n, k, p, q] = dims(&out);
        let (out, grad) = (out.to_contiguous(), grad.to_contiguous());
        let (out, grad) = (slice(&out), slice(&grad));
        let (g, _, _) = geometry(&x, &w, padding);
        // The ReLU's mask and the bias gradient in one pass, for the kernel's gradient and the
        // input's; the narrow kernels draw them inside the kernel's gradient instead, so where
        // they may run only an input gradient (which a first layer does not need) asks for the
        // pass up front.
        let mask = (node_x.is_some() || !narrow::applies(g))
            .then(|| relu_mask_and_bias(out, grad, k, p * q));
        let x = x.to_contiguous();
        let xs = slice(&x);
        let weight_and_bias = |path| match path {
            Path::Narrow => {
                let (dw, db) = narrow::weight_and_bias_grad(xs, g, out, grad, k);
                (flex(dw, dims::<4>(&w)), db)
            }
            path => {
                let own;
                let (masked, bias) = match &mask {
                    Some(mask) => mask,
                    None => {
                        own = relu_mask_and_bias(out, grad, k, p * q);
                        &own
                    }
                };
                let dw = weight_grad(path, xs, g, [n, k], masked, SLICE_ELEMENTS);
                (dw, bias.clone())
            }
        };
        let (dw, db) = match node_w.is_some() || node_b.is_some() {
            true => {
                let race = |path| drop(weight_and_bias(path));
                let (dw, db) = weight_and_bias(chosen(Site::WeightGrad, g, k, n, race));
                (Some(dw), db)
            }
            false => (None, Vec::new()),
        };
        if let Some(node) = node_b {
            grads.register::<Flex>(node.id, flex(db, [k]));
        }
        if let (Some(node), Some(dw)) = (node_w, dw) {
            grads.register::<Flex>(node.id, dw);
        }
        if let Some((masked, _)) = mask {
            if let Some(node) = node_x {
                let dx = input_grad(&masked, [n, k, p, q], &w, padding);
                grads.register::<Flex>(node.id, dx);
            }
            // Written whole by `relu_mask_and_bias`: its buffer serves the next layer's.
            keep(masked);
        }
    }
}

fn dims<const D: usize>(t: &FlexTensor) -> [usize; D] {
    t.shape().dims()
}

/// The geometry of convolving `x` (`[n, C, H, W]`) with `w` (`[K, C, kh, kw]`), with `n` and `K`.
fn geometry(x: &FlexTensor, w: &FlexTensor, padding: [usize; 2]) -> (Geometry, usize, usize) {
    let ([n, channels, height, width], [k, _, kh, kw]) = (dims(x), dims(w));
    let g = Geometry {
        channels,
        height,
        width,
        kernel: [kh, kw],
        padding,
    };
    (g, n, k)
}

/// The elements of a contiguous f32 tensor (`FlexTensor::to_contiguous` shares the buffer of
/// one that already is, and copies only a strided view).
fn slice(t: &FlexTensor) -> &[f32] {
    t.as_slice::<f32>().unwrap_or_default()
}

fn flex<const D: usize>(values: Vec<f32>, shape: [usize; D]) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(values, shape))
}

/// dL/dx: the masked gradient convolved with the transposed, flipped kernel, padded by
/// `kernel − 1 − padding` (stride 1): a forward convolution, Winograd's (its kernels made
/// tap-major straight from `w`, [`TapMajor::input_grad`]) or the direct one (on the flipped
/// kernel, [`transpose_flip`]).
fn input_grad(masked: &[f32], out: [usize; 4], w: &FlexTensor, padding: [usize; 2]) -> FlexTensor {
    let [k, c, kh, kw] = dims(w);
    let [n, _, p, q] = out;
    let w = w.to_contiguous();
    let ws = slice(&w);
    let pad = [kh - 1 - padding[0], kw - 1 - padding[1]];
    let g = Geometry {
        channels: k,
        height: p,
        width: q,
        kernel: [kh, kw],
        padding: pad,
    };
    let [h, wd] = g.output();
    let run = |path| match path {
        Path::Direct => {
            let flipped = transpose_flip(ws, k, c, kh, kw);
            let kernel = Tensor::<Flex, 2>::from_data(
                TensorData::new(flipped, [c, g.rows()]),
                &Default::default(),
            );
            direct::conv(masked, g, kernel, None, false)
        }
        path => {
            let conv = winograd_conv(path);
            conv(masked, g, &TapMajor::input_grad(ws, k, c), c, None, false)
        }
    };
    let dx = run(chosen(Site::InputGrad, g, c, n, |path| drop(run(path))));
    flex(dx, [n, c, h, wd])
}

/// Fewest inner-dimension columns (samples x output pixels) a thread's share of the weight
/// gradient gets: below it one product over all samples is faster than summed halves.
/// Measured on VGG16's layers at 64x64, batch 16 (2-core EPYC, 2026-11-26): halves won at 512
/// columns each and up (conv4: 36 -> 28-29 ms), lost at 128 (conv5: 8.4-8.9 -> 10.7-13.5 ms).
const MIN_SHARE_COLUMNS: usize = 512;

/// dL/dw = masked [K, N·P·Q] · im2col(x)ᵀ [N·P·Q, C·kh·kw]: the samples are shared out among
/// the threads, each summing one matrix product per slice of its samples (flex's kernel, the
/// samples in its inner dimension), and the threads' sums added. One product per thread, not
/// one parallel product: flex's gemm parallelises a product this shape (a long inner
/// dimension, few output columns) so poorly that two threads were slower than one (conv1_2:
/// 29-34 ms against 21 ms), while two products side by side took 11-13 ms.
fn weight_grad(
    path: Path,
    xs: &[f32],
    g: Geometry,
    [n, k]: [usize; 2],
    masked: &[f32],
    slice_elements: usize,
) -> FlexTensor {
    let [c, kh, kw] = [g.channels, g.kernel[0], g.kernel[1]];
    match path {
        Path::Direct => direct_weight_grad(xs, g, n, k, masked, slice_elements),
        Path::Winograd => flex(winograd::weight_grad3x3(xs, g, masked, k), [k, c, kh, kw]),
        Path::Positions => flex(positions::weight_grad3x3(xs, g, masked, k), [k, c, kh, kw]),
        Path::Narrow => unreachable!("the narrow kernels' weight gradient is their own pass"),
    }
}

/// The weight gradient through flex's matrix kernel, the samples shared out among the threads.
fn direct_weight_grad(
    xs: &[f32],
    g: Geometry,
    n: usize,
    k: usize,
    masked: &[f32],
    slice_elements: usize,
) -> FlexTensor {
    let ([c, kh, kw], [p, q]) = ([g.channels, g.kernel[0], g.kernel[1]], g.output());
    let share = Share {
        g,
        k,
        x: xs,
        masked,
        slice_elements,
    };
    let threads = rayon::current_num_threads()
        .min(n)
        .min((n * p * q / MIN_SHARE_COLUMNS).max(1));
    let chunk = n.div_ceil(threads.max(1));
    let starts: Vec<usize> = (0..n).step_by(chunk.max(1)).collect();
    let total = starts
        .into_par_iter()
        .map(|start| share.sum(start..(start + chunk).min(n)))
        .reduce_with(|a, b| a + b)
        .unwrap_or_else(|| Tensor::zeros([k, g.rows()], &Default::default()));
    total.reshape([k, c, kh, kw]).into_primitive().tensor()
}

/// What each thread's part of the weight gradient reads.
struct Share<'a> {
    g: Geometry,
    k: usize,
    x: &'a [f32],
    masked: &'a [f32],
    slice_elements: usize,
}

impl Share<'_> {
    /// masked · im2col(x)ᵀ over `samples`, one matrix product per slice of them.
    fn sum(&self, samples: std::ops::Range<usize>) -> Tensor<Flex, 2> {
        let (g, k) = (self.g, self.k);
        let [p, q] = g.output();
        let pixels = p * q;
        let device = Default::default();
        let mut total: Option<Tensor<Flex, 2>> = None;
        im2col_slices(self.x, g, samples, self.slice_elements, |start, m, col| {
            // Padded as the im2col rows are: the zeros past the samples add nothing.
            let row = col.dims()[1];
            let dy = channels_first(
                &self.masked[start * k * pixels..(start + m) * k * pixels],
                k,
                pixels,
                row,
            );
            let dy = Tensor::<Flex, 2>::from_data(TensorData::new(dy, [k, row]), &device);
            let part = col.clone().matmul(dy.transpose()).transpose();
            total = Some(match total.take() {
                Some(t) => t + part,
                None => part,
            });
        });
        total.unwrap_or_else(|| Tensor::zeros([k, g.rows()], &device))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weight_gradient_is_the_same_summed_over_slices_of_samples() {
        let (n, c, k, h, w) = (5, 3, 4, 6, 7);
        let wave = |len: usize, f: f32| (0..len).map(|i| (i as f32 * f).sin()).collect::<Vec<_>>();
        let x = flex(wave(n * c * h * w, 0.37), [n, c, h, w]);
        let kernel = flex(wave(k * c * 9, 0.11), [k, c, 3, 3]);
        let masked = wave(n * k * h * w, 0.53);
        let (g, _, _) = geometry(&x, &kernel, [1, 1]);
        let x = slice(&x);
        let whole = weight_grad(Path::Direct, x, g, [n, k], &masked, usize::MAX);
        // Room for one sample's matrix: five slices.
        let sliced = weight_grad(Path::Direct, x, g, [n, k], &masked, c * 9 * h * w);
        let (whole, sliced) = (slice(&whole).to_vec(), slice(&sliced).to_vec());
        for (a, b) in whole.iter().zip(&sliced) {
            assert!((a - b).abs() <= 1e-4 * a.abs().max(1.0), "{a} against {b}");
        }
    }
}
