//! The kernels' transform `G g Gᵀ` and its adjoint `Gᵀ du G`, packed for and read from the
//! product kernel, on the widest vectors here. The kernels are first copied tap-major
//! (`[C, 9, K]`), so that a vector of output channels is one load:
//! gathered nine values at a time from `[K, C, 3, 3]` and transformed on baseline x86-64, the
//! transforms of VGG16's conv4 (512 x 512 kernels) took about 3 ms a call on the Zen 5 EPYC,
//! nearly as long as its 36 products.

use rayon::prelude::*;

use super::{
    transpose,
    vectors::{g3, g6, lanes, put, vector},
    POSITIONS,
};
use crate::buffer::{keep, scratch};
use crate::conv::kernels::CHANNELS_PER_TASK;
use crate::simd::{vectorized, Simd, WithSimd};

/// A layer's 3x3 kernels as Winograd's transforms read them: tap-major, `[C, 9, K]` for a
/// convolution of `C` input channels to `K`, so that a vector of output channels is one load.
/// Its buffer goes back to the kept ones when it is dropped.
pub(in crate::conv) struct TapMajor(Vec<f32>);

impl TapMajor {
    /// The forward's: `w` (`[K, C, 3, 3]`) as `[C, 9, K]`.
    pub fn forward(w: &[f32], k: usize, c: usize) -> Self {
        Self(tap_major(w, k, c))
    }

    /// The input gradient's, straight from the layer's `w` (`[K, C, 3, 3]`): the kernel of a
    /// convolution of `K` channels to `C`, `w` transposed to `[C, K, 3, 3]` and each tap flipped,
    /// tap-major, `[K, 9, C]`. Each output channel's row of `w` (`[C, 9]`, 18 KiB at 512
    /// channels) is one task's, read whole and written as nine rows of `C` with the taps in
    /// reverse: one pass where the flipped copy (`conv::kernels::transpose_flip`) and
    /// [`tap_major`] after it took two, reading and writing rows of `K` or `C` values far apart.
    pub fn input_grad(w: &[f32], k: usize, c: usize) -> Self {
        debug_assert_eq!(w.len(), k * c * 9, "the kernels of {k} x {c} channels");
        let mut out = scratch(w.len());
        out.par_chunks_mut(9 * c)
            .zip(w.par_chunks(9 * c))
            .for_each(|(out, row)| {
                for (t, out) in out.chunks_exact_mut(c).enumerate() {
                    for (o, taps) in out.iter_mut().zip(row.chunks_exact(9)) {
                        *o = taps[8 - t];
                    }
                }
            });
        Self(out)
    }
}

impl std::ops::Deref for TapMajor {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        &self.0
    }
}

impl Drop for TapMajor {
    fn drop(&mut self) {
        keep(std::mem::take(&mut self.0));
    }
}

/// `w` (`[K, C, 3, 3]`) as `[C, 9, K]`, into a kept buffer: `w` is a `[K, 9C]` matrix and this
/// its transpose.
fn tap_major(w: &[f32], k: usize, c: usize) -> Vec<f32> {
    let mut out = scratch(w.len());
    if transpose::in_registers() {
        tap_major_in_blocks(w, k, c, &mut out);
    } else {
        tap_major_by_channel(w, k, c, &mut out);
    }
    out
}

/// [`tap_major`] in parallel over blocks of [`CHANNELS_PER_TASK`] input channels, each block's
/// `9 x 16` columns transposed as the channels-last copy transposes an image row. With AVX-512's
/// 16 x 16 blocks in registers it took 0.33 ms against 0.51 by channel at 512 x 512 kernels, with
/// the 8 x 8 arrays 0.80 against 0.62 (docs/flex-performance.md, "The kernels' copies").
fn tap_major_in_blocks(w: &[f32], k: usize, c: usize, out: &mut [f32]) {
    out.par_chunks_mut(CHANNELS_PER_TASK * 9 * k)
        .enumerate()
        .for_each(|(block, out)| {
            let first = 9 * block * CHANNELS_PER_TASK;
            transpose::row(&w[first..], out, k, 9 * c, out.len() / k);
        });
}

/// [`tap_major`] in parallel over input channels, value by value: where the transposes have no
/// 16 x 16 blocks in registers, faster than their 8 x 8 arrays.
fn tap_major_by_channel(w: &[f32], k: usize, c: usize, out: &mut [f32]) {
    out.par_chunks_mut(9 * k).enumerate().for_each(|(ci, out)| {
        for ko in 0..k {
            for (tap, &value) in w[(ko * c + ci) * 9..][..9].iter().enumerate() {
                out[tap * k + ko] = value;
            }
        }
    });
}

/// `G g Gᵀ` of every kernel of `wt` (`[C, 9, K]`, [`TapMajor`]) packed for the product
/// kernel: panels of `width` output channels, `[K / width][36][C][width]`, zero beyond `K`;
/// parallel over panels.
pub(super) fn kernel_panels(wt: &[f32], [k, c, width]: [usize; 3]) -> Vec<f32> {
    let mut packed = scratch(k.div_ceil(width) * POSITIONS * c * width);
    packed
        .par_chunks_mut(POSITIONS * c * width)
        .enumerate()
        .for_each(|(panel, out)| kernel_panel(wt, [k, c, width], panel, out));
    packed
}

