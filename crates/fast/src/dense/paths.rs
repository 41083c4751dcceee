//! A dense + ReLU's step on flex: its three products (the forward `x · w`, the kernel's gradient
//! `xᵀ · d`, the input's `d · wᵀ`), each on the kernel this machine measured fastest for its
//! shape at its site (`crate::choice`): the forward's timed with its bias and ReLU, which the
//! packed kernel adds in its stores and the others in a pass after; the ReLU's mask and the
//! bias's gradient are one pass over the output gradient's rows, and the two gradients'
//! products run on the pool at once. The kernels ([`Kernel`]): batchlab's packed one in each of
//! its two orders (`crate::packed`, which reads the transposed operands straight from the
//! row-major tensors),
//! flex's (gemm, through burn's `matmul`), flex's with the inner dimension shared out among the
//! threads, batchlab's short-batch kernels (`crate::outer`: for the two gradients, and for
//! the forward over a short batch one that streams the weights), and, for few columns or a
//! short inner dimension (a network's head), its narrow one (`narrow`). Without a
//! machine's file, the batch's fixed thresholds ([`Site::default`], measured on one Zen 3 before
//! the products were raced) pick.

use burn::{
    backend::{flex::FlexTensor, Flex},
    tensor::{Tensor, TensorData},
};
use rayon::prelude::*;

use super::narrow;
use super::passes::{biased, masked};
use super::{slice, tensor};
use crate::packed::{self, Finish, Order, Strided};
use crate::{choice, outer};

/// At least this long an inner dimension per thread for its shares to be a kernel of their own.
const MIN_SHARE: usize = 1 << 13;
/// The thresholds without a machine's file: at most this many output values (batch x features)
/// for the shared inner dimension (a larger output gives flex's kernel rows and columns enough
/// to share out itself) ...
const MAX_OUTPUT: usize = 1 << 15;
/// ... at most this many rows (the batch) for the gradients to be the short-batch kernel's (a
/// sum this short is where flex's kernel is slow: VGG16's fc layers at batch 16, the small CNN's
/// dense layer at batch 32) ...
pub const SHORT_BATCH: usize = 64;
/// ... and at least this many for every product to be the packed kernel's (below it, packing
/// the weights costs a larger share: on a 2-core Zen 3 the packed kernel took 0.84x flex's time
/// on the MLP's five large products at 1024 rows, 0.90-0.99x at 512, 0.94-1.02x at 256: scratch
/// runs, docs/flex-performance.md); flex's between the two.
pub const LONG_BATCH: usize = 512;

/// Which kernel computes a product.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kernel {
    Packed(Order),
    Flex,
    /// flex's, on each thread's share of the inner dimension, the shares added.
    Split,
    /// batchlab's short-batch kernels (`outer`): over a short batch only.
    Short,
    /// batchlab's product kernel on the left side where it is (`narrow`): few columns or a
    /// short inner dimension only.
    Narrow,
}

impl choice::Path for Kernel {
    const ALL: &'static [Kernel] = &[
        Kernel::Packed(Order::Strips),
        Kernel::Packed(Order::Panels),
        Kernel::Flex,
        Kernel::Split,
        Kernel::Short,
        Kernel::Narrow,
    ];

    fn name(self) -> &'static str {
        match self {
            Kernel::Packed(Order::Strips) => "packed",
            Kernel::Packed(Order::Panels) => "packed-panels",
            Kernel::Flex => "flex",
            Kernel::Split => "split",
            Kernel::Short => "short",
            Kernel::Narrow => "narrow",
        }
    }
}

/// Where in the layer's step a product is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Site {
    /// `x · w`.
    Forward,
    /// `xᵀ · d`: its inner dimension is the batch.
    WeightGrad,
    /// `d · wᵀ`.
    InputGrad,
}

