//! The passes around Winograd's 36 matrix products: the input and output transforms and the
//! output's adjoint (the kernels': `weights`), each parallel and a vector of channels at a time
//! (docs/ARCHITECTURE.md, "Fast paths").

use rayon::prelude::*;

use super::{
    transpose,
    vectors::{a, at, bt, lanes, put, vector},
    Grid, POSITIONS,
};
use crate::buffer::{keep, scratch};
use crate::simd::{vectorized, Simd, WithSimd};

/// `x` (`[m, C, H, W]`) as `[m, H, W, C]`, so that a vector of channels of a pixel is
/// consecutive elements; parallel over image rows (`transpose`), into a kept buffer
/// (`buffer::scratch`: every element is written) that the caller gives back.
pub(super) fn channels_last(x: &[f32], channels: usize, height: usize, width: usize) -> Vec<f32> {
    let plane = height * width;
    let mut out = scratch(x.len());
    out.par_chunks_mut(width * channels)
        .enumerate()
        .for_each(|(row, out)| {
            let (n, h) = (row / height, row % height);
            let x = &x[n * channels * plane + h * width..];
            transpose::row(x, out, channels, plane, width);
        });
    out
}

/// One channels-last image: a vector of channels of a pixel, zero outside the image.
pub(super) struct Pixels<'a> {
    pub image: &'a [f32],
    pub size: [usize; 2],
    pub channels: usize,
}

impl Pixels<'_> {
    /// Channels `c0..c0 + count` at row `h`, column `w` (zero where either is `None` or
    /// outside, and in the lanes beyond `count`).
    #[inline(always)]
    fn vector<S: Simd>(
        &self,
        h: Option<usize>,
        w: Option<usize>,
        c0: usize,
        count: usize,
    ) -> S::f32s {
        match (h, w) {
            (Some(h), Some(w)) if h < self.size[0] && w < self.size[1] => {
                vector::<S>(&self.image[(h * self.size[1] + w) * self.channels + c0..][..count])
            }
            _ => vector::<S>(&[]),
        }
    }
}

/// Tile-major storage `[36, tiles, width]` cut into blocks of `block` consecutive tiles, each
/// block as its 36 rows (one per position) of `block · width` elements, so that blocks can be
/// written in parallel.
fn blocks(values: &mut [f32], tiles: usize, block: usize, width: usize) -> Vec<Vec<&mut [f32]>> {
    let mut blocks: Vec<Vec<&mut [f32]>> = (0..tiles.div_ceil(block.max(1)))
        .map(|_| Vec::with_capacity(POSITIONS))
        .collect();
    for row in values.chunks_mut(tiles * width) {
        for (b, part) in row.chunks_mut(block * width).enumerate() {
            blocks[b].push(part);
        }
    }
    blocks
}

/// `Bᵀ d B` of every 6x6 input tile of `x` (`[m, C, H, W]`), as `[36, m·tiles, C]` (tile-major,
/// the layout flex's kernel multiplies fastest); `L` channels at a time, parallel over rows of
/// tiles.
pub(super) fn input_transform(x: &[f32], grid: Grid) -> Vec<f32> {
    let g = grid.g;
    let m = x.len() / (g.channels * g.height * g.width).max(1);
    input_transform_rows(x, grid, m * grid.per_sample())
}

/// [`input_transform`] into `[36, rows, C]`, `rows` at least the tiles: the rows beyond hold
/// whatever the buffer held.
pub(super) fn input_transform_rows(x: &[f32], grid: Grid, rows: usize) -> Vec<f32> {
    let g = grid.g;
    let (channels, plane) = (g.channels, g.height * g.width);
    let m = x.len() / (channels * plane).max(1);
    let x = channels_last(x, channels, g.height, g.width);
    let mut v = scratch(POSITIONS * rows * channels);
    blocks(&mut v, rows, grid.cols, channels)
        .into_par_iter()
        .take(m * grid.rows)
        .enumerate()
        .for_each(|(block, out)| {
            let (n, tr) = (block / grid.rows, block % grid.rows);
            let image = Pixels {
                image: &x[n * plane * channels..][..plane * channels],
                size: [g.height, g.width],
                channels,
            };
            vectorized(InputBlock {
                out,
                image,
                grid,
                tr,
            });
        });
    keep(x);
    v
}

