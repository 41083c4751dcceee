//! The fused convolution + ReLU as an operation of `Autodiff<LibTorch>` whose backward is
//! libtorch's own (`aten::convolution_backward`: oneDNN on the CPU, cuDNN on a GPU), where burn
//! composes one from a transposed convolution and a forward convolution with batch and channels
//! swapped (slower, and slower still at batch sizes that are not a multiple of 16:
//! docs/tch-performance.md). tch 0.22 binds no `convolution_backward`, so the call goes through a
//! TorchScript module that `build.rs` scripts at build time and this file embeds. The backward
//! builds no libtorch autograd graph (burn-tch's tensors assume none exists): it calls the
//! backward kernels on the saved input, kernel and output, once. `op` records it on the autodiff
//! graph.

use std::any::TypeId;
use std::sync::{Mutex, OnceLock};

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
    nn::conv::Conv2d,
    tensor::{
        backend::Backend,
        ops::{ActivationOps, ConvOptions, ModuleOps, PadMode},
        DType, Tensor, TensorPrimitive,
    },
};
use tch::{CModule, IValue};

use crate::fused::{Fused, Saved};
use crate::storage::cast;

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

/// The fused operation on LibTorch.
#[derive(Debug, Default)]
pub(super) struct ConvRelu;

impl Fused<LibTorch> for ConvRelu {
    /// The padding.
    type Params = [usize; 2];

    /// libtorch's convolution (as burn-tch calls it) and ReLU, in place on the fresh output.
    fn forward(x: TchTensor, w: TchTensor, b: TchTensor, padding: [usize; 2]) -> TchTensor {
        let options = ConvOptions::new([1, 1], padding, [1, 1], 1);
        let out = <LibTorch as ModuleOps<LibTorch>>::conv2d(x, w, Some(b), options);
        <LibTorch as ActivationOps<LibTorch>>::relu(out)
    }

    /// Where the build scripted the module and it loads.
    fn available() -> bool {
        module().is_some()
    }
}

impl Backward<LibTorch, 3> for ConvRelu {
    type State = Saved<TchTensor, [usize; 2]>;

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w, node_b] = ops.parents;
        let grad = grads.consume::<LibTorch>(&ops.node);
        let Saved {
            x,
            w,
            out,
            params: padding,
        } = ops.state;
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
        for (node, value) in [node_x, node_w, node_b].into_iter().zip(three(result)) {
            if let (Some(node), IValue::Tensor(t)) = (node, value) {
                grads.register::<LibTorch>(node.id, TchTensor::new(t));
            }
        }
    }
}

/// Any convolution on LibTorch with libtorch's own backward (the module's method `conv`):
/// stride, padding, dilation and groups as the layer has them, with a bias (`N` = 3 parents) or
/// without (`N` = 2). burn composes a grouped convolution's weight gradient one group at a time,
/// so a depthwise layer of 1024 channels cost 1024 convolutions and slice assignments a step;
/// on an H200, MobileNet v1's step took 1.0-3.1 s that way (docs/backends.md).
#[derive(Debug, Default)]
pub(super) struct Conv<const N: usize>;

/// What [`Conv`]'s backward needs: the input, the kernel and the layer's options (padding
/// symmetric: an uneven one is padded onto the input before, by burn).
#[derive(Debug, Clone)]
pub(super) struct ConvSaved {
    x: TchTensor,
    w: TchTensor,
    options: ConvOptions<2>,
}

impl<const N: usize> Backward<LibTorch, N> for Conv<N> {
    type State = ConvSaved;

    fn backward(self, ops: Ops<Self::State, N>, grads: &mut Gradients, _: &mut Checkpointer) {
        let grad = grads.consume::<LibTorch>(&ops.node);
        let [node_x, node_w] = [ops.parents[0].clone(), ops.parents[1].clone()];
        let node_b = ops.parents.get(2).cloned().flatten();
        let ConvSaved { x, w, options } = ops.state;
        let ints = |v: [usize; 2]| IValue::IntList(v.iter().map(|&p| p as i64).collect());
        let inputs = [
            IValue::Tensor(grad.tensor.shallow_clone()),
            IValue::Tensor(x.tensor.shallow_clone()),
            IValue::Tensor(w.tensor.shallow_clone()),
            ints(options.stride),
            ints(options.padding),
            ints(options.dilation),
            IValue::Int(options.groups as i64),
            IValue::Bool(node_x.is_some()),
            IValue::Bool(node_b.is_some()),
        ];
        let module = module().expect("the op is built only where the module loaded");
        let result = module
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .method_is("conv", &inputs);
        for (node, value) in [node_x, node_w, node_b].into_iter().zip(three(result)) {
            if let (Some(node), IValue::Tensor(t)) = (node, value) {
                grads.register::<LibTorch>(node.id, TchTensor::new(t));
            }
        }
    }
}

