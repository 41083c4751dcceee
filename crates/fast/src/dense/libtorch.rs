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
//! layers (burn's order was ahead from 16 outputs on, on one Zen 3's MKL) and much on a narrow
//! one (the MLP's 512 -> 10 head: its kernel's gradient 1.10-1.15 ms in burn's order, 0.27 in
//! PyTorch's). Each product runs in the order this machine measured faster for its shape
//! (`crate::choice`, [`Order`]), PyTorch's on a transposed copy of the kernel; without a
//! machine's file (on a GPU, or with the thresholds asked for), PyTorch's below [`NARROW`]
//! outputs.

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

use crate::choice;
use crate::fused::{Fused, Saved};

/// Without a machine's file, fewer outputs than this and the products run in PyTorch's order:
/// at 2-12 outputs burn's
/// order took 1.6-10x PyTorch's on the kernel's gradient (1024 x 512 inputs, MKL on a 2-core
/// Zen 3; `scripts/kernel_order.py`, docs/bench/20261128-1822-amd-epyc-f25-m1-kernel-order.log),
/// from 16 on within 10% either way, burn's mostly ahead.
pub const NARROW: i64 = 16;

/// Which operand order a product that names the kernel reaches MKL in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Order {
    /// burn's: the kernel as it is kept, `in x out`.
    Burn,
    /// PyTorch's: a transposed copy of the kernel, `out x in`, read through a view.
    PyTorch,
}

impl choice::Path for Order {
    const ALL: &'static [Order] = &[Order::Burn, Order::PyTorch];

    fn name(self) -> &'static str {
        match self {
            Order::Burn => "burn-order",
            Order::PyTorch => "pytorch-order",
        }
    }
}

/// Where in the layer's step a product is, and its shape `[m, k] · [k, n]`.
struct Product {
    site: &'static str,
    shape: [i64; 3],
}

impl choice::Key for Product {
    fn fields(&self) -> String {
        let [m, k, n] = self.shape;
        format!("libtorch-dense-{}\t{m}\t{k}\t{n}", self.site)
    }
}

/// The order this machine measured faster for the product at `site` of a layer of `outputs`
/// outputs (`run` computes it in an order); without a machine's file, by [`NARROW`].
fn order(site: &'static str, shape: [i64; 3], outputs: i64, run: impl Fn(Order)) -> Order {
    let default = match outputs < NARROW {
        true => Order::PyTorch,
        false => Order::Burn,
    };
    let all = <Order as choice::Path>::ALL;
    choice::path(&Product { site, shape }, all, default, run)
}

/// The kernel `in x out` as a product in `order` reads it: itself, or a view of its transposed
/// copy (`out x in`, PyTorch's layout), which MKL reads in PyTorch's order.
fn ordered(w: &Tensor, order: Order) -> Tensor {
    match order {
        Order::PyTorch => w.tr().contiguous().tr(),
        Order::Burn => w.shallow_clone(),
    }
}

/// The fused operation on LibTorch.
#[derive(Debug, Default)]
pub(super) struct Dense;

impl Fused<LibTorch> for Dense {
    /// Whether a ReLU follows.
    type Params = bool;

    /// `b + x·w`, then the ReLU in place where one follows.
    fn forward(x: TchTensor, w: TchTensor, b: TchTensor, relu: bool) -> TchTensor {
        let (x, w, b) = (&x.tensor, &w.tensor, &b.tensor);
        let product = |order| b.addmm(x, &ordered(w, order));
        let [m, k, n] = [x.size()[0], x.size()[1], w.size()[1]];
        let chosen = order("forward", [m, k, n], n, |o| drop(product(o)));
        let mut y = product(chosen);
        if relu {
            let _ = y.relu_();
        }
        TchTensor::new(y)
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
        let (x, w) = (&x.tensor, &w.tensor);
        let [m, k, n] = [x.size()[0], x.size()[1], w.size()[1]];
        if let Some(node) = node_w {
            let product = |order| match order {
                Order::PyTorch => d.tr().mm(x).tr().contiguous(),
                Order::Burn => x.tr().mm(&d),
            };
            let chosen = order("weight-grad", [k, m, n], n, |o| drop(product(o)));
            grads.register::<LibTorch>(node.id, TchTensor::new(product(chosen)));
        }
        if let Some(node) = node_x {
            let product = |order| d.mm(&ordered(w, order).tr());
            let chosen = order("input-grad", [m, n, k], n, |o| drop(product(o)));
            grads.register::<LibTorch>(node.id, TchTensor::new(product(chosen)));
        }
    }
}
