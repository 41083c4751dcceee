//! Layer tables shared by every architecture: one [`ConvSpec`] / [`LinearSpec`] value describes a
//! layer once, and the same value builds the burn module, counts its parameters and its
//! multiply-accumulates. Building and costing from one table is what keeps
//! [`ModelSpec::forward_flops`](crate::ModelSpec::forward_flops) and
//! [`ModelSpec::trainable_params`](crate::ModelSpec::trainable_params) honest when a layout changes.

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::{hard_sigmoid, relu};
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;

use crate::init::Fans;
pub(crate) use crate::init::Init;

/// Spatial padding of a convolution or pooling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Pad {
    /// No padding (Keras `valid`).
    Valid,
    /// `(k - 1) / 2` on every side: PyTorch's `padding=(k-1)//2`, Keras `same` at stride 1.
    Half,
    /// TensorFlow `same`: output `ceil(in / stride)`, an odd extra row/column at the bottom/right.
    /// burn's `PaddingConfig2d::Same` computes exactly this.
    TfSame,
    /// Keras MobileNet v1's `ZeroPadding2D(((0, 1), (0, 1)))` before a `valid` strided conv.
    BottomRight1,
}

impl Pad {
    fn to_burn(self, kernel: usize) -> PaddingConfig2d {
        match self {
            Pad::Valid => PaddingConfig2d::Valid,
            Pad::Half => {
                let p = (kernel - 1) / 2;
                PaddingConfig2d::Explicit(p, p, p, p)
            }
            Pad::TfSame => PaddingConfig2d::Same,
            // Explicit is (top, left, bottom, right).
            Pad::BottomRight1 => PaddingConfig2d::Explicit(0, 0, 1, 1),
        }
    }

    /// Output length along one axis; 0 when the window does not fit (callers validate sizes).
    pub(crate) fn out_len(self, len: usize, kernel: usize, stride: usize) -> usize {
        let padded = match self {
            Pad::Valid => len,
            Pad::Half => len + 2 * ((kernel - 1) / 2),
            Pad::TfSame => return len.div_ceil(stride),
            Pad::BottomRight1 => len + 1,
        };
        if padded < kernel {
            0
        } else {
            (padded - kernel) / stride + 1
        }
    }

    /// Output `[height, width]`.
    pub(crate) fn out_hw(self, hw: [usize; 2], kernel: usize, stride: usize) -> [usize; 2] {
        [
            self.out_len(hw[0], kernel, stride),
            self.out_len(hw[1], kernel, stride),
        ]
    }
}

/// One square 2-D convolution of a layer table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ConvSpec {
    pub cin: usize,
    pub cout: usize,
    pub kernel: usize,
    pub stride: usize,
    pub pad: Pad,
    pub groups: usize,
    pub bias: bool,
    pub init: Init,
}

impl ConvSpec {
    /// A dense (groups = 1) convolution without bias, the usual one before a BatchNorm.
    pub fn new(
        cin: usize,
        cout: usize,
        kernel: usize,
        stride: usize,
        pad: Pad,
        init: Init,
    ) -> Self {
        Self {
            cin,
            cout,
            kernel,
            stride,
            pad,
            groups: 1,
            bias: false,
            init,
        }
    }

    /// torchvision's `Conv2dNormActivation` convolution (ResNet, MobileNetV2/V3): padding
    /// (k - 1) / 2, no bias, `kaiming_normal_(mode="fan_out")` weights.
    pub fn torchvision(cin: usize, cout: usize, kernel: usize, stride: usize) -> Self {
        Self::new(
            cin,
            cout,
            kernel,
            stride,
            Pad::Half,
            Init::TorchKaimingFanOut,
        )
    }

    /// One filter per channel (MobileNets): groups = channels.
    pub fn depthwise(channels: usize, kernel: usize, stride: usize, pad: Pad, init: Init) -> Self {
        Self {
            groups: channels,
            ..Self::new(channels, channels, kernel, stride, pad, init)
        }
    }

    pub fn with_bias(self) -> Self {
        Self { bias: true, ..self }
    }

    pub fn out_hw(&self, hw: [usize; 2]) -> [usize; 2] {
        self.pad.out_hw(hw, self.kernel, self.stride)
    }

    pub fn params(&self) -> usize {
        self.cout * (self.cin / self.groups) * self.kernel * self.kernel
            + if self.bias { self.cout } else { 0 }
    }

