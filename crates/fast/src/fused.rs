//! What every fused layer + ReLU operation shares (the convolutions' and the dense layers', on
//! flex and on LibTorch): recognising its backend behind a generic `B`, and recording the
//! operation on burn-autodiff's graph with what its backward keeps (the burn book's "Backend
//! Extension").

use std::{any::TypeId, fmt::Debug};

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
pub(crate) trait Fused<B: Backend>:
    Backward<B, 3, State = Saved<B::FloatTensorPrimitive, Self::Params>> + Default
{
    /// The layer's settings beside its tensors: a convolution's padding, nothing for a dense
    /// layer.
    type Params: Copy + Debug + Send + Sync + 'static;

    /// The layer (its input, kernel and bias), then the ReLU.
    fn forward(
        x: B::FloatTensorPrimitive,
        w: B::FloatTensorPrimitive,
        b: B::FloatTensorPrimitive,
        params: Self::Params,
    ) -> B::FloatTensorPrimitive;

    /// Whether the operation can run in this process.
    fn available() -> bool {
        true
    }
}

/// What the backward needs: the input, the kernel and the ReLU's output (which the next layer
/// holds anyway), and the layer's settings.
#[derive(Debug, Clone)]
pub(crate) struct Saved<T, P> {
    pub x: T,
    pub w: T,
    pub out: T,
    pub params: P,
}

/// `Op` where `B` is `Autodiff<Inner>`, every tensor is f32 and `Op` is available; `Err(x)`
/// hands the input back for burn's path.
pub(crate) fn apply<Inner: Backend, Op: Fused<Inner>, B: Backend, const D: usize>(
    x: Tensor<B, D>,
    w: Tensor<B, D>,
    b: Tensor<B, 1>,
    params: Op::Params,
) -> Result<Tensor<B, D>, Tensor<B, D>> {
    if TypeId::of::<B>() != TypeId::of::<Autodiff<Inner>>()
        || x.dtype() != DType::F32
        || !Op::available()
    {
        return Err(x);
    }
    let x: Tensor<Autodiff<Inner>, D> = cast(x)?;
    let (Ok(w), Ok(b)) = (cast(w), cast(b)) else {
        unreachable!("the weight and bias share the input's backend");
    };
    let y = record::<Inner, Op, D>(x, w, b, params);
    Ok(cast(y).unwrap_or_else(|_| unreachable!("B is Autodiff<Inner>")))
}

fn record<Inner: Backend, Op: Fused<Inner>, const D: usize>(
    x: Tensor<Autodiff<Inner>, D>,
    w: Tensor<Autodiff<Inner>, D>,
    b: Tensor<Autodiff<Inner>, 1>,
    params: Op::Params,
) -> Tensor<Autodiff<Inner>, D> {
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
            let out = Op::forward(
                x.primitive.clone(),
                w.primitive.clone(),
                b.primitive,
                params,
            );
            let state = Saved {
                x: x.primitive,
                w: w.primitive,
                out: out.clone(),
                params,
            };
            prep.finish(state, out)
        }
        OpsKind::UnTracked(prep) => {
            prep.finish(Op::forward(x.primitive, w.primitive, b.primitive, params))
        }
    };
    Tensor::from_primitive(TensorPrimitive::Float(out))
}
