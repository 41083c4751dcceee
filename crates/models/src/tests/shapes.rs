//! Every architecture maps `[batch, C, H, W]` to `[batch, classes]` at a small input.

use burn::tensor::{Distribution, Tensor};

use super::{seeded, spec, Cpu};
use crate::Architecture::{self, *};
use crate::{ModelError, ModelSpec};

fn assert_logits_shape(spec: &ModelSpec) {
    let device = Default::default();
    let _rng = seeded::<Cpu>(1);
    let model = spec.init::<Cpu>(&device).unwrap();
    let [c, h, w] = spec.input;
    let images = Tensor::<Cpu, 4>::random([2, c, h, w], Distribution::Normal(0.0, 1.0), &device);
    let logits = model.forward(images);
    assert_eq!(logits.dims(), [2, spec.classes], "{spec:?}");
}

/// The smallest convenient input of each architecture.
fn small_input(architecture: Architecture) -> [usize; 3] {
    match architecture {
        SmallCnn => [3, 16, 16],
        SimpleCnn | Mlp => [1, 28, 28],
        _ => [3, 32, 32],
    }
}

#[test]
fn every_architecture_outputs_batch_by_classes() {
    for architecture in Architecture::ALL {
        assert_logits_shape(&spec(architecture, small_input(architecture), 3));
    }
}

#[test]
fn single_logit_heads_and_odd_inputs() {
    // Binary heads, non-square inputs, inputs that do not divide by 32 and extra channels.
    assert_logits_shape(&spec(SmallCnn, [3, 20, 14], 1));
    assert_logits_shape(&spec(Vgg16, [1, 45, 33], 1));
    assert_logits_shape(&spec(ResNet18, [4, 33, 40], 2));
    assert_logits_shape(&spec(ResNet8, [3, 32, 32], 10));
    assert_logits_shape(&spec(ResNet8, [1, 9, 13], 3));
    assert_logits_shape(&spec(MobileNetV1, [3, 37, 32], 2));
    assert_logits_shape(&spec(MobileNetV3Small, [3, 35, 50], 2));
}

#[test]
fn width_multipliers_build() {
    for (architecture, width) in [
        (ResNet18, 0.25),
        (MobileNetV1, 0.25),
        (MobileNetV2, 0.35),
        (MobileNetV3Large, 0.75),
    ] {
        let spec = ModelSpec {
            width,
            ..spec(architecture, [3, 32, 32], 5)
        };
        assert_logits_shape(&spec);
    }
}

#[test]
fn mlp_accepts_any_depth() {
    for hidden in [vec![], vec![16], vec![16, 8, 4]] {
        assert_logits_shape(&ModelSpec {
            hidden,
            ..spec(Mlp, [2, 5, 3], 4)
        });
    }
}

#[test]
fn shapes_follow_the_layer_tables() {
    // The analytic plan and the module must agree on the flatten size: a mismatch would fail
    // inside forward. VGG at 224 would allocate 138 M weights, so check at 64.
    assert_logits_shape(&spec(Vgg19, [3, 64, 64], 10));
    assert!(matches!(
        spec(Vgg19, [3, 31, 64], 10).init::<Cpu>(&Default::default()),
        Err(ModelError::InputTooSmall { .. })
    ));
}