    /// Multiply-accumulates for one sample producing an `out` map: every output element sums
    /// `cin / groups x k x k` products.
    pub fn macs(&self, out: [usize; 2]) -> u64 {
        (self.cout * (self.cin / self.groups) * self.kernel * self.kernel) as u64
            * (out[0] * out[1]) as u64
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> Conv2d<B> {
        let area = self.kernel * self.kernel;
        let fans = Fans {
            torch_out: self.cout * area,
            keras_in: self.cin * area,
            keras_out: self.cout / self.groups * area,
        };
        let mut conv = Conv2dConfig::new([self.cin, self.cout], [self.kernel, self.kernel])
            .with_stride([self.stride, self.stride])
            .with_padding(self.pad.to_burn(self.kernel))
            .with_groups(self.groups)
            .with_bias(self.bias)
            .with_initializer(self.init.weight(fans))
            .init(device);
        // burn draws the bias with the weight's initializer; the references do not.
        if self.bias {
            let fan_in = self.cin / self.groups * area;
            conv.bias = Some(self.init.bias().init_with(
                [self.cout],
                Some(fan_in),
                Some(fans.torch_out),
                device,
            ));
        }
        conv
    }
}

/// One fully connected layer (always with bias, as in every reference here).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinearSpec {
    pub fin: usize,
    pub fout: usize,
    pub init: Init,
}

impl LinearSpec {
    pub fn new(fin: usize, fout: usize, init: Init) -> Self {
        Self { fin, fout, init }
    }

    pub fn params(&self) -> usize {
        self.fin * self.fout + self.fout
    }

    pub fn macs(&self) -> u64 {
        (self.fin * self.fout) as u64
    }

    pub fn init<B: Backend>(&self, device: &B::Device) -> Linear<B> {
        let fans = Fans {
            torch_out: self.fout,
            keras_in: self.fin,
            keras_out: self.fout,
        };
        let mut linear = LinearConfig::new(self.fin, self.fout)
            .with_initializer(self.init.weight(fans))
            .init(device);
        linear.bias = Some(self.init.bias().init_with(
            [self.fout],
            Some(self.fin),
            Some(self.fout),
            device,
        ));
        linear
    }
}

/// BatchNorm hyper-parameters in burn's convention (momentum weighs the new batch statistic,
/// as in PyTorch; Keras's `momentum=0.99` is burn's 0.01).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BnSpec {
    pub epsilon: f64,
    pub momentum: f64,
}

/// PyTorch's `nn.BatchNorm2d` defaults (torchvision ResNet, MobileNetV2).
pub(crate) const BN_TORCH: BnSpec = BnSpec {
    epsilon: 1e-5,
    momentum: 0.1,
};
/// torchvision MobileNetV3: `partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)`.
pub(crate) const BN_TORCH_V3: BnSpec = BnSpec {
    epsilon: 1e-3,
    momentum: 0.01,
};
/// Keras `BatchNormalization` defaults (epsilon 1e-3, momentum 0.99 = burn 0.01).
pub(crate) const BN_KERAS: BnSpec = BnSpec {
    epsilon: 1e-3,
    momentum: 0.01,
};

/// The element-wise non-linearity after a convolution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Activation {
    Identity,
    Relu,
    /// min(max(x, 0), 6): MobileNet v1/v2.
    Relu6,
    /// x * relu6(x + 3) / 6: MobileNetV3.
    HardSwish,
}

impl Activation {
    pub fn forward<B: Backend, const D: usize>(self, x: Tensor<B, D>) -> Tensor<B, D> {
        match self {
            Activation::Identity => x,
            Activation::Relu => relu(x),
            Activation::Relu6 => x.clamp(0.0, 6.0),
            // PyTorch's hardsigmoid relu6(x + 3) / 6 is burn's hard_sigmoid with alpha 1/6, beta 1/2.
            Activation::HardSwish => x.clone() * hard_sigmoid(x, 1.0 / 6.0, 0.5),
        }
    }
}

/// A convolution followed by BatchNorm and an activation (torchvision's `Conv2dNormActivation`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ConvBnSpec {
    pub conv: ConvSpec,
    pub bn: BnSpec,
    pub act: Activation,
}

impl ConvBnSpec {
    pub fn init<B: Backend>(&self, device: &B::Device) -> ConvBn<B> {
        ConvBn {
            conv: self.conv.init(device),
            bn: BatchNormConfig::new(self.conv.cout)
                .with_epsilon(self.bn.epsilon)
                .with_momentum(self.bn.momentum)
                .init(device),
            act: self.act,
        }
    }
}

/// Convolution, BatchNorm, activation.
#[derive(Module, Debug)]
pub struct ConvBn<B: Backend> {
    conv: Conv2d<B>,
    bn: BatchNorm<B>,
    act: Activation,
}

impl<B: Backend> ConvBn<B> {
    /// # Shapes
    /// `[batch, cin, h, w]` -> `[batch, cout, h', w']`
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        // On LibTorch with libtorch's own backward (cuDNN's on a GPU): burn composes a depthwise
        // layer's weight gradient one channel at a time (docs/ARCHITECTURE.md, "Fast paths").
        self.act
            .forward(self.bn.forward(batchlab_fast::conv::conv2d(&self.conv, x)))
    }
}

