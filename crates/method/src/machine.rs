//! Where a run ran, as one type ([`Machine`]): backend, device, threads, matrix kernels, and
//! the fast paths and CubeCL tuning by identity rather than by wording. Sweeps (what a
//! prediction must match), findings.json (what a verdict holds for) and predict read it; its
//! words come from rendering ([`Machine::words`], [`Machine::build_words`]).
//!
//! Fast paths and tuning, by identity:
//!
//! meta.json words both for readers (`batchlab_fast::ON_FLEX`: "in-place optimizers (SGD,
//! Adam, AdamW); convolution + ReLU with its own backward, ..."; `backend::autotune`:
//! "balanced (cubecl's default)"). A sweep predicts only runs made with the same ones, and when
//! that was decided by comparing the sentences, rewording one silently stopped every committed
//! sweep from predicting anything. Here the words are read back into identifiers once
//! ([`FAST_PATHS`]; the tuning level is the first word), compared as identifiers, and kept
//! beside them for the reports, which print them as they were recorded. A fast path added or
//! changed in a way that changes step times gets a new phrase and a new identifier (as
//! Winograd and the max-pooling did on 2026-11-26, the narrow convolutions, the dense layers, Winograd's blocked forward, the dense layers' short-batch gradients and the direct convolutions' products on 2026-11-28,
//! Winograd position by position on 2026-11-28, the dense layers of a long batch later on 2026-11-28, every batch's
//! dense products measured that night, the packed kernel finishing the forward in its stores on
//! 2026-11-29, the packed kernel's second order raced later that day, a network's head on the
//! dense layers' path after it, a short batch's forward streaming the weights on 2026-12-01, a
//! head's products on a narrow kernel on 2026-12-02),
//! so older sweeps stop predicting newer runs
//! on purpose. A phrase not in the table stands for itself: an unknown wording never matches a
//! known one.

