//! batchlab's own matrix-product kernel, and the two products of a dense layer's backward over a
//! short batch that it computes, beside the forward's over a short batch (`x_w`, which streams
//! the weights rather than hold sums in registers); Winograd's blocked forward
//! (`conv::winograd::fused`) runs its products on it too (`product_into`). The dense layer's:
//! the weight gradient `xᵀ · d`, whose inner dimension is the batch, and the input gradient
//! `d · wᵀ`. flex's kernel runs the first (VGG16's fc2 at batch 16: 4096 x 4096 sums of 16
//! products each) far below its speed on long inner dimensions, and the second, whose right side
//! is a transposed view, at a few tens of GFLOP/s; and every tensor flex allocates it zeroes and
//! copies on the calling thread (docs/flex-performance.md). Here every thread writes its rows of
//! the result straight from the row-major inputs: twelve (AVX-512) or six (AVX2) rows by two
//! vectors of sums in registers, one broadcast of the left side against two vectors of the right
//! side per step.

use rayon::prelude::*;

use crate::buffer::zeros;
use crate::simd::{load, vectorized, Simd, WithSimd};

mod streamed;

pub(crate) use streamed::x_w;

/// Rows of the result summed in registers at a time: `ROWS_WIDE` with AVX-512 (24 of its 32
/// registers), `ROWS_NARROW` with AVX2 (12 of 16).
pub(crate) const ROWS_WIDE: usize = 12;
const ROWS_NARROW: usize = 6;
/// Columns of the input gradient one task computes: a multiple of both kernels' rows.
const SPAN: usize = ROWS_WIDE * 64;

/// `xᵀ · d`, `[k, n]`, of `x` (`[m, k]`) and `d` (`[m, n]`), both row-major.
pub(crate) fn xt_d(x: &[f32], d: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    product(Left::Columns { values: x, step: k }, d, [m, k, n])
}

/// `d · wᵀ`, `[m, k]`, of `d` (`[m, n]`) and `w` (`[k, n]`), both row-major: computed as
/// `w · dᵀ` (`[k, m]`, `m` padded to whole vectors) and transposed, since `m` is short.
pub(crate) fn d_wt(d: &[f32], w: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let padded = m.div_ceil(width()) * width();
    let mut dt = vec![0.0; n * padded];
    for (b, row) in d.chunks(n).enumerate() {
        for (o, &value) in row.iter().enumerate() {
            dt[o * padded + b] = value;
        }
    }
    let left = Left::Rows { values: w, row: n };
    // Each task computes a span of the result's columns (rows of `w`) into a buffer of its own,
    // `[span, padded]`, and writes it transposed into its part of every row of the result.
    let mut out = zeros(m * k);
    column_spans(&mut out, k, SPAN)
        .into_par_iter()
        .enumerate()
        .for_each(|(task, mut parts)| {
            let span = parts.first().map_or(0, |p| p.len());
            let mut wd = vec![0.0; span * padded];
            let right = Right::rows(&dt, padded);
            product_into(left.skip_rows(task * SPAN), right, [n, padded], &mut wd);
            for (i, line) in wd.chunks(padded).enumerate() {
                for (part, &value) in parts.iter_mut().zip(line) {
                    part[i] = value;
                }
            }
        });
    out
}

/// The rows of `out` (each `cols` long) cut into spans of `span` columns, gathered span by
/// span: each span's part of every row, for the task that computes those columns.
pub(super) fn column_spans(out: &mut [f32], cols: usize, span: usize) -> Vec<Vec<&mut [f32]>> {
    let mut spans: Vec<Vec<&mut [f32]>> = (0..cols.div_ceil(span)).map(|_| Vec::new()).collect();
    for row in out.chunks_mut(cols.max(1)) {
        for (parts, part) in spans.iter_mut().zip(row.chunks_mut(span)) {
            parts.push(part);
        }
    }
    spans
}

/// Columns the kernel computes at a time here: two vectors.
pub(crate) fn width() -> usize {
    2 * vectorized(Lanes)
}

