//! Reading experiment TOMLs: strict parsing, `--set` overrides, and errors that name the file,
//! line, column, key and what was expected.
//!
//! A config is read in two passes: the `[experiment]` table says which runner owns the file, then
//! that runner deserializes the whole document into its own `deny_unknown_fields` structs (see
//! [`crate::registry`]). Tables every runner shares live here.

use std::{fmt, path::Path};

use batchlab_models::ModelSpec;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use locate::{key_at, line_column, locate_key};

/// The largest batch size a config may name: far beyond any device's memory, small enough that
/// nothing sized by it overflows.
pub const MAX_BATCH_SIZE: u32 = 1 << 24;
/// The most entries a list of a config (batch sizes, seeds) may hold, so that a mistyped range
/// is refused before anything is allocated for it.
pub const MAX_LIST: usize = 10_000;
/// The most units (sweep visits, trials) one study may plan.
pub const MAX_UNITS: u64 = 1_000_000;

/// Checks a list of batch sizes read from `key`: each in 1..=[`MAX_BATCH_SIZE`], at most
/// [`MAX_LIST`] of them, none repeated.
pub fn check_batch_sizes(source: &Source, key: &str, sizes: &[u32]) -> Result<(), ConfigError> {
    check_list(source, key, sizes)?;
    if let Some(bad) = sizes.iter().find(|&&b| b == 0 || b > MAX_BATCH_SIZE) {
        return Err(source.error(
            key,
            format!("batch sizes must be 1 to {MAX_BATCH_SIZE}, got {bad}"),
        ));
    }
    Ok(())
}

/// Checks a list read from `key`: at most [`MAX_LIST`] entries, none repeated (a repeated entry
/// would run the same unit twice).
pub fn check_list<T: Ord + fmt::Display>(
    source: &Source,
    key: &str,
    items: &[T],
) -> Result<(), ConfigError> {
    if items.len() > MAX_LIST {
        return Err(source.error(
            key,
            format!("{} entries; at most {MAX_LIST} are allowed", items.len()),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    match items.iter().find(|item| !seen.insert(*item)) {
        Some(item) => Err(source.error(key, format!("{item} is listed twice"))),
        None => Ok(()),
    }
}

/// Checks that `count` things (`what`, e.g. "visits") are at most `limit` (e.g. [`MAX_UNITS`]).
pub fn check_count(
    source: &Source,
    key: &str,
    what: &str,
    count: u128,
    limit: u64,
) -> Result<(), ConfigError> {
    if count > u128::from(limit) {
        return Err(source.error(
            key,
            format!("{count} {what} planned; at most {limit} are allowed"),
        ));
    }
    Ok(())
}

/// A config document and where it came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// Shown in errors: a file path, or `--set` for overrides.
    pub origin: String,
    /// The TOML text.
    pub text: String,
    /// `--set key=value` overrides, applied on top of the text.
    pub overrides: Vec<String>,
}

/// The largest config file read: the largest committed experiment is under 6 KB, and a config
/// of tens of megabytes (25 million batch sizes) would exhaust a cluster node's address-space
/// limit while being parsed, before any check could refuse it.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

impl Source {
    /// Reads a TOML file; one over [`MAX_CONFIG_BYTES`] is refused before it is read.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if size > MAX_CONFIG_BYTES {
            return Err(ConfigError {
                origin: path.display().to_string(),
                location: None,
                key: None,
                message: format!(
                    "the file is {size} bytes; configs over {MAX_CONFIG_BYTES} bytes (1 MiB) are refused before parsing (list batch sizes as sweep.batch_range = [from, to] rather than one by one)"
                ),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            origin: path.display().to_string(),
            location: None,
            key: None,
            message: format!("cannot read the file: {e}"),
        })?;
        Ok(Self {
            origin: path.display().to_string(),
            text,
            overrides: Vec::new(),
        })
    }

    /// The same document with `--set key=value` overrides added.
    pub fn with_overrides(mut self, overrides: &[String]) -> Self {
        self.overrides.extend(overrides.iter().cloned());
        self
    }

    /// Deserializes the document (plus overrides) into `T`, whose structs deny unknown fields.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        let parsed: T = toml::from_str(&self.text).map_err(|e| self.toml_error(&e))?;
        if self.overrides.is_empty() {
            return Ok(parsed);
        }
        let mut table: toml::Table = toml::from_str(&self.text).map_err(|e| self.toml_error(&e))?;
        for assignment in &self.overrides {
            apply_override(&mut table, assignment)?;
        }
        toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError {
                origin: format!(
                    "{} with --set {}",
                    self.origin,
                    self.overrides.join(" --set ")
                ),
                location: None,
                key: None,
                message: e.message().to_string(),
            })
    }

    /// An error about `key` (dotted, e.g. `sweep.rounds`), located in the text where possible.
    pub fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        let overridden = self
            .overrides
            .iter()
            .any(|o| o.split('=').next().map(str::trim) == Some(key));
        ConfigError {
            origin: if overridden {
                format!("{} (overridden by --set)", self.origin)
            } else {
                self.origin.clone()
            },
            location: if overridden {
                None
            } else {
                locate_key(&self.text, key)
            },
            key: Some(key.to_string()),
            message: message.into(),
        }
    }

    fn toml_error(&self, error: &toml::de::Error) -> ConfigError {
        let location = error.span().map(|span| line_column(&self.text, span.start));
        let key = error.span().and_then(|span| key_at(&self.text, span.start));
        ConfigError {
            origin: self.origin.clone(),
            location,
            key,
            message: error.message().trim().to_string(),
        }
    }
}

