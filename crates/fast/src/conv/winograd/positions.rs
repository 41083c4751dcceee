//! Winograd's forward and weight gradient position by position, for layers whose transformed
//! kernels outweigh their tiles (VGG16's 8x8 and 4x4 layers: 36 x 512 x 512 transformed
//! kernels, 37.7 MB, against 64 tiles of input): every tile is transformed once, then each task
//! takes a panel of output channels through the 36 products with its kernels transformed in
//! its own cache-sized buffer, so that the transformed kernels never go through memory.

use rayon::prelude::*;

use super::super::kernels::Geometry;
use super::{
    passes::{input_transform_rows, output_adjoint, tile_rows, OutputBlock},
    weights::{kernel_adjoint_row, kernel_panel, TapMajor},
    Forward, POSITIONS,
};
use crate::buffer::{keep, scratch, zeros};
use crate::outer::{product_into, Left, Right, ROWS_WIDE};
use crate::simd::vectorized;

/// Output channels of the weight gradient per task: two blocks of the product kernel's rows.
const GRADIENT_ROWS: usize = 2 * ROWS_WIDE;

/// `conv3x3` (`fused`), position by position.
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
    let tiles = n * grid.per_sample();
    let v = input_transform_rows(x, grid, tiles);
    let mut m = scratch(POSITIONS * tiles * padded);
    m.par_chunks_mut(POSITIONS * tiles * width)
        .enumerate()
        .for_each(|(panel, out)| {
            // Taken from the kept buffers and given back per panel: `for_each_init` would
            // make (and zero) a new one for every split of the work.
            let mut u = scratch(POSITIONS * c * width);
            kernel_panel(wt, [k, c, width], panel, &mut u);
            for (pos, out) in out.chunks_mut(tiles * width).enumerate() {
                let left = Left::Rows {
                    values: &v[pos * tiles * c..],
                    row: c,
                };
                let right = Right {
                    values: &u[pos * c * width..],
                    step: width,
                    panel: 0,
                };
                product_into(left, right, [c, width], out);
            }
            keep(u);
        });
    keep(v);
    let mut y = zeros(n * k * p * q);
    tile_rows(&mut y, grid, k)
        .into_par_iter()
        .enumerate()
        .for_each(|(r, planes)| {
            vectorized(OutputBlock {
                planes,
                products: &m,
                stride: width,
                panel: POSITIONS * tiles * width,
                first: r * grid.cols,
                cols: grid.cols,
                tiles,
                q,
                bias,
                relu,
            })
        });
    keep(m);
    y
}

/// `weight_grad3x3` (`winograd`), position by position: each task sums the 36 products of a
/// group of output channels in its own buffer and takes them back to 3x3 kernels there.
pub(in crate::conv) fn weight_grad3x3(x: &[f32], g: Geometry, dy: &[f32], k: usize) -> Vec<f32> {
    let f = Forward::new(x, g, k);
    let (grid, c) = (f.grid, g.channels);
    let tiles = f.samples * grid.per_sample();
    let v = input_transform_rows(x, grid, tiles);
    let dm = output_adjoint(dy, grid, k);
    let mut dw = zeros(k * c * 9);
    dw.par_chunks_mut(GRADIENT_ROWS * c * 9)
        .enumerate()
        .for_each(|(group, dw)| {
            let rows = dw.len() / (c * 9);
            let mut du = scratch(POSITIONS * rows * c);
            for (pos, out) in du.chunks_mut(rows * c).enumerate() {
                let left = Left::Columns {
                    values: &dm[pos * tiles * k + group * GRADIENT_ROWS..],
                    step: k,
                };
                let right = Right {
                    values: &v[pos * tiles * c..],
                    step: c,
                    panel: f.width,
                };
                product_into(left, right, [tiles, c], out);
            }
            for (ko, dw) in dw.chunks_mut(c * 9).enumerate() {
                kernel_adjoint_row(&du, [rows, c], ko, dw);
            }
            keep(du);
        });
    keep(v);
    keep(dm);
    dw
}
