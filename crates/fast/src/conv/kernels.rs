//! The parallel passes of the convolution fast path, on plain f32 slices in NCHW order.

use rayon::prelude::*;

use crate::buffer::{scratch, zeros};

/// Sizes of one stride-1 convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Geometry {
    pub channels: usize,
    pub height: usize,
    pub width: usize,
    pub kernel: [usize; 2],
    pub padding: [usize; 2],
}

impl Geometry {
    /// Output height and width.
    pub fn output(&self) -> [usize; 2] {
        let [kh, kw] = self.kernel;
        let [ph, pw] = self.padding;
        [self.height + 2 * ph + 1 - kh, self.width + 2 * pw + 1 - kw]
    }

    /// Rows of one sample's im2col matrix: channels x kernel positions.
    pub fn rows(&self) -> usize {
        self.channels * self.kernel[0] * self.kernel[1]
    }
}

/// Values of a row of `len` f32 in a matrix whose rows a product reads side by side: `len`, or
/// `len` and one cache line of zeros where its rows would be an even number of 64-byte lines
/// apart. Rows an even number of lines apart fall on half the first- and second-level caches'
/// sets or fewer, and rows a multiple of 4 KiB apart on one set each: the im2col rows of a batch
/// of 64 Fashion-MNIST samples (64 x 784 values) or of any batch of 32x32 or 64x64 images are.
/// The small CNN's step at batch 128 took 14% longer per example than at 127 and 129 on a
/// 2-core Zen 5 (reports/power-of-two-step-time-cpu/20261129T163310Z-66f8f3), its weight
/// gradient's product over 64 samples a thread 3.0 ms against 2.1 at 126 and 130 (the machine's
/// races). With an odd number of lines between them, the rows of a product's panel spread over
/// every set: that step 0.63 ms faster, in 12 of 12 pairs of processes, the others unchanged
/// (docs/bench/20261129-1641-amd-epyc-f26-m2-ab-padded-rows.log). Rows shorter than a page
/// keep their length: there the line of zeros costs more than it saves (VGG16's 4x4 layers at
/// batch 16, rows of 256 values: its step 0.9% slower with them padded, in 6 of 6 pairs,
/// docs/bench/20261129-1639-amd-epyc-f26-m2-ab-padded-rows-every-row.log).
pub(super) fn padded_row(len: usize) -> usize {
    const LINE: usize = 16;
    const PAGE: usize = 1024;
    if len >= PAGE && len.is_multiple_of(2 * LINE) {
        len + LINE
    } else {
        len
    }
}

/// Writes into `col` the im2col matrix `[C·kh·kw, samples·P·Q]` of `x` (`[samples, C, H, W]`):
/// row (c, r, s) holds, sample after sample, the input pixel each output pixel sees through
/// kernel tap (r, s) of channel c. Only pixels inside the image are written: the padding's
/// places must already be zero, as they are in a zeroed buffer or one this function filled for
/// as many samples of the same geometry before (the places depend only on the geometry), which
/// lets the caller reuse one buffer without clearing it. A row of `col` longer than the
/// samples' pixels ([`padded_row`]) keeps its zeros past them. Parallel over channels.
pub(super) fn im2col_into(col: &mut [f32], x: &[f32], g: Geometry) {
    let [kh, kw] = g.kernel;
    let [ph, pw] = g.padding;
    let [p, q] = g.output();
    let plane = g.height * g.width;
    let samples = x.len() / (g.channels * plane).max(1);
    let row_len = col.len() / g.rows();
    col.par_chunks_mut(kh * kw * row_len)
        .enumerate()
        .for_each(|(c, rows)| {
            for r in 0..kh {
                for s in 0..kw {
                    let row = &mut rows[(r * kw + s) * row_len..][..row_len];
                    // Output columns whose input column w = j + s - pw lies inside the image.
                    let j0 = pw.saturating_sub(s);
                    let j1 = q.min((g.width + pw).saturating_sub(s));
                    for (n, out) in row.chunks_mut(p * q).take(samples).enumerate() {
                        let input = &x[(n * g.channels + c) * plane..][..plane];
                        for i in 0..p {
                            let Some(h) = (i + r).checked_sub(ph).filter(|&h| h < g.height) else {
                                continue;
                            };
                            if j0 < j1 {
                                let from = h * g.width + j0 + s - pw;
                                out[i * q + j0..i * q + j1]
                                    .copy_from_slice(&input[from..from + j1 - j0]);
                            }
                        }
                    }
                }
            }
        });
}

