//! Winograd's forward (and so the input gradient, a forward with the flipped kernel) block by
//! block of tiles, its 36 matrix products computed by batchlab's own register-blocked kernel
//! (`outer::product_into`, against the transformed kernels packed in panels): a block's
//! transformed input and products stay in the cache between the three passes, where whole-layer
//! `[36, tiles, channels]` arrays went through memory and through flex's `matmul`, whose output,
//! like every tensor flex allocates, is zeroed and then copied once more on the calling thread
//! (docs/flex-performance.md, "Blocked Winograd, the dense backward and direct convolutions").

use rayon::prelude::*;

use super::super::kernels::Geometry;
use super::{
    passes::{channels_last, tile_rows, InputBlock, OutputBlock, Pixels},
    weights::{kernel_panels, TapMajor},
    Forward, POSITIONS,
};
use crate::buffer::{keep, zeros};
use crate::outer::{product_into, Left, Right, ROWS_WIDE};
use crate::simd::vectorized;

/// Tiles a block aims at: products of 48 rows, a multiple of the product kernel's rows
/// (`outer::ROWS_WIDE`, to which a block's rows are padded).
const BLOCK_TILES: usize = 48;

/// `y[n][k] = Σ_c w[k][c] ⋆ x[n][c]` (a 3x3 cross-correlation with the geometry's padding), plus
/// `bias[k]`, then `max(·, 0)` where `relu`; `x` is `[n, C, H, W]`, `wt` the kernels `w`
/// tap-major ([`TapMajor`]).
pub(in crate::conv) fn conv3x3(
    x: &[f32],
    g: Geometry,
    wt: &TapMajor,
    k: usize,
    bias: Option<&[f32]>,
    relu: bool,
) -> Vec<f32> {
    let f = Forward::new(x, g, k);
    let (grid, n, width, padded) = (f.grid, f.samples, f.width, f.padded);
    let ([p, q], c) = (g.output(), g.channels);
    let plane = c * g.height * g.width;
    let panels = kernel_panels(wt, [k, c, width]);
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
            // The 36 products of the block: v[pos] (`[tiles, C]`) by the kernels' panels.
            for (pos, (a, out)) in v
                .chunks(tiles * c)
                .zip(m.chunks_mut(tiles * padded))
                .enumerate()
            {
                let left = Left::Rows { values: a, row: c };
                let right = Right {
                    values: &panels[pos * c * width..],
                    step: width,
                    panel: POSITIONS * c * width,
                };
                product_into(left, right, [c, padded], out);
            }
            for (i, planes) in block.into_iter().enumerate() {
                vectorized(OutputBlock {
                    planes,
                    products: m,
                    stride: padded,
                    panel: 0,
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
    keep(panels);
    y
}
