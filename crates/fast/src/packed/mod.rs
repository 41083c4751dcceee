//! batchlab's packed matrix product, for the dense layers of a long batch (the MLP's 1024 rows):
//! the blocking of the BLAS libraries the frameworks call. The right side is copied once into
//! panels two vectors wide, a step of the inner dimension at a time, and every task copies its
//! block of the left side's rows into strips of a few rows; then either a strip stays in the
//! first-level cache while every panel of the step streams past it or a panel stays while every
//! strip of the block does ([`Order`], both raced), and the kernel reads both
//! in the order it uses them, with no bounds checks and no strides, and writes each block of
//! the result once it is summed, finished where asked ([`Finish`]: a dense layer's bias, and
//! its ReLU where one follows), with no pass over the result after it. Either side may be a
//! transposed view (a stride per row and one per column), so the backward's `xᵀ · d` and
//! `d · wᵀ` are never transposed first. On a 2-core Zen 3 it ran the MLP step's eight products
//! at 120-126 GFLOP/s where flex's kernel (gemm, the same register block) ran them at 104-115,
//! alternating, and OpenBLAS and MKL at 97-123 and 81-135 in the same hour
//! (`just bench-mlp-products`, docs/flex-performance.md).

use rayon::prelude::*;

pub mod ceiling;
mod pack;

use crate::buffer::zeros;
use crate::outer::width;
use crate::simd::{load, vectorized, Simd, WithSimd};
use pack::{pack_left, pack_right, Aligned};

/// A matrix of `rows x cols` whose element `(i, j)` is `values[i * row + j * col]`.
#[derive(Clone, Copy, Debug)]
pub struct Strided<'a> {
    /// The elements, wherever the strides reach.
    pub values: &'a [f32],
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// The step from one row to the next.
    pub row: usize,
    /// The step from one column to the next.
    pub col: usize,
}

impl<'a> Strided<'a> {
    /// A row-major `[rows, cols]` matrix.
    pub fn row_major(values: &'a [f32], rows: usize, cols: usize) -> Self {
        Strided {
            values,
            rows,
            cols,
            row: cols,
            col: 1,
        }
    }

    /// The transposed view of the same values.
    pub fn t(self) -> Self {
        Strided {
            rows: self.cols,
            cols: self.rows,
            row: self.col,
            col: self.row,
            ..self
        }
    }

    #[cfg(test)]
    fn at(&self, i: usize, j: usize) -> f32 {
        self.values[i * self.row + j * self.col]
    }
}

/// Which of the two operands' packed pieces stays in the first-level cache while the other's
/// stream past it. Both are raced per product shape (`dense::paths`): on a 2-core Zen 5 the
/// panels' order ran the MLP's eight products 3-5% faster than the strips' (`just
/// bench-mlp-products`, docs/flex-performance.md), and on the Zen 3 the strips' order was the
/// fastest kernel of all for the five large ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Order {
    /// A strip of the left side stays while every panel of the right side streams past it:
    /// steps as deep as a strip of [`STRIP_BYTES`] allows (the MLP's products in one, so that
    /// the result is written once), blocks of at most [`STRIP_BLOCK`] rows. The whole right
    /// side streams past each strip, from the last-level cache where it outgrows the second.
    Strips,
    /// The BLAS libraries' order: a panel stays while the strips of a block of rows stream past
    /// it from the second-level cache, steps [`PANEL_DEPTH`] deep and blocks of at most
    /// [`PANEL_BLOCK`] rows, so that the right side streams past each block, not each strip.
    Panels,
}

impl Order {
    /// The deepest step of the inner dimension with `MR`-row strips.
    fn depth<const MR: usize>(self) -> usize {
        match self {
            Order::Strips => (STRIP_BYTES / (MR * 4)).max(1),
            Order::Panels => PANEL_DEPTH,
        }
    }

    /// The most rows of the left side in one task.
    fn block(self) -> usize {
        match self {
            Order::Strips => STRIP_BLOCK,
            Order::Panels => PANEL_BLOCK,
        }
    }
}