use std::collections::BTreeSet;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Each fast path's identifier and the phrases meta.json has worded it with.
pub const FAST_PATHS: &[(&str, &[&str])] = &[
    ("optimizers-v1", &["in-place optimizers (SGD, Adam, AdamW)"]),
    (
        "conv-relu-v1",
        &["convolution + ReLU with its own backward"],
    ),
    ("winograd-f4x4-v1", &["Winograd F(4x4, 3x3) where it pays"]),
    (
        "winograd-f4x4-measured-v1",
        &["Winograd F(4x4, 3x3) where this machine measured it faster"],
    ),
    (
        "conv-narrow-v1",
        &["direct kernels for convolutions of at most 4 input channels"],
    ),
    (
        "conv-narrow-measured-v1",
        &["direct kernels for convolutions of at most 4 input channels where this machine measured them faster"],
    ),
    (
        "winograd-blocked-forward-v1",
        &["Winograd's forward in blocks of tiles on batchlab's own product kernel"],
    ),
    (
        "winograd-positions-v1",
        &["Winograd position by position where the transformed kernels outweigh the tiles"],
    ),
    (
        "conv-direct-slices-v1",
        &["direct convolutions as one product per slice of samples"],
    ),
    (
        "dense-relu-split-v1",
        &["dense + ReLU with a long inner dimension shared out among the threads"],
    ),
    (
        "dense-relu-short-batch-v1",
        &["dense + ReLU's gradients over a short batch on batchlab's own kernel"],
    ),
    (
        "dense-relu-long-batch-v1",
        &["dense + ReLU over a long batch on batchlab's packed product kernel"],
    ),
    (
        "dense-relu-long-batch-measured-v1",
        &["dense + ReLU over a long batch on batchlab's packed product kernel or flex's, whichever this machine measured faster"],
    ),
    (
        "dense-relu-measured-v1",
        &["dense + ReLU's three products at every batch on the kernel this machine measured fastest (batchlab's packed or short-batch kernel, flex's, or flex's with the inner dimension shared out)"],
    ),
    (
        "dense-relu-thresholds-v1",
        &["dense + ReLU's three products at every batch on the kernel the batch's fixed thresholds pick (batchlab's packed or short-batch kernel, flex's, or flex's with the inner dimension shared out)"],
    ),
    (
        "dense-relu-measured-v2",
        &["dense + ReLU's three products at every batch on the kernel this machine measured fastest (batchlab's packed or short-batch kernel, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores"],
    ),
    (
        "dense-relu-measured-v3",
        &["dense + ReLU's three products at every batch on the kernel this machine measured fastest (batchlab's packed kernel in either of its orders or its short-batch kernel, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores"],
    ),
    (
        "dense-measured-v1",
        &["dense layers' three products (with their ReLU, or a network's head) at every batch on the kernel this machine measured fastest (batchlab's packed kernel in either of its orders or its short-batch kernel, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores"],
    ),
    (
        "dense-measured-v2",
        &["dense layers' three products (with their ReLU, or a network's head) at every batch on the kernel this machine measured fastest (batchlab's packed kernel in either of its orders or its short-batch kernels, the forward's streaming the weights, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores"],
    ),
    (
        "dense-measured-v3",
        &["dense layers' three products (with their ReLU, or a network's head) at every batch on the kernel this machine measured fastest (batchlab's packed kernel in either of its orders, its short-batch kernels, the forward's streaming the weights, or its narrow one for few columns or a short inner dimension, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores"],
    ),
    (
        "dense-thresholds-v1",
        &["dense layers' three products (with their ReLU, or a network's head) at every batch on the kernel the batch's fixed thresholds pick (batchlab's packed or short-batch kernel, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores"],
    ),
    (
        "dense-relu-thresholds-v2",
        &["dense + ReLU's three products at every batch on the kernel the batch's fixed thresholds pick (batchlab's packed or short-batch kernel, flex's, or flex's with the inner dimension shared out), with the bias and ReLU in the packed kernel's stores"],
    ),
    ("maxpool-2x2-v1", &["2x2 max-pooling with its own backward"]),
    (
        "conv-relu-libtorch-v1",
        &["convolution + ReLU with libtorch's own backward"],
    ),
    (
        "conv-libtorch-v1",
        &["every convolution with libtorch's own backward, its ReLU's too where one follows"],
    ),
    (
        "dense-relu-libtorch-v1",
        &["dense layers as libtorch's addmm with the ReLU's own backward, narrow ones in PyTorch's order"],
    ),
    (
        "dense-relu-libtorch-measured-v1",
        &["dense layers as libtorch's addmm with the ReLU's own backward, each product in the operand order this machine measured faster"],
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

/// Where a run ran: what a prediction must match, and what a verdict holds for. findings.json
/// writes it whole; a findings.json written before the fast paths, tuning and allocator were
/// part of it reads them as not recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// burn backend, e.g. `flex`.
    pub backend: String,
    /// Device name as meta.json records it (the CPU model or GPU name).
    pub device: String,
    /// Threads the run used.
    pub threads: usize,
    /// flex's matrix kernels (meta.json `flex_kernels`): AVX-512 and AVX2 kernels time
    /// differently, so a sweep predicts only runs made with the same ones. Empty in runs
    /// made before it was recorded (all of them built without the AVX-512 kernels).
    #[serde(default)]
    pub kernels: String,
    /// batchlab's fast paths (meta.json `fast_paths`), by identity: they change the step time,
    /// so a sweep predicts only runs made with the same ones. None in runs made before they
    /// existed.
    #[serde(default, skip_serializing_if = "FastPaths::is_empty")]
    pub fast_paths: FastPaths,
    /// CubeCL's autotune level (meta.json `autotune`): it decides the kernels on cuda and wgpu.
    /// None on the CPU backends and in runs made before it was recorded.
    #[serde(default, skip_serializing_if = "Autotune::is_empty")]
    pub autotune: Autotune,
    /// The memory allocator (meta.json `allocator`): the system's malloc page-faults large
    /// tensors in afresh, so a sweep predicts only runs made with the same one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub allocator: String,
}

impl Machine {
    /// "flex on AMD EPYC, 2 threads and avx512 kernels": where it ran, in one phrase.
    pub fn words(&self) -> String {
        let plural = if self.threads == 1 { "" } else { "s" };
        format!(
            "{} on {}, {} thread{plural}{}",
            self.backend,
            self.device,
            self.threads,
            kernels_note(&self.kernels)
        )
    }

    /// "; fast paths: ...; allocator: mimalloc": what else a sweep must share with a run to
    /// predict it, in one phrase (parts not recorded left out).
    pub fn build_words(&self) -> String {
        let mut words = String::new();
        if !self.fast_paths.is_empty() {
            words += &format!("; fast paths: {}", self.fast_paths.words());
        }
        if !self.autotune.is_empty() {
            words += &format!("; autotune: {}", self.autotune.words());
        }
        words + &format!("; allocator: {}", self.allocator)
    }

    /// What differs from `other`, in words ("threads", "fast paths", ...): empty exactly when
    /// the two are equal.
    pub fn differences(&self, other: &Machine) -> Vec<&'static str> {
        [
            (self.backend != other.backend, "backend"),
            (self.device != other.device, "device"),
            (self.threads != other.threads, "threads"),
            (self.kernels != other.kernels, "matrix kernels"),
            (self.fast_paths != other.fast_paths, "fast paths"),
            (self.autotune != other.autotune, "autotune"),
            (self.allocator != other.allocator, "allocator"),
        ]
        .into_iter()
        .filter_map(|(differs, what)| differs.then_some(what))
        .collect()
    }

    /// Whether `other` is the same hardware and backend (backend, device, threads, kernels):
    /// the machine docs/results.md holds a verdict for, whatever the build around it.
    pub fn same_hardware(&self, other: &Machine) -> bool {
        (&self.backend, &self.device, self.threads, &self.kernels)
            == (&other.backend, &other.device, other.threads, &other.kernels)
    }
}

/// ` and <kernels> kernels` where they are recorded.
pub fn kernels_note(kernels: &str) -> String {
    match kernels.split(' ').next() {
        Some(k) if !k.is_empty() => format!(" and {k} kernels"),
        _ => String::new(),
    }
}

/// Written as the words meta.json recorded, read back into identifiers.
impl Serialize for FastPaths {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.words)
    }
}

impl<'de> Deserialize<'de> for FastPaths {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(FastPaths::read(&String::deserialize(d)?))
    }
}

/// Written as the words meta.json recorded, read back into the level.
impl Serialize for Autotune {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.words)
    }
}

impl<'de> Deserialize<'de> for Autotune {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Autotune::read(&String::deserialize(d)?))
    }
}