/// Panel `panel` of [`kernel_panels`], `[36][C][width]`, into `out`.
pub(super) fn kernel_panel(wt: &[f32], sizes: [usize; 3], panel: usize, out: &mut [f32]) {
    vectorized(KernelPanel {
        wt,
        sizes,
        panel,
        out,
    })
}

struct KernelPanel<'a> {
    wt: &'a [f32],
    sizes: [usize; 3],
    panel: usize,
    out: &'a mut [f32],
}

impl WithSimd for KernelPanel<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let KernelPanel {
            wt,
            sizes: [k, c, width],
            panel,
            out,
        } = self;
        let count = S::F32_LANES;
        for ci in 0..c {
            for col in (0..width).step_by(count) {
                let first = panel * width + col;
                let have = count.min(k.saturating_sub(first));
                // Zero beyond `K`.
                let tap = |t: usize| {
                    let at = ((ci * 9 + t) * k + first).min(wt.len());
                    vector::<S>(&wt[at..at + have])
                };
                let c0 = g6(simd, [tap(0), tap(3), tap(6)]);
                let c1 = g6(simd, [tap(1), tap(4), tap(7)]);
                let c2 = g6(simd, [tap(2), tap(5), tap(8)]);
                for i in 0..6 {
                    let row = g6(simd, [c0[i], c1[i], c2[i]]);
                    for (j, values) in row.iter().enumerate() {
                        let at = ((i * 6 + j) * c + ci) * width + col;
                        put::<S>(&mut out[at..at + count], *values);
                    }
                }
            }
        }
    }
}

/// `Gᵀ du G` for every kernel of `du` (`[36, K, C]`): the weight gradient, `[K, C, 3, 3]`.
pub(super) fn kernel_adjoint(du: &[f32], k: usize, c: usize) -> Vec<f32> {
    let mut dw = vec![0.0; k * c * 9];
    dw.par_chunks_mut(c * 9)
        .enumerate()
        .for_each(|(ko, dw)| kernel_adjoint_row(du, [k, c], ko, dw));
    dw
}

/// Output channel `ko`'s row (`[C, 3, 3]`) of [`kernel_adjoint`] of `du` (`[36, K, C]`).
pub(super) fn kernel_adjoint_row(du: &[f32], sizes: [usize; 2], ko: usize, dw: &mut [f32]) {
    vectorized(AdjointRow { du, sizes, ko, dw })
}

struct AdjointRow<'a> {
    du: &'a [f32],
    sizes: [usize; 2],
    ko: usize,
    dw: &'a mut [f32],
}

impl WithSimd for AdjointRow<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let AdjointRow {
            du,
            sizes: [k, c],
            ko,
            dw,
        } = self;
        let count = S::F32_LANES;
        for c0 in (0..c).step_by(count) {
            let have = count.min(c - c0);
            let m = |pos: usize| vector::<S>(&du[(pos * k + ko) * c + c0..][..have]);
            let mut rows = [[simd.splat_f32s(0.0); 3]; 6];
            for (i, row) in rows.iter_mut().enumerate() {
                let p = 6 * i;
                *row = g3(
                    simd,
                    [m(p), m(p + 1), m(p + 2), m(p + 3), m(p + 4), m(p + 5)],
                );
            }
            for s in 0..3 {
                let r = |i: usize| rows[i][s];
                let col = g3(simd, [r(0), r(1), r(2), r(3), r(4), r(5)]);
                for (r, values) in col.iter().enumerate() {
                    for (l, &value) in lanes::<S>(values)[..have].iter().enumerate() {
                        dw[(c0 + l) * 9 + r * 3 + s] = value;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{tap_major_by_channel, tap_major_in_blocks, TapMajor, CHANNELS_PER_TASK};

    #[test]
    fn both_tap_major_copies_put_each_tap_of_every_channel_in_a_row_of_output_channels() {
        // Input channels leaving a partial last block; output channels a partial 16 x 16 block.
        let (k, c) = (21, 2 * CHANNELS_PER_TASK + 5);
        let w: Vec<f32> = (0..k * c * 9).map(|i| i as f32).collect();
        for copy in [tap_major_in_blocks, tap_major_by_channel] {
            let mut wt = vec![f32::NAN; w.len()];
            copy(&w, k, c, &mut wt);
            for ko in 0..k {
                for ci in 0..c {
                    for tap in 0..9 {
                        assert_eq!(wt[(ci * 9 + tap) * k + ko], w[(ko * c + ci) * 9 + tap]);
                    }
                }
            }
        }
    }

    #[test]
    fn the_input_gradients_kernels_are_the_flipped_kernels_tap_major() {
        // Input channels leaving a partial block of the tap-major copy's transposes.
        let (k, c) = (21, 2 * CHANNELS_PER_TASK + 5);
        let w: Vec<f32> = (0..k * c * 9).map(|i| i as f32).collect();
        let flipped = crate::conv::kernels::transpose_flip(&w, k, c, 3, 3);
        let (direct, through) = (
            TapMajor::input_grad(&w, k, c),
            TapMajor::forward(&flipped, c, k),
        );
        assert_eq!(&*direct, &*through);
    }
}