/// Bytes of a strip of the left side in [`Order::Strips`] (`MR` rows by a step of the inner
/// dimension): most of a first-level cache. A step as deep as this allows (1,024 with AVX2)
/// takes the MLP's products in one (a scratch run on a 2-core Zen 3: 146 GFLOP/s on the MLP's
/// five large products, against 125-134 with steps of 16-32 KiB of panel; within that
/// machine's noise).
const STRIP_BYTES: usize = 24 << 10;
/// At most this many rows in one task of [`Order::Strips`]: a few tasks per thread for rayon
/// to even out.
const STRIP_BLOCK: usize = 96;
/// A step of the inner dimension in [`Order::Panels`]: BLIS's for single precision on Haswell
/// and Zen. A panel is then 16 KiB with AVX2 and 32 KiB with AVX-512 (chosen among steps of 128
/// to 512 by scratch runs on the Zen 5, not kept, where they differed little).
const PANEL_DEPTH: usize = 256;
/// At most this many rows in one task of [`Order::Panels`]: a block of 288 rows by a step is
/// 288 KiB, inside a Zen 3's second-level cache (512 KiB), and the MLP's 1,024 rows make four
/// tasks for two threads (in scratch runs on the Zen 5, not kept, blocks of 96 rows were
/// slower than blocks of 192 to 288).
const PANEL_BLOCK: usize = 288;

/// What a product's values get as they are stored, at the last step of the inner dimension.
#[derive(Clone, Copy, Debug)]
pub enum Finish<'a> {
    /// Nothing: the product as it is.
    Plain,
    /// Column `j`'s bias added, then, where `relu`, negatives set to zero: a dense layer's
    /// forward (with its ReLU, or a network's head), done while the block is in registers rather
    /// than in a pass of its own over the result.
    Bias { bias: &'a [f32], relu: bool },
}

/// `a · b` in `order`, row-major `[a.rows, b.cols]`, on all of rayon's threads.
pub fn product(a: Strided, b: Strided, order: Order) -> Vec<f32> {
    product_then(a, b, Finish::Plain, order)
}

/// `a · b` in `order` with `finish` applied to every value, row-major `[a.rows, b.cols]`, on
/// all of rayon's threads.
pub fn product_then(a: Strided, b: Strided, finish: Finish, order: Order) -> Vec<f32> {
    assert_eq!(a.cols, b.rows, "a product's inner dimensions");
    if let Finish::Bias { bias, .. } = finish {
        assert_eq!(bias.len(), b.cols, "a bias per column");
    }
    // Zeros only for want of an uninitialised buffer in safe code: the first step writes every
    // value.
    let mut c = zeros(a.rows * b.cols);
    // Twelve rows by two vectors with AVX-512 (24 of 32 registers), six with AVX2 (12 of 16).
    match width() {
        32 => run::<12, 32>(a, b, finish, order, &mut c),
        16 => run::<6, 16>(a, b, finish, order, &mut c),
        _ => run::<4, 2>(a, b, finish, order, &mut c),
    }
    c
}

/// [`product`] with `MR x NR` kernel blocks: the right side packed once, then blocks of rows in
/// parallel, each through the inner dimension a step at a time.
fn run<const MR: usize, const NR: usize>(
    a: Strided,
    b: Strided,
    finish: Finish,
    order: Order,
    c: &mut [f32],
) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    // As deep as the order allows, in equal steps.
    let steps = k.div_ceil(order.depth::<MR>());
    let depth = k.div_ceil(steps);
    let threads = rayon::current_num_threads();
    let blocks = m
        .div_ceil(order.block())
        .next_multiple_of(threads)
        .min(m.div_ceil(MR));
    let block = m.div_ceil(blocks).next_multiple_of(MR);
    let panels = n.div_ceil(NR);
    // Step by step of the inner dimension, panel by panel: `[steps][panels][depth][NR]`.
    let mut right = Aligned::scratch(k * panels * NR);
    let right = right.values();
    let mut panels_at = Vec::with_capacity(steps * panels);
    for (step, part) in right.chunks_mut(depth * panels * NR).enumerate() {
        let kc = part.len() / (panels * NR);
        for (p, panel) in part.chunks_mut(kc * NR).enumerate() {
            panels_at.push((step * depth, p * NR, panel));
        }
    }
    panels_at
        .into_par_iter()
        .for_each(|(s0, j0, panel)| pack_right::<NR>(b, s0, j0, panel));
    c.par_chunks_mut(block * n).enumerate().for_each(|(i, c)| {
        vectorized(Block::<MR, NR> {
            a,
            rows: [i * block, c.len() / n],
            depth,
            order,
            finish,
            right: &*right,
            c,
            n,
        })
    });
}

