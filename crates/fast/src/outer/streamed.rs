//! The forward over a short batch (`x_w`): a product that streams its right side, the weights,
//! rather than hold its sums in registers (`outer`'s kernel), so that it reads each weight once
//! and in order.

use rayon::prelude::*;

use super::column_spans;
use crate::buffer::zeros;
use crate::simd::{load, vectorized, Simd, WithSimd};

/// Columns of the result one task of [`x_w`] adds up: 1 KiB of each of `w`'s rows, so that a
/// task's block of the result (`[m, COLUMNS]`, 16 KiB at batch 16) stays in the first-level
/// cache while `w` streams past it.
const COLUMNS: usize = 256;
/// Rows of `w` added into the block in one pass over it: one load and one store of the block's
/// vectors per `DEPTH` multiply-adds.
const DEPTH: usize = 8;

/// `x · w`, `[m, n]`, of `x` (`[m, k]`) and `w` (`[k, n]`), both row-major, `m` short (a dense
/// layer's forward over a short batch: VGG16's fc layers at batch 16). The product reads each
/// of `w`'s values once, for `m` multiply-adds, so it is bound by reading `w` from memory (64
/// MiB for fc2): every task adds a span of `w`'s columns, `DEPTH` rows at a time read in order,
/// into its block of the result, where a kernel holding the sums in registers walks each
/// column of `w` down its rows, a page apart, which the prefetchers do not follow.
pub(crate) fn x_w(x: &[f32], w: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = zeros(m * n);
    let tasks = column_spans(&mut out, n, COLUMNS);
    tasks.into_par_iter().enumerate().for_each(|(task, parts)| {
        let first = task * COLUMNS;
        vectorized(Streamed {
            x,
            w: &w[first.min(w.len())..],
            inner: k,
            cols: n,
            parts,
        })
    });
    out
}

/// A task of [`x_w`]: `parts[r] += Σ_s x[r][s] · w[s][..span]`, `w` starting at the span's
/// first column, rows `cols` apart.
struct Streamed<'a, 'b> {
    x: &'a [f32],
    w: &'a [f32],
    inner: usize,
    cols: usize,
    parts: Vec<&'b mut [f32]>,
}

impl WithSimd for Streamed<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(mut self, simd: S) {
        let mut s = 0;
        while s + DEPTH <= self.inner {
            self.rows::<S, DEPTH>(simd, s);
            s += DEPTH;
        }
        for s in s..self.inner {
            self.rows::<S, 1>(simd, s);
        }
    }
}

impl Streamed<'_, '_> {
    /// Adds `w`'s rows `s0..s0 + D` into every part.
    #[inline(always)]
    fn rows<S: Simd, const D: usize>(&mut self, simd: S, s0: usize) {
        let lanes = S::F32_LANES;
        let span = self.parts.first().map_or(0, |p| p.len());
        let whole = span / lanes * lanes;
        let (x, w, inner, cols) = (self.x, self.w, self.inner, self.cols);
        for c in (0..whole).step_by(lanes) {
            let ws: [S::f32s; D] = std::array::from_fn(|i| load::<S>(&w[(s0 + i) * cols + c..]));
            for (r, part) in self.parts.iter_mut().enumerate() {
                let xs = &x[r * inner + s0..][..D];
                let mut sum = load::<S>(&part[c..]);
                for (&value, &wv) in xs.iter().zip(&ws) {
                    sum = simd.mul_add_f32s(simd.splat_f32s(value), wv, sum);
                }
                part[c..c + lanes].copy_from_slice(bytemuck::cast_slice(&[sum]));
            }
        }
        for c in whole..span {
            for (r, part) in self.parts.iter_mut().enumerate() {
                let xs = &x[r * inner + s0..][..D];
                part[c] += (0..D).map(|i| xs[i] * w[(s0 + i) * cols + c]).sum::<f32>();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, wave};

    #[test]
    fn the_short_forward_streams_every_row_into_every_column() {
        // Columns past one task's span and a partial vector; rows past whole passes of DEPTH.
        for (m, k, n) in [
            (5, 29, super::COLUMNS + 21),
            (1, 3, 7),
            (16, 2 * super::DEPTH, 40),
        ] {
            let (x, w) = (wave(m * k, 0.37), wave(k * n, 0.11));
            let out = super::x_w(&x, &w, m, k, n);
            check(&out, [m, n], |b, j| {
                (0..k)
                    .map(|s| x[b * k + s] as f64 * w[s * n + j] as f64)
                    .sum()
            });
        }
    }
}