struct Lanes;

impl WithSimd for Lanes {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> usize {
        S::F32_LANES
    }
}

/// The left side of a product, `rows x inner`, in either layout its callers hold: the layout
/// decides how [`panel`] reads it.
#[derive(Clone, Copy)]
pub(crate) enum Left<'a> {
    /// Row by row: the value at row `r`, inner index `s` is `values[r * row + s]` (Winograd's
    /// transformed tiles, `[tiles, C]`; a dense layer's weights).
    Rows { values: &'a [f32], row: usize },
    /// Inner index by inner index: the value at row `r`, inner index `s` is `values[s * step +
    /// r]` (the weight gradients' `xᵀ`).
    Columns { values: &'a [f32], step: usize },
}

impl Left<'_> {
    /// The same left side without its first `first` rows.
    fn skip_rows(self, first: usize) -> Self {
        match self {
            Left::Rows { values, row } => Left::Rows {
                values: &values[first * row..],
                row,
            },
            Left::Columns { values, step } => Left::Columns {
                values: &values[first..],
                step,
            },
        }
    }

    /// The value at row `r`, inner index `s`.
    fn at(&self, r: usize, s: usize) -> f32 {
        match *self {
            Left::Rows { values, row } => values[r * row + s],
            Left::Columns { values, step } => values[s * step + r],
        }
    }
}

/// The right side of a product, in panels of two vectors' width: its elements at inner index `s`
/// and columns `p·width..(p + 1)·width` are the `width` values from `values[p * panel + s *
/// step]`. Row-major `[inner, cols]` is `step = cols`, `panel = width`; packed panel by panel,
/// `[cols / width][inner][width]`, is `step = width`, `panel = inner · width`.
#[derive(Clone, Copy)]
pub(crate) struct Right<'a> {
    pub values: &'a [f32],
    pub step: usize,
    pub panel: usize,
}

impl Right<'_> {
    /// Row-major `[inner, cols]`, for the kernel's width here.
    fn rows(values: &[f32], cols: usize) -> Right<'_> {
        Right {
            values,
            step: cols,
            panel: width(),
        }
    }

    /// The value at inner index `s`, column `c`.
    fn at(&self, s: usize, c: usize, width: usize) -> f32 {
        self.values[c / width * self.panel + s * self.step + c % width]
    }
}

/// `out = left · right` on this thread, `out` being `[rows, cols]`: a block's share of a larger
/// computation (Winograd's products, `conv::winograd::fused`).
pub(crate) fn product_into(left: Left, right: Right, [inner, cols]: [usize; 2], out: &mut [f32]) {
    vectorized(Rows::<2> {
        left,
        right,
        inner,
        cols,
        out,
    })
}

/// `out[r][c] = Σ_s left(s, r) · right[s][c]`: `[rows, cols]` from `right` (`[inner, cols]`,
/// row-major), parallel over blocks of rows.
fn product(left: Left, right: &[f32], dims: [usize; 3]) -> Vec<f32> {
    blocks::<2>(left, right, dims)
}

/// [`product`] of a right side whose `cols` are whole vectors (a copy padded with zeros), with
/// one vector of sums per row where `cols` is one vector's width (16 with AVX-512), else two: a
/// network's head of ten classes then multiplies 6 padding columns per row where two vectors
/// would multiply 22 (`dense::narrow`).
pub(crate) fn padded(left: Left, right: &[f32], dims @ [_, _, cols]: [usize; 3]) -> Vec<f32> {
    match cols == width() / 2 {
        true => blocks::<1>(left, right, dims),
        false => blocks::<2>(left, right, dims),
    }
}

/// [`product`] with `V` vectors of sums per row.
fn blocks<const V: usize>(left: Left, right: &[f32], [inner, rows, cols]: [usize; 3]) -> Vec<f32> {
    let right = Right::rows(right, cols);
    let mut out = zeros(rows * cols);
    // A multiple of both kernels' rows.
    out.par_chunks_mut(ROWS_WIDE * cols)
        .enumerate()
        .for_each(|(block, out)| {
            vectorized(Rows::<V> {
                left: left.skip_rows(block * ROWS_WIDE),
                right,
                inner,
                cols,
                out,
            })
        });
    out
}

