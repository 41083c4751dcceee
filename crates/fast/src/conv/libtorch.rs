//! The fused convolution + ReLU as an operation of `Autodiff<LibTorch>` whose backward is
//! libtorch's own (`aten::convolution_backward`: oneDNN on the CPU, cuDNN on a GPU), where burn
//! composes one from a transposed convolution and a forward convolution with batch and channels
//! swapped (slower, and slower still at batch sizes that are not a multiple of 16:
//! docs/tch-performance.md). tch 0.22 binds no `convolution_backward`, so the call goes through a
//! TorchScript module that `build.rs` scripts at build time and this file embeds. The backward
//! builds no libtorch autograd graph (burn-tch's tensors assume none exists): it calls the
//! backward kernels on the saved input, kernel and output, once.

use std::{
    any::TypeId,
    sync::{Mutex, OnceLock},
};

use burn::{
    backend::{
        autodiff::{
            checkpoint::{base::Checkpointer, strategy::NoCheckpointing},
            grads::Gradients,
            ops::{Backward, Ops, OpsKind},
        },
        libtorch::TchTensor,
        Autodiff, LibTorch,
    },
    tensor::{
        backend::Backend,
        ops::{ActivationOps, ConvOptions, ModuleOps},
        DType, Tensor, TensorPrimitive,
    },
};
use tch::{CModule, IValue};

use super::cast;

type Ad = Autodiff<LibTorch>;

/// The TorchScript module `build.rs` wrote (empty where the build had no Python with torch).
const MODULE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/conv_relu_backward.pt"));

/// The loaded module, once per process; `None` where it is missing or does not load.
fn module() -> Option<&'static Mutex<CModule>> {
    static LOADED: OnceLock<Option<Mutex<CModule>>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let mut bytes = MODULE;
            CModule::load_data(&mut bytes).ok().map(Mutex::new)
        })
        .as_ref()
}

/// The fused op where `B` is `Autodiff<LibTorch>`, every tensor is f32 and the module loaded;
/// `Err(x)` hands the input back for burn's path.
pub(super) fn conv2d_relu<B: Backend>(
    x: Tensor<B, 4>,
    w: Tensor<B, 4>,
    b: Tensor<B, 1>,
    padding: [usize; 2],
) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    if TypeId::of::<B>() != TypeId::of::<Ad>() || x.dtype() != DType::F32 || module().is_none() {
        return Err(x);
    }
    let x: Tensor<Ad, 4> = cast(x)?;
    let (Ok(w), Ok(b)) = (cast::<_, Tensor<Ad, 4>>(w), cast::<_, Tensor<Ad, 1>>(b)) else {
        unreachable!("the weight and bias share the input's backend");
    };
    let y = forward(x, w, b, padding);
    Ok(cast(y).unwrap_or_else(|_| unreachable!("B is Autodiff<LibTorch>")))
}

/// libtorch's convolution (as burn-tch calls it) and ReLU, in place on the fresh output.
fn conv_relu(x: TchTensor, w: TchTensor, b: TchTensor, padding: [usize; 2]) -> TchTensor {
    let options = ConvOptions::new([1, 1], padding, [1, 1], 1);
    let out = <LibTorch as ModuleOps<LibTorch>>::conv2d(x, w, Some(b), options);
    <LibTorch as ActivationOps<LibTorch>>::relu(out)
}

fn forward(
    x: Tensor<Ad, 4>,
    w: Tensor<Ad, 4>,
    b: Tensor<Ad, 1>,
    padding: [usize; 2],
) -> Tensor<Ad, 4> {
    let (x, w, b) = (
        x.into_primitive().tensor(),
        w.into_primitive().tensor(),
        b.into_primitive().tensor(),
    );
    let nodes = [x.node.clone(), w.node.clone(), b.node.clone()];
    let out = match ConvRelu
        .prepare::<NoCheckpointing>(nodes)
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let out = conv_relu(
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
        OpsKind::UnTracked(prep) => {
            prep.finish(conv_relu(x.primitive, w.primitive, b.primitive, padding))
        }
    };
    Tensor::from_primitive(TensorPrimitive::Float(out))
}

/// What the backward needs: the input, the kernel and the ReLU's output.
#[derive(Debug, Clone)]
struct Saved {
    x: TchTensor,
    w: TchTensor,
    out: TchTensor,
    padding: [usize; 2],
}

#[derive(Debug)]
struct ConvRelu;

impl Backward<LibTorch, 3> for ConvRelu {
    type State = Saved;

    fn backward(self, ops: Ops<Saved, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w, node_b] = ops.parents;
        let grad = grads.consume::<LibTorch>(&ops.node);
        let Saved { x, w, out, padding } = ops.state;
        let padding: Vec<i64> = padding.iter().map(|&p| p as i64).collect();
        let inputs = [
            IValue::Tensor(grad.tensor.shallow_clone()),
            IValue::Tensor(out.tensor.shallow_clone()),
            IValue::Tensor(x.tensor.shallow_clone()),
            IValue::Tensor(w.tensor.shallow_clone()),
            IValue::IntList(padding),
            IValue::Bool(node_x.is_some()),
        ];
        let module = module().expect("the op is built only where the module loaded");
        let result = module
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .forward_is(&inputs);
        let [dx, dw, db] = match result {
            Ok(IValue::Tuple(values)) => match <[IValue; 3]>::try_from(values) {
                Ok(values) => values,
                Err(values) => panic!(
                    "the backward module returned {} values, not 3",
                    values.len()
                ),
            },
            Ok(other) => panic!("the backward module returned {other:?}, not a tuple"),
            Err(e) => panic!("libtorch's convolution backward failed: {e}"),
        };
        for (node, value) in [(node_x, dx), (node_w, dw), (node_b, db)] {
            if let (Some(node), IValue::Tensor(t)) = (node, value) {
                grads.register::<LibTorch>(node.id, TchTensor::new(t));
            }
        }
    }
}