/// A config that cannot be used, with everything a user needs to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    /// File (or `--set`) the error is in.
    pub origin: String,
    /// 1-based line and column, when known.
    pub location: Option<(usize, usize)>,
    /// Dotted key, when known.
    pub key: Option<String>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some((line, column)) = self.location {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// `[experiment]`: what the study is, which runner runs it, and what it reproduces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentHeader {
    /// Names the report directory `reports/<name>/`; letters, digits, `-`, `_`.
    pub name: String,
    /// Which runner (see `batchlab list`, or the registry's `RUNNERS` table).
    pub kind: crate::kind::Kind,
    /// One or two sentences for `batchlab list` and report.md.
    #[serde(default)]
    pub description: String,
    /// The published figure or table this experiment reproduces, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduces: Option<String>,
    /// The source's claim, quoted beside the measured result in report.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
}

impl ExperimentHeader {
    /// Checks the name is usable as a directory name.
    pub fn validate(&self, source: &Source) -> Result<(), ConfigError> {
        let ok = !self.name.is_empty()
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(source.error(
                "experiment.name",
                format!(
                    "expected letters, digits, '-' or '_' (it names a directory), got {:?}",
                    self.name
                ),
            ));
        }
        Ok(())
    }
}

/// Just the `[experiment]` table, read first to pick the runner; other tables are ignored here.
#[derive(Debug, Deserialize)]
pub struct HeaderOnly {
    /// The `[experiment]` table.
    pub experiment: ExperimentHeader,
}

/// The backends a config can name; `backend.name` deserializes straight into it, so an unknown
/// name is an error located at its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// burn-flex on the CPU.
    Flex,
    /// burn-cuda on an NVIDIA GPU.
    Cuda,
    /// LibTorch (PyTorch's kernels, through burn-tch) on the CPU.
    Tch,
    /// LibTorch on an NVIDIA GPU.
    TchCuda,
    /// burn-wgpu (the CubeCL backend of `cuda`, over wgpu: Vulkan, Metal or DX12), on a GPU or
    /// on Mesa's software Vulkan (lavapipe).
    Wgpu,
}

impl BackendKind {
    /// Every backend, in the order messages list them.
    pub const ALL: [Self; 5] = [Self::Flex, Self::Cuda, Self::Tch, Self::TchCuda, Self::Wgpu];

