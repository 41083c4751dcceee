//! Golden tests against independent references: published trainable-parameter counts (Keras
//! `model.summary()`, torchvision `sum(p.numel() for p in model.parameters())`) and published
//! multiply-accumulate counts, plus hand computations for the small networks.

use super::{spec, Cpu};
use crate::Architecture::{self, *};
use crate::{trainable_param_count, ModelSpec};

const IMAGENET: [usize; 3] = [3, 224, 224];

/// Builds the module (lazily: no weights are drawn) and checks both counts.
fn assert_trainable(spec: &ModelSpec, expected: usize) {
    let model = spec.init::<Cpu>(&Default::default()).unwrap();
    assert_eq!(trainable_param_count(&model), expected, "built {spec:?}");
    assert_eq!(
        spec.trainable_params().unwrap(),
        expected,
        "analytic {spec:?}"
    );
}

#[test]
fn vgg_counts_match_keras() {
    assert_trainable(&spec(Vgg16, IMAGENET, 1000), 138_357_544);
    assert_trainable(&spec(Vgg19, IMAGENET, 1000), 143_667_240);
}

#[test]
fn resnet_counts_match_torchvision() {
    assert_trainable(&spec(ResNet18, IMAGENET, 1000), 11_689_512);
    assert_trainable(&spec(ResNet50, IMAGENET, 1000), 25_557_032);
}

#[test]
fn resnet8_count_matches_the_hand_count() {
    // Module docs of resnet.rs: 3x3 convs 16/32/64, two 1x1 projections, BN, Linear.
    assert_trainable(&spec(ResNet8, [3, 32, 32], 10), 78_042);
}

#[test]
fn mobilenet_counts_match_references() {
    assert_trainable(&spec(MobileNetV1, IMAGENET, 1000), 4_231_976); // Keras
    assert_trainable(&spec(MobileNetV2, IMAGENET, 1000), 3_504_872); // torchvision
    assert_trainable(&spec(MobileNetV3Large, IMAGENET, 1000), 5_483_032); // torchvision
    assert_trainable(&spec(MobileNetV3Small, IMAGENET, 1000), 2_542_856); // torchvision
}

#[test]
fn small_cnn_count_matches_seed_003() {
    assert_trainable(&spec(SmallCnn, [3, 200, 200], 1), 40_961_153);
}

#[test]
fn simple_cnn_count_by_hand() {
    let conv1 = 5 * 5 * 32 + 32; // 832
    let conv2 = 5 * 5 * 32 * 64 + 64; // 51,264
    let dense = 7 * 7 * 64 * 1024 + 1024; // 3,212,288: two poolings take 28 to 7
    let head = 1024 * 10 + 10; // 10,250
    assert_eq!(conv1 + conv2 + dense + head, 3_274_634);
    assert_trainable(&spec(SimpleCnn, [1, 28, 28], 10), 3_274_634);
}

#[test]
fn mlp_count_by_hand() {
    let expected = (784 * 512 + 512) + (512 * 512 + 512) + (512 * 10 + 10);
    assert_eq!(expected, 669_706);
    assert_trainable(&spec(Mlp, [1, 28, 28], 10), expected);
    let linear = ModelSpec {
        hidden: vec![],
        ..spec(Mlp, [1, 28, 28], 10)
    };
    assert_trainable(&linear, 7850);
}

/// The analytic count must equal the built module's away from the golden configurations too:
/// other inputs, class counts and widths.
#[test]
fn analytic_counts_equal_built_counts() {
    for architecture in Architecture::ALL {
        let widths: &[f64] = if architecture.has_width_multiplier() {
            &[1.0, 0.5, 0.35, 1.4]
        } else {
            &[1.0]
        };
        for &width in widths {
            let spec = ModelSpec {
                width,
                hidden: vec![64, 32, 16],
                ..spec(architecture, [2, 48, 40], 7)
            };
            let model = spec.init::<Cpu>(&Default::default()).unwrap();
            assert_eq!(
                trainable_param_count(&model),
                spec.trainable_params().unwrap(),
                "{spec:?}"
            );
        }
    }
}