/// The rows of a product, as many as `out` holds, `V` vectors of columns at a time.
struct Rows<'a, const V: usize> {
    left: Left<'a>,
    right: Right<'a>,
    inner: usize,
    cols: usize,
    out: &'a mut [f32],
}

impl<const V: usize> WithSimd for Rows<'_, V> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        if S::F32_LANES >= 16 {
            self.run::<S, ROWS_WIDE>(simd)
        } else {
            self.run::<S, ROWS_NARROW>(simd)
        }
    }
}

impl<const V: usize> Rows<'_, V> {
    #[inline(always)]
    fn run<S: Simd, const R: usize>(self, simd: S) {
        let Rows {
            left,
            right,
            inner,
            cols,
            out,
        } = self;
        let (lanes, width) = (S::F32_LANES, V * S::F32_LANES);
        let rows = out.len() / cols.max(1);
        let whole = cols / width * width;
        let write = |out: &mut [f32], sums: [S::f32s; V]| {
            for (out, sum) in out[..width].chunks_exact_mut(lanes).zip(sums) {
                out.copy_from_slice(bytemuck::cast_slice(&[sum]));
            }
        };
        for r0 in (0..rows).step_by(R) {
            let count = R.min(rows - r0);
            for col in (0..whole).step_by(width) {
                if count == R {
                    let sums = panel::<S, R, V>(simd, left, right, inner, r0, col);
                    for (r, sum) in sums.into_iter().enumerate() {
                        write(&mut out[(r0 + r) * cols + col..], sum);
                    }
                } else {
                    // A partial block: four rows at a time, then one.
                    let mut r = r0;
                    while r + 4 <= r0 + count {
                        let sums = panel::<S, 4, V>(simd, left, right, inner, r, col);
                        for (i, sum) in sums.into_iter().enumerate() {
                            write(&mut out[(r + i) * cols + col..], sum);
                        }
                        r += 4;
                    }
                    for r in r..r0 + count {
                        let [sum] = panel::<S, 1, V>(simd, left, right, inner, r, col);
                        write(&mut out[r * cols + col..], sum);
                    }
                }
            }
            // The columns beyond the last whole panel, one at a time.
            for r in r0..r0 + count {
                for (j, o) in out[r * cols..][whole..cols].iter_mut().enumerate() {
                    *o = (0..inner)
                        .map(|s| left.at(r, s) * right.at(s, whole + j, 2 * lanes))
                        .sum();
                }
            }
        }
    }
}