impl Site {
    fn name(self) -> &'static str {
        match self {
            Site::Forward => "dense-forward",
            Site::WeightGrad => "dense-weight-grad",
            Site::InputGrad => "dense-input-grad",
        }
    }

    /// The batch's length in the site's product `[m, k] · [k, n]`.
    fn batch(self, [m, k, _]: [usize; 3]) -> usize {
        match self {
            Site::WeightGrad => k,
            Site::Forward | Site::InputGrad => m,
        }
    }

    /// The kernels raced for the site's product `[m, k] · [k, n]`: those that can compute it,
    /// but the packed kernel's panels' order over a short batch, where it won 0-4 of the
    /// quickstart sweep's 192 dense races on a Zen 5 and lengthened the sweep's first run by a
    /// tenth (docs/bench/20261129-1158-amd-epyc-f26-m2-quickstart-races.log).
    fn kernels(self, shape @ [_, k, _]: [usize; 3]) -> Vec<Kernel> {
        let short = self.batch(shape) <= SHORT_BATCH;
        let mut kernels = vec![Kernel::Packed(Order::Strips), Kernel::Flex];
        if !short {
            kernels.push(Kernel::Packed(Order::Panels));
        }
        match self {
            Site::Forward => {
                if shares(k) > 1 {
                    kernels.push(Kernel::Split);
                }
                // The streaming kernel over a short batch only: past it, the sums held in
                // registers (the others) read the weights often enough.
                if short {
                    kernels.push(Kernel::Short);
                }
            }
            Site::WeightGrad | Site::InputGrad => kernels.push(Kernel::Short),
        }
        if narrow::applies(shape) {
            kernels.push(Kernel::Narrow);
        }
        kernels
    }

    /// The kernel the batch's fixed thresholds pick, without a machine's file.
    fn default(self, shape @ [m, k, n]: [usize; 3]) -> Kernel {
        let batch = self.batch(shape);
        match self {
            Site::Forward if shares(k) > 1 && m * n <= MAX_OUTPUT => Kernel::Split,
            Site::WeightGrad | Site::InputGrad if batch <= SHORT_BATCH => Kernel::Short,
            _ if batch >= LONG_BATCH => Kernel::Packed(Order::Strips),
            _ => Kernel::Flex,
        }
    }
}

/// How many shares of an inner dimension `k` long [`Kernel::Split`] computes.
fn shares(k: usize) -> usize {
    rayon::current_num_threads().min(k / MIN_SHARE).max(1)
}

/// A product's shape at one site of the layer's step: `[m, k] · [k, n]`.
struct Product {
    site: Site,
    shape: [usize; 3],
}

impl choice::Key for Product {
    fn fields(&self) -> String {
        let [m, k, n] = self.shape;
        format!("{}\t{m}\t{k}\t{n}", self.site.name())
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

    /// The matrix as a burn tensor (a transposed view where read transposed).
    fn matrix(&self) -> Tensor<Flex, 2> {
        let t = tensor::<2>(self.values.clone());
        match self.transposed {
            true => t.transpose(),
            false => t,
        }
    }
}

/// `a · b` by `kernel` (one of those [`Site::kernels`] names for its site), then `finish`: in
/// the packed kernel's stores, in a pass over the result after the others.
fn product(kernel: Kernel, a: Operand, b: Operand, finish: Finish) -> FlexTensor {
    if let Kernel::Packed(order) = kernel {
        let (a, b) = (a.view(), b.view());
        let dims = [a.rows, b.cols];
        let values = packed::product_then(a, b, finish, order);
        return FlexTensor::from_data(TensorData::new(values, dims));
    }
    if kernel == Kernel::Narrow {
        let (a, b) = (a.view(), b.view());
        let dims = [a.rows, b.cols];
        let values = narrow::product(a, b, finish);
        return FlexTensor::from_data(TensorData::new(values, dims));
    }
    let y = unfinished(kernel, a, b);
    match finish {
        Finish::Plain => y,
        Finish::Bias { bias, relu } => biased(y, bias, relu),
    }
}

/// `a · b` by `kernel`, one of those but the packed.
fn unfinished(kernel: Kernel, a: Operand, b: Operand) -> FlexTensor {
    let flex = |a: Operand, b: Operand| a.matrix().matmul(b.matrix());
    match kernel {
        Kernel::Packed(_) | Kernel::Narrow => {
            unreachable!("a kernel that finishes its own product")
        }
        Kernel::Flex => flex(a, b).into_primitive().tensor(),
        Kernel::Split => {
            let (a, b) = (a.matrix(), b.matrix());
            let ([m, k], n) = (a.dims(), b.dims()[1]);
            let chunk = k.div_ceil(shares(k));
            (0..k)
                .step_by(chunk)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|start| {
                    let end = (start + chunk).min(k);
                    let a = a.clone().slice([0..m, start..end]);
                    a.matmul(b.clone().slice([start..end, 0..n]))
                })
                .reduce_with(|a, b| a + b)
                .unwrap_or_else(|| Tensor::zeros([m, n], &Default::default()))
                .into_primitive()
                .tensor()
        }
        Kernel::Short => {
            let (left, right) = (a.view(), b.view());
            let [m, k, n] = [left.rows, left.cols, right.cols];
            let values = match (a.transposed, b.transposed) {
                // xᵀ · d, x `[k, m]`, d `[k, n]`.
                (true, false) => outer::xt_d(slice(a.values), slice(b.values), k, m, n),
                // d · wᵀ, d `[m, k]`, w `[n, k]`.
                (false, true) => outer::d_wt(slice(a.values), slice(b.values), m, n, k),
                // x · w, x `[m, k]`, w `[k, n]`.
                (false, false) => outer::x_w(slice(a.values), slice(b.values), m, k, n),
                (true, true) => unreachable!("no site's product has both sides transposed"),
            };
            FlexTensor::from_data(TensorData::new(values, [m, n]))
        }
    }
}

