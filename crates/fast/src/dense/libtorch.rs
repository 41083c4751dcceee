//! The dense layer, with or without a ReLU after it, as an operation of `Autodiff<LibTorch>`,
//! in the ops PyTorch's own `Linear` and `ReLU` run: the forward one `addmm` (the bias in the
//! product's accumulator) and the ReLU in place on its fresh output; the backward libtorch's
//! `threshold_backward` for the ReLU, then the bias's sum and the two products. burn's own path
//! adds the bias in a pass of its own and takes the ReLU's gradient as a comparison and a
//! `masked_fill`, whose CPU kernel is a scalar loop: on the MLP at batch 1024 about a tenth of
//! libtorch's time in a step (docs/tch-performance.md, "What burn adds around libtorch's ops").
//!
//! burn keeps a kernel as `in x out` where PyTorch keeps `out x in`, so a product that names
//! the kernel reaches MKL with its operands in the other order. That costs nothing on wide
//! layers (burn's order is ahead from 16 outputs on) and much on a narrow one (the MLP's 512 ->
//! 10 head: its kernel's gradient 1.10-1.15 ms in burn's order, 0.27 in PyTorch's): below
//! [`NARROW`] outputs the products run in PyTorch's order, on a transposed copy of the kernel
//! that small.

use burn::backend::{
    autodiff::{
        checkpoint::base::Checkpointer,
        grads::Gradients,
        ops::{Backward, Ops},
    },
    libtorch::TchTensor,
    LibTorch,
};
use tch::Tensor;

use crate::fused::{Fused, Saved};

/// Fewer outputs than this, and the products run in PyTorch's order: at 2-12 outputs burn's
/// order took 1.6-10x PyTorch's on the kernel's gradient (1024 x 512 inputs, MKL on a 2-core
/// Zen 3; `scripts/kernel_order.py`, docs/bench/20261128-1822-amd-epyc-f25-m1-kernel-order.log),
/// from 16 on within 10% either way, burn's mostly ahead.
pub const NARROW: i64 = 16;

/// The fused operation on LibTorch.
#[derive(Debug, Default)]
pub(super) struct Dense;

impl Fused<LibTorch> for Dense {
    /// Whether a ReLU follows.
    type Params = bool;

    /// `b + x·w`, then the ReLU in place where one follows.
    fn forward(x: TchTensor, w: TchTensor, b: TchTensor, relu: bool) -> TchTensor {
        let mut y = b.tensor.addmm(&x.tensor, &ordered(&w.tensor));
        if relu {
            let _ = y.relu_();
        }
        TchTensor::new(y)
    }
}

/// The kernel `in x out` as the products should read it: itself, or below [`NARROW`] outputs a
/// view of its transposed copy (`out x in`, PyTorch's layout), which MKL reads in PyTorch's order.
fn ordered(w: &Tensor) -> Tensor {
    match w.size()[1] < NARROW {
        true => w.tr().contiguous().tr(),
        false => w.shallow_clone(),
    }
}

impl Backward<LibTorch, 3> for Dense {
    type State = Saved<TchTensor, bool>;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w, node_b] = ops.parents;
        let grad = grads.consume::<LibTorch>(&ops.node);
        let Saved {
            x,
            w,
            out,
            params: relu,
        } = ops.state;
        // The output is positive exactly where the ReLU let the product through.
        let d = match relu {
            true => out.tensor.threshold_backward(&grad.tensor, 0.0),
            false => grad.tensor,
        };
        if let Some(node) = node_b {
            let db = d.sum_dim_intlist(&[0i64][..], false, None::<tch::Kind>);
            grads.register::<LibTorch>(node.id, TchTensor::new(db));
        }
        if let Some(node) = node_w {
            let dw = match w.tensor.size()[1] < NARROW {
                true => d.tr().mm(&x.tensor).tr().contiguous(),
                false => x.tensor.tr().mm(&d),
            };
            grads.register::<LibTorch>(node.id, TchTensor::new(dw));
        }
        if let Some(node) = node_x {
            let dx = d.mm(&ordered(&w.tensor).tr());
            grads.register::<LibTorch>(node.id, TchTensor::new(dx));
        }
    }
}