/// Rows `r0..r0 + R` and columns `col..col + V vectors` of a [`product`]: per inner index, `V`
/// of the right side's vectors against `R` broadcasts of the left side's values. The left
/// side is read through slices whose lengths the loop's bounds imply (one of `R` values per
/// inner index, or `R` rows `inner` long), so that no broadcast carries a bounds check: with one
/// each, the loop ran a compare and a branch per row beside its two multiply-adds, the rows'
/// bounds kept on the stack, and its products ran at 0.74-0.83x their speed now
/// (docs/flex-performance.md).
#[inline(always)]
fn panel<S: Simd, const R: usize, const V: usize>(
    simd: S,
    left: Left,
    right: Right,
    inner: usize,
    r0: usize,
    col: usize,
) -> [[S::f32s; V]; R] {
    let lanes = S::F32_LANES;
    let zero = simd.splat_f32s(0.0);
    let mut sums = [[zero; V]; R];
    // Where in its panel (two vectors wide) the block's columns start: one vector in, for the
    // second block of one-vector blocks.
    let first = col / (2 * lanes) * right.panel + col % (2 * lanes);
    let pair = |s: usize| -> [S::f32s; V] {
        let pair = &right.values[first + s * right.step..][..V * lanes];
        std::array::from_fn(|v| load::<S>(&pair[v * lanes..]))
    };
    // One row's sums plus its left value times the vectors.
    let add = |sum: &mut [S::f32s; V], value: f32, vectors: [S::f32s; V]| {
        let value = simd.splat_f32s(value);
        for (sum, vector) in sum.iter_mut().zip(vectors) {
            *sum = simd.mul_add_f32s(value, vector, *sum);
        }
    };
    match left {
        Left::Columns { values, step } => {
            let values = &values[r0..];
            for s in 0..inner {
                let pair = pair(s);
                let at: &[f32; R] = values[s * step..][..R]
                    .try_into()
                    .expect("a slice of R values");
                for (sum, &value) in sums.iter_mut().zip(at) {
                    add(sum, value, pair);
                }
            }
        }
        Left::Rows { values, row } => {
            let rows: [&[f32]; R] = std::array::from_fn(|r| &values[(r0 + r) * row..][..inner]);
            for s in 0..inner {
                let pair = pair(s);
                for (sum, row) in sums.iter_mut().zip(&rows) {
                    add(sum, row[s], pair);
                }
            }
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    pub(super) fn wave(len: usize, f: f32) -> Vec<f32> {
        (0..len).map(|i| (i as f32 * f).sin()).collect()
    }

    fn close(got: f32, exact: f64, at: (usize, usize)) {
        assert!(
            (got as f64 - exact).abs() <= 1e-5,
            "{at:?}: {got} against {exact}"
        );
    }

    /// Every value of a `[rows, cols]` result against its exact sum.
    pub(super) fn check(
        out: &[f32],
        [rows, cols]: [usize; 2],
        exact: impl Fn(usize, usize) -> f64,
    ) {
        assert_eq!(out.len(), rows * cols);
        for i in 0..rows {
            for j in 0..cols {
                close(out[i * cols + j], exact(i, j), (i, j));
            }
        }
    }

    #[test]
    fn the_weight_gradient_sums_over_the_short_dimension() {
        // Rows that leave a partial block of rows, columns a partial panel.
        let (m, k, n) = (5, 29, 70);
        let (x, d) = (wave(m * k, 0.37), wave(m * n, 0.11));
        let out = super::xt_d(&x, &d, m, k, n);
        check(&out, [k, n], |i, j| {
            (0..m)
                .map(|b| x[b * k + i] as f64 * d[b * n + j] as f64)
                .sum()
        });
    }

    #[test]
    fn a_padded_right_side_takes_one_vector_per_row_or_two() {
        // One vector's width of columns, then two, over rows that leave partial blocks, the
        // left side in both layouts.
        let (m, k) = (29, 37);
        for cols in [super::width() / 2, super::width()] {
            let (a, right) = (wave(m * k, 0.37), wave(k * cols, 0.11));
            let sum = |at: &dyn Fn(usize) -> f32, j: usize| -> f64 {
                (0..k)
                    .map(|s| at(s) as f64 * right[s * cols + j] as f64)
                    .sum()
            };
            let rows = super::Left::Rows { values: &a, row: k };
            let out = super::padded(rows, &right, [k, m, cols]);
            check(&out, [m, cols], |i, j| sum(&|s| a[i * k + s], j));
            let columns = super::Left::Columns {
                values: &a,
                step: m,
            };
            let out = super::padded(columns, &right, [k, m, cols]);
            check(&out, [m, cols], |i, j| sum(&|s| a[s * m + i], j));
        }
    }

    #[test]
    fn the_input_gradient_sums_over_the_long_dimension() {
        let (m, k, n) = (5, 29, 70);
        let (d, w) = (wave(m * n, 0.23), wave(k * n, 0.07));
        let out = super::d_wt(&d, &w, m, k, n);
        check(&out, [m, k], |b, i| {
            (0..n)
                .map(|o| d[b * n + o] as f64 * w[i * n + o] as f64)
                .sum()
        });
    }
}