/// The kernel this machine chose for `a · b` then `finish` at `site` (each timed with the
/// finish, which the packed kernel does in its stores), raced here the first time its shape is
/// met.
fn chosen(site: Site, a: Operand, b: Operand, finish: Finish) -> Kernel {
    let (left, right) = (a.view(), b.view());
    let shape = [left.rows, left.cols, right.cols];
    let key = Product { site, shape };
    let run = |kernel| drop(product(kernel, a, b, finish));
    choice::path(&key, &site.kernels(shape), site.default(shape), run)
}

/// `x·w + b`, then the ReLU where `relu`.
pub(super) fn forward(x: FlexTensor, w: FlexTensor, b: FlexTensor, relu: bool) -> FlexTensor {
    let (x, w, b) = (x.to_contiguous(), w.to_contiguous(), b.to_contiguous());
    let operand = |values| Operand {
        values,
        transposed: false,
    };
    let bias = slice(&b);
    let (x, w, finish) = (operand(&x), operand(&w), Finish::Bias { bias, relu });
    product(chosen(Site::Forward, x, w, finish), x, w, finish)
}

/// The gradients of the input, the kernel and the bias (those wanted) from the output's
/// gradient `grad` and the input, kernel and output of the forward, a ReLU's where `relu`.
pub(super) fn backward(
    grad: FlexTensor,
    [x, w, out]: [FlexTensor; 3],
    [dx, dw, db]: [bool; 3],
    relu: bool,
) -> [Option<FlexTensor>; 3] {
    let m = x.layout().shape().dims::<2>()[0];
    let n = w.layout().shape().dims::<2>()[1];
    let out = out.to_contiguous();
    let mask = relu.then(|| slice(&out));
    let (d, sums) = masked(grad, mask, [m, n], db);
    let db = sums.map(|sums| FlexTensor::from_data(TensorData::new(sums, [n])));
    let (x, w) = (x.to_contiguous(), w.to_contiguous());
    let operand = |values, transposed| Operand { values, transposed };
    let wanted = [
        dw.then(|| (Site::WeightGrad, operand(&x, true), operand(&d, false))),
        dx.then(|| (Site::InputGrad, operand(&d, false), operand(&w, true))),
    ];
    // The gradients as they are, nothing to finish; their kernels chosen one after the other
    // (a race times a kernel alone), then both products on the pool at once: a thread done
    // with its share of one takes blocks of the other, where it waited for the last block.
    let [dw, dx] = wanted.map(|p| p.map(|(site, a, b)| (chosen(site, a, b, Finish::Plain), a, b)));
    let run =
        |p: Option<(Kernel, Operand, Operand)>| p.map(|(k, a, b)| product(k, a, b, Finish::Plain));
    let (dw, dx) = rayon::join(|| run(dw), || run(dx));
    [dx, dw, db]
}

#[cfg(test)]
mod tests {
    use burn::{backend::flex::FlexTensor, tensor::TensorData};

    use super::{product, slice, Finish, Kernel, Operand, Order, Site, MIN_SHARE, SHORT_BATCH};
    use crate::dense::testing::{matrix, on_two_threads};

