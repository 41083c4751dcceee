//! A dense layer followed by a ReLU as an operation of `Autodiff<Flex>` (docs/ARCHITECTURE.md,
//! "Fast paths"). Its forward shares a long inner dimension out among the threads: flex's
//! matrix kernel divides a product's rows and columns among the threads, never its inner
//! dimension, so the small CNN's 320,000 -> 128 layer at batch 32 (a 32 x 128 output summed over
//! 320,000 products each) ran on one core; here each thread sums its share of the inner
//! dimension and the shares are added. Its backward is the layer's usual one (the ReLU's mask,
//! then the bias's, the kernel's and the input's gradients), the kernel's gradient over a short
//! batch (at most [`SHORT_BATCH`] rows) on batchlab's own kernel (`outer`), the rest on flex.
//! Over a long batch (at least [`LONG_BATCH`] rows: the MLP's 1024) each of the three products,
//! forward and backward, runs on the kernel this machine measured faster for its shape,
//! batchlab's packed one (`packed`) or flex's (`long`), the bias, the ReLU and its mask in the
//! passes around them. On `Autodiff<LibTorch>` it is libtorch's own ops in PyTorch's order
//! (`libtorch`). Other backends, inference and the switch off take burn's
//! `relu(linear.forward(x))`.

#[cfg(feature = "tch")]
use burn::backend::LibTorch;
use burn::{
    backend::{
        autodiff::{
            checkpoint::base::Checkpointer,
            grads::Gradients,
            ops::{Backward, Ops},
        },
        flex::FlexTensor,
        Flex,
    },
    nn::Linear,
    tensor::{activation::relu, backend::Backend, Tensor, TensorData, TensorPrimitive},
};
use rayon::prelude::*;

use crate::{
    fused::{self, Fused, Saved},
    outer, Kind,
};

#[cfg(feature = "tch")]
mod libtorch;
mod long;

/// At most this many output values (batch x features) for the split to pay: a larger output
/// gives flex's kernel rows and columns enough to share out itself.
const MAX_OUTPUT: usize = 1 << 15;
/// At least this long an inner dimension per thread for the split to pay.
const MIN_SHARE: usize = 1 << 13;
/// At most this many rows (the batch) for the kernel's gradient to be batchlab's: a sum this
/// short is where flex's kernel is slow (VGG16's fc layers at batch 16, the small CNN's dense
/// layer at batch 32); a batch between this and [`LONG_BATCH`] keeps flex's.
pub const SHORT_BATCH: usize = 64;
/// At least this many rows (the batch) for the three products to be chosen between batchlab's
/// packed kernel and flex's by this machine's measurement (`long`): below it, packing the
/// weights costs a larger share (on a 2-core Zen 3 the packed kernel took 0.84x flex's time on
/// the MLP's five large products at 1024 rows, 0.90-0.99x at 512, 0.94-1.02x at 256: scratch
/// runs, docs/flex-performance.md).
pub const LONG_BATCH: usize = 512;

