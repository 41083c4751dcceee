//! The fast-path and tuning identities (batchlab_method::machine) against what batchlab's
//! backends and every committed run record: each wording is known, a rewording keeps the
//! identity, a new path changes it.

use batchlab_method::machine::{Autotune, FastPaths};

#[test]
fn the_words_each_backend_records_are_known_fast_paths() {
    for words in [
        batchlab_fast::ON_FLEX,
        batchlab_fast::ON_FLEX_THRESHOLDS,
        batchlab_fast::ON_LIBTORCH,
        batchlab_fast::ON_LIBTORCH_THRESHOLDS,
    ] {
        let read = FastPaths::read(words);
        assert!(
            read.all_known(),
            "{words:?} reads as {:?}",
            read.ids().collect::<Vec<_>>()
        );
    }
    let flex = FastPaths::read(batchlab_fast::ON_FLEX);
    let ids: Vec<&str> = flex.ids().collect();
    assert_eq!(
        ids,
        [
            "conv-direct-slices-v1",
            "conv-narrow-measured-v1",
            "conv-relu-v1",
            "dense-measured-v3",
            "maxpool-2x2-v1",
            "optimizers-v1",
            "winograd-blocked-forward-v1",
            "winograd-f4x4-measured-v1",
            "winograd-positions-v1"
        ]
    );
    // The paths chosen by the fixed thresholds are another build's: a sweep timed with them
    // predicts no run whose paths were measured, nor the other way round.
    let thresholds = FastPaths::read(batchlab_fast::ON_FLEX_THRESHOLDS);
    assert!(thresholds.ids().any(|id| id == "winograd-f4x4-v1"));
    assert!(thresholds.ids().any(|id| id == "dense-thresholds-v1"));
    assert!(thresholds.ids().any(|id| id == "conv-narrow-v1"));
    assert_ne!(thresholds, flex);
    let libtorch = FastPaths::read(batchlab_fast::ON_LIBTORCH);
    let ids: Vec<&str> = libtorch.ids().collect();
    assert_eq!(
        ids,
        [
            "conv-libtorch-v1",
            "dense-relu-libtorch-measured-v1",
            "optimizers-v1"
        ]
    );
    let libtorch_thresholds = FastPaths::read(batchlab_fast::ON_LIBTORCH_THRESHOLDS);
    assert!(libtorch_thresholds
        .ids()
        .any(|id| id == "dense-relu-libtorch-v1"));
    assert_ne!(libtorch_thresholds, libtorch);
}

#[test]
fn every_committed_run_records_known_fast_paths() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let mut dirs = vec![root];
    let mut read = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "meta.json") {
                let meta: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                let words = meta["fast_paths"].as_str().unwrap_or("");
                assert!(
                    FastPaths::read(words).all_known(),
                    "{}: {words:?}",
                    path.display()
                );
                read += 1;
            }
        }
    }
    assert!(read > 50, "only {read} meta.json files read");
}

#[test]
fn a_rewording_keeps_the_identity_and_a_new_path_changes_it() {
    let before = FastPaths::read(
        "in-place optimizers (SGD, Adam, AdamW); convolution + ReLU with its own backward",
    );
    // The same paths in another order and punctuation: the same identity.
    let reordered = FastPaths::read(
        "convolution + ReLU with its own backward, in-place optimizers (SGD, Adam, AdamW)",
    );
    assert_eq!(before, reordered);
    assert_ne!(before.words(), reordered.words());
    // Winograd added: another identity, so older sweeps stop predicting.
    let with_winograd = FastPaths::read(
        "in-place optimizers (SGD, Adam, AdamW); convolution + ReLU with its own backward, Winograd F(4x4, 3x3) where it pays",
    );
    assert_ne!(before, with_winograd);
    // Unknown words stand for themselves.
    let unknown = FastPaths::read("fused attention");
    assert!(!unknown.all_known());
    assert_ne!(unknown, FastPaths::read(""));
    assert!(FastPaths::read("").is_empty());
}

#[test]
fn the_tuning_level_is_its_identity() {
    let a = Autotune::read("balanced (cubecl's default)");
    assert_eq!(a.level(), "balanced");
    assert_eq!(a, Autotune::read("balanced (the default of cubecl)"));
    assert_ne!(
        a,
        Autotune::read("off (built without burn's autotune): burn-cubecl's default kernels")
    );
    assert!(Autotune::read("").is_empty());
}
