//! Convolutions with few input channels (an image's first layer: 3 channels, 27 taps of a 3x3
//! kernel), computed directly (docs/ARCHITECTURE.md, "Fast paths"). A matrix product with an
//! inner dimension of 27 spends its time packing and writing, not multiplying: flex's route
//! converts the input to channels-last, builds im2col tiles and copies each product back, and
//! the weight gradient's im2col matrix is 9 copies of the input. Here every output vector is
//! summed in registers straight from the (padded) input, with the bias and the ReLU in the
//! write-back; the backward draws the ReLU's mask, the bias gradient and the weight gradient
//! in one pass over each row of the output, from cache. Both run inside `simd::vectorized`, so
//! the fixed-size loops below are AVX-512 or AVX2 + FMA code.

use rayon::prelude::*;

use super::kernels::Geometry;
use crate::buffer::zeros;
use crate::simd::{load, vectorized, Simd, WithSimd};

/// At most this many input channels take this path (grey, RGB and RGBA images): there a
/// product's inner dimension (channels x taps, at most 36 for a 3x3 kernel) is too short for a
/// matrix kernel. Measured against flex's route on the small CNN's 3 -> 32 layer and VGG16's
/// conv1_1 (docs/flex-performance.md); wider layers were not measured on this path.
const MAX_CHANNELS: usize = 4;
/// The padded rows are a multiple of this many pixels wide: the widest vector (AVX-512's 16
/// lanes; AVX2's 8 divide it).
const LANES: usize = 16;
/// Output channels summed together, each its own vector of accumulators.
const BLOCK: usize = 8;

/// Whether a convolution takes this path.
pub(super) fn applies(g: Geometry) -> bool {
    g.channels <= MAX_CHANNELS
}

/// The input with its padding written out: per sample and channel, as many rows as the
/// output's plus the kernel's less one, of `cols` values, wide enough that a vector of [`LANES`] outputs reads whole rows without a bound.
struct Padded {
    values: Vec<f32>,
    cols: usize,
    /// Values per sample.
    sample: usize,
    /// Where each tap (channel, kernel row, kernel column, in the kernel's order) reads the
    /// input, from the top-left input of an output pixel within one sample: the same for every
    /// sample and block, so worked out once here.
    taps: Vec<usize>,
}

impl Padded {
    fn new(x: &[f32], g: Geometry, n: usize) -> Padded {
        let [ph, pw] = g.padding;
        let [p, q] = g.output();
        let [kh, kw] = g.kernel;
        let (rows, cols) = (p + kh - 1, q.next_multiple_of(LANES) + kw - 1);
        let mut values = zeros(n * g.channels * rows * cols);
        values
            .par_chunks_mut(rows * cols)
            .zip(x.par_chunks(g.height * g.width))
            .for_each(|(to, from)| {
                for (h, row) in from.chunks(g.width).enumerate() {
                    to[(h + ph) * cols + pw..][..g.width].copy_from_slice(row);
                }
            });
        let taps = (0..g.channels)
            .flat_map(|c| (0..kh).flat_map(move |r| (0..kw).map(move |s| (c, r, s))))
            .map(|(c, r, s)| (c * rows + r) * cols + s)
            .collect();
        Padded {
            values,
            cols,
            sample: g.channels * rows * cols,
            taps,
        }
    }
}

/// The kernel `[K, taps]` as blocks of [`BLOCK`] output channels, tap by tap (zero past K).
fn blocked(w: &[f32], k: usize, taps: usize) -> Vec<[f32; BLOCK]> {
    let mut out = vec![[0.0; BLOCK]; k.div_ceil(BLOCK) * taps];
    for (ch, kernel) in w.chunks(taps).enumerate() {
        for (t, &v) in kernel.iter().enumerate() {
            out[(ch / BLOCK) * taps + t][ch % BLOCK] = v;
        }
    }
    out
}

