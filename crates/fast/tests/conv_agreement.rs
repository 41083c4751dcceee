//! The convolution + ReLU with its own backward against burn's `relu(conv.forward(x))` on
//! `Autodiff<Flex>` (and LibTorch): `batchlab_fast::conv::agreement`, whose cases include a
//! batch of 17, odd image sizes, and sizes that take Winograd's algorithm, to 1e-4 relative to
//! the largest magnitude of each tensor, and the plain convolutions BatchNorm follows (depthwise,
//! pointwise, strided, no bias: libtorch's backward on LibTorch, burn's on flex); and the routes
//! that are burn's, bit for bit.

use batchlab_fast::conv::conv2d_relu;
use burn::{
    backend::{Autodiff, Flex},
    nn::{conv::Conv2dConfig, PaddingConfig2d},
    tensor::{
        activation::relu,
        backend::{AutodiffBackend, Backend},
        Distribution, Tensor,
    },
};

fn values<B: Backend, const D: usize>(t: Tensor<B, D>) -> Vec<f32> {
    t.into_data().to_vec::<f32>().unwrap()
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

/// Every convolution + ReLU takes the fast path; a plain convolution does on LibTorch alone.
fn matches_burn<B: AutodiffBackend>() {
    let libtorch = std::any::type_name::<B>().contains("LibTorch");
    for agreement in batchlab_fast::conv::agreement::check::<B>(&Default::default()) {
        assert_eq!(
            agreement.fast_path_ran,
            agreement.relu || libtorch,
            "{agreement:?}: which path ran"
        );
        assert!(agreement.agrees(), "{agreement:?}");
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