/// One thread's block of rows `rows[0]..+rows[1]` of the result: the left side's rows packed a
/// step of the inner dimension at a time, by every panel of the right side in `order`, written
/// to `c` at the first step, added to it at the others, `finish` applied at the last.
struct Block<'a, const MR: usize, const NR: usize> {
    a: Strided<'a>,
    rows: [usize; 2],
    depth: usize,
    order: Order,
    finish: Finish<'a>,
    right: &'a [f32],
    c: &'a mut [f32],
    n: usize,
}

impl<const MR: usize, const NR: usize> WithSimd for Block<'_, MR, NR> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Block {
            a,
            rows,
            depth,
            order,
            finish,
            right,
            c,
            n,
        } = self;
        assert_eq!(NR, 2 * S::F32_LANES, "a panel is two vectors wide");
        let (k, panels) = (a.cols, n.div_ceil(NR));
        let mut left = Aligned::scratch(rows[1].div_ceil(MR) * depth * MR);
        let left = left.values();
        for s0 in (0..k).step_by(depth) {
            let kc = depth.min(k - s0);
            let left = &mut left[..rows[1].div_ceil(MR) * kc * MR];
            pack_left::<MR>(a, rows, [s0, kc], left);
            let right = &right[s0 * panels * NR..][..panels * kc * NR];
            let step = Step {
                first: s0 == 0,
                finish: if s0 + kc == k { finish } else { Finish::Plain },
            };
            // One loop, not a closure per order: a closure is compiled without the vector
            // instructions `with_simd` enables, and the kernel inlined into it would not be.
            let strips = rows[1].div_ceil(MR);
            for i in 0..strips * panels {
                let (s, p) = match order {
                    Order::Strips => (i / panels, i % panels),
                    Order::Panels => (i % strips, i / strips),
                };
                let strip = &left[s * kc * MR..][..kc * MR];
                let panel = &right[p * kc * NR..][..kc * NR];
                let sums = kernel::<S, MR, NR>(simd, strip, panel);
                store::<S, MR, NR>(simd, c, n, [s * MR, p * NR], rows[1], sums, step);
            }
        }
    }
}

/// The `MR x NR` block of a strip of the left side by a panel of the right one.
#[inline(always)]
fn kernel<S: Simd, const MR: usize, const NR: usize>(
    simd: S,
    strip: &[f32],
    panel: &[f32],
) -> [[S::f32s; 2]; MR] {
    let lanes = S::F32_LANES;
    let zero = simd.splat_f32s(0.0);
    let mut sums = [[zero; 2]; MR];
    let (strip, _) = strip.as_chunks::<MR>();
    let (panel, _) = panel.as_chunks::<NR>();
    for (a, b) in strip.iter().zip(panel) {
        let (low, high) = (load::<S>(&b[..lanes]), load::<S>(&b[lanes..]));
        for (sum, &a) in sums.iter_mut().zip(a) {
            let a = simd.splat_f32s(a);
            sum[0] = simd.mul_add_f32s(a, low, sum[0]);
            sum[1] = simd.mul_add_f32s(a, high, sum[1]);
        }
    }
    sums
}

/// How a step of the inner dimension stores its blocks.
#[derive(Clone, Copy)]
struct Step<'a> {
    /// The first step: `c` holds nothing yet, and the block is written over it.
    first: bool,
    /// What the values get: [`Finish::Plain`] but at the last step.
    finish: Finish<'a>,
}