/// `relu(conv(x, w) + b)` as `[n, K, P, Q]`: in parallel over samples and blocks of output
/// channels, each a contiguous run of the output.
pub(super) fn conv_relu(x: &[f32], g: Geometry, w: &[f32], k: usize, b: &[f32]) -> Vec<f32> {
    let n = x.len() / (g.channels * g.height * g.width);
    let ([p, q], taps) = (g.output(), g.rows());
    let (xp, wb) = (Padded::new(x, g, n), blocked(w, k, taps));
    let mut out = zeros(n * k * p * q);
    out.par_chunks_mut(k * p * q)
        .enumerate()
        .for_each(|(sample, planes)| {
            planes
                .par_chunks_mut(BLOCK * p * q)
                .enumerate()
                .for_each(|(blk, part)| {
                    let mut bias = [0.0; BLOCK];
                    let first = blk * BLOCK;
                    let count = part.len() / (p * q);
                    bias[..count].copy_from_slice(&b[first..first + count]);
                    let w = &wb[blk * taps..][..taps];
                    vectorized(Forward {
                        out: part,
                        xp: &xp,
                        sample,
                        w,
                        bias,
                        g,
                    });
                });
        });
    out
}

/// One sample's block of output channels, row by row, [`LANES`] pixels at a time.
struct Forward<'a> {
    out: &'a mut [f32],
    xp: &'a Padded,
    sample: usize,
    w: &'a [[f32; BLOCK]],
    bias: [f32; BLOCK],
    g: Geometry,
}

impl WithSimd for Forward<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Forward {
            out,
            xp,
            sample,
            w,
            bias,
            g,
        } = self;
        let [p, q] = g.output();
        let count = out.len() / (p * q);
        let taps = &xp.taps;
        let x = &xp.values[sample * xp.sample..][..xp.sample];
        let zero = simd.splat_f32s(0.0);
        for i in 0..p {
            for j0 in (0..q).step_by(S::F32_LANES) {
                let mut acc = bias.map(|b| simd.splat_f32s(b));
                let at = i * xp.cols + j0;
                for (&tap, w) in taps.iter().zip(w) {
                    let v = load::<S>(&x[at + tap..]);
                    for (a, &w) in acc.iter_mut().zip(w) {
                        *a = simd.mul_add_f32s(simd.splat_f32s(w), v, *a);
                    }
                }
                let width = S::F32_LANES.min(q - j0);
                for (ch, &a) in acc.iter().enumerate().take(count) {
                    let to = &mut out[ch * p * q + i * q + j0..][..width];
                    simd.partial_store_f32s(to, simd.max_f32s(a, zero));
                }
            }
        }
    }
}

/// The kernel's gradient `[K, taps]` and the bias's `[K]` from the ReLU's output `out` and the
/// gradient `grad` at it (`[n, K, P, Q]`): the mask drawn row by row into a small buffer, and
/// every tap's products summed in vectors of lanes, added up once per sample and block.
pub(super) fn weight_and_bias_grad(
    x: &[f32],
    g: Geometry,
    out: &[f32],
    grad: &[f32],
    k: usize,
) -> (Vec<f32>, Vec<f32>) {
    let n = x.len() / (g.channels * g.height * g.width);
    let ([p, q], taps) = (g.output(), g.rows());
    let xp = Padded::new(x, g, n);
    let blocks = k.div_ceil(BLOCK);
    let parts: Vec<(Vec<[f32; BLOCK]>, [f32; BLOCK])> = (0..n * blocks)
        .into_par_iter()
        .map(|unit| {
            let (sample, blk) = (unit / blocks, unit % blocks);
            let first = (sample * k + blk * BLOCK) * p * q;
            let count = BLOCK.min(k - blk * BLOCK);
            let (out, grad) = (
                &out[first..][..count * p * q],
                &grad[first..][..count * p * q],
            );
            vectorized(Backward {
                xp: &xp,
                sample,
                out,
                grad,
                g,
            })
        })
        .collect();
    let (mut dw, mut db) = (vec![0.0; k * taps], vec![0.0; k]);
    for (unit, (w, b)) in parts.iter().enumerate() {
        let first = (unit % blocks) * BLOCK;
        for ch in 0..BLOCK.min(k - first) {
            db[first + ch] += b[ch];
            for (t, w) in w.iter().enumerate() {
                dw[(first + ch) * taps + t] += w[ch];
            }
        }
    }
    (dw, db)
}

/// One sample's block of output channels: per tap, the sum over pixels of the masked gradient
/// times the input the tap sees; and the bias's sum.
struct Backward<'a> {
    xp: &'a Padded,
    sample: usize,
    out: &'a [f32],
    grad: &'a [f32],
    g: Geometry,
}

