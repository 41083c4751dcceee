//! The convolution + ReLU with its own backward against burn's `relu(conv.forward(x))` on
//! `Autodiff<Flex>`: the output and the gradients of the input, the kernel and the bias, on
//! random inputs including a batch of 17, odd image sizes, and sizes that take Winograd's
//! algorithm. Both compute the same sums by other routes, so they agree to f32 rounding: stated
//! tolerance 1e-4 relative to the largest magnitude of each tensor.

use batchlab_fast::{conv::conv2d_relu, counts, Kind};
use burn::{
    backend::{Autodiff, Flex},
    nn::{
        conv::{Conv2d, Conv2dConfig},
        PaddingConfig2d,
    },
    tensor::{
        activation::relu,
        backend::{AutodiffBackend, Backend},
        Distribution, Tensor, TensorData,
    },
};

struct Case {
    batch: usize,
    channels: [usize; 2],
    image: [usize; 2],
    kernel: usize,
    padding: PaddingConfig2d,
}

fn values<B: Backend, const D: usize>(t: Tensor<B, D>) -> Vec<f32> {
    t.into_data().to_vec::<f32>().unwrap()
}

fn assert_close(fast: &[f32], burn: &[f32], what: &str) {
    assert_eq!(fast.len(), burn.len(), "{what}: sizes");
    let scale = burn.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-6);
    for (i, (f, b)) in fast.iter().zip(burn).enumerate() {
        assert!(
            (f - b).abs() <= 1e-4 * scale,
            "{what}: element {i}: fast {f} against burn {b} (largest {scale})"
        );
    }
}

/// Output, dx, dw, db of `forward` on a fresh graph.
fn run<B: AutodiffBackend>(
    conv: &Conv2d<B>,
    x: &Tensor<B, 4>,
    r: &Tensor<B, 4>,
    forward: impl Fn(&Conv2d<B>, Tensor<B, 4>) -> Tensor<B, 4>,
) -> [Vec<f32>; 4] {
    let x = x.clone().detach().require_grad();
    let y = forward(conv, x.clone());
    let grads = (y.clone() * r.clone()).sum().backward();
    let bias = conv.bias.as_ref().unwrap().val();
    [
        values(y.inner()),
        values(x.grad(&grads).unwrap()),
        values(conv.weight.val().grad(&grads).unwrap()),
        values(bias.grad(&grads).unwrap()),
    ]
}

/// One test for both backends: the fast-path count it checks is per process, and tests run in
/// parallel.
#[test]
fn conv_relu_matches_burn_forward_and_backward() {
    matches_burn::<Autodiff<Flex>>();
    // LibTorch's backward is libtorch's own (`just test-tch`).
    #[cfg(feature = "tch")]
    matches_burn::<Autodiff<burn::backend::LibTorch>>();
}

fn matches_burn<B: AutodiffBackend>() {
    let device = Default::default();
    let explicit = |p| PaddingConfig2d::Explicit(p, p, p, p);
    // (batch, [in, out] channels, image, kernel, padding)
    let cases = [
        (17, [3, 8], [11, 13], 3, explicit(1)),
        (2, [5, 4], [9, 7], 5, explicit(2)),
        (3, [4, 6], [8, 10], 3, PaddingConfig2d::Valid),
        (1, [16, 32], [20, 20], 3, explicit(1)),
        // Winograd's forward and input gradient (at least 64 tiles of 4x4, 16 channels).
        (4, [16, 32], [17, 19], 3, explicit(1)),
        // ... and its weight gradient (at least 128 x 128 channels).
        (8, [128, 128], [9, 9], 3, explicit(1)),
    ]
    .map(|(batch, channels, image, kernel, padding)| Case {
        batch,
        channels,
        image,
        kernel,
        padding,
    });
    for (i, case) in cases.iter().enumerate() {
        B::seed(&device, 7 + i as u64);
        let conv = Conv2dConfig::new(case.channels, [case.kernel, case.kernel])
            .with_padding(case.padding.clone())
            .init::<B>(&device);
        let [h, w] = case.image;
        let x = Tensor::random(
            [case.batch, case.channels[0], h, w],
            Distribution::Normal(0.0, 1.0),
            &device,
        );
        let y = conv.forward(x.clone());
        let r = Tensor::random(y.shape(), Distribution::Normal(0.0, 1.0), &device);
        let before = counts(Kind::Convolution).fast;
        let fast = run(&conv, &x, &r, conv2d_relu);
        assert!(
            counts(Kind::Convolution).fast > before,
            "case {i}: the fast path ran"
        );
        let burn = run(&conv, &x, &r, |c: &Conv2d<B>, x| relu(c.forward(x)));
        assert_close(&fast[0], &burn[0], &format!("case {i} output"));
        // The gradients through the ReLU's mask as the fast path drew it: where its output
        // rounds to the other side of zero from burn's (Winograd sums in another basis), the
        // two masks differ, and a gradient with either mask is right.
        let mask = fast[0]
            .iter()
            .map(|&v| f32::from(v > 0.0))
            .collect::<Vec<_>>();
        let mask = Tensor::<B, 4>::from_data(TensorData::new(mask, y.shape()), &device);
        let masked = run(&conv, &x, &r, |c: &Conv2d<B>, x| {
            c.forward(x) * mask.clone()
        });
        for (name, (f, b)) in ["dx", "dw", "db"]
            .iter()
            .zip(fast[1..].iter().zip(&masked[1..]))
        {
            assert_close(f, b, &format!("case {i} {name}"));
        }
    }
}

#[test]
fn inference_and_other_convolutions_take_burns_path() {
    // On plain flex (no autodiff) and with a stride of 2 the result is burn's, bit for bit.
    let device = Default::default();
    let conv = Conv2dConfig::new([3, 4], [3, 3])
        .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
        .init::<Flex>(&device);
    let x = Tensor::<Flex, 4>::random([2, 3, 6, 6], Distribution::Normal(0.0, 1.0), &device);
    assert_eq!(
        values(conv2d_relu(&conv, x.clone())),
        values(relu(conv.forward(x.clone())))
    );
    let strided = Conv2dConfig::new([3, 4], [3, 3])
        .with_stride([2, 2])
        .init::<Autodiff<Flex>>(&device);
    let xa =
        Tensor::<Autodiff<Flex>, 4>::random([2, 3, 7, 7], Distribution::Normal(0.0, 1.0), &device);
    assert_eq!(
        values(conv2d_relu(&strided, xa.clone()).inner()),
        values(relu(strided.forward(xa)).inner())
    );
}
