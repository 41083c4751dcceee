//! A dense + ReLU over a long batch (at least `LONG_BATCH` rows): its three products (the
//! forward `x · w`, the kernel's gradient `xᵀ · d`, the input's `d · wᵀ`) each on the kernel this
//! machine measured faster for its shape (`crate::choice`): batchlab's packed kernel
//! (`crate::packed`, which reads the transposed operands straight from the row-major tensors)
//! or flex's (gemm, through burn's `matmul`); without a machine's file, the packed kernel. The
//! bias, the ReLU, its mask and the bias's gradient are passes over the rows around them.

use burn::{backend::flex::FlexTensor, tensor::TensorData};
use rayon::prelude::*;

use super::{slice, tensor};
use crate::choice;
use crate::packed::{self, Strided};

/// Rows of the bias's gradient one task sums.
const SUM_ROWS: usize = 64;

/// Which kernel computes a product.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kernel {
    Packed,
    Flex,
}

impl choice::Path for Kernel {
    const ALL: &'static [Kernel] = &[Kernel::Packed, Kernel::Flex];

    fn name(self) -> &'static str {
        match self {
            Kernel::Packed => "packed",
            Kernel::Flex => "flex",
        }
    }
}

/// A product's shape at one site of the layer's step: `[m, k] · [k, n]`.
struct Product {
    site: &'static str,
    shape: [usize; 3],
}

impl choice::Key for Product {
    fn fields(&self) -> String {
        let [m, k, n] = self.shape;
        format!("{}\t{m}\t{k}\t{n}", self.site)
    }
}

/// A row-major matrix, read as it is or transposed.
#[derive(Clone, Copy)]
struct Operand<'a> {
    values: &'a FlexTensor,
    transposed: bool,
}

impl Operand<'_> {
    fn view(&self) -> Strided<'_> {
        let [rows, cols] = self.values.layout().shape().dims::<2>();
        let view = Strided::row_major(slice(self.values), rows, cols);
        if self.transposed {
            view.t()
        } else {
            view
        }
    }
}

/// `a · b` by `kernel`.
fn product(kernel: Kernel, a: Operand, b: Operand) -> FlexTensor {
    match kernel {
        Kernel::Packed => {
            let (a, b) = (a.view(), b.view());
            let dims = [a.rows, b.cols];
            FlexTensor::from_data(TensorData::new(packed::product(a, b), dims))
        }
        Kernel::Flex => {
            let matrix = |o: Operand| {
                let t = tensor::<2>(o.values.clone());
                if o.transposed {
                    t.transpose()
                } else {
                    t
                }
            };
            matrix(a).matmul(matrix(b)).into_primitive().tensor()
        }
    }
}

/// `a · b` at `site`, by the kernel this machine chose for its shape.
fn chosen(site: &'static str, a: Operand, b: Operand) -> FlexTensor {
    let (left, right) = (a.view(), b.view());
    let key = Product {
        site,
        shape: [left.rows, left.cols, right.cols],
    };
    let run = |kernel| drop(product(kernel, a, b));
    let all = <Kernel as choice::Path>::ALL;
    let kernel = choice::path(&key, all, Kernel::Packed, run);
    product(kernel, a, b)
}

/// `relu(x·w + b)`.
pub(super) fn forward(x: FlexTensor, w: FlexTensor, b: FlexTensor) -> FlexTensor {
    let (x, w, b) = (x.to_contiguous(), w.to_contiguous(), b.to_contiguous());
    let operand = |values| Operand {
        values,
        transposed: false,
    };
    let mut y = chosen("dense-forward", operand(&x), operand(&w));
    let bias = slice(&b);
    let bias_relu = |values: &mut [f32]| {
        values.par_chunks_mut(bias.len()).for_each(|row| {
            for (v, b) in row.iter_mut().zip(bias) {
                *v = (*v + b).max(0.0);
            }
        })
    };
    if let Some(values) = y.try_storage_mut::<f32>() {
        bias_relu(values);
        return y;
    }
    // A result that shares its storage (not one flex's matmul or the packed kernel returns).
    let dims = y.layout().shape().dims::<2>();
    let mut values = slice(&y).to_vec();
    bias_relu(&mut values);
    FlexTensor::from_data(TensorData::new(values, dims))
}

/// The gradients of the input, the kernel and the bias (those wanted) from the output's
/// gradient `grad` and the input, kernel and output of the forward.
pub(super) fn backward(
    grad: FlexTensor,
    [x, w, out]: [FlexTensor; 3],
    [dx, dw, db]: [bool; 3],
) -> [Option<FlexTensor>; 3] {
    let m = x.layout().shape().dims::<2>()[0];
    let n = w.layout().shape().dims::<2>()[1];
    let (grad, out) = (grad.to_contiguous(), out.to_contiguous());
    // Collected straight into its buffer: no zeros written first.
    let masked: Vec<f32> = (slice(&grad).par_iter().zip(slice(&out)))
        .map(|(&g, &o)| if o > 0.0 { g } else { 0.0 })
        .collect();
    let db = db.then(|| FlexTensor::from_data(TensorData::new(column_sums(&masked, n), [n])));
    let d = FlexTensor::from_data(TensorData::new(masked, [m, n]));
    let (x, w) = (x.to_contiguous(), w.to_contiguous());
    let operand = |values, transposed| Operand { values, transposed };
    let dw = dw.then(|| chosen("dense-weight-grad", operand(&x, true), operand(&d, false)));
    let dx = dx.then(|| chosen("dense-input-grad", operand(&d, false), operand(&w, true)));
    [dx, dw, db]
}

/// The sums of a row-major matrix's columns (`n` of them).
fn column_sums(values: &[f32], n: usize) -> Vec<f32> {
    values
        .par_chunks(n * SUM_ROWS)
        .map(|rows| {
            let mut sums = vec![0.0f32; n];
            for row in rows.chunks(n) {
                sums.iter_mut().zip(row).for_each(|(s, v)| *s += v);
            }
            sums
        })
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
            a
        })
        .unwrap_or_else(|| vec![0.0; n])
}

#[cfg(test)]
mod tests {
    use burn::{backend::flex::FlexTensor, tensor::TensorData};

    use super::{product, slice, Kernel, Operand};

    fn matrix(rows: usize, cols: usize, f: f32) -> FlexTensor {
        let values = (0..rows * cols).map(|i| (i as f32 * f).sin()).collect();
        FlexTensor::from_data(TensorData::new(values, [rows, cols]))
    }

    #[test]
    fn both_kernels_compute_the_same_product_of_every_layout() {
        // The three products of a layer's step: x·w, xᵀ·d, d·wᵀ (sizes that leave partial
        // strips and panels).
        let (m, k, n) = (37, 29, 21);
        let (x, w, d) = (matrix(m, k, 0.37), matrix(k, n, 0.11), matrix(m, n, 0.23));
        let op = |values, transposed| Operand { values, transposed };
        for (a, b) in [
            (op(&x, false), op(&w, false)),
            (op(&x, true), op(&d, false)),
            (op(&d, false), op(&w, true)),
        ] {
            let packed = product(Kernel::Packed, a, b);
            let flex = product(Kernel::Flex, a, b);
            let (p, f) = (slice(&packed), slice(&flex));
            assert_eq!(p.len(), f.len());
            let most = f.iter().fold(0f32, |m, v| m.max(v.abs()));
            let worst = p.iter().zip(f).fold(0f32, |m, (p, f)| m.max((p - f).abs()));
            assert!(worst <= 1e-5 * most.max(1.0), "{worst} of {most}");
        }
    }
}