/// `[samples, K, pixels]` reordered to `[K, row]`, in parallel over K: each row the channel's
/// `samples·pixels` values, then zeros up to `row` ([`padded_row`]).
pub(super) fn channels_first(x: &[f32], k: usize, pixels: usize, row: usize) -> Vec<f32> {
    let samples = x.len() / (k * pixels);
    let mut out = zeros(k * row);
    out.par_chunks_mut(row).enumerate().for_each(|(ch, row)| {
        for (n, to) in row.chunks_mut(pixels).take(samples).enumerate() {
            to.copy_from_slice(&x[(n * k + ch) * pixels..][..pixels]);
        }
    });
    out
}

/// The gradient through the ReLU (`grad` where the output is positive, else 0), and the bias
/// gradient (its sum over samples and pixels per channel), in one parallel pass over the
/// `[samples, K, P, Q]` planes; the caller gives the masked gradient's buffer back
/// (`buffer::keep`).
pub(super) fn relu_mask_and_bias(
    out: &[f32],
    grad: &[f32],
    channels: usize,
    plane: usize,
) -> (Vec<f32>, Vec<f32>) {
    // Every element is written, so a kept buffer serves (`buffer::scratch`).
    let mut masked = scratch(grad.len());
    let sums: Vec<f32> = masked
        .par_chunks_mut(plane)
        .zip(out.par_chunks(plane).zip(grad.par_chunks(plane)))
        .map(|(m, (o, g))| {
            let mut sum = 0.0;
            for ((m, &o), &g) in m.iter_mut().zip(o).zip(g) {
                *m = if o > 0.0 { g } else { 0.0 };
                sum += *m;
            }
            sum
        })
        .collect();
    let mut bias = vec![0.0; channels];
    for (i, s) in sums.iter().enumerate() {
        bias[i % channels] += s;
    }
    (masked, bias)
}

/// Input channels per task of the kernels' copies ([`transpose_flip`], Winograd's
/// `weights::tap_major`): a task reads 16 x 9 values side by side (nine cache lines) of each
/// output channel's row of `[K, C, 3, 3]`, where a task of one channel read 36 bytes of each,
/// rows 18 KiB apart at 512 channels, every line twice. The two copies took 7.2% of VGG16's step
/// at batch 16 on a 2-core Zen 4 that way (docs/flex-performance.md, "The kernels' copies").
pub(in crate::conv) const CHANNELS_PER_TASK: usize = 16;

