//! Winograd's minimal filtering F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional
//! Neural Networks", CVPR 2016) for the 3x3 stride-1 convolutions: each 4x4 block of output is
//! `Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A` of the 6x6 block of input under it, so the sum over input
//! channels becomes 36 independent matrix products with a quarter of a direct convolution's
//! multiplications. The forward (and so the input gradient) runs block by block of tiles, its
//! products on batchlab's own register-blocked kernel (`fused`). The weight gradient, the exact
//! adjoint of the same computation, runs its 36 products through flex's batched `matmul`, one
//! single-threaded product per thread, on tile-major data (`[36, tiles, channels]`). Layers
//! whose transformed kernels outweigh their tiles take both position by position instead
//! (`positions`). The transforms work channels-last on pulp's vectors (`vectors`), the kernels'
//! on a tap-major copy (`weights`).

use super::{
    choice::{Path, Site},
    kernels::Geometry,
};
use burn::{
    backend::Flex,
    tensor::{Tensor, TensorData},
};

mod fused;
mod passes;
pub(super) mod positions;
mod transpose;
mod vectors;
mod weights;

/// `y[n][k] = Σ_c w[k][c] ⋆ x[n][c]` (a 3x3 cross-correlation with the geometry's padding),
/// plus the bias, then ReLU where asked: block by block of tiles (`fused`).
pub(super) use fused::conv3x3;
use passes::{input_transform, output_adjoint};
use weights::kernel_adjoint;
pub(super) use weights::TapMajor;

/// Positions in a transformed 6x6 tile: the number of matrix products.
pub(super) const POSITIONS: usize = 36;
/// Elements of transformed input (or output) held at a time: samples are taken in slices that
/// fit (64 MiB each), so a 224x224 batch does not need gigabytes of scratch.
const SLICE_ELEMENTS: usize = 16 << 20;

/// The tile grid of a 3x3 stride-1 convolution of `g`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Grid {
    pub g: Geometry,
    /// Tile rows and columns per sample (each tile is 4x4 output pixels).
    pub rows: usize,
    pub cols: usize,
}

impl Grid {
    fn new(g: Geometry) -> Self {
        let [p, q] = g.output();
        Self {
            g,
            rows: p.div_ceil(4),
            cols: q.div_ceil(4),
        }
    }

    pub fn per_sample(&self) -> usize {
        self.rows * self.cols
    }

    /// Samples per slice for `channels` transformed channels.
    fn slice(&self, channels: usize, samples: usize) -> usize {
        (SLICE_ELEMENTS / (POSITIONS * channels * self.per_sample()).max(1))
            .clamp(1, samples.max(1))
    }
}

/// What both forwards (`fused`, `positions`) derive from their arguments: the tile grid, the
/// samples, and the product kernel's panel width with the output channels padded to whole
/// panels.
#[derive(Debug, Clone, Copy)]
struct Forward {
    grid: Grid,
    samples: usize,
    width: usize,
    padded: usize,
}

impl Forward {
    fn new(x: &[f32], g: Geometry, k: usize) -> Self {
        let width = crate::outer::width();
        Self {
            grid: Grid::new(g),
            samples: x.len() / (g.channels * g.height * g.width).max(1),
            width,
            padded: k.div_ceil(width) * width,
        }
    }
}

/// Fewest tiles (samples x 4x4 blocks of output) per product for Winograd to beat flex's
/// convolution. VGG16 at 64x64, batch 16 (2-core EPYC, 2026-11-26, forward ms flex against
/// Winograd): 4x4 images (16 tiles) 9-10 against 11; 8x8 (64 tiles) 27 against 18; 64x64 60
/// against 31.
const MIN_TILES: usize = 64;
/// Fewest input channels: with fewer the 36 products are too thin (an RGB first layer).
const MIN_CHANNELS: usize = 16;
/// Fewest input x output channels for the weight gradient, whose transforms (two 36-position
/// copies of the layer's input and output gradient) weigh more against its products than the
/// forward's: conv1_2 (64 x 64) took 33 ms with flex's kernel against 37, conv2_1 (64 x 128)
/// 15 against 15, conv2_2 (128 x 128) 29 against 23, conv4 (512 x 512) 47 against 17.
const MIN_WEIGHT_GRAD_CHANNELS: usize = 128 * 128;

/// Whether Winograd's F(4x4, 3x3) can compute this convolution: a 3x3 kernel, padding below 3.
fn applies(g: Geometry) -> bool {
    g.kernel == [3, 3] && g.padding[0] < 3 && g.padding[1] < 3
}