/// Running totals of one forward pass over a layer table.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Cost {
    pub macs: u64,
    pub params: usize,
    /// Output elements per sample of every convolution, BatchNorm and linear layer: the
    /// activations a backward pass keeps (activation functions and pooling not counted).
    pub activations: u64,
    /// The part of `macs` in grouped (depthwise) convolutions, which CPU kernels run at a
    /// fraction of a dense convolution's throughput.
    pub grouped_macs: u64,
    /// Convolution, BatchNorm and linear layers: each costs a few kernel calls per step
    /// whatever the batch size.
    pub layers: u64,
}

impl Cost {
    /// Adds a convolution applied to an `hw` map; returns the output map size.
    pub fn conv(&mut self, spec: &ConvSpec, hw: [usize; 2]) -> [usize; 2] {
        let out = spec.out_hw(hw);
        self.macs += spec.macs(out);
        if spec.groups > 1 {
            self.grouped_macs += spec.macs(out);
        }
        self.params += spec.params();
        self.activations += (spec.cout * out[0] * out[1]) as u64;
        self.layers += 1;
        out
    }

    pub fn conv_bn(&mut self, spec: &ConvBnSpec, hw: [usize; 2]) -> [usize; 2] {
        // BatchNorm trains gamma and beta per channel; its running mean/var are not trained.
        self.params += 2 * spec.conv.cout;
        let out = self.conv(&spec.conv, hw);
        // BatchNorm's output is a second map of the convolution's size.
        self.activations += (spec.conv.cout * out[0] * out[1]) as u64;
        self.layers += 1;
        out
    }

    pub fn linear(&mut self, spec: &LinearSpec) {
        self.macs += spec.macs();
        self.params += spec.params();
        self.activations += spec.fout as u64;
        self.layers += 1;
    }
}

/// torchvision's `_make_divisible(v, 8)`: round to the nearest multiple of `divisor`, at least
/// `divisor`, and never more than 10% below `v` (from the TensorFlow MobileNet repository).
pub(crate) fn make_divisible(v: f64, divisor: usize) -> usize {
    let rounded = ((v + divisor as f64 / 2.0) as usize) / divisor * divisor;
    let rounded = rounded.max(divisor);
    if (rounded as f64) < 0.9 * v {
        rounded + divisor
    } else {
        rounded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_divisible_matches_torchvision() {
        // Worked by hand from torchvision's _make_divisible.
        assert_eq!(make_divisible(32.0, 8), 32);
        assert_eq!(make_divisible(32.0 * 0.35, 8), 16); // 11.2 -> 8 < 0.9 x 11.2 -> 16
        assert_eq!(make_divisible(16.0 * 0.5, 8), 8);
        assert_eq!(make_divisible(960.0 / 4.0, 8), 240);
        assert_eq!(make_divisible(72.0 / 4.0, 8), 24); // 18 -> 16 < 16.2 -> 24
        assert_eq!(make_divisible(1280.0 * 0.75, 8), 960);
    }

    /// Weights fall in the reference's range and biases start where the reference's do.
    #[test]
    fn initialisers_follow_the_references() {
        type Cpu = burn_flex::Flex;
        let device = Default::default();
        let _rng = crate::tests::seeded::<Cpu>(0);
        let max_abs = |t: Tensor<Cpu, 4>| t.abs().max().into_scalar();
        // Keras he_uniform on a 3x3 conv from 3 channels: U(±sqrt(6 / 27)), zero bias.
        let he = ConvSpec::new(3, 32, 3, 1, Pad::Half, Init::KerasHe).with_bias();
        let conv = he.init::<Cpu>(&device);
        assert!(max_abs(conv.weight.val()) <= (6.0f32 / 27.0).sqrt());
        let bias = conv.bias.expect("with_bias").val();
        assert_eq!(bias.abs().max().into_scalar(), 0.0);
        // torchvision depthwise 3x3 over 512 channels: N(0, 2 / (512 x 9)), PyTorch's fan_out
        // not divided by groups (burn's own KaimingNormal would divide it).
        let depthwise = ConvSpec::depthwise(512, 3, 1, Pad::Half, Init::TorchKaimingFanOut);
        let weight = depthwise.init::<Cpu>(&device).weight.val();
        let std = weight.powi_scalar(2).mean().sqrt().into_scalar();
        let expected = (2.0f32 / (512.0 * 9.0)).sqrt();
        assert!((std / expected - 1.0).abs() < 0.05, "{std} vs {expected}");
    }

    #[test]
    fn padding_output_lengths() {
        assert_eq!(Pad::Half.out_len(224, 7, 2), 112);
        assert_eq!(Pad::Half.out_len(112, 3, 2), 56);
        assert_eq!(Pad::TfSame.out_len(15, 3, 2), 8);
        assert_eq!(Pad::BottomRight1.out_len(15, 3, 2), 7);
        assert_eq!(Pad::BottomRight1.out_len(224, 3, 2), 112);
        assert_eq!(Pad::Valid.out_len(2, 3, 1), 0);
    }
}