    /// The name configs, the command line and meta.json use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Flex => "flex",
            Self::Cuda => "cuda",
            Self::Tch => "tch",
            Self::TchCuda => "tch-cuda",
            Self::Wgpu => "wgpu",
        }
    }

    /// Parses a backend's name as recorded in meta.json.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| {
                let names: Vec<String> = Self::ALL.iter().map(|k| format!("\"{k}\"")).collect();
                format!("expected one of {}, got {name:?}", names.join(", "))
            })
    }

    /// Whether the backend computes on the CPU, where a run's memory is the process's own (wgpu
    /// on lavapipe computes on the CPU too, but in a device's memory that its runtime counts).
    pub fn on_cpu(self) -> bool {
        matches!(self, Self::Flex | Self::Tch)
    }

    /// Whether the backend is burn's CubeCL one (cuda, wgpu), which compiles the kernels of
    /// each new shape on its first steps.
    pub fn is_cubecl(self) -> bool {
        matches!(self, Self::Cuda | Self::Wgpu)
    }

    /// How faithfully a run on this backend stands for the source articles' setups, most
    /// faithful first: the verdict of record's order (docs/ARCHITECTURE.md, "Verdicts"). The
    /// articles measured on NVIDIA GPUs through cuDNN (Keras/TensorFlow, PyTorch), so LibTorch
    /// on a GPU comes first, burn's own kernels on a GPU next; on a CPU LibTorch (oneDNN, the
    /// library the articles' frameworks call there) before burn's own flex; wgpu last, which
    /// in this project runs on a software rasteriser.
    pub fn faithfulness(self) -> u8 {
        match self {
            Self::TchCuda => 0,
            Self::Cuda => 1,
            Self::Tch => 2,
            Self::Flex => 3,
            Self::Wgpu => 4,
        }
    }

    /// Whether batchlab-fast has paths for the backend (flex; LibTorch on the CPU or a GPU).
    pub fn has_fast_paths(self) -> bool {
        matches!(self, Self::Flex | Self::Tch | Self::TchCuda)
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, not `write_str`: tables align backend names with `{:<9}`.
        f.pad(self.name())
    }
}

/// `[backend]`: where the study runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackendConfig {
    /// `flex` (pure-Rust CPU, always built), `cuda` (a build with `--features cuda`), `tch` or
    /// `tch-cuda` (LibTorch; a build with `--features tch`, see `just build-tch`), `wgpu` (a
    /// build with `--features wgpu`, see `just build-wgpu`).
    pub name: BackendKind,
    /// GPU index (CUDA's, or wgpu's discrete GPU; on wgpu without one, the default adapter);
    /// ignored on the CPU.
    pub device: usize,
    /// CPU threads (0 = all cores). flex reads them from RAYON_NUM_THREADS, which child
    /// processes get; libtorch has its own pool, set in the computing process.
    pub threads: usize,
    /// batchlab's own fast paths on flex and LibTorch (the batchlab-fast crate: in-place
    /// optimizers); `false` runs burn's own ops, to measure them. meta.json records which ran.
    pub fast_paths: bool,
}

impl BackendConfig {
    /// The environment of worker processes: the configured thread count (flex reads
    /// RAYON_NUM_THREADS at start-up); nothing when every core is used.
    pub fn worker_env(&self) -> Vec<(String, String)> {
        match self.threads {
            0 => Vec::new(),
            n => vec![("RAYON_NUM_THREADS".into(), n.to_string())],
        }
    }
}

impl Default for BackendConfig {
    fn default() -> Self {
        Self {
            // The CPU backend runs everywhere, so every experiment runs somewhere by default.
            name: BackendKind::Flex,
            device: 0,
            threads: 0,
            fast_paths: true,
        }
    }
}

/// `[output]`: where reports go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Root of the report tree; a run writes `<dir>/<experiment.name>/<run-id>/`.
    pub dir: String,
}

impl Default for OutputConfig {
    fn default() -> Self {
        Self {
            dir: "reports".into(),
        }
    }
}

/// Validates a `[model]` table (the models crate's [`ModelSpec`], which is the table), with
/// errors pointing at `[model]`.
pub fn check_model(spec: &ModelSpec, source: &Source) -> Result<(), ConfigError> {
    spec.validate()
        .map_err(|e| source.error("model", format!("{e}")))
}

fn apply_override(table: &mut toml::Table, assignment: &str) -> Result<(), ConfigError> {
    let fail = |message: String| ConfigError {
        origin: format!("--set {assignment}"),
        location: None,
        key: None,
        message,
    };
    let (key, raw) = assignment
        .split_once('=')
        .ok_or_else(|| fail("expected key=value, e.g. --set sweep.rounds=3".into()))?;
    let key = key.trim();
    let raw = raw.trim();
    // A bare word that is not valid TOML (e.g. vgg19) is taken as a string, so users need not quote.
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(fail(format!(
            "expected a dotted key such as sweep.rounds, got {key:?}"
        )));
    }
    let (last, path) = parts.split_last().expect("split of a non-empty key");
    let mut current = table;
    for part in path {
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        current = entry
            .as_table_mut()
            .ok_or_else(|| fail(format!("`{part}` is a value, not a table")))?;
    }
    current.insert(last.to_string(), value);
    Ok(())
}

#[path = "config_locate.rs"]
mod locate;

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