    #[test]
    fn every_kernel_a_site_may_take_computes_its_product() {
        on_two_threads(|| {
            // The three products of a layer's step, x·w, xᵀ·d and d·wᵀ: on sizes that leave
            // partial strips and panels, over a batch longer than a short one (every site then
            // races the packed kernel in both orders), and on an inner dimension long enough to
            // share out.
            // Then a head's ten columns over a long batch, on the narrow kernel's one vector
            // per row with AVX-512; and a forward twenty deep into whole vectors of columns,
            // which the narrow kernel finishes in place.
            for (m, k, n) in [
                (37, 29, 21),
                (SHORT_BATCH + 9, 29, 21),
                (5, 2 * MIN_SHARE + 5, 3),
                (SHORT_BATCH + 11, 40, 10),
                (SHORT_BATCH + 3, 20, 64),
            ] {
                let (x, w, d) = (matrix(m, k, 0.37), matrix(k, n, 0.11), matrix(m, n, 0.23));
                let op = |values, transposed| Operand { values, transposed };
                for (site, a, b) in [
                    (Site::Forward, op(&x, false), op(&w, false)),
                    (Site::WeightGrad, op(&x, true), op(&d, false)),
                    (Site::InputGrad, op(&d, false), op(&w, true)),
                ] {
                    let shape = [a.view().rows, a.view().cols, b.view().cols];
                    let kernels = site.kernels(shape);
                    let long = site == Site::Forward && k > MIN_SHARE;
                    assert_eq!(kernels.contains(&Kernel::Split), long, "{site:?} {shape:?}");
                    let panels = kernels.contains(&Kernel::Packed(Order::Panels));
                    assert_eq!(panels, m > SHORT_BATCH, "{site:?} {shape:?}");
                    // The narrow kernel where the site's product has at most 32 columns or
                    // is that deep.
                    let narrow = kernels.contains(&Kernel::Narrow);
                    assert_eq!(narrow, shape[1].min(shape[2]) <= 32, "{site:?} {shape:?}");
                    let flex = product(Kernel::Flex, a, b, Finish::Plain);
                    let f = slice(&flex);
                    let most = f.iter().fold(0f32, |m, v| m.max(v.abs()));
                    // The forward also with its bias and ReLU (half the values cut to zero), and
                    // with its bias alone (a network's head).
                    let bias: Vec<f32> = (0..shape[2]).map(|j| (j as f32).cos() * most).collect();
                    let relu = |(i, v): (usize, &f32)| (v + bias[i % bias.len()]).max(0.0);
                    let biased = |(i, v): (usize, &f32)| v + bias[i % bias.len()];
                    let mut finishes = vec![(Finish::Plain, f.to_vec())];
                    if site == Site::Forward {
                        let expected = f.iter().enumerate().map(relu).collect();
                        finishes.push((
                            Finish::Bias {
                                bias: &bias,
                                relu: true,
                            },
                            expected,
                        ));
                        let expected = f.iter().enumerate().map(biased).collect();
                        finishes.push((
                            Finish::Bias {
                                bias: &bias,
                                relu: false,
                            },
                            expected,
                        ));
                    }
                    for (finish, expected) in finishes {
                        for &kernel in &kernels {
                            let other = product(kernel, a, b, finish);
                            let o = slice(&other);
                            assert_eq!(o.len(), expected.len());
                            let worst = (o.iter().zip(&expected))
                                .fold(0f32, |m, (o, e)| m.max((o - e).abs()));
                            let case = format!("{kernel:?} at {site:?} {shape:?}, {finish:?}");
                            assert!(worst <= 2e-4 * most.max(1.0), "{case}: {worst} of {most}");
                        }
                    }
                }
            }
        });
    }

    #[test]
    fn a_heads_forward_keeps_a_nan_on_every_kernel() {
        on_two_threads(|| {
            // A head's logits from a diverged input stay NaN (a ReLU would cut them to zero).
            let (m, k, n) = (SHORT_BATCH + 9, 29, 21);
            let (x, w) = (matrix(m, k, 0.37), matrix(k, n, 0.11));
            let mut values = slice(&x).to_vec();
            values[k + 3] = f32::NAN;
            let x = FlexTensor::from_data(TensorData::new(values, [m, k]));
            let bias = vec![0.5; n];
            let op = |values| Operand {
                values,
                transposed: false,
            };
            let finish = Finish::Bias {
                bias: &bias,
                relu: false,
            };
            for kernel in Site::Forward.kernels([m, k, n]) {
                let y = product(kernel, op(&x), op(&w), finish);
                let rows: Vec<&[f32]> = slice(&y).chunks(n).collect();
                assert!(rows[1].iter().all(|v| v.is_nan()), "{kernel:?}");
                assert!(rows[0].iter().all(|v| v.is_finite()), "{kernel:?}");
            }
        });
    }

    #[test]
    fn without_a_machines_file_the_batch_picks_as_the_thresholds_did() {
        on_two_threads(|| {
            use Kernel::*;
            // [site's product shape, forward / weight gradient / input gradient], per layer.
            let cases = [
                // The MLP's 784 -> 512 at batch 1024: all packed.
                ([1024, 784, 512], [Packed(Order::Strips); 3]),
                // VGG16's fc 4096 -> 4096 at batch 16: the gradients on the short-batch kernel.
                ([16, 4096, 4096], [Flex, Short, Short]),
                // The small CNN's 320,000 -> 128 at batch 32: the forward shared out.
                ([32, 320_000, 128], [Split, Short, Short]),
                // Between the short and the long batch, flex's.
                ([256, 512, 512], [Flex, Flex, Flex]),
            ];
            for ([m, k, n], [forward, weight, input]) in cases {
                assert_eq!(Site::Forward.default([m, k, n]), forward, "{m}x{k}x{n}");
                assert_eq!(Site::WeightGrad.default([k, m, n]), weight, "{m}x{k}x{n}");
                assert_eq!(Site::InputGrad.default([m, n, k]), input, "{m}x{k}x{n}");
            }
        });
    }
}
