//! The fused convolution + ReLU as an operation of `Autodiff<LibTorch>` whose backward is
//! libtorch's own (`aten::convolution_backward`: oneDNN on the CPU, cuDNN on a GPU), where burn
//! composes one from a transposed convolution and a forward convolution with batch and channels
//! swapped (slower, and slower still at batch sizes that are not a multiple of 16:
//! docs/tch-performance.md). tch 0.22 binds no `convolution_backward`, so the call goes through a
//! TorchScript module that `build.rs` scripts at build time and this file embeds. The backward
//! builds no libtorch autograd graph (burn-tch's tensors assume none exists): it calls the
//! backward kernels on the saved input, kernel and output, once. `op` records it on the autodiff
//! graph.

use std::sync::{Mutex, OnceLock};

use burn::{
    backend::{
        autodiff::{
            checkpoint::base::Checkpointer,
            grads::Gradients,
            ops::{Backward, Ops},
        },
        libtorch::TchTensor,
        LibTorch,
    },
    tensor::ops::{ActivationOps, ConvOptions, ModuleOps},
};
use tch::{CModule, IValue};

use crate::fused::{Fused, Saved};

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