impl WithSimd for Backward<'_> {
    type Output = (Vec<[f32; BLOCK]>, [f32; BLOCK]);

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        let Backward {
            xp,
            sample,
            out,
            grad,
            g,
        } = self;
        let [p, q] = g.output();
        let count = out.len() / (p * q);
        let taps = &xp.taps;
        let x = &xp.values[sample * xp.sample..][..xp.sample];
        let width = q.next_multiple_of(LANES);
        let zero = simd.splat_f32s(0.0);
        // Per tap, BLOCK vectors of partial sums; one row of the masked gradient per channel,
        // zero past the image (and for channels past K) so that whole vectors can be read.
        let mut acc = vec![[zero; BLOCK]; taps.len()];
        let mut bias = [zero; BLOCK];
        let mut masked = vec![0.0f32; BLOCK * width];
        for i in 0..p {
            for (ch, m) in masked.chunks_mut(width).enumerate().take(count) {
                let at = ch * p * q + i * q;
                let (o, d) = (&out[at..][..q], &grad[at..][..q]);
                for j0 in (0..q).step_by(S::F32_LANES) {
                    let end = (j0 + S::F32_LANES).min(q);
                    let (o, d) = (
                        simd.partial_load_f32s(&o[j0..end]),
                        simd.partial_load_f32s(&d[j0..end]),
                    );
                    let v = simd.select_f32s(simd.greater_than_f32s(o, zero), d, zero);
                    simd.partial_store_f32s(&mut m[j0..end], v);
                    bias[ch] = simd.add_f32s(bias[ch], v);
                }
            }
            let at = i * xp.cols;
            for (&tap, acc) in taps.iter().zip(acc.iter_mut()) {
                let mut a = *acc;
                for j0 in (0..width).step_by(S::F32_LANES) {
                    let v = load::<S>(&x[at + tap + j0..]);
                    for (b, a) in a.iter_mut().enumerate() {
                        let m = load::<S>(&masked[b * width + j0..]);
                        *a = simd.mul_add_f32s(m, v, *a);
                    }
                }
                *acc = a;
            }
        }
        let dw = acc
            .iter()
            .map(|t| t.map(|v| simd.reduce_sum_f32s(v)))
            .collect();
        (dw, bias.map(|v| simd.reduce_sum_f32s(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook sums, one output at a time.
    fn reference(x: &[f32], g: Geometry, w: &[f32], k: usize, b: &[f32]) -> Vec<f32> {
        let n = x.len() / (g.channels * g.height * g.width);
        let ([p, q], [kh, kw], [ph, pw]) = (g.output(), g.kernel, g.padding);
        let mut out = vec![0.0; n * k * p * q];
        for s in 0..n {
            for o in 0..k {
                for i in 0..p {
                    for j in 0..q {
                        let mut v = b[o];
                        for c in 0..g.channels {
                            for r in 0..kh {
                                for t in 0..kw {
                                    let (h, wd) = (i + r, j + t);
                                    if h < ph || wd < pw || h - ph >= g.height || wd - pw >= g.width
                                    {
                                        continue;
                                    }
                                    let xi = ((s * g.channels + c) * g.height + h - ph) * g.width
                                        + wd
                                        - pw;
                                    v += w[((o * g.channels + c) * kh + r) * kw + t] * x[xi];
                                }
                            }
                        }
                        out[((s * k + o) * p + i) * q + j] = v.max(0.0);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn the_direct_sums_match_the_textbook_ones_on_ragged_shapes() {
        let wave = |len: usize, f: f32| (0..len).map(|i| (i as f32 * f).sin()).collect::<Vec<_>>();
        // 11 output channels (a block and a ragged one), 19 columns (a vector and a ragged one).
        for (c, padding, kernel) in [
            (3, [1, 1], [3, 3]),
            (1, [0, 2], [3, 5]),
            (4, [0, 0], [2, 2]),
        ] {
            let (n, k, h, wd) = (3, 11, 7, 19);
            let g = Geometry {
                channels: c,
                height: h,
                width: wd,
                kernel,
                padding,
            };
            let x = wave(n * c * h * wd, 0.37);
            let w = wave(k * g.rows(), 0.11);
            let b = wave(k, 0.7);
            let (fast, slow) = (conv_relu(&x, g, &w, k, &b), reference(&x, g, &w, k, &b));
            for (a, e) in fast.iter().zip(&slow) {
                assert!((a - e).abs() <= 1e-5, "{a} against {e}");
            }
        }
    }
}
