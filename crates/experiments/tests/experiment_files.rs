//! Every experiment shipped in experiments/ parses and resolves.

use std::path::Path;

use batchlab_experiments::{load_study, Source};

#[test]
fn every_shipped_experiment_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let study =
                load_study(&Source::from_file(&path).unwrap()).unwrap_or_else(|e| panic!("{e}"));
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            assert_eq!(
                study.header().name,
                stem,
                "file name and experiment.name agree"
            );
            assert!(
                !study.header().description.is_empty(),
                "{stem} has a description"
            );
            // The resolved config is itself a valid config that resolves to the same thing.
            let again = Source {
                origin: format!("{stem} (resolved)"),
                text: study.resolved_toml(),
                overrides: vec![],
            };
            assert_eq!(
                load_study(&again).unwrap().resolved_toml(),
                study.resolved_toml()
            );
            names.push(stem);
        }
    }
    for required in [
        "quickstart",
        "vgg16-step-time",
        "vgg19-step-time",
        "mobilenet-step-time",
        "resnet50-step-time",
        "vgg16-step-time-cpu",
        "vgg19-step-time-cpu",
        "mobilenet-step-time-cpu",
        "resnet50-step-time-cpu",
    ] {
        assert!(
            names.iter().any(|n| n == required),
            "experiments/{required}.toml is missing"
        );
    }
}
