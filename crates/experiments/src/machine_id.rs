//! What a run's fast paths and CubeCL tuning are, by identity rather than by wording.
//!
//! meta.json words both for readers (`batchlab_fast::ON_FLEX`: "in-place optimizers (SGD,
//! Adam, AdamW); convolution + ReLU with its own backward, ..."; `backend::autotune`:
//! "balanced (cubecl's default)"). A sweep predicts only runs made with the same ones, and when
//! that was decided by comparing the sentences, rewording one silently stopped every committed
//! sweep from predicting anything. Here the words are read back into identifiers once
//! ([`FAST_PATHS`]; the tuning level is the first word), compared as identifiers, and kept
//! beside them for the reports, which print them as they were recorded. A fast path added or
//! changed in a way that changes step times gets a new phrase and a new identifier (as
//! Winograd and the max-pooling did on 2026-11-26), so older sweeps stop predicting newer runs
//! on purpose. A phrase not in the table stands for itself: an unknown wording never matches a
//! known one.

use std::collections::BTreeSet;

/// Each fast path's identifier and the phrases meta.json has worded it with.
pub const FAST_PATHS: &[(&str, &[&str])] = &[
    ("optimizers-v1", &["in-place optimizers (SGD, Adam, AdamW)"]),
    (
        "conv-relu-v1",
        &["convolution + ReLU with its own backward"],
    ),
    ("winograd-f4x4-v1", &["Winograd F(4x4, 3x3) where it pays"]),
    ("maxpool-2x2-v1", &["2x2 max-pooling with its own backward"]),
    (
        "conv-relu-libtorch-v1",
        &["convolution + ReLU with libtorch's own backward"],
    ),
    ("burn-ops", &["none on this backend: burn's own ops"]),
    // Turned off on a backend that has them: burn's own ops too, but not the backend's usual
    // step, so never the same as its runs with them (a reader is told, docs/results.md).
    (
        TURNED_OFF,
        &["off (backend.fast_paths = false): burn's own ops"],
    ),
];

/// The identifier of fast paths turned off by `backend.fast_paths = false`.
const TURNED_OFF: &str = "turned-off";

/// The mark of an identifier read from words not in [`FAST_PATHS`].
const UNKNOWN: &str = "words: ";

/// The fast paths a run took: identifiers, compared; the recorded words, printed.
#[derive(Debug, Clone, Default)]
pub struct FastPaths {
    ids: BTreeSet<String>,
    words: String,
}

impl FastPaths {
    /// Reads meta.json's `fast_paths` words (empty in runs made before they were recorded).
    pub fn read(words: &str) -> Self {
        let mut phrases: Vec<(&str, &str)> = FAST_PATHS
            .iter()
            .flat_map(|(id, ps)| ps.iter().map(move |p| (*id, *p)))
            .collect();
        // Longest first, so that no phrase is taken for a shorter one inside it.
        phrases.sort_by_key(|(_, p)| std::cmp::Reverse(p.len()));
        let mut rest = words.to_string();
        let mut ids = BTreeSet::new();
        for (id, phrase) in phrases {
            if rest.contains(phrase) {
                rest = rest.replace(phrase, ";");
                ids.insert(id.to_string());
            }
        }
        for clause in rest.split([';', ',']).map(str::trim) {
            if !clause.is_empty() {
                ids.insert(format!("{UNKNOWN}{clause}"));
            }
        }
        FastPaths {
            ids,
            words: words.to_string(),
        }
    }

    /// Whether none were recorded.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether the run turned the backend's fast paths off (`backend.fast_paths = false`).
    pub fn turned_off(&self) -> bool {
        self.ids.contains(TURNED_OFF)
    }

    /// The identifiers, for a reader or a test.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().map(String::as_str)
    }

    /// Whether every phrase of the words is a known fast path.
    pub fn all_known(&self) -> bool {
        !self.ids.iter().any(|id| id.starts_with(UNKNOWN))
    }

    /// The words as meta.json recorded them.
    pub fn words(&self) -> &str {
        &self.words
    }
}

impl PartialEq for FastPaths {
    fn eq(&self, other: &Self) -> bool {
        self.ids == other.ids
    }
}

impl Eq for FastPaths {}

/// CubeCL's autotune level: the first word of meta.json's `autotune` ("balanced (cubecl's
/// default)", "off (built without burn's autotune): ...", "full (CUBECL_AUTOTUNE_LEVEL)"),
/// compared; the words, printed. Empty on the CPU backends and in older runs.
#[derive(Debug, Clone, Default)]
pub struct Autotune {
    level: String,
    words: String,
}

impl Autotune {
    /// Reads meta.json's `autotune` words.
    pub fn read(words: &str) -> Self {
        Autotune {
            level: words.split_whitespace().next().unwrap_or("").to_string(),
            words: words.to_string(),
        }
    }

    /// Whether none was recorded.
    pub fn is_empty(&self) -> bool {
        self.level.is_empty()
    }

    /// The level (`balanced`, `off`, ...).
    pub fn level(&self) -> &str {
        &self.level
    }

    /// The words as meta.json recorded them.
    pub fn words(&self) -> &str {
        &self.words
    }
}

impl PartialEq for Autotune {
    fn eq(&self, other: &Self) -> bool {
        self.level == other.level
    }
}

impl Eq for Autotune {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_each_backend_records_are_known_fast_paths() {
        for words in [batchlab_fast::ON_FLEX, batchlab_fast::ON_LIBTORCH] {
            let read = FastPaths::read(words);
            assert!(read.all_known(), "{words:?} reads as {:?}", read.ids);
        }
        let flex = FastPaths::read(batchlab_fast::ON_FLEX);
        let ids: Vec<&str> = flex.ids().collect();
        assert_eq!(
            ids,
            [
                "conv-relu-v1",
                "maxpool-2x2-v1",
                "optimizers-v1",
                "winograd-f4x4-v1"
            ]
        );
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
}
