//! The fused update runs only on tensors nothing else holds: in a training step the parameters
//! and the optimizer's state are uniquely owned (every update takes the fast path), and a model
//! clone kept alive across the step makes the optimizer fall back to burn's ops rather than write
//! storage the clone shares. One test, alone in its process: the counts are process-wide.

use batchlab_fast::{
    counts,
    optim::{Momentum, Sgd},
    Kind,
};
use burn::{
    backend::{Autodiff, Flex},
    module::{Module, Param},
    optim::{adaptor::OptimizerAdaptor, GradientsParams, Optimizer},
    tensor::{backend::Backend, Distribution, Tensor},
};

type Ad = Autodiff<Flex>;

#[derive(Module, Debug)]
struct Net<B: Backend> {
    w: Param<Tensor<B, 2>>,
    b: Param<Tensor<B, 1>>,
}

fn step(model: Net<Ad>, optimizer: &mut impl Optimizer<Net<Ad>, Ad>) -> Net<Ad> {
    let device = Default::default();
    let x = Tensor::<Ad, 2>::random([8, 5], Distribution::Normal(0.0, 1.0), &device);
    let y = x.matmul(model.w.val()) + model.b.val().unsqueeze();
    let loss = y.powi_scalar(2).mean();
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    optimizer.step(0.1, model, grads)
}

#[test]
fn parameters_are_written_in_place_only_when_nothing_shares_them() {
    let device = Default::default();
    let mut model = Net::<Ad> {
        w: Param::from_tensor(Tensor::random(
            [5, 3],
            Distribution::Normal(0.0, 1.0),
            &device,
        )),
        b: Param::from_tensor(Tensor::zeros([3], &device)),
    };
    let sgd = Sgd {
        momentum: Some(Momentum {
            momentum: 0.9,
            dampening: 0.0,
            nesterov: false,
        }),
        weight_decay: None,
    };
    let mut optimizer: OptimizerAdaptor<Sgd, Net<Ad>, Ad> = sgd.into();
    let before = counts(Kind::Update);
    for _ in 0..3 {
        model = step(model, &mut optimizer);
    }
    let after = counts(Kind::Update);
    assert_eq!(
        after.fast - before.fast,
        6,
        "2 parameters x 3 steps in place"
    );
    assert_eq!(after.fallback, before.fallback);

    let kept = model.clone();
    let w_before = kept.w.val().into_data();
    model = step(model, &mut optimizer);
    assert_eq!(
        counts(Kind::Update).fallback - after.fallback,
        2,
        "a shared parameter falls back"
    );
    assert_eq!(kept.w.val().into_data(), w_before, "the clone is untouched");
    drop(kept);
    let shared = counts(Kind::Update);
    let _ = step(model, &mut optimizer);
    assert_eq!(
        counts(Kind::Update).fast - shared.fast,
        2,
        "in place again once the clone is gone"
    );
}