/// The paths that can compute the convolution of `g` to `k` channels over `samples` samples:
/// the direct one always; Winograd's for a 3x3 kernel; position by position where every
/// tile's transform fits in one slice (it holds the whole batch's, as `[36, tiles, channels]`).
pub(super) fn paths(g: Geometry, k: usize, samples: usize) -> Vec<Path> {
    let tiles = samples * Grid::new(g).per_sample();
    let fits = POSITIONS * tiles * g.channels.max(k) <= SLICE_ELEMENTS;
    [
        (Path::Direct, true),
        (Path::Winograd, applies(g)),
        (Path::Positions, applies(g) && fits),
    ]
    .into_iter()
    .filter_map(|(path, can)| can.then_some(path))
    .collect()
}

/// The path the thresholds above take at `site` (where the machine's own measurement is not
/// used: `choice`): Winograd where it pays, position by position where, besides, the
/// transformed kernels (`36·C·K`) outweigh the transformed tiles (`36·tiles·(C + K)`).
pub(super) fn default_path(site: Site, g: Geometry, k: usize, samples: usize) -> Path {
    let tiles = samples * Grid::new(g).per_sample();
    let pays = applies(g) && g.channels >= MIN_CHANNELS && tiles >= MIN_TILES;
    let pays = match site {
        Site::WeightGrad => pays && g.channels * k >= MIN_WEIGHT_GRAD_CHANNELS,
        Site::Forward | Site::InputGrad => pays,
    };
    let kernels_weigh_more = g.channels * k > tiles * (g.channels + k);
    match (pays, kernels_weigh_more) {
        (false, _) => Path::Direct,
        (true, true) if paths(g, k, samples).contains(&Path::Positions) => Path::Positions,
        (true, _) => Path::Winograd,
    }
}

/// `dw[k][c] = Σ_n dy[n][k] ⋆ x[n][c]` for the convolution `conv3x3` computes, from its input
/// `x` (`[n, C, H, W]`) and the gradient of its output (before bias and ReLU) `dy`
/// (`[n, K, P, Q]`): `[K, C, 3, 3]`.
pub(super) fn weight_grad3x3(x: &[f32], g: Geometry, dy: &[f32], k: usize) -> Vec<f32> {
    let grid = Grid::new(g);
    let [p, q] = g.output();
    let plane = g.channels * g.height * g.width;
    let n = x.len() / plane.max(1);
    let step = grid.slice(g.channels.max(k), n);
    let mut total: Option<Tensor<Flex, 3>> = None;
    for start in (0..n).step_by(step) {
        let m = step.min(n - start);
        let tiles = m * grid.per_sample();
        let v = input_transform(&x[start * plane..(start + m) * plane], grid);
        let v = matrix([POSITIONS, tiles, g.channels], v);
        let dm = output_adjoint(&dy[start * k * p * q..(start + m) * k * p * q], grid, k);
        let dm = matrix([POSITIONS, tiles, k], dm);
        let part = dm.clone().swap_dims(1, 2).matmul(v.clone());
        // Both are written whole by their transforms: their buffers serve the next call.
        for t in [v, dm] {
            if let Ok(values) = t.into_data().into_vec::<f32>() {
                crate::buffer::keep(values);
            }
        }
        total = Some(match total {
            Some(t) => t + part,
            None => part,
        });
    }
    let du = total.map(Tensor::into_data);
    let du = du
        .as_ref()
        .and_then(|d| d.as_slice::<f32>().ok())
        .unwrap_or_default();
    kernel_adjoint(du, k, g.channels)
}

