//! What the fused convolution + ReLU operations of flex and LibTorch share: recognising their
//! backend behind a generic `B`, and recording the operation on burn-autodiff's graph with what
//! its backward keeps (the burn book's "Backend Extension").

use std::any::TypeId;

use burn::{
    backend::{
        autodiff::{
            checkpoint::strategy::NoCheckpointing,
            ops::{Backward, OpsKind},
        },
        Autodiff,
    },
    tensor::{backend::Backend, DType, Tensor, TensorPrimitive},
};

use crate::storage::cast;

/// One backend's fused operation: its forward on that backend's tensors; its backward is the
/// `Backward` implementation.
pub(super) trait Fused<B: Backend>:
    Backward<B, 3, State = Saved<B::FloatTensorPrimitive>> + Default
{
    /// The convolution (stride 1, the given padding) with its bias, then the ReLU.
    fn conv_relu(
        x: B::FloatTensorPrimitive,
        w: B::FloatTensorPrimitive,
        b: B::FloatTensorPrimitive,
        padding: [usize; 2],
    ) -> B::FloatTensorPrimitive;

    /// Whether the operation can run in this process.
    fn available() -> bool {
        true
    }
}

/// What the backward needs: the input, the kernel and the ReLU's output (which the next layer
/// holds anyway).
#[derive(Debug, Clone)]
pub(super) struct Saved<T> {
    pub x: T,
    pub w: T,
    pub out: T,
    pub padding: [usize; 2],
}

/// `Op` where `B` is `Autodiff<Inner>`, every tensor is f32 and `Op` is available; `Err(x)`
/// hands the input back for burn's path.
pub(super) fn apply<Inner: Backend, Op: Fused<Inner>, B: Backend>(
    x: Tensor<B, 4>,
    w: Tensor<B, 4>,
    b: Tensor<B, 1>,
    padding: [usize; 2],
) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    if TypeId::of::<B>() != TypeId::of::<Autodiff<Inner>>()
        || x.dtype() != DType::F32
        || !Op::available()
    {
        return Err(x);
    }
    let x: Tensor<Autodiff<Inner>, 4> = cast(x)?;
    let (Ok(w), Ok(b)) = (cast(w), cast(b)) else {
        unreachable!("the weight and bias share the input's backend");
    };
    let y = record::<Inner, Op>(x, w, b, padding);
    Ok(cast(y).unwrap_or_else(|_| unreachable!("B is Autodiff<Inner>")))
}

fn record<Inner: Backend, Op: Fused<Inner>>(
    x: Tensor<Autodiff<Inner>, 4>,
    w: Tensor<Autodiff<Inner>, 4>,
    b: Tensor<Autodiff<Inner>, 1>,
    padding: [usize; 2],
) -> Tensor<Autodiff<Inner>, 4> {
    let (x, w, b) = (
        x.into_primitive().tensor(),
        w.into_primitive().tensor(),
        b.into_primitive().tensor(),
    );
    let nodes = [x.node.clone(), w.node.clone(), b.node.clone()];
    let out = match Op::default()
        .prepare::<NoCheckpointing>(nodes)
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let out = Op::conv_relu(
                x.primitive.clone(),
                w.primitive.clone(),
                b.primitive,
                padding,
            );
            let state = Saved {
                x: x.primitive,
                w: w.primitive,
                out: out.clone(),
                padding,
            };
            prep.finish(state, out)
        }
        OpsKind::UnTracked(prep) => prep.finish(Op::conv_relu(
            x.primitive,
            w.primitive,
            b.primitive,
            padding,
        )),
    };
    Tensor::from_primitive(TensorPrimitive::Float(out))
}
