//! The sequential networks as chains of stages: the names say what each stage is, every name
//! once, and running the stages one at a time (as the jump anatomy times them) gives the
//! forward pass's logits; the networks with branches say they have no chain.

use burn::tensor::{Distribution, Tensor};

use super::{seeded, spec, Cpu};
use crate::stages::Flow;
use crate::Architecture::{self, *};

fn names(architecture: Architecture, input: [usize; 3]) -> Vec<String> {
    let device = Default::default();
    let _rng = seeded::<Cpu>(3);
    let model = spec(architecture, input, 4).init::<Cpu>(&device).unwrap();
    let stages = model.stages().unwrap();
    let [c, h, w] = input;
    let images = Tensor::<Cpu, 4>::random([2, c, h, w], Distribution::Normal(0.0, 1.0), &device);
    let mut x = Flow::Images(images.clone());
    for stage in &stages {
        x = stage.forward(x);
    }
    let by_stage = x.features();
    let whole = model.forward(images);
    by_stage.into_data().assert_eq(&whole.into_data(), true);
    stages.iter().map(|s| s.name.clone()).collect()
}

#[test]
fn sequential_networks_are_their_stages() {
    let vgg = names(Vgg16, [3, 32, 32]);
    // 13 convolutions, 5 poolings, 2 hidden dense layers and the head.
    assert_eq!(vgg.len(), 21, "{vgg:?}");
    assert_eq!(vgg[0], "conv1_1+relu");
    assert_eq!(vgg[2], "maxpool1");
    assert_eq!(vgg.last().unwrap(), "head");
    assert_eq!(
        names(SmallCnn, [1, 28, 28]),
        ["conv+relu", "maxpool", "dense+relu", "head"]
    );
    assert_eq!(
        names(SimpleCnn, [1, 28, 28]),
        [
            "conv1+relu",
            "maxpool1",
            "conv2+relu",
            "maxpool2",
            "dense+relu",
            "head"
        ]
    );
    assert_eq!(
        names(Mlp, [1, 8, 8]),
        ["dense1+relu", "dense2+relu", "head"]
    );
    for all in [vgg, names(Vgg19, [3, 32, 32])] {
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "{all:?}");
    }
}

#[test]
fn networks_with_branches_have_no_chain_yet() {
    let device = Default::default();
    for architecture in [ResNet18, MobileNetV1, MobileNetV2, MobileNetV3Small] {
        let model = spec(architecture, [3, 32, 32], 4)
            .init::<Cpu>(&device)
            .unwrap();
        let error = model.stages().unwrap_err().to_string();
        assert!(
            error.contains("cannot be timed stage by stage yet"),
            "{error}"
        );
    }
}
