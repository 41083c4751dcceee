//! Winograd's forward (and so the input gradient, a forward with the flipped kernel) block by
//! block of tiles, its 36 matrix products computed by batchlab's own register-blocked kernel:
//! a block's transformed input and products stay in the cache between the three passes, where
//! whole-layer `[36, tiles, channels]` arrays went through memory and through flex's `matmul`,
//! whose output, like every tensor flex allocates, is zeroed and then copied once more on the
//! calling thread (docs/flex-performance.md, "Where the serial time goes").

use rayon::prelude::*;

use super::super::kernels::Geometry;
use super::{
    lanes::L,
    passes::{channels_last, tile_rows, transformed_kernels, InputBlock, OutputBlock, Pixels},
    Grid, POSITIONS,
};
use crate::buffer::{keep, zeros};
use crate::simd::{load, vectorized, Simd, WithSimd};

/// Tiles a block aims at: products of 48 rows, a multiple of both kernels' rows.
const BLOCK_TILES: usize = 48;
/// Rows of products the kernel keeps in registers, two vectors each: 24 of AVX-512's 32
/// registers, 12 of AVX2's 16.
const ROWS_WIDE: usize = 12;
const ROWS_NARROW: usize = 6;

/// `y[n][k] = Σ_c w[k][c] ⋆ x[n][c]` plus `bias`, then ReLU where `relu`: what
/// [`super::conv3x3`] computes, the same arithmetic in another order of sums.
pub(super) fn conv3x3(
    x: &[f32],
    g: Geometry,
    w: &[f32],
    k: usize,
    bias: Option<&[f32]>,
    relu: bool,
) -> Vec<f32> {
    let grid = Grid::new(g);
    let [p, q] = g.output();
    let c = g.channels;
    let plane = c * g.height * g.width;
    let n = x.len() / plane.max(1);
    let width = 2 * vectorized(Lanes);
    let padded = k.div_ceil(width) * width;
    let panels = kernel_panels(w, k, c, width);
    let image = channels_last(x, c, g.height, g.width);
    let mut y = zeros(n * k * p * q);
    let mut rows = tile_rows(&mut y, grid, k);
    // Rows of tiles per block: about BLOCK_TILES tiles, yet four blocks per thread or more.
    let per_block = (BLOCK_TILES / grid.cols.max(1))
        .min(rows.len() / (4 * rayon::current_num_threads()))
        .max(1);
    let tiles = (per_block * grid.cols).div_ceil(ROWS_WIDE) * ROWS_WIDE;
    let mut blocks = Vec::with_capacity(rows.len().div_ceil(per_block));
    let mut first = 0;
    while !rows.is_empty() {
        let rest = rows.split_off(per_block.min(rows.len()));
        blocks.push((first, std::mem::replace(&mut rows, rest)));
        first += per_block;
    }
    blocks.into_par_iter().for_each_init(
        || {
            (
                vec![0.0; POSITIONS * tiles * c],
                vec![0.0; POSITIONS * tiles * padded],
            )
        },
        |(v, m), (first, block)| {
            for i in 0..block.len() {
                let (sample, tr) = ((first + i) / grid.rows, (first + i) % grid.rows);
                let span = i * grid.cols * c..(i + 1) * grid.cols * c;
                let out = v
                    .chunks_mut(tiles * c)
                    .map(|position| &mut position[span.clone()])
                    .collect();
                let image = Pixels {
                    image: &image[sample * plane..][..plane],
                    size: [g.height, g.width],
                    channels: c,
                };
                vectorized(InputBlock {
                    out,
                    image,
                    grid,
                    tr,
                });
            }
            vectorized(Products {
                v,
                panels: &panels,
                m,
                tiles,
                inner: c,
                cols: padded,
            });
            for (i, planes) in block.into_iter().enumerate() {
                vectorized(OutputBlock {
                    planes,
                    products: m,
                    stride: padded,
                    first: i * grid.cols,
                    cols: grid.cols,
                    tiles,
                    q,
                    bias,
                    relu,
                });
            }
        },
    );
    keep(image);
    y
}

