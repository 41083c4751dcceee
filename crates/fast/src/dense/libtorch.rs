//! The fused dense layer + ReLU as an operation of `Autodiff<LibTorch>`, in the ops PyTorch's
//! own `Linear` and `ReLU` run: the forward one `addmm` (the bias in the product's
//! accumulator) and the ReLU in place on its fresh output; the backward libtorch's
//! `threshold_backward` for the ReLU, then the bias's sum and the two products. burn's own path
//! adds the bias in a pass of its own and takes the ReLU's gradient as a comparison and a
//! `masked_fill`, whose CPU kernel is a scalar loop: on the MLP at batch 1024 about a tenth of
//! libtorch's time in a step (docs/tch-performance.md, "What burn adds around libtorch's ops").

use burn::backend::{
    autodiff::{
        checkpoint::base::Checkpointer,
        grads::Gradients,
        ops::{Backward, Ops},
    },
    libtorch::TchTensor,
    LibTorch,
};

use crate::fused::{Fused, Saved};

/// The fused operation on LibTorch.
#[derive(Debug, Default)]
pub(super) struct DenseRelu;

impl Fused<LibTorch> for DenseRelu {
    type Params = ();

    /// `relu(b + x·w)`: one `addmm`, then the ReLU in place.
    fn forward(x: TchTensor, w: TchTensor, b: TchTensor, (): ()) -> TchTensor {
        let mut y = b.tensor.addmm(&x.tensor, &w.tensor);
        let _ = y.relu_();
        TchTensor::new(y)
    }
}

impl Backward<LibTorch, 3> for DenseRelu {
    type State = Saved<TchTensor, ()>;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w, node_b] = ops.parents;
        let grad = grads.consume::<LibTorch>(&ops.node);
        let Saved { x, w, out, .. } = ops.state;
        // The output is positive exactly where the ReLU let the product through.
        let d = out.tensor.threshold_backward(&grad.tensor, 0.0);
        if let Some(node) = node_b {
            let db = d.sum_dim_intlist(&[0i64][..], false, None::<tch::Kind>);
            grads.register::<LibTorch>(node.id, TchTensor::new(db));
        }
        if let Some(node) = node_w {
            grads.register::<LibTorch>(node.id, TchTensor::new(x.tensor.tr().mm(&d)));
        }
        if let Some(node) = node_x {
            grads.register::<LibTorch>(node.id, TchTensor::new(d.mm(&w.tensor.tr())));
        }
    }
}
