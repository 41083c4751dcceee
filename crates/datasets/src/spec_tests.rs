use super::*;

fn parse(text: &str) -> DataConfig {
    toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn every_study_in_experiments_md_can_name_its_data() {
    let studies = [
        // power-of-two (Raschka): CIFAR-10, 5,000 held out, 256 then random / centre 224.
        "name = 'cifar10'\nvalidation = 5000\n[train]\nresize = 256\ncrop = 224\n[eval]\nresize = 256\ncrop = 224",
        // sgd-vs-adam and augmentation (seed 003).
        "name = 'cats-vs-dogs'\nper_class = 1000\nsplit = [600, 200, 200]\nsize = 200",
        "name = 'cats-vs-dogs'\naugment = true",
        // Shallue et al.'s MNIST and Fashion-MNIST workloads: 55,000 / 5,000 / 10,000.
        "name = 'fashion-mnist'\nvalidation = 5000",
        "name = 'mnist'",
        // CPU variants with online augmentation.
        "name = 'fashion-mnist'\n[train]\ncrop = 28\npadding = 2\nflip = true",
        // ... and the seed's offline augmentation on them.
        "name = 'fashion-mnist'\naugment = true",
        // ResNet-8 on CIFAR-10 (Shallue et al.): pad 4, crop 32, flip, normalised.
        "name = 'cifar10'\n[train]\ncrop = 32\npadding = 4\nflip = true\nmean = [0.491, 0.482, 0.447]\nstd = [0.247, 0.243, 0.262]\n[eval]\nmean = [0.491, 0.482, 0.447]\nstd = [0.247, 0.243, 0.262]",
        "name = 'synthetic'\nshape = [3, 32, 32]\nclasses = 10\nexamples = [1000, 200, 200]",
    ];
    for text in studies {
        let config = parse(text);
        config
            .validate()
            .unwrap_or_else(|e| panic!("{text}: {e:?}"));
    }
}

#[test]
fn keys_of_another_dataset_and_bad_transforms_are_refused_by_key() {
    let err = parse("name = 'fashion-mnist'\nsize = 28")
        .validate()
        .unwrap_err();
    assert_eq!(err.0, "size");
    assert!(err.1.contains("only by cats-vs-dogs"), "{}", err.1);
    let err = parse("name = 'mnist'\n[eval]\nflip = true")
        .validate()
        .unwrap_err();
    assert_eq!(err.0, "eval.flip");
    let err = parse("name = 'cifar10'\n[train]\nresize = 32\ncrop = 64")
        .validate()
        .unwrap_err();
    assert_eq!(err.0, "train.crop");
    let err = parse("name = 'cifar10'\n[train]\nmean = [0.5]")
        .validate()
        .unwrap_err();
    assert_eq!(err.0, "train.std");
    let err = parse("name = 'cats-vs-dogs'\nper_class = 10\nsplit = [6, 2, 3]")
        .validate()
        .unwrap_err();
    assert_eq!(err.0, "split");
    assert!(DatasetName::parse("imagenet")
        .unwrap_err()
        .contains("cifar10, cats-vs-dogs"));
}

#[test]
fn missing_data_is_found_before_loading() {
    let empty = tempfile::tempdir().unwrap();
    for name in [
        DatasetName::Cifar10,
        DatasetName::CatsVsDogs,
        DatasetName::Mnist,
    ] {
        let err = DataConfig::named(name).check(empty.path()).unwrap_err();
        assert!(
            matches!(err, DatasetError::Missing { .. }),
            "{name:?}: {err}"
        );
        assert!(err.to_string().contains(name.as_str()), "{err}");
    }
    DataConfig::named(DatasetName::Synthetic)
        .check(empty.path())
        .unwrap();
}

#[test]
fn synthetic_data_loads_with_its_pipelines() {
    let mut config = parse("name = 'synthetic'\nshape = [1, 6, 6]\nexamples = [40, 10, 10]\n[train]\ncrop = 4\npadding = 1\nflip = true");
    config.validate().unwrap();
    let data = config.load(Path::new("/nonexistent")).unwrap();
    assert_eq!(
        (data.splits.train.len(), data.splits.validation.len()),
        (40, 10)
    );
    assert_eq!(data.train.output_shape([1, 6, 6]), [1, 4, 4]);
    assert_eq!(data.eval.output_shape([1, 6, 6]), [1, 6, 6]);
    assert_eq!(data.train.crop_mode, CropMode::Random);
    config.seed = Some(1);
    assert_ne!(
        config.load(Path::new("/x")).unwrap().splits.train,
        data.splits.train
    );
}

#[test]
fn the_seeds_offline_augmentation_doubles_train_and_validation_of_any_dataset() {
    let plain = parse("name = 'synthetic'\nshape = [1, 28, 28]\nexamples = [40, 10, 10]");
    let mut doubled = plain.clone();
    doubled.augment = true;
    doubled.validate().unwrap();
    let (p, d) = (
        plain.load(Path::new("/x")).unwrap(),
        doubled.load(Path::new("/x")).unwrap(),
    );
    assert_eq!(d.splits.train.len(), 80);
    assert_eq!(d.splits.validation.len(), 20);
    assert_eq!(
        d.splits.test, p.splits.test,
        "the test set is not augmented"
    );
    assert_eq!(d.splits.train.slice(0..40), p.splits.train);
    assert_eq!(&d.splits.train.labels[40..], &p.splits.train.labels[..]);
    // The copy of image 7: enlarged to 35x35 with bicubic, its top-left 28x28.
    let enlarged = crate::transform::resize(
        p.splits.train.image(7),
        [1, 28, 28],
        [35, 35],
        crate::transform::Filter::Bicubic,
    );
    let expected = crate::transform::crop(&enlarged, [1, 35, 35], 0, 0, [28, 28]);
    assert_eq!(d.splits.train.image(47), expected.as_slice());
    assert_ne!(d.splits.train.image(47), d.splits.train.image(7));
    assert!(d
        .notes
        .iter()
        .any(|n| n.contains("enlarged to 35x35") && n.contains("train 40 -> 80")));
}
