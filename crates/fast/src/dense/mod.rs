//! A dense layer followed by a ReLU as an operation of `Autodiff<Flex>` (docs/ARCHITECTURE.md,
//! "Fast paths"): at every batch, each of its three products, forward and backward, runs on the
//! kernel this machine measured fastest for its shape (`paths`: batchlab's packed kernel,
//! flex's, flex's with the inner dimension shared out among the threads, or for the gradients
//! batchlab's short-batch kernel), the bias, the ReLU and its mask in passes around them. On
//! `Autodiff<LibTorch>` it is libtorch's own ops in PyTorch's order (`libtorch`). Other backends,
//! inference and the switch off take burn's `relu(linear.forward(x))`.

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
    tensor::{activation::relu, backend::Backend, Tensor, TensorPrimitive},
};

use crate::{
    fused::{self, Fused, Saved},
    Kind,
};

#[cfg(feature = "tch")]
mod libtorch;
mod paths;

pub use paths::{LONG_BATCH, SHORT_BATCH};

/// `relu(linear.forward(x))`, through the fast path where it applies.
pub fn linear_relu<B: Backend>(linear: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B, 2> {
    let (Some(bias), true) = (&linear.bias, crate::enabled()) else {
        return burn_linear_relu(linear, x);
    };
    let (w, b) = (linear.weight.val(), bias.val());
    let fused = fused::apply::<Flex, DenseRelu, B, 2>(x, w.clone(), b.clone(), ());
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

fn slice(t: &FlexTensor) -> &[f32] {
    t.as_slice::<f32>().unwrap_or_default()
}

fn tensor<const D: usize>(t: FlexTensor) -> Tensor<Flex, D> {
    Tensor::from_primitive(TensorPrimitive::Float(t))
}

#[derive(Debug, Default)]
struct DenseRelu;

impl Fused<Flex> for DenseRelu {
    type Params = ();

    fn forward(x: FlexTensor, w: FlexTensor, b: FlexTensor, (): ()) -> FlexTensor {
        paths::forward(x, w, b)
    }
}

impl Backward<Flex, 3> for DenseRelu {
    type State = Saved<FlexTensor, ()>;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w, node_b] = ops.parents;
        let grad = grads.consume::<Flex>(&ops.node);
        let Saved { x, w, out, .. } = ops.state;
        let ids = [node_x, node_w, node_b].map(|node| node.map(|node| node.id));
        let values = paths::backward(grad, [x, w, out], ids.map(|id| id.is_some()));
        for (id, value) in ids.into_iter().zip(values) {
            if let (Some(id), Some(value)) = (id, value) {
                grads.register::<Flex>(id, value);
            }
        }
    }
}
