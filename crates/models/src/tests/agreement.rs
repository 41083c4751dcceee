//! flex and LibTorch compute the same network: each family's weights, built on flex, are
//! loaded into the same model on LibTorch, and both forward one batch (inference mode: no
//! autodiff, so batch norm uses its running statistics and dropout is off).
//!
//! Tolerance: the largest logit difference must stay within 1e-4 of the largest logit. Both
//! compute in f32 with differently ordered sums (gemm against oneDNN/MKL); measured on an
//! Intel Xeon, the largest difference was 1.7e-6 of the largest logit (VGG16), 1.1e-6 for
//! ResNet-50. A wrong layer, a transposed weight or a different padding rule moves logits by
//! far more than 1e-4 of the largest (weights drawn apart moved them by over 100%).

use burn::{
    module::Module,
    record::{BinBytesRecorder, FullPrecisionSettings, Recorder},
    tensor::{backend::Backend, Distribution, Tensor, TensorData},
};

use super::{seeded, spec, Cpu, Torch};
use crate::{Architecture, Model, ModelSpec};

const TOLERANCE: f32 = 1e-4;

fn logits<B: Backend>(model: &Model<B>, images: &TensorData) -> Vec<f32> {
    let device = Default::default();
    let x = Tensor::<B, 4>::from_data(images.clone(), &device);
    model.forward(x).into_data().to_vec::<f32>().unwrap()
}

/// (largest |flex - tch|, largest |flex|) over the logits of a batch of 2.
fn compare(spec: &ModelSpec) -> (f32, f32) {
    let device = Default::default();
    let _rng = seeded::<Cpu>(5);
    let flex = spec.init::<Cpu>(&device).unwrap();
    let [c, h, w] = spec.input;
    let images =
        Tensor::<Cpu, 4>::random([2, c, h, w], Distribution::Normal(0.0, 1.0), &device).into_data();
    // Parameters are drawn lazily, at first use: both models load the same serialised record
    // (a clone of an unused model would draw its own).
    let recorder = BinBytesRecorder::<FullPrecisionSettings>::default();
    let bytes = recorder.record(flex.into_record(), ()).unwrap();
    let flex = spec
        .init::<Cpu>(&device)
        .unwrap()
        .load_record(recorder.load(bytes.clone(), &device).unwrap());
    let torch_device = Default::default();
    let torch = spec
        .init::<Torch>(&torch_device)
        .unwrap()
        .load_record(recorder.load(bytes, &torch_device).unwrap());
    let (a, b) = (logits(&flex, &images), logits(&torch, &images));
    assert_eq!(a.len(), b.len());
    let diff = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    let scale = a.iter().map(|x| x.abs()).fold(0.0, f32::max);
    (diff, scale)
}

#[test]
fn every_family_computes_the_same_logits_on_flex_and_tch() {
    for architecture in Architecture::ALL {
        let input = match architecture {
            Architecture::SmallCnn => [3, 16, 16],
            Architecture::SimpleCnn | Architecture::Mlp => [1, 28, 28],
            _ => [3, 32, 32],
        };
        let (diff, scale) = compare(&spec(architecture, input, 5));
        assert!(scale > 0.0, "{architecture}: all logits are zero");
        assert!(
            diff <= TOLERANCE * scale,
            "{architecture}: logits differ by {diff} against a largest logit of {scale}"
        );
    }
}