/// One row of tiles of [`input_transform`], run on the widest vectors here (`simd`).
pub(super) struct InputBlock<'a> {
    pub out: Vec<&'a mut [f32]>,
    pub image: Pixels<'a>,
    pub grid: Grid,
    pub tr: usize,
}

impl WithSimd for InputBlock<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let InputBlock {
            mut out,
            image,
            grid,
            tr,
        } = self;
        let (g, channels, step) = (grid.g, image.channels, S::F32_LANES);
        // Input rows of the tiles, None above the image.
        let h: [Option<usize>; 6] = std::array::from_fn(|i| (4 * tr + i).checked_sub(g.padding[0]));
        for tc in 0..grid.cols {
            let w: [Option<usize>; 6] =
                std::array::from_fn(|j| (4 * tc + j).checked_sub(g.padding[1]));
            for c0 in (0..channels).step_by(step) {
                let count = step.min(channels - c0);
                let px = |i: usize, j: usize| image.vector::<S>(h[i], w[j], c0, count);
                let mut cols = [[simd.splat_f32s(0.0); 6]; 6];
                for (j, col) in cols.iter_mut().enumerate() {
                    *col = bt(
                        simd,
                        [px(0, j), px(1, j), px(2, j), px(3, j), px(4, j), px(5, j)],
                    );
                }
                for i in 0..6 {
                    let c = |j: usize| cols[j][i];
                    let row = bt(simd, [c(0), c(1), c(2), c(3), c(4), c(5)]);
                    for (j, &values) in row.iter().enumerate() {
                        put::<S>(&mut out[i * 6 + j][tc * channels + c0..][..count], values);
                    }
                }
            }
        }
    }
}

/// `Aᵀ M A` of every tile of one row of tiles of the products `M`, plus the bias and ReLU,
/// written into its rows of the output; `L` output channels at a time, on the widest vectors
/// here (`simd`).
pub(super) struct OutputBlock<'a, 'b> {
    /// The (up to) four output rows of every output channel's plane this row of tiles writes.
    pub planes: Vec<&'a mut [f32]>,
    /// `[K / stride][36, tiles, stride]`: each position's products, `stride` values per tile,
    /// in panels of `stride` output channels, `panel` values apart.
    pub products: &'b [f32],
    pub stride: usize,
    pub panel: usize,
    /// This row's first tile among `tiles`.
    pub first: usize,
    pub cols: usize,
    pub tiles: usize,
    pub q: usize,
    pub bias: Option<&'b [f32]>,
    pub relu: bool,
}

impl WithSimd for OutputBlock<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let OutputBlock {
            mut planes,
            products,
            stride,
            panel,
            first,
            cols,
            tiles,
            q,
            bias,
            relu,
        } = self;
        let (k, step) = (planes.len(), S::F32_LANES);
        let rows = planes.first().map_or(0, |p| p.len() / q.max(1));
        for tc in 0..cols {
            let columns = 4.min(q - 4 * tc);
            for k0 in (0..k).step_by(step) {
                let count = step.min(k - k0);
                let m = |pos: usize| {
                    let at =
                        k0 / stride * panel + (pos * tiles + first + tc) * stride + k0 % stride;
                    vector::<S>(&products[at..][..count])
                };
                let mut cols = [[simd.splat_f32s(0.0); 4]; 6];
                for (j, col) in cols.iter_mut().enumerate() {
                    *col = at(
                        simd,
                        [m(j), m(6 + j), m(12 + j), m(18 + j), m(24 + j), m(30 + j)],
                    );
                }
                for o in 0..rows {
                    let c = |j: usize| cols[j][o];
                    let row = at(simd, [c(0), c(1), c(2), c(3), c(4), c(5)]);
                    for (l, plane) in planes[k0..k0 + count].iter_mut().enumerate() {
                        let b = bias.map_or(0.0, |b| b[k0 + l]);
                        let out = &mut plane[o * q + 4 * tc..][..columns];
                        for (o2, y) in out.iter_mut().enumerate() {
                            let v = lanes::<S>(&row[o2])[l] + b;
                            *y = if relu { v.max(0.0) } else { v };
                        }
                    }
                }
            }
        }
    }
}