/// The module's three gradients, dx, dw and db, from what it returned.
fn three(result: Result<IValue, tch::TchError>) -> [IValue; 3] {
    match result {
        Ok(IValue::Tuple(values)) => <[IValue; 3]>::try_from(values).unwrap_or_else(|values| {
            panic!(
                "the backward module returned {} values, not 3",
                values.len()
            )
        }),
        Ok(other) => panic!("the backward module returned {other:?}, not a tuple"),
        Err(e) => panic!("libtorch's convolution backward failed: {e}"),
    }
}

/// `conv.forward(x)` recorded on the autodiff graph with libtorch's backward (an uneven padding
/// padded onto the input first, by burn); `Err(x)` where LibTorch is not the backend, the input
/// is not f32 or the module did not load.
pub(super) fn conv<B: Backend>(
    conv: &Conv2d<B>,
    x: Tensor<B, 4>,
) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    if TypeId::of::<B>() != TypeId::of::<Autodiff<LibTorch>>()
        || x.dtype() != DType::F32
        || module().is_none()
    {
        return Err(x);
    }
    let [_, _, height, width] = x.dims();
    let [(top, bottom), (left, right)] = super::padding_pairs(conv, [height, width]);
    let even = [top.min(bottom), left.min(right)];
    let x = if [top, left] == [bottom, right] {
        x
    } else {
        let uneven = (
            left - even[1],
            right - even[1],
            top - even[0],
            bottom - even[0],
        );
        x.pad(uneven, PadMode::Constant(0.0))
    };
    let options = ConvOptions::new(conv.stride, even, conv.dilation, conv.groups);
    let x: Tensor<Autodiff<LibTorch>, 4> =
        cast(x).unwrap_or_else(|_| unreachable!("B is Autodiff<LibTorch>"));
    let w: Tensor<Autodiff<LibTorch>, 4> = cast(conv.weight.val())
        .unwrap_or_else(|_| unreachable!("the kernel shares the input's backend"));
    let (x, w) = (x.into_primitive().tensor(), w.into_primitive().tensor());
    let forward = |bias: Option<TchTensor>| {
        <LibTorch as ModuleOps<LibTorch>>::conv2d(
            x.primitive.clone(),
            w.primitive.clone(),
            bias,
            options.clone(),
        )
    };
    let saved = || ConvSaved {
        x: x.primitive.clone(),
        w: w.primitive.clone(),
        options: options.clone(),
    };
    let out = match &conv.bias {
        Some(b) => {
            let b: Tensor<Autodiff<LibTorch>, 1> = cast(b.val())
                .unwrap_or_else(|_| unreachable!("the bias shares the input's backend"));
            let b = b.into_primitive().tensor();
            let nodes = [x.node.clone(), w.node.clone(), b.node.clone()];
            match Conv::<3>
                .prepare::<NoCheckpointing>(nodes)
                .compute_bound()
                .stateful()
            {
                OpsKind::Tracked(prep) => prep.finish(saved(), forward(Some(b.primitive))),
                OpsKind::UnTracked(prep) => prep.finish(forward(Some(b.primitive))),
            }
        }
        None => {
            let nodes = [x.node.clone(), w.node.clone()];
            match Conv::<2>
                .prepare::<NoCheckpointing>(nodes)
                .compute_bound()
                .stateful()
            {
                OpsKind::Tracked(prep) => prep.finish(saved(), forward(None)),
                OpsKind::UnTracked(prep) => prep.finish(forward(None)),
            }
        }
    };
    let y: Tensor<Autodiff<LibTorch>, 4> = Tensor::from_primitive(TensorPrimitive::Float(out));
    Ok(cast(y).unwrap_or_else(|_| unreachable!("B is Autodiff<LibTorch>")))
}