/// burn's num_params counts BatchNorm running statistics; trainable_param_count does not.
#[test]
fn running_statistics_are_not_trainable() {
    let bn = burn::nn::BatchNormConfig::new(8).init::<Cpu>(&Default::default());
    assert_eq!(burn::module::Module::num_params(&bn), 32);
    assert_eq!(trainable_param_count(&bn), 16);
}

fn macs(spec: &ModelSpec) -> f64 {
    spec.forward_flops().unwrap() as f64 / 2.0
}

fn assert_close(architecture: Architecture, published: f64, tolerance: f64) {
    let got = macs(&spec(architecture, IMAGENET, 1000));
    let error = (got - published).abs() / published;
    assert!(
        error <= tolerance,
        "{architecture}: {got:.4e} MACs, published {published:.4e} (off by {:.2}%)",
        100.0 * error
    );
}

#[test]
fn flops_match_published_macs() {
    assert_close(Vgg16, 15.47e9, 0.01); // torchvision vgg16: 15.47 GFLOPS (MACs)
    assert_close(ResNet18, 1.81e9, 0.01); // torchvision: 1.81
    assert_close(ResNet50, 4.09e9, 0.01); // torchvision: 4.09
    assert_close(MobileNetV1, 569e6, 0.01); // Howard et al. 2017, Table 8
    assert_close(MobileNetV2, 300e6, 0.01); // Sandler et al. 2018, Table 3
    assert_close(MobileNetV3Large, 219e6, 0.02); // Howard et al. 2019, Table 3
    assert_close(MobileNetV3Small, 56e6, 0.02); // ibid.
}

#[test]
fn activations_by_hand() {
    // MLP 784-512-512-10: the outputs of its three linear layers.
    assert_eq!(
        spec(Mlp, [1, 28, 28], 10).activation_elements().unwrap(),
        512 + 512 + 10
    );
    // Simple CNN: two "same" convs at 28x28 and 14x14, then 1024 and 10.
    assert_eq!(
        spec(SimpleCnn, [1, 28, 28], 10)
            .activation_elements()
            .unwrap(),
        28 * 28 * 32 + 14 * 14 * 64 + 1024 + 10
    );
    // VGG16 at 32x32: 2, 2, 3, 3, 3 convs at 32, 16, 8, 4, 2 pixels, then 4096, 4096, 10.
    let convs =
        2 * 64 * 32 * 32 + 2 * 128 * 16 * 16 + 3 * 256 * 8 * 8 + 3 * 512 * 4 * 4 + 3 * 512 * 2 * 2;
    assert_eq!(
        spec(Vgg16, [3, 32, 32], 10).activation_elements().unwrap(),
        convs + 4096 + 4096 + 10
    );
}

#[test]
fn flops_by_hand() {
    // MLP 784-512-512-10.
    let mlp = 784 * 512 + 512 * 512 + 512 * 10;
    assert_eq!(spec(Mlp, [1, 28, 28], 10).forward_flops().unwrap(), 2 * mlp);
    // Simple CNN on MNIST: "same" 5x5 convs at 28x28 and 14x14, then 3136 -> 1024 -> 10.
    let simple = 28 * 28 * 32 * 25 + 14 * 14 * 64 * 25 * 32 + 3136 * 1024 + 1024 * 10;
    assert_eq!(simple, 13_883_904);
    assert_eq!(
        spec(SimpleCnn, [1, 28, 28], 10).forward_flops().unwrap(),
        2 * simple
    );
    // Seed-003 CNN: 3x3x3 conv to 32 channels at 200x200, 320,000 -> 128 -> 1.
    let small = 200 * 200 * 32 * 27 + 320_000 * 128 + 128;
    assert_eq!(
        spec(SmallCnn, [3, 200, 200], 1).forward_flops().unwrap(),
        2 * small
    );
}

#[test]
fn width_scales_mobilenet_like_references() {
    // Howard et al. 2017, Table 6: 0.50 MobileNet-224 has 150 M mult-adds and 1.3 M parameters.
    let half = ModelSpec {
        width: 0.5,
        ..spec(MobileNetV1, IMAGENET, 1000)
    };
    let params = half.trainable_params().unwrap() as f64;
    assert!((params - 1.3e6).abs() < 0.05e6, "{params}");
    let got = macs(&half);
    assert!((got - 150e6).abs() / 150e6 < 0.02, "{got:.4e}");
}
