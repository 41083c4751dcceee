//! A dense layer, followed by a ReLU or a network's head, as an operation of `Autodiff<Flex>`
//! (docs/ARCHITECTURE.md, "Fast paths"): at every batch, each of its three products, forward
//! and backward, runs on the kernel this machine measured fastest for its shape (`paths`:
//! batchlab's packed kernel, flex's, flex's with the inner dimension shared out among the
//! threads, or batchlab's short-batch kernels), the bias, the ReLU and its
//! mask in passes around them. On `Autodiff<LibTorch>` it is libtorch's own ops in PyTorch's
//! order (`libtorch`). Other backends, inference and the switch off take burn's
//! `linear.forward(x)` (and `relu`).

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
    tensor::{activation, backend::Backend, Tensor, TensorPrimitive},
};

use crate::{
    fused::{self, Fused, Saved},
    Kind,
};

#[cfg(feature = "tch")]
mod libtorch;
mod narrow;
mod passes;
mod paths;
#[cfg(test)]
mod testing;

pub use paths::{LONG_BATCH, SHORT_BATCH};

/// `relu(linear.forward(x))`, through the fast path where it applies.
pub fn linear_relu<B: Backend>(linear: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B, 2> {
    dense(linear, x, true)
}

/// `linear.forward(x)`, a dense layer no ReLU follows (a network's head), through the fast path
/// where it applies.
pub fn linear<B: Backend>(linear: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B, 2> {
    dense(linear, x, false)
}

/// The layer, then the ReLU where `relu`: the fast path of the backend under `B` where one
/// applies, burn's ops elsewhere.
fn dense<B: Backend>(linear: &Linear<B>, mut x: Tensor<B, 2>, relu: bool) -> Tensor<B, 2> {
    if let (Some(bias), true) = (&linear.bias, crate::enabled()) {
        let (w, b) = (linear.weight.val(), bias.val());
        let fused = fused::apply::<Flex, Dense, B, 2>(x, w.clone(), b.clone(), relu);
        #[cfg(feature = "tch")]
        let fused =
            fused.or_else(|x| fused::apply::<LibTorch, libtorch::Dense, B, 2>(x, w, b, relu));
        match fused {
            Ok(y) => {
                crate::count(Kind::Dense, true);
                return y;
            }
            Err(back) => x = back,
        }
    }
    crate::count(Kind::Dense, false);
    let y = linear.forward(x);
    match relu {
        true => activation::relu(y),
        false => y,
    }
}

fn slice(t: &FlexTensor) -> &[f32] {
    t.as_slice::<f32>().unwrap_or_default()
}

fn tensor<const D: usize>(t: FlexTensor) -> Tensor<Flex, D> {
    Tensor::from_primitive(TensorPrimitive::Float(t))
}

#[derive(Debug, Default)]
struct Dense;

impl Fused<Flex> for Dense {
    /// Whether a ReLU follows.
    type Params = bool;

    fn forward(x: FlexTensor, w: FlexTensor, b: FlexTensor, relu: bool) -> FlexTensor {
        paths::forward(x, w, b, relu)
    }
}

impl Backward<Flex, 3> for Dense {
    type State = Saved<FlexTensor, bool>;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w, node_b] = ops.parents;
        let grad = grads.consume::<Flex>(&ops.node);
        let Saved {
            x,
            w,
            out,
            params: relu,
        } = ops.state;
        let ids = [node_x, node_w, node_b].map(|node| node.map(|node| node.id));
        let values = paths::backward(grad, [x, w, out], ids.map(|id| id.is_some()), relu);
        for (id, value) in ids.into_iter().zip(values) {
            if let (Some(id), Some(value)) = (id, value) {
                grads.register::<Flex>(id, value);
            }
        }
    }
}
