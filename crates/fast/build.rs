//! With the `tch` feature, scripts the LibTorch convolution + ReLU backward (a TorchScript module
//! calling `aten::convolution_backward`, which tch 0.22 does not bind) with the `python` whose
//! torch the build links against (`just build-tch`), into `$OUT_DIR/conv_relu_backward.pt`, which
//! `conv::libtorch` embeds. Without a Python with torch (a build against `LIBTORCH` alone) the
//! file is left empty and the operation falls back to burn's composed backward.

use std::{env, fs, path::PathBuf, process::Command};

/// The module: the ReLU's mask, then oneDNN's (or cuDNN's) backward of the convolution, asked
/// only for the gradients needed (no input gradient for a first layer); and as its method
/// `conv`, the backward of any convolution (stride, dilation, groups, with or without a bias)
/// that no ReLU follows in the same op.
const SCRIPT: &str = r#"
import sys
from typing import List, Tuple

import torch
from torch import Tensor


class ConvReluBackward(torch.nn.Module):
    def forward(self, grad: Tensor, out: Tensor, x: Tensor, w: Tensor, padding: List[int],
                input_grad: bool) -> Tuple[Tensor, Tensor, Tensor]:
        g = torch.ops.aten.threshold_backward(grad, out, 0.0)
        dx, dw, db = torch.ops.aten.convolution_backward(
            g, x, w, [w.size(0)], [1, 1], padding, [1, 1], False, [0, 0], 1,
            [input_grad, True, True])
        if not input_grad:
            dx = torch.empty(0)
        return dx, dw, db

    @torch.jit.export
    def conv(self, grad: Tensor, x: Tensor, w: Tensor, stride: List[int], padding: List[int],
             dilation: List[int], groups: int, input_grad: bool,
             bias_grad: bool) -> Tuple[Tensor, Tensor, Tensor]:
        dx, dw, db = torch.ops.aten.convolution_backward(
            grad, x, w, [w.size(0)], stride, padding, dilation, False, [0, 0], groups,
            [input_grad, True, bias_grad])
        if not input_grad:
            dx = torch.empty(0)
        if not bias_grad:
            db = torch.empty(0)
        return dx, dw, db


torch.jit.script(ConvReluBackward()).save(sys.argv[1])
"#;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_TCH").is_none() {
        return;
    }
    for var in ["VIRTUAL_ENV", "PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let module = out.join("conv_relu_backward.pt");
    let python = if env::var_os("VIRTUAL_ENV").is_some() {
        "python"
    } else {
        "python3"
    };
    // From a file: TorchScript reads a class's source back through `inspect`.
    let script = out.join("conv_relu_backward.py");
    fs::write(&script, SCRIPT).expect("OUT_DIR is writable");
    let scripted = Command::new(python)
        .args(["-W", "ignore"])
        .arg(&script)
        .arg(&module)
        .output();
    match scripted {
        Ok(o) if o.status.success() => {}
        failed => {
            let why = match failed {
                Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                Err(e) => e.to_string(),
            };
            println!(
                "cargo:warning=no TorchScript convolution backward ({python}: {why}); LibTorch convolutions take burn's composed backward"
            );
            fs::write(&module, b"").expect("OUT_DIR is writable");
        }
    }
}