/// The kernel of the input gradient: `[C, K, kh, kw]` from `[K, C, kh, kw]`, each tap flipped;
/// in parallel over blocks of [`CHANNELS_PER_TASK`] input channels.
pub(super) fn transpose_flip(w: &[f32], k: usize, c: usize, kh: usize, kw: usize) -> Vec<f32> {
    let taps = kh * kw;
    let mut out = zeros(w.len());
    out.par_chunks_mut(CHANNELS_PER_TASK * k * taps)
        .enumerate()
        .for_each(|(block, out)| {
            let first = block * CHANNELS_PER_TASK;
            let channels = out.len() / (k * taps);
            for ko in 0..k {
                let from = &w[(ko * c + first) * taps..][..channels * taps];
                // Channel `j` of the block: its row of `out` is `[K, taps]`.
                for (row, from) in out.chunks_exact_mut(k * taps).zip(from.chunks_exact(taps)) {
                    let to = &mut row[ko * taps..][..taps];
                    for (t, v) in to.iter_mut().zip(from.iter().rev()) {
                        *t = *v;
                    }
                }
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_flip_swaps_the_channels_and_reverses_the_taps_in_every_block() {
        // Input channels leaving a partial last block.
        let (k, c, kh, kw) = (5, 2 * CHANNELS_PER_TASK + 3, 3, 3);
        let w: Vec<f32> = (0..k * c * kh * kw).map(|i| i as f32).collect();
        let out = transpose_flip(&w, k, c, kh, kw);
        let taps = kh * kw;
        for ko in 0..k {
            for ci in 0..c {
                for t in 0..taps {
                    assert_eq!(
                        out[(ci * k + ko) * taps + t],
                        w[(ko * c + ci) * taps + taps - 1 - t],
                        "k {ko}, c {ci}, tap {t}"
                    );
                }
            }
        }
    }

    /// One 1x2x3 image, 3x3 kernel, padding 1: output 2x3.
    const TINY: Geometry = Geometry {
        channels: 1,
        height: 2,
        width: 3,
        kernel: [3, 3],
        padding: [1, 1],
    };
    const IMAGE: [f32; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];

    #[test]
    fn im2col_places_each_tap_and_zeroes_the_padding() {
        let (x, g) = (IMAGE, TINY);
        let im2col = |x: &[f32]| {
            let mut col = vec![0.0; 9 * x.len()];
            im2col_into(&mut col, x, g);
            col
        };
        let col = im2col(&x);
        assert_eq!(col.len(), 9 * 6);
        // Two samples: each row holds the first sample's pixels, then the second's.
        let two = im2col(&[x, x.map(|v| 10.0 * v)].concat());
        assert_eq!(&two[4 * 12..4 * 12 + 6], &x);
        assert_eq!(two[4 * 12 + 6], 10.0);
        // The centre tap (r = 1, s = 1) sees the image itself.
        assert_eq!(&col[4 * 6..5 * 6], &x);
        // The top-left tap sees the pixel up and left: only output (1, 1) and (1, 2) have one.
        assert_eq!(&col[0..6], &[0.0, 0.0, 0.0, 0.0, 1.0, 2.0]);
        // The bottom-right tap: outputs (0, 0) and (0, 1).
        assert_eq!(&col[8 * 6..9 * 6], &[5.0, 6.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn channels_first_gathers_each_channel_over_the_samples() {
        // 2 samples x 2 channels x 3 pixels.
        let x = [
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
        ];
        let out = channels_first(&x, 2, 3, 6);
        assert_eq!(
            out,
            vec![1.0, 2.0, 3.0, 7.0, 8.0, 9.0, 4.0, 5.0, 6.0, 10.0, 11.0, 12.0]
        );
        // Rows padded to 8: two zeros after each channel's values.
        let out = channels_first(&x, 2, 3, 8);
        assert_eq!(&out[..8], &[1.0, 2.0, 3.0, 7.0, 8.0, 9.0, 0.0, 0.0]);
        assert_eq!(&out[8..14], &[4.0, 5.0, 6.0, 10.0, 11.0, 12.0]);
    }

    #[test]
    fn padded_rows_are_an_odd_number_of_cache_lines_apart_or_not_whole_lines() {
        // 64 Fashion-MNIST samples: 50,176 values, 3,136 lines, a multiple of 4 KiB.
        assert_eq!(padded_row(64 * 784), 64 * 784 + 16);
        assert_eq!(padded_row(63 * 784), 63 * 784);
        assert_eq!(padded_row(16 * 3), 16 * 3);
        assert_eq!(padded_row(20), 20);
        // Shorter than a page: as it is.
        assert_eq!(padded_row(256), 256);
        for len in 1024..5000 {
            let row = padded_row(len);
            assert!(row == len || row == len + 16, "{len}");
            assert!(!row.is_multiple_of(32), "{len} -> {row}");
        }
    }

    #[test]
    fn a_padded_im2col_row_keeps_its_zeros_past_the_samples() {
        let mut col = vec![0.0; 9 * 8];
        im2col_into(&mut col, &IMAGE, TINY);
        // The centre tap's row: the image, then the two zeros of the padding.
        assert_eq!(
            &col[4 * 8..5 * 8],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 0.0]
        );
    }

    #[test]
    fn the_mask_passes_gradients_where_the_output_is_positive() {
        let out = [1.0, 0.0, 2.0, 0.0, 0.0, 3.0, 4.0, 5.0];
        let grad = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        // 2 samples x 2 channels x 2 pixels.
        let (masked, bias) = relu_mask_and_bias(&out, &grad, 2, 2);
        assert_eq!(masked, vec![1.0, 0.0, 3.0, 0.0, 0.0, 6.0, 7.0, 8.0]);
        assert_eq!(bias, vec![1.0 + 6.0, 3.0 + 15.0]);
    }
}