/// `y` (`[m, K, P, Q]`) cut by rows of tiles, sample-major: each row of tiles' (up to) four
/// rows of every output plane of its sample, so that rows of tiles can be written in parallel.
pub(super) fn tile_rows(y: &mut [f32], grid: Grid, k: usize) -> Vec<Vec<&mut [f32]>> {
    let [p, q] = grid.g.output();
    let m = y.len() / (k * p * q).max(1);
    let mut rows: Vec<Vec<&mut [f32]>> =
        (0..m * grid.rows).map(|_| Vec::with_capacity(k)).collect();
    for (plane, values) in y.chunks_mut(p * q).enumerate() {
        for (tr, part) in values.chunks_mut(4 * q).enumerate() {
            rows[plane / k * grid.rows + tr].push(part);
        }
    }
    rows
}

/// The adjoint of [`OutputBlock`] without bias and ReLU: `A dy Aᵀ` of every 4x4 tile of
/// `dy` (`[m, K, P, Q]`, zero beyond the image), as `[36, m·tiles, K]`; `L` channels at a time,
/// parallel over rows of tiles.
pub(super) fn output_adjoint(dy: &[f32], grid: Grid, k: usize) -> Vec<f32> {
    let [p, q] = grid.g.output();
    let m = dy.len() / (k * p * q).max(1);
    let tiles = m * grid.per_sample();
    let dy = channels_last(dy, k, p, q);
    let mut dm = scratch(POSITIONS * tiles * k);
    blocks(&mut dm, tiles, grid.cols, k)
        .into_par_iter()
        .enumerate()
        .for_each(|(block, out)| {
            let (n, tr) = (block / grid.rows, block % grid.rows);
            let image = Pixels {
                image: &dy[n * p * q * k..][..p * q * k],
                size: [p, q],
                channels: k,
            };
            vectorized(AdjointBlock {
                out,
                image,
                cols: grid.cols,
                tr,
            });
        });
    keep(dy);
    dm
}

/// One row of tiles of [`output_adjoint`], run on the widest vectors here (`simd`).
struct AdjointBlock<'a> {
    out: Vec<&'a mut [f32]>,
    image: Pixels<'a>,
    cols: usize,
    tr: usize,
}

impl WithSimd for AdjointBlock<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let AdjointBlock {
            mut out,
            image,
            cols,
            tr,
        } = self;
        let (k, step) = (image.channels, S::F32_LANES);
        for tc in 0..cols {
            for k0 in (0..k).step_by(step) {
                let count = step.min(k - k0);
                let px = |o: usize, o2: usize| {
                    image.vector::<S>(Some(4 * tr + o), Some(4 * tc + o2), k0, count)
                };
                let mut cols = [[simd.splat_f32s(0.0); 6]; 4];
                for (o2, col) in cols.iter_mut().enumerate() {
                    *col = a(simd, [px(0, o2), px(1, o2), px(2, o2), px(3, o2)]);
                }
                for i in 0..6 {
                    let row = a(simd, [cols[0][i], cols[1][i], cols[2][i], cols[3][i]]);
                    for (j, &values) in row.iter().enumerate() {
                        put::<S>(&mut out[i * 6 + j][tc * k + k0..][..count], values);
                    }
                }
            }
        }
    }
}