/// `relu(linear.forward(x))`, through the fast path where it applies.
pub fn linear_relu<B: Backend>(linear: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B, 2> {
    let (Some(bias), true) = (&linear.bias, crate::enabled()) else {
        return burn_linear_relu(linear, x);
    };
    let [m, k] = x.dims();
    let n = linear.weight.dims()[1];
    let (w, b) = (linear.weight.val(), bias.val());
    // flex's path pays where it splits the inner dimension, over a short batch and over a long
    // one; LibTorch's everywhere (libtorch's own ops in PyTorch's order).
    let flex_pays = splits(m, n, k) > 1 || m <= SHORT_BATCH || m >= LONG_BATCH;
    let fused = match flex_pays {
        true => fused::apply::<Flex, DenseRelu, B, 2>(x, w.clone(), b.clone(), ()),
        false => Err(x),
    };
    #[cfg(feature = "tch")]
    let fused = fused.or_else(|x| fused::apply::<LibTorch, libtorch::Dense, B, 2>(x, w, b, true));
    match fused {
        Ok(y) => {
            crate::count(Kind::Dense, true);
            y
        }
        Err(x) => burn_linear_relu(linear, x),
    }
}

/// `linear.forward(x)`, a dense layer no ReLU follows (a network's head), through LibTorch's
/// fast path where it applies (`libtorch`); burn's elsewhere.
pub fn linear<B: Backend>(linear: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B, 2> {
    #[cfg(feature = "tch")]
    let x = match (&linear.bias, crate::enabled()) {
        (Some(bias), true) => {
            let (w, b) = (linear.weight.val(), bias.val());
            match fused::apply::<LibTorch, libtorch::Dense, B, 2>(x, w, b, false) {
                Ok(y) => {
                    crate::count(Kind::Dense, true);
                    return y;
                }
                Err(x) => x,
            }
        }
        _ => x,
    };
    crate::count(Kind::Dense, false);
    linear.forward(x)
}

fn burn_linear_relu<B: Backend>(linear: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B, 2> {
    crate::count(Kind::Dense, false);
    relu(linear.forward(x))
}

/// How many shares of the inner dimension a product of `m x k` by `k x n` is computed in.
fn splits(m: usize, n: usize, k: usize) -> usize {
    if m * n > MAX_OUTPUT {
        return 1;
    }
    rayon::current_num_threads().min(k / MIN_SHARE).max(1)
}

fn slice(t: &FlexTensor) -> &[f32] {
    t.as_slice::<f32>().unwrap_or_default()
}

fn tensor<const D: usize>(t: FlexTensor) -> Tensor<Flex, D> {
    Tensor::from_primitive(TensorPrimitive::Float(t))
}

/// `relu(x·w + b)`: over a long batch on the packed kernel, else the inner dimension shared out
/// among the threads, each share one product.
fn forward(x: FlexTensor, w: FlexTensor, b: FlexTensor) -> FlexTensor {
    if x.layout().shape().dims::<2>()[0] >= LONG_BATCH {
        return long::forward(x, w, b);
    }
    let (x, w, b) = (tensor::<2>(x), tensor::<2>(w), tensor::<1>(b));
    let ([m, k], n) = (x.dims(), w.dims()[1]);
    let chunk = k.div_ceil(splits(m, n, k));
    let product = (0..k)
        .step_by(chunk)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|start| {
            let end = (start + chunk).min(k);
            let x = x.clone().slice([0..m, start..end]);
            x.matmul(w.clone().slice([start..end, 0..n]))
        })
        .reduce_with(|a, b| a + b)
        .unwrap_or_else(|| Tensor::zeros([m, n], &Default::default()));
    relu(product + b.unsqueeze::<2>()).into_primitive().tensor()
}

#[derive(Debug, Default)]
struct DenseRelu;

impl Fused<Flex> for DenseRelu {
    type Params = ();

    fn forward(x: FlexTensor, w: FlexTensor, b: FlexTensor, (): ()) -> FlexTensor {
        forward(x, w, b)
    }
}

impl Backward<Flex, 3> for DenseRelu {
    type State = Saved<FlexTensor, ()>;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w, node_b] = ops.parents;
        let grad = grads.consume::<Flex>(&ops.node);
        let Saved { x, w, out, .. } = ops.state;
        if x.layout().shape().dims::<2>()[0] >= LONG_BATCH {
            let ids = [node_x, node_w, node_b].map(|node| node.map(|node| node.id));
            let values = long::backward(grad, [x, w, out], ids.map(|id| id.is_some()));
            for (id, value) in ids.into_iter().zip(values) {
                if let (Some(id), Some(value)) = (id, value) {
                    grads.register::<Flex>(id, value);
                }
            }
            return;
        }
        let grad = tensor::<2>(grad);
        let masked = grad.mask_fill(tensor::<2>(out).lower_equal_elem(0.0), 0.0);
        if let Some(node) = node_b {
            let db = masked.clone().sum_dim(0).squeeze_dim::<1>(0);
            grads.register::<Flex>(node.id, db.into_primitive().tensor());
        }
        let [m, n] = masked.dims();
        let short = m <= SHORT_BATCH;
        if let Some(node) = node_w {
            let k = x.layout().shape().dims::<2>()[1];
            let dw = if short {
                let x = x.to_contiguous();
                let d = masked.clone().into_primitive().tensor().to_contiguous();
                let dw = outer::xt_d(slice(&x), slice(&d), m, k, n);
                FlexTensor::from_data(TensorData::new(dw, [k, n]))
            } else {
                tensor::<2>(x)
                    .transpose()
                    .matmul(masked.clone())
                    .into_primitive()
                    .tensor()
            };
            grads.register::<Flex>(node.id, dw);
        }
        if let Some(node) = node_x {
            let dx = if short {
                let k = w.layout().shape().dims::<2>()[0];
                let (w, d) = (
                    w.to_contiguous(),
                    masked.into_primitive().tensor().to_contiguous(),
                );
                let dx = outer::d_wt(slice(&d), slice(&w), m, k, n);
                FlexTensor::from_data(TensorData::new(dx, [m, k]))
            } else {
                masked
                    .matmul(tensor::<2>(w).transpose())
                    .into_primitive()
                    .tensor()
            };
            grads.register::<Flex>(node.id, dx);
        }
    }
}
