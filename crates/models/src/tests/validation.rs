//! Specs that cannot be built are refused with a message naming what was expected and got.

use super::spec;
use crate::Architecture::{self, *};
use crate::{ModelError, ModelSpec};

#[test]
fn too_small_input_names_the_limit() {
    let error = spec(Vgg16, [3, 16, 16], 10).validate().unwrap_err();
    assert_eq!(
        error.to_string(),
        "vgg16 needs height and width >= 32 (five 2x2 poolings); got 3x16x16"
    );
    for architecture in [ResNet50, MobileNetV2, MobileNetV3Small] {
        assert!(matches!(
            spec(architecture, [3, 32, 31], 10).validate(),
            Err(ModelError::InputTooSmall { min: 32, .. })
        ));
    }
    assert!(spec(SimpleCnn, [1, 3, 28], 10).validate().is_err());
    assert!(spec(SimpleCnn, [1, 4, 4], 10).validate().is_ok());
    assert!(spec(Mlp, [1, 1, 1], 2).validate().is_ok());
}

#[test]
fn width_is_refused_where_undefined() {
    for architecture in [Vgg16, Vgg19, SmallCnn, SimpleCnn, Mlp] {
        let error = ModelSpec {
            width: 0.5,
            ..spec(architecture, [3, 64, 64], 10)
        }
        .validate()
        .unwrap_err();
        assert!(
            matches!(error, ModelError::WidthNotSupported { .. }),
            "{error}"
        );
        assert!(
            error.to_string().contains("width must be 1.0, got 0.5"),
            "{error}"
        );
    }
    for width in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let error = ModelSpec {
            width,
            ..spec(MobileNetV2, [3, 64, 64], 10)
        }
        .validate()
        .unwrap_err();
        assert!(matches!(error, ModelError::InvalidWidth { .. }), "{error}");
    }
    let error = ModelSpec {
        width: 0.001,
        ..spec(ResNet18, [3, 64, 64], 10)
    }
    .validate()
    .unwrap_err();
    assert!(matches!(error, ModelError::WidthTooSmall { .. }), "{error}");
}

#[test]
fn other_bad_specs() {
    assert_eq!(
        spec(Mlp, [1, 28, 28], 0).validate(),
        Err(ModelError::NoClasses)
    );
    assert!(matches!(
        spec(ResNet18, [0, 224, 224], 10).validate(),
        Err(ModelError::EmptyInput { .. })
    ));
    let error = ModelSpec {
        hidden: vec![64, 0],
        ..spec(Mlp, [1, 28, 28], 10)
    }
    .validate()
    .unwrap_err();
    assert_eq!(
        error,
        ModelError::EmptyHiddenLayer {
            index: 1,
            hidden: vec![64, 0]
        }
    );
    // Errors surface from every entry point, not only validate().
    let bad = spec(Vgg16, [3, 8, 8], 10);
    assert!(bad.trainable_params().is_err());
    assert!(bad.forward_flops().is_err());
}

#[test]
fn names_round_trip_and_unknown_names_list_the_valid_ones() {
    for architecture in Architecture::ALL {
        assert_eq!(
            architecture.name().parse::<Architecture>(),
            Ok(architecture)
        );
        assert_eq!(architecture.to_string(), architecture.name());
        assert!(!architecture.description().is_empty());
    }
    let error = "resnet34".parse::<Architecture>().unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("unknown architecture \"resnet34\""),
        "{message}"
    );
    for architecture in Architecture::ALL {
        assert!(message.contains(architecture.name()), "{message}");
    }
}
