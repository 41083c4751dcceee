//! The dense layers' fast path against burn's `relu(linear.forward(x))` on `Autodiff<Flex>`: the
//! output and the gradients of the input, the kernel and the bias, to 1e-4 relative to each
//! tensor's largest magnitude, on a shape whose inner dimension is shared out among two
//! threads (an odd length, so that the shares differ), on short batches whose kernel and input
//! gradients are batchlab's short-batch kernel's (sizes that leave partial blocks and panels),
//! on a batch between short and long, on flex's kernel, and on long batches whose three
//! products are batchlab's packed kernel's (rows, inner lengths and columns that leave partial
//! strips, steps and panels): the kernels the batch's thresholds pick without a machine's file
//! (every kernel a product may take is checked against flex's in `dense::paths`' own tests);
//! each shape also as a network's head (no ReLU), which takes the fast path too. With LibTorch
//! (`just test-tch`) the same shapes on `Autodiff<LibTorch>` (libtorch's `addmm` and
//! `threshold_backward`; heads narrower than `dense::libtorch::NARROW` in PyTorch's order).

use batchlab_fast::{
    counts,
    dense::{linear, linear_relu},
    Kind,
};
use burn::{
    backend::{Autodiff, Flex},
    nn::{Linear, LinearConfig},
    tensor::{activation::relu, backend::AutodiffBackend, Distribution, Tensor},
};

/// Output, dx, dw, db of `forward` on a fresh graph, the output weighted by `r`.
fn run<B: AutodiffBackend>(
    layer: &Linear<B>,
    x: &Tensor<B, 2>,
    r: &Tensor<B, 2>,
    forward: impl Fn(&Linear<B>, Tensor<B, 2>) -> Tensor<B, 2>,
) -> [Vec<f32>; 4] {
    let x = x.clone().detach().require_grad();
    let y = forward(layer, x.clone());
    let grads = (y.clone() * r.clone()).sum().backward();
    let bias = layer.bias.as_ref().unwrap().val();
    [
        y.inner().into_data(),
        x.grad(&grads).unwrap().into_data(),
        layer.weight.val().grad(&grads).unwrap().into_data(),
        bias.grad(&grads).unwrap().into_data(),
    ]
    .map(|data| data.convert::<f32>().to_vec::<f32>().unwrap())
}

fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1e-6f32, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .fold(0f32, |m, (x, y)| m.max((x - y).abs() / scale))
}

/// Output, dx, dw and db within 1e-4 of burn's, relative to each tensor's largest magnitude.
fn agree(case: &str, fast: &[Vec<f32>; 4], burn: &[Vec<f32>; 4]) {
    for (name, (a, b)) in ["output", "dx", "dw", "db"]
        .iter()
        .zip(fast.iter().zip(burn))
    {
        let d = largest_difference(a, b);
        assert!(d <= 1e-4, "{case} {name}: {d}");
    }
}

#[test]
fn the_fast_path_matches_burn_forward_and_backward() {
    matches_burn::<Autodiff<Flex>>();
    #[cfg(feature = "tch")]
    matches_burn::<Autodiff<burn::backend::LibTorch>>();
}

fn matches_burn<B: AutodiffBackend>() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        let device = Default::default();
        for (m, k, n) in [
            (4, 16_389, 8),
            (64, 600, 1024),
            (16, 777, 100),
            (65, 300, 40),
            (512, 300, 40),
            (1031, 1100, 37),
        ] {
            let layer = LinearConfig::new(k, n).init::<B>(&device);
            let x = Tensor::<B, 2>::random([m, k], Distribution::Normal(0.0, 1.0), &device);
            let r = Tensor::<B, 2>::random([m, n], Distribution::Normal(0.0, 1.0), &device);
            let before = counts(Kind::Dense);
            let fast = run(&layer, &x, &r, linear_relu);
            let after = counts(Kind::Dense);
            assert!(after.fast > before.fast, "{m}x{k}x{n}");
            let burn = run(&layer, &x, &r, |l: &Linear<B>, x| relu(l.forward(x)));
            agree(&format!("{m}x{k}x{n}"), &fast, &burn);
            // The same layer as a network's head (no ReLU).
            let before = counts(Kind::Dense);
            let fast = run(&layer, &x, &r, linear);
            assert!(counts(Kind::Dense).fast > before.fast, "head {m}x{k}x{n}");
            let burn = run(&layer, &x, &r, |l: &Linear<B>, x| l.forward(x));
            agree(&format!("head {m}x{k}x{n}"), &fast, &burn);
        }
    });
}