/// The vector width here, in f32 lanes.
struct Lanes;

impl WithSimd for Lanes {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> usize {
        S::F32_LANES
    }
}

/// `G g Gᵀ` of every kernel of `w` (`[K, C, 3, 3]`) packed for the product kernel: panels of
/// `width` output channels, `[K / width][36][C][width]`, zero beyond `K`; parallel over panels.
fn kernel_panels(w: &[f32], k: usize, c: usize, width: usize) -> Vec<f32> {
    let mut packed = vec![0.0; k.div_ceil(width) * POSITIONS * c * width];
    packed
        .par_chunks_mut(POSITIONS * c * width)
        .enumerate()
        .for_each(|(panel, out)| {
            for col in 0..width.min(k - panel * width) {
                let kernel = &w[(panel * width + col) * c * 9..][..c * 9];
                for c0 in (0..c).step_by(L) {
                    let lanes = L.min(c - c0);
                    for (pos, values) in transformed_kernels(kernel, c0, lanes).iter().enumerate() {
                        for (l, &value) in values[..lanes].iter().enumerate() {
                            out[(pos * c + c0 + l) * width + col] = value;
                        }
                    }
                }
            }
        });
    packed
}

/// `m[pos] = v[pos] · u[pos]` for the 36 positions of one block: `v` is `[36, tiles, inner]`,
/// the packed kernels `[cols / width][36][inner][width]`, `m` is `[36, tiles, cols]`.
struct Products<'a> {
    v: &'a [f32],
    panels: &'a [f32],
    m: &'a mut [f32],
    tiles: usize,
    inner: usize,
    cols: usize,
}

impl WithSimd for Products<'_> {
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

impl Products<'_> {
    #[inline(always)]
    fn run<S: Simd, const R: usize>(self, simd: S) {
        let Products {
            v,
            panels,
            m,
            tiles,
            inner,
            cols,
        } = self;
        let (lanes, width) = (S::F32_LANES, 2 * S::F32_LANES);
        for pos in 0..POSITIONS {
            let a = &v[pos * tiles * inner..][..tiles * inner];
            let out = &mut m[pos * tiles * cols..][..tiles * cols];
            for (panel, col0) in (0..cols).step_by(width).enumerate() {
                let b = &panels[(panel * POSITIONS + pos) * inner * width..][..inner * width];
                for r0 in (0..tiles).step_by(R) {
                    let sums = rows::<S, R>(simd, &a[r0 * inner..][..R * inner], inner, b);
                    for (r, [low, high]) in sums.iter().enumerate() {
                        let o = &mut out[(r0 + r) * cols + col0..][..width];
                        o[..lanes].copy_from_slice(bytemuck::cast_slice(std::slice::from_ref(low)));
                        o[lanes..]
                            .copy_from_slice(bytemuck::cast_slice(std::slice::from_ref(high)));
                    }
                }
            }
        }
    }
}

/// `R` rows of `a` (`[R, inner]`) times one panel `b` (`[inner, 2 vectors]`), summed in
/// `2R` registers: each step broadcasts one value of every row against the panel's two vectors.
#[inline(always)]
fn rows<S: Simd, const R: usize>(simd: S, a: &[f32], inner: usize, b: &[f32]) -> [[S::f32s; 2]; R] {
    let lanes = S::F32_LANES;
    let zero = simd.splat_f32s(0.0);
    let mut sums = [[zero; 2]; R];
    let a: [&[f32]; R] = std::array::from_fn(|r| &a[r * inner..][..inner]);
    for (i, pair) in (0..inner).zip(b.chunks_exact(2 * lanes)) {
        let (low, high) = (load::<S>(&pair[..lanes]), load::<S>(&pair[lanes..]));
        for (sum, row) in sums.iter_mut().zip(&a) {
            let value = simd.splat_f32s(row[i]);
            sum[0] = simd.mul_add_f32s(value, low, sum[0]);
            sum[1] = simd.mul_add_f32s(value, high, sum[1]);
        }
    }
    sums
}
