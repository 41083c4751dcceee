//! The 2x2 max-pooling with its own backward against burn's `MaxPool2d::forward` on
//! `Autodiff<Flex>`: the output and the input's gradient, bit for bit (both pick the same
//! element of each window and move values without arithmetic), on random inputs with a batch of
//! 17 and odd image sizes, and on windows of equal values (a ReLU's zeros), where both give the
//! gradient to the window's first element.

use batchlab_fast::{counts, pool::max_pool2d, Kind};
use burn::{
    backend::{Autodiff, Flex},
    nn::pool::{MaxPool2d, MaxPool2dConfig},
    tensor::{activation::relu, Distribution, Tensor},
};

type B = Autodiff<Flex>;

/// The output and the input's gradient of `forward` on a fresh graph.
fn run(
    pool: &MaxPool2d,
    x: &Tensor<B, 4>,
    forward: impl Fn(&MaxPool2d, Tensor<B, 4>) -> Tensor<B, 4>,
) -> [Vec<f32>; 2] {
    let x = x.clone().detach().require_grad();
    let y = forward(pool, x.clone());
    // Fixed weights per output element, so both paths see the same loss.
    let weights = y.clone().detach().ones_like().cumsum(3).sin();
    let grads = (y.clone() * weights).sum().backward();
    [
        y.into_data().to_vec::<f32>().unwrap(),
        x.grad(&grads).unwrap().into_data().to_vec::<f32>().unwrap(),
    ]
}

#[test]
fn max_pool_matches_burn_forward_and_backward() {
    let device = Default::default();
    let pool = MaxPool2dConfig::new([2, 2]).init();
    for (i, shape) in [[17, 3, 8, 8], [2, 4, 7, 9], [1, 1, 1, 5]]
        .into_iter()
        .enumerate()
    {
        for ties in [false, true] {
            let x = Tensor::<B, 4>::random(shape, Distribution::Normal(0.0, 1.0), &device);
            // Half the values zero after a ReLU: windows of equal zeros.
            let x = if ties { relu(x) } else { x };
            let before = counts(Kind::Pooling).fast;
            let fast = run(&pool, &x, max_pool2d);
            assert!(
                counts(Kind::Pooling).fast > before,
                "case {i}: the fast path ran"
            );
            let burn = run(&pool, &x, |p: &MaxPool2d, x| p.forward(x));
            assert_eq!(fast, burn, "case {i} (ties {ties})");
        }
    }
}

#[test]
fn other_pools_take_burns_path() {
    let device = Default::default();
    let pool = MaxPool2dConfig::new([3, 3]).with_strides([2, 2]).init();
    let x = Tensor::<B, 4>::random([2, 3, 9, 9], Distribution::Normal(0.0, 1.0), &device);
    let before = counts(Kind::Pooling).fallback;
    assert_eq!(
        run(&pool, &x, max_pool2d),
        run(&pool, &x, |p: &MaxPool2d, x| p.forward(x))
    );
    assert!(counts(Kind::Pooling).fallback > before);
}