fn matrix(shape: [usize; 3], values: Vec<f32>) -> Tensor<Flex, 3> {
    Tensor::from_data(TensorData::new(values, shape), &Default::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3x3 convolution of `c` channels of `h` x `w` images, padded by `pad`.
    fn geometry(c: usize, h: usize, w: usize, pad: usize) -> Geometry {
        Geometry {
            channels: c,
            height: h,
            width: w,
            kernel: [3, 3],
            padding: [pad, pad],
        }
    }

    fn wave(len: usize, f: f32) -> Vec<f32> {
        (0..len).map(|i| (i as f32 * f).sin()).collect()
    }

    /// The direct sums, in f64.
    fn direct(x: &[f32], g: Geometry, w: &[f32], k: usize) -> Vec<f64> {
        let [p, q] = g.output();
        let (c, h, wd) = (g.channels, g.height, g.width);
        let n = x.len() / (c * h * wd);
        let mut y = vec![0.0; n * k * p * q];
        for (idx, out) in y.iter_mut().enumerate() {
            let (ni, ko, i, j) = (idx / (k * p * q), idx / (p * q) % k, idx / q % p, idx % q);
            for ci in 0..c {
                for r in 0..3 {
                    for s in 0..3 {
                        let (hi, wi) = (
                            (i + r) as isize - g.padding[0] as isize,
                            (j + s) as isize - g.padding[1] as isize,
                        );
                        if hi >= 0 && wi >= 0 && (hi as usize) < h && (wi as usize) < wd {
                            *out += w[((ko * c + ci) * 3 + r) * 3 + s] as f64
                                * x[((ni * c + ci) * h + hi as usize) * wd + wi as usize] as f64;
                        }
                    }
                }
            }
        }
        y
    }

    fn close(fast: &[f32], exact: &[f64]) {
        let scale = exact.iter().fold(0f64, |m, v| m.max(v.abs()));
        for (i, (f, e)) in fast.iter().zip(exact).enumerate() {
            assert!(
                (*f as f64 - e).abs() <= 1e-5 * scale,
                "element {i}: {f} against {e}"
            );
        }
    }

    #[test]
    fn the_output_is_the_direct_convolution_at_every_size_and_padding() {
        // Sizes that leave partial tiles, partial groups of lanes, a partial panel of output
        // channels and a partial block of tiles (the fourth: 28 rows of tiles in several
        // blocks); padding 0, 1 and 2.
        for (n, c, k, h, wd, pad) in [
            (2, 3, 5, 7, 9, 1),
            (1, 4, 2, 13, 38, 0),
            (3, 2, 3, 5, 6, 2),
            (7, 17, 40, 13, 8, 1),
        ] {
            let g = geometry(c, h, wd, pad);
            let (x, w) = (wave(n * c * h * wd, 0.37), wave(k * c * 9, 0.11));
            let exact = direct(&x, g, &w, k);
            // Kept buffers full of NaN: a value the passes read but did not write shows.
            for _ in 0..8 {
                crate::buffer::keep(vec![f32::NAN; 1 << 16]);
            }
            let wt = TapMajor::forward(&w, k, c);
            close(&conv3x3(&x, g, &wt, k, None, false), &exact);
            close(&positions::conv3x3(&x, g, &wt, k, None, false), &exact);
        }
    }

    #[test]
    fn bias_and_relu_apply_after_the_sums() {
        let g = geometry(2, 6, 5, 1);
        let (x, w, bias) = (wave(2 * 30, 0.3), wave(3 * 18, 0.7), [0.5, -0.25, 0.0]);
        let wt = TapMajor::forward(&w, 3, 2);
        for conv in [conv3x3, positions::conv3x3] {
            let plain = conv(&x, g, &wt, 3, None, false);
            let fused = conv(&x, g, &wt, 3, Some(&bias), true);
            for (i, (p, f)) in plain.iter().zip(&fused).enumerate() {
                assert_eq!(*f, (p + bias[i / 30 % 3]).max(0.0));
            }
        }
    }

    #[test]
    fn the_weight_gradient_is_the_adjoint_of_the_output() {
        // <dy, conv(x, w)> is linear in w, so its gradient dw satisfies <dw, w'> = <dy, conv(x, w')>.
        // The second shape: partial tiles and partial groups of lanes on both sides; the third,
        // two groups of output channels position by position, the second partial.
        for (n, c, k, h, wd) in [(2, 3, 4, 9, 11), (5, 17, 13, 13, 8), (2, 5, 30, 6, 7)] {
            let g = geometry(c, h, wd, 1);
            let [p, q] = g.output();
            let (x, dy) = (wave(n * c * h * wd, 0.23), wave(n * k * p * q, 0.41));
            let exact: Vec<f64> = (0..k * c * 9)
                .map(|e| {
                    let mut basis = vec![0.0; k * c * 9];
                    basis[e] = 1.0;
                    direct(&x, g, &basis, k)
                        .iter()
                        .zip(&dy)
                        .map(|(y, d)| y * *d as f64)
                        .sum()
                })
                .collect();
            close(&weight_grad3x3(&x, g, &dy, k), &exact);
            close(&positions::weight_grad3x3(&x, g, &dy, k), &exact);
        }
    }
}