/// A kernel's block into `c` (`[rows, n]`) at row `i0`, column `j0`, as much of it as falls
/// inside: written at the first step, added at the others, finished at the last.
#[inline(always)]
fn store<S: Simd, const MR: usize, const NR: usize>(
    simd: S,
    c: &mut [f32],
    n: usize,
    [i0, j0]: [usize; 2],
    rows: usize,
    sums: [[S::f32s; 2]; MR],
    Step { first, finish }: Step,
) {
    let lanes = S::F32_LANES;
    let cols = NR.min(n - j0);
    let zero = simd.splat_f32s(0.0);
    // The panel's biases, zeros beyond the last column.
    let (bias, relu) = match finish {
        Finish::Plain => (None, false),
        Finish::Bias { bias, relu } => {
            let mut line = [0.0f32; NR];
            line[..cols].copy_from_slice(&bias[j0..j0 + cols]);
            (
                Some([load::<S>(&line[..lanes]), load::<S>(&line[lanes..])]),
                relu,
            )
        }
    };
    // A vector of the block's sums, with `c`'s values (`old`) where this is not the first step,
    // finished.
    let value = |h: usize, sum: S::f32s, old: Option<S::f32s>| {
        let v = match old {
            Some(old) => simd.add_f32s(old, sum),
            None => sum,
        };
        match bias {
            Some(bias) if relu => simd.max_f32s(simd.add_f32s(v, bias[h]), zero),
            Some(bias) => simd.add_f32s(v, bias[h]),
            None => v,
        }
    };
    for (r, sums) in sums.into_iter().enumerate().take(rows.saturating_sub(i0)) {
        let out = &mut c[(i0 + r) * n + j0..][..cols];
        if cols == NR {
            // A whole panel's width: straight from and to `c`, a vector at a time.
            for (h, out) in out.chunks_exact_mut(lanes).enumerate() {
                let v = value(h, sums[h], (!first).then(|| load::<S>(out)));
                out.copy_from_slice(bytemuck::cast_slice(&[v]));
            }
        } else {
            // The last panel, narrower: through a line of the full width.
            let mut line = [0.0f32; NR];
            line[..cols].copy_from_slice(out);
            let values = [0, 1].map(|h| {
                let old = (!first).then(|| load::<S>(&line[h * lanes..]));
                value(h, sums[h], old)
            });
            line.copy_from_slice(bytemuck::cast_slice(&values));
            out.copy_from_slice(&line[..cols]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{product, Order, Strided};

    fn wave(len: usize, f: f32) -> Vec<f32> {
        (0..len).map(|i| (i as f32 * f).sin()).collect()
    }

    fn check(a: Strided, b: Strided, order: Order) {
        let c = product(a, b, order);
        for i in 0..a.rows {
            for j in 0..b.cols {
                let exact: f64 = (0..a.cols)
                    .map(|s| a.at(i, s) as f64 * b.at(s, j) as f64)
                    .sum();
                let got = c[i * b.cols + j] as f64;
                assert!(
                    (got - exact).abs() <= 1e-4 * (1.0 + exact.abs()),
                    "({i}, {j}): {got} against {exact}"
                );
            }
        }
    }

    #[test]
    fn products_of_every_layout_match_the_sums() {
        // Rows leaving partial strips and blocks (of both orders in the last); columns a
        // partial panel, then (with AVX2) whole panels only; an inner dimension longer than a
        // step of the strips' order with AVX-512 in the first, with AVX2 in the second, and of
        // the panels' order in all (which the result is then added to, and finished at).
        for (m, k, n) in [(203, 611, 45), (50, 1100, 80), (611, 300, 40)] {
            let (x, w) = (wave(m * k, 0.37), wave(k * n, 0.11));
            let a = Strided::row_major(&x, m, k);
            let b = Strided::row_major(&w, k, n);
            let at = Strided::row_major(&x, k, m).t();
            let bt = Strided::row_major(&w, n, k).t();
            for order in [Order::Strips, Order::Panels] {
                check(a, b, order);
                check(at, b, order);
                check(a, bt, order);
                check(at, bt, order);
            }
        }
    }
}
