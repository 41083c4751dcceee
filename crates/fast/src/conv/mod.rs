//! A convolution followed by a ReLU, with batchlab's own backward on flex: burn 0.21's flex
//! has no convolution backward of its own, and burn-autodiff composes one from a transposed
//! convolution (a serial loop over samples with a serial col2im) and a forward convolution with
//! batch and channels swapped (parallel over input channels only: 3 tasks for an RGB layer); on
//! VGG16 that backward is two thirds of a flex training step. Here (docs/ARCHITECTURE.md, "Fast
//! paths"):
//! - the ReLU mask and the bias gradient are one parallel pass;
//! - the input gradient is a forward convolution of the masked gradient with the transposed,
//!   flipped kernel;
//! - the weight gradient is a parallel im2col and one batched matrix product per slice of
//!   samples, through flex's safe `matmul`;
//! - the forward is the convolution and a parallel ReLU, keeping only the output (the next
//!   layer's input anyway) where burn keeps the convolution's output too;
//! - each site of a 3x3 convolution (forward, input gradient, weight gradient) takes the path
//!   this machine measured fastest (`choice`): Winograd's F(4x4, 3x3) by blocks of tiles or
//!   position by position (`winograd`), or the direct convolution (`direct`: parallel im2col
//!   and one matrix product per slice of samples).
//!
//! It applies on `Autodiff<Flex>` to stride 1, dilation 1, one group, symmetric padding and a
//! bias: every convolution of VGG and the small and simple CNNs. Anything else, any other
//! backend (LibTorch included: libtorch's own backward reached through its autograd, rebuilding
//! the forward inside the backward, was measured slower than burn's composed one; see
//! docs/tch-performance.md), inference and the switch off take burn's `relu(conv.forward(x))`.

pub mod agreement;
pub mod choice;
mod direct;
mod flex;
mod kernels;
#[cfg(feature = "tch")]
mod libtorch;
mod narrow;
mod winograd;

use crate::{fused, Kind};

#[cfg(feature = "tch")]
use burn::backend::LibTorch;
use burn::{
    backend::Flex,
    nn::{conv::Conv2d, PaddingConfig2d},
    tensor::{activation::relu, backend::Backend, Tensor},
};

/// `relu(conv.forward(x))`, through the fast path where it applies.
pub fn conv2d_relu<B: Backend>(conv: &Conv2d<B>, x: Tensor<B, 4>) -> Tensor<B, 4> {
    let applies = crate::enabled().then(|| fast_case(conv)).flatten();
    let (Some(padding), Some(bias)) = (applies, &conv.bias) else {
        return burn_conv2d_relu(conv, x);
    };
    let (w, b) = (conv.weight.val(), bias.val());
    let fused = fused::apply::<Flex, flex::ConvRelu, B, 4>(x, w.clone(), b.clone(), padding);
    #[cfg(feature = "tch")]
    let fused =
        fused.or_else(|x| fused::apply::<LibTorch, libtorch::ConvRelu, B, 4>(x, w, b, padding));
    match fused {
        Ok(y) => {
            crate::count(Kind::Convolution, true);
            y
        }
        Err(x) => burn_conv2d_relu(conv, x),
    }
}

fn burn_conv2d_relu<B: Backend>(conv: &Conv2d<B>, x: Tensor<B, 4>) -> Tensor<B, 4> {
    crate::count(Kind::Convolution, false);
    relu(conv.forward(x))
}

/// `conv.forward(x)`: on LibTorch with libtorch's own backward (cuDNN's on a GPU) for any stride,
/// dilation and groups, with or without a bias (the convolutions a BatchNorm follows in ResNet
/// and MobileNet), where burn composes a grouped convolution's weight gradient group by group;
/// every other backend, and the switch off, take burn's.
pub fn conv2d<B: Backend>(conv: &Conv2d<B>, x: Tensor<B, 4>) -> Tensor<B, 4> {
    #[cfg(feature = "tch")]
    let x = match crate::enabled() {
        true => match libtorch::conv(conv, x) {
            Ok(y) => {
                crate::count(Kind::Convolution, true);
                return y;
            }
            Err(x) => x,
        },
        false => x,
    };
    crate::count(Kind::Convolution, false);
    conv.forward(x)
}

#[cfg(feature = "tch")]
/// The padding `conv` puts around an image of `[height, width]`: (top, bottom), (left, right),
/// as burn's `Conv2d::forward` computes it (`Same` as TensorFlow's, from the kernel and stride).
pub(crate) fn padding_pairs<B: Backend>(
    conv: &Conv2d<B>,
    [height, width]: [usize; 2],
) -> [(usize, usize); 2] {
    let same = |kernel: usize, stride: usize, size: usize| {
        let needed = (size.div_ceil(stride).max(1) - 1) * stride + kernel;
        let total = if size == 0 {
            0
        } else {
            needed.saturating_sub(size)
        };
        (total / 2, total - total / 2)
    };
    match conv.padding {
        PaddingConfig2d::Valid => [(0, 0), (0, 0)],
        PaddingConfig2d::Same => [
            same(conv.kernel_size[0], conv.stride[0], height),
            same(conv.kernel_size[1], conv.stride[1], width),
        ],
        PaddingConfig2d::Explicit(top, left, bottom, right) => [(top, bottom), (left, right)],
    }
}

/// The padding of a convolution the fast path computes: stride 1, dilation 1, one group, and
/// the same padding on both sides, smaller than the kernel.
fn fast_case<B: Backend>(conv: &Conv2d<B>) -> Option<[usize; 2]> {
    let padding = match conv.padding {
        PaddingConfig2d::Valid => [0, 0],
        PaddingConfig2d::Explicit(top, left, bottom, right) if top == bottom && left == right => {
            [top, left]
        }
        _ => return None,
    };
    let [kh, kw] = conv.kernel_size;
    let plain = conv.stride == [1, 1] && conv.dilation == [1, 1] && conv.groups == 1;
    (plain && padding[0] < kh && padding[1] < kw).then_some(padding)
}
