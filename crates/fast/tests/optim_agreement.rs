//! Each fast optimizer against burn-optim's, over several steps of the same gradients, on flex
//! (the fused pass) and, with the `tch` feature (`just test-tch`), on LibTorch (in-place
//! libtorch ops): both do burn's f32 operations in burn's order, so the parameters may differ only
//! by rounding (stated tolerance: 1e-6 relative, 1e-7 absolute, after 6 steps).

use batchlab_fast::{
    counts,
    optim::{Adam, Decay, Momentum, Sgd},
    Kind,
};
use burn::{
    backend::{Autodiff, Flex},
    module::{Module, Param},
    optim::{
        adaptor::OptimizerAdaptor, decay::WeightDecayConfig, momentum::MomentumConfig, AdamConfig,
        AdamWConfig, GradientsParams, Optimizer, SgdConfig, SimpleOptimizer,
    },
    tensor::{
        backend::{AutodiffBackend, Backend},
        Tensor, TensorData,
    },
};

/// Parameters of odd shapes (17 x 33 and 17), so chunks and remainders are both exercised.
#[derive(Module, Debug)]
struct Toy<B: Backend> {
    w: Param<Tensor<B, 2>>,
    b: Param<Tensor<B, 1>>,
}

/// Uniform values in [-1, 1) from a seed (a local generator: burn's is global, and the tests of
/// a file run at the same time).
fn noise<B: Backend, const D: usize>(seed: u64, shape: [usize; D]) -> Tensor<B, D> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let values: Vec<f32> = (0..shape.iter().product::<usize>())
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect();
    Tensor::from_data(TensorData::new(values, shape), &Default::default())
}

fn toy<B: Backend>() -> Toy<B> {
    Toy {
        w: Param::from_tensor(noise(11, [17, 33])),
        b: Param::from_tensor(noise(12, [17])),
    }
}

/// `steps` updates with gradients that do not depend on the parameters (loss = Σ w·a + Σ b·c
/// with a fresh random a, c per step), so both optimizers see exactly the same gradients.
fn train<B: AutodiffBackend, O: Optimizer<Toy<B>, B>>(
    mut optimizer: O,
    steps: usize,
    lr: f64,
) -> Vec<f32> {
    let mut model = toy::<B>();
    for step in 0..steps as u64 {
        let a = noise::<B, 2>(100 + 2 * step, [17, 33]);
        let c = noise::<B, 1>(101 + 2 * step, [17]);
        let loss = (model.w.val() * a).sum() + (model.b.val() * c).sum();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optimizer.step(lr, model, grads);
    }
    let mut values = model.w.val().into_data().to_vec::<f32>().unwrap();
    values.extend(model.b.val().into_data().to_vec::<f32>().unwrap());
    values
}

fn assert_close(fast: &[f32], burn: &[f32], what: &str) {
    assert_eq!(fast.len(), burn.len());
    for (i, (f, b)) in fast.iter().zip(burn).enumerate() {
        let tolerance = 1e-7 + 1e-6 * b.abs();
        assert!(
            (f - b).abs() <= tolerance,
            "{what}: element {i}: fast {f} against burn {b}"
        );
    }
}

/// Nothing in this test process ever takes burn's ops: every update was made in place.
fn assert_all_in_place() {
    let done = counts(Kind::Update);
    assert!(done.fast > 0 && done.fallback == 0, "{done:?}");
}

fn fast<B: AutodiffBackend, O: SimpleOptimizer<B::InnerBackend>>(
    o: O,
) -> OptimizerAdaptor<O, Toy<B>, B> {
    o.into()
}

#[test]
fn sgd_matches_burn_on_flex() {
    sgd_matches_burn::<Autodiff<Flex>>();
}

#[test]
fn adam_and_adamw_match_burn_on_flex() {
    adam_and_adamw_match_burn::<Autodiff<Flex>>();
}

#[cfg(feature = "tch")]
#[test]
fn sgd_matches_burn_on_libtorch() {
    sgd_matches_burn::<Autodiff<burn::backend::LibTorch>>();
}

#[cfg(feature = "tch")]
#[test]
fn adam_and_adamw_match_burn_on_libtorch() {
    adam_and_adamw_match_burn::<Autodiff<burn::backend::LibTorch>>();
}

fn sgd_matches_burn<B: AutodiffBackend>() {
    let lr = 0.05;
    // Every kind of update loop: without and with momentum (with and without dampening and
    // Nesterov), each without and with weight decay.
    for (momentum, dampening, nesterov, decay) in [
        (0.0, 0.0, false, None),
        (0.0, 0.0, false, Some(0.01)),
        (0.9, 0.0, false, None),
        (0.9, 0.1, false, Some(0.01)),
        (0.9, 0.0, true, Some(0.001)),
        (0.9, 0.1, true, None),
    ] {
        let burn = SgdConfig::new()
            .with_momentum((momentum > 0.0).then_some(MomentumConfig {
                momentum,
                dampening,
                nesterov,
            }))
            .with_weight_decay(decay.map(WeightDecayConfig::new))
            .init();
        let ours = Sgd {
            momentum: (momentum > 0.0).then_some(Momentum {
                momentum,
                dampening,
                nesterov,
            }),
            weight_decay: decay,
        };
        let what = format!(
            "sgd momentum {momentum} dampening {dampening} nesterov {nesterov} decay {decay:?}"
        );
        assert_close(
            &train::<B, _>(fast(ours), 6, lr),
            &train::<B, _>(burn, 6, lr),
            &what,
        );
    }
    assert_all_in_place();
}

fn adam_and_adamw_match_burn<B: AutodiffBackend>() {
    let lr = 0.01;
    for decay in [None, Some(0.01)] {
        let burn = AdamConfig::new()
            .with_epsilon(1e-7)
            .with_weight_decay(decay.map(WeightDecayConfig::new))
            .init();
        let ours = Adam {
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            decay: decay.map_or(Decay::None, Decay::Coupled),
        };
        let what = format!("adam decay {decay:?}");
        assert_close(
            &train::<B, _>(fast(ours), 6, lr),
            &train::<B, _>(burn, 6, lr),
            &what,
        );
    }
    for decay in [0.0, 0.05] {
        let burn = AdamWConfig::new()
            .with_epsilon(1e-7)
            .with_weight_decay(decay)
            .init();
        let ours = Adam {
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            decay: Decay::Decoupled(decay),
        };
        let what = format!("adamw decay {decay}");
        assert_close(
            &train::<B, _>(fast(ours), 6, lr),
            &train::<B, _>(burn, 6, lr),
            &what,
        );
    }
    assert_all_in_place();
}
