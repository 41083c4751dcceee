//! A stride-1 convolution as one matrix product per slice of samples: `w · im2col(x)`, the
//! kernel `[K, C·kh·kw]` against the whole slice's columns `[C·kh·kw, samples·P·Q]`, then bias,
//! ReLU and the reorder to `[samples, K, P, Q]` in one parallel pass. flex's own convolution
//! reorders the kernel and the input on the calling thread and multiplies each sample on its own
//! (VGG16's 8x8 layers at batch 16: sixteen products of 64 columns each); here the product is
//! one, as wide as the slice, which flex's kernel shares out among the threads.

use std::ops::Range;

use burn::{
    backend::Flex,
    tensor::{Tensor, TensorData},
};
use rayon::prelude::*;

use super::kernels::{im2col_into, padded_row, Geometry};
use crate::buffer::zeros;

/// Elements of im2col matrix built at a time (64 MiB), here and for the weight gradient: a
/// 224x224 batch does not need gigabytes of scratch.
pub(super) const SLICE_ELEMENTS: usize = 16 << 20;

/// `y[n][k] = Σ_c w[k][c] ⋆ x[n][c]` plus `bias`, then `max(·, 0)` where `relu`: `x` is
/// `[n, C, H, W]`, the kernel `[K, C·kh·kw]` (`[K, C, kh, kw]` flattened), `y` is `[n, K, P, Q]`.
pub(super) fn conv(
    x: &[f32],
    g: Geometry,
    kernel: Tensor<Flex, 2>,
    bias: Option<&[f32]>,
    relu: bool,
) -> Vec<f32> {
    let k = kernel.dims()[0];
    let [p, q] = g.output();
    let pixels = p * q;
    let n = x.len() / (g.channels * g.height * g.width).max(1);
    let mut y = zeros(n * k * pixels);
    im2col_slices(x, g, 0..n, SLICE_ELEMENTS, |start, m, col| {
        let row = col.dims()[1];
        let product = kernel.clone().matmul(col.clone()).into_data();
        let product = product.as_slice::<f32>().unwrap_or_default();
        y[start * k * pixels..(start + m) * k * pixels]
            .par_chunks_mut(pixels)
            .enumerate()
            .for_each(|(plane, out)| {
                let (sample, channel) = (plane / k, plane % k);
                let from = &product[channel * row + sample * pixels..][..pixels];
                let b = bias.map_or(0.0, |b| b[channel]);
                for (o, &v) in out.iter_mut().zip(from) {
                    *o = if relu { (v + b).max(0.0) } else { v + b };
                }
            });
    });
    y
}

/// Hands `each` the im2col matrix `[C·kh·kw, row]` of every slice of `samples` of `x` (`[n,
/// C, H, W]`), at most `slice_elements` elements each, with the slice's first sample and its
/// length `m`: each row the slice's `m·P·Q` values, then zeros up to `row`
/// ([`padded_row`], so that the rows a product reads together do not share cache sets). One buffer serves every full slice, taken back from its tensor after `each`
/// (which must not keep the tensor), so that its pages are faulted in and zeroed once
/// (`im2col_into` leaves the padding alone).
pub(super) fn im2col_slices(
    x: &[f32],
    g: Geometry,
    samples: Range<usize>,
    slice_elements: usize,
    mut each: impl FnMut(usize, usize, &Tensor<Flex, 2>),
) {
    let [p, q] = g.output();
    let (rows, pixels) = (g.rows(), p * q);
    let plane = g.channels * g.height * g.width;
    let step = (slice_elements / (rows * pixels).max(1)).clamp(1, samples.len().max(1));
    let device = Default::default();
    let mut buffer = zeros(rows * padded_row(step * pixels));
    for start in samples.clone().step_by(step) {
        let m = step.min(samples.end - start);
        let row = padded_row(m * pixels);
        if buffer.len() != rows * row {
            // The last, shorter slice (or a buffer its tensor did not give back whole).
            buffer = zeros(rows * row);
        }
        im2col_into(&mut buffer, &x[start * plane..(start + m) * plane], g);
        let col = Tensor::<Flex, 2>::from_data(TensorData::new(buffer, [rows, row]), &device);
        each(start, m, &col);
        buffer = col.into_data().into_vec::<f32>().unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_product_is_the_direct_sum() {
        // Two slices' worth of samples would need SLICE_ELEMENTS; one slice, padding 1 and 0,
        // a 3x3 and a 1x3 kernel.
        for (n, c, k, h, wd, kernel, pad) in [
            (3, 5, 7, 6, 9, [3, 3], [1, 1]),
            (2, 4, 3, 5, 7, [1, 3], [0, 0]),
        ] {
            let g = Geometry {
                channels: c,
                height: h,
                width: wd,
                kernel,
                padding: pad,
            };
            let x: Vec<f32> = (0..n * c * h * wd)
                .map(|i| (i as f32 * 0.37).sin())
                .collect();
            let w: Vec<f32> = (0..k * c * kernel[0] * kernel[1])
                .map(|i| (i as f32 * 0.11).cos())
                .collect();
            let bias: Vec<f32> = (0..k).map(|i| i as f32 * 0.1 - 0.2).collect();
            let flat = Tensor::<Flex, 2>::from_data(
                TensorData::new(w.clone(), [k, g.rows()]),
                &Default::default(),
            );
            let y = conv(&x, g, flat, Some(&bias), true);
            let [p, q] = g.output();
            for (idx, &got) in y.iter().enumerate() {
                let (s, ko, i, j) = (idx / (k * p * q), idx / (p * q) % k, idx / q % p, idx % q);
                let mut sum = bias[ko] as f64;
                for ci in 0..c {
                    for r in 0..kernel[0] {
                        for t in 0..kernel[1] {
                            let (hi, wi) = (
                                (i + r) as isize - pad[0] as isize,
                                (j + t) as isize - pad[1] as isize,
                            );
                            if hi >= 0 && wi >= 0 && (hi as usize) < h && (wi as usize) < wd {
                                sum += w[((ko * c + ci) * kernel[0] + r) * kernel[1] + t] as f64
                                    * x[((s * c + ci) * h + hi as usize) * wd + wi as usize] as f64;
                            }
                        }
                    }
                }
                let exact = sum.max(0.0);
                assert!(
                    (got as f64 - exact).abs() <= 1e-4,
                    "{idx}: {got} against {exact}"
                );
            }
        }
    }
}
