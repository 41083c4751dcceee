//! A few optimiser steps on one fixed batch lower the loss, for each family: the forward pass,
//! the loss and the gradients are wired together (a detached layer or a wrong loss would leave
//! the loss flat). Tiny inputs keep every test within seconds. Each runs on flex and, in a
//! build with the `tch` feature, on LibTorch too.

use burn::backend::Autodiff;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::tensor::{backend::AutodiffBackend, Distribution, ElementConversion};

use super::{seeded, spec, Cpu};
use crate::Architecture::*;
use crate::{classification_loss, ModelSpec};

/// Runs `steps` Adam steps on one seeded batch on backend `B`; returns the loss before each
/// step and after the last.
fn losses<B: AutodiffBackend>(spec: &ModelSpec, batch: usize, steps: usize, lr: f64) -> Vec<f32> {
    let device = Default::default();
    let _rng = seeded::<B>(3);
    let mut model = spec.init::<B>(&device).unwrap();
    let [c, h, w] = spec.input;
    let images = Tensor::<B, 4>::random([batch, c, h, w], Distribution::Normal(0.0, 1.0), &device);
    // Every class present; with one logit the labels are 0/1.
    let classes = spec.classes.max(2) as i64;
    let labels: Vec<i64> = (0..batch as i64).map(|i| i % classes).collect();
    let labels = Tensor::<B, 1, Int>::from_data(TensorData::from(labels.as_slice()), &device);
    let mut optim = AdamConfig::new().init();
    let mut losses = Vec::with_capacity(steps + 1);
    for step in 0..=steps {
        let loss = classification_loss(model.forward(images.clone()), labels.clone());
        losses.push(loss.clone().into_scalar().elem::<f32>());
        if step < steps {
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(lr, model, grads);
        }
    }
    losses
}

/// The loss must fall by at least `drop` (a fraction of the first loss), on every backend built.
fn assert_learns(spec: ModelSpec, batch: usize, steps: usize, lr: f64, drop: f32) {
    assert_learns_on::<Autodiff<Cpu>>("flex", &spec, batch, steps, lr, drop);
    #[cfg(feature = "tch")]
    assert_learns_on::<Autodiff<super::Torch>>("tch", &spec, batch, steps, lr, drop);
}

fn assert_learns_on<B: AutodiffBackend>(
    backend: &str,
    spec: &ModelSpec,
    batch: usize,
    steps: usize,
    lr: f64,
    drop: f32,
) {
    let losses = losses::<B>(spec, batch, steps, lr);
    assert!(
        losses.iter().all(|loss| loss.is_finite()),
        "{backend}: {spec:?}: {losses:?}"
    );
    let (first, last) = (losses[0], losses[steps]);
    assert!(
        last < (1.0 - drop) * first,
        "{backend}: {}: loss {first} -> {last} ({losses:?})",
        spec.architecture
    );
}

#[test]
fn vgg_learns() {
    // Keras's Glorot init on 16 plain ReLU layers without BatchNorm starts with logits near 0
    // and tiny gradients in the early layers: VGG16 from scratch is slow to start (it fell 4%
    // in these 10 steps), so a smaller drop is asked of it than of the others.
    assert_learns(spec(Vgg16, [3, 32, 32], 4), 4, 10, 2e-4, 0.02);
}

#[test]
fn resnet_learns() {
    assert_learns(spec(ResNet18, [3, 32, 32], 4), 4, 5, 1e-3, 0.2);
    assert_learns(spec(ResNet8, [3, 16, 16], 4), 4, 5, 1e-3, 0.2);
}

#[test]
fn mobilenet_v1_learns() {
    assert_learns(spec(MobileNetV1, [3, 32, 32], 4), 4, 5, 1e-3, 0.2);
}

#[test]
fn mobilenet_v2_learns() {
    assert_learns(spec(MobileNetV2, [3, 32, 32], 4), 4, 5, 1e-3, 0.2);
}

#[test]
fn mobilenet_v3_learns() {
    assert_learns(spec(MobileNetV3Small, [3, 32, 32], 4), 4, 5, 1e-3, 0.2);
}

#[test]
fn small_cnn_learns_with_one_logit() {
    assert_learns(spec(SmallCnn, [3, 16, 16], 1), 8, 5, 3e-4, 0.2);
}

#[test]
fn simple_cnn_learns() {
    assert_learns(spec(SimpleCnn, [1, 16, 16], 10), 10, 5, 1e-3, 0.2);
}

#[test]
fn mlp_learns() {
    let mlp = ModelSpec {
        hidden: vec![32],
        ..spec(Mlp, [1, 8, 8], 3)
    };
    assert_learns(mlp, 6, 10, 1e-2, 0.2);
}

#[test]
fn binary_loss_is_stable_and_matches_by_hand() {
    let device = Default::default();
    // BCE with logits: softplus(x) - y x. For x = 0: ln 2 either way; for x = 100, y = 1: ~0.
    let logits = Tensor::<Cpu, 2>::from_data([[0.0f32], [100.0], [-100.0]], &device);
    let labels = Tensor::<Cpu, 1, Int>::from_data([1i64, 1, 0], &device);
    let loss = classification_loss(logits, labels)
        .into_scalar()
        .elem::<f32>();
    assert!((loss - std::f32::consts::LN_2 / 3.0).abs() < 1e-6, "{loss}");
    // Cross-entropy with uniform logits over 4 classes: ln 4.
    let logits = Tensor::<Cpu, 2>::zeros([2, 4], &device);
    let labels = Tensor::<Cpu, 1, Int>::from_data([0i64, 3], &device);
    let loss = classification_loss(logits, labels)
        .into_scalar()
        .elem::<f32>();
    assert!((loss - 4f32.ln()).abs() < 1e-6, "{loss}");
}
