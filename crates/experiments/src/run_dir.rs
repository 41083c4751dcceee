//! The report directory on disk: `meta.json`, new write-once run directories, the `latest` link,
//! finding the run `--resume` continues, and atomic writes. Below the session and every study
//! (docs/ARCHITECTURE.md, "Layers").

use std::{
    fs,
    path::{Path, PathBuf},
};

use batchlab_method::findings::{Finding, FindingsFile, RULES_VERSION};
use batchlab_method::machine::{Autotune, FastPaths, Machine};
use batchlab_report::About;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::{
    backend,
    config::{BackendConfig, ExperimentHeader},
    error::RunError,
    sysinfo,
};

/// burn's version, as pinned in the workspace's Cargo.toml (a test keeps the two equal).
pub const BURN_VERSION: &str = "0.21.0";

/// Where a run stands, as meta.json's `status` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Started and not finished (or its process was killed: nothing else wrote the end).
    Running,
    /// Every unit done, the report written.
    Complete,
    /// Stopped by an error.
    Failed,
    /// Stopped by the user (an interrupt), resumable.
    Interrupted,
    /// The shared directory of a sharded run, which its shards fill.
    Sharded,
}

impl RunStatus {
    /// The word meta.json and `batchlab status` use.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Sharded => "sharded",
        }
    }
}

/// `meta.json`: where, when and how a run was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The experiment's name.
    pub experiment: String,
    /// batchlab's version.
    pub batchlab_version: String,
    /// Commit of the working directory when the run started (`-dirty` if modified).
    pub git_commit: String,
    /// burn's version.
    pub burn_version: String,
    /// `flex`, `cuda`, `tch` or `tch-cuda`.
    pub backend: String,
    /// The CPU model (flex) or the GPU's name, memory and driver (cuda).
    pub device: String,
    /// The host's CPU model.
    pub cpu: String,
    /// Threads the backend computes with.
    pub threads: usize,
    /// The CPU's vector instruction sets ([`sysinfo::simd_features`]); empty in runs made
    /// before it was recorded.
    #[serde(default)]
    pub simd: Vec<String>,
    /// The matrix kernels flex ran ([`sysinfo::flex_matmul_kernels`]); empty for other
    /// backends and in runs made before it was recorded.
    #[serde(default)]
    pub flex_kernels: String,
    /// The PyTorch release and library directory of the libtorch that ran (tch backends);
    /// empty for other backends and in runs made before it was recorded.
    #[serde(default)]
    pub libtorch: String,
    /// batchlab's own fast paths that ran ([`backend::fast_paths`]); empty in runs made before
    /// they existed (all on burn's own ops).
    #[serde(default)]
    pub fast_paths: String,
    /// How much CubeCL autotuned its kernels ([`backend::autotune`]: cuda and wgpu); empty for
    /// the CPU backends and in runs made before it was recorded.
    #[serde(default)]
    pub autotune: String,
    /// The memory allocator ([`sysinfo::allocator`]); empty in runs made before it was recorded
    /// (the system's malloc).
    #[serde(default)]
    pub allocator: String,
    /// The library path the libtorch was found through (tch backends: LD_LIBRARY_PATH, set by
    /// scripts/gpu-campaign.sh on a GPU machine, where the binary's own run path is the build
    /// machine's); absent when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub library_path: String,
    /// The NVIDIA GPU of a cuda or tch-cuda run, as nvidia-smi read it at the start (clocks,
    /// power limit); absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<sysinfo::GpuReading>,
    /// The CubeCL kernel cache the run read and grew, with its autotune keys at the start and
    /// the end (`BATCHLAB_KERNEL_CACHE`, set by the GPU campaign); absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cache: Option<sysinfo::KernelCache>,
    /// The measured paths the run read and grew (flex's convolutions and dense products,
    /// LibTorch's dense products' operand order on the CPU), with the shapes chosen at the start
    /// and the end (`backend::conv_choices::file`); absent on other backends and in runs made
    /// before the paths were measured (chosen by fixed thresholds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conv_choices: Option<backend::conv_choices::ConvChoices>,
    /// How often the run's layers took batchlab's fast paths and how often burn's ops, over
    /// every process that ran its steps (`path_counts`: on LibTorch, whether its convolutions
    /// ran libtorch's backward); absent in runs made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_counts: Option<crate::path_counts::PathCounts>,
    /// Operating system and kernel.
    pub os: String,
    /// UTC start time (RFC 3339).
    pub started: String,
    /// UTC end time, once finished.
    pub ended: Option<String>,
    /// Times the run was resumed.
    pub resumed: Vec<String>,
    /// Where the run stands.
    pub status: RunStatus,
    /// Why the run failed, if it did.
    pub error: Option<String>,
}

impl Meta {
    /// Where the run ran, as one value (a meta.json without an allocator, written before it was
    /// recorded, reads as the system's malloc).
    pub fn machine(&self) -> Machine {
        Machine {
            backend: self.backend.clone(),
            device: self.device.clone(),
            threads: self.threads,
            kernels: self.flex_kernels.clone(),
            fast_paths: FastPaths::read(&self.fast_paths),
            autotune: Autotune::read(&self.autotune),
            allocator: if self.allocator.is_empty() {
                sysinfo::SYSTEM_ALLOCATOR.into()
            } else {
                self.allocator.clone()
            },
        }
    }

    /// A new run's record: `running`, started now.
    pub fn new(header: &ExperimentHeader, backend_config: &BackendConfig) -> Self {
        Self {
            experiment: header.name.clone(),
            batchlab_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: sysinfo::git_commit(),
            burn_version: BURN_VERSION.into(),
            backend: backend_config.name.to_string(),
            device: backend::device_name(backend_config),
            cpu: sysinfo::cpu_model(),
            threads: backend::threads(backend_config),
            simd: sysinfo::simd_features(),
            flex_kernels: backend::kernels(backend_config),
            libtorch: backend::libtorch_version(backend_config),
            fast_paths: backend::fast_paths(backend_config),
            autotune: backend::autotune(backend_config),
            allocator: sysinfo::allocator().into(),
            library_path: backend::library_path(backend_config),
            gpu: backend::nvidia_gpu(backend_config),
            kernel_cache: backend_config
                .name
                .is_cubecl()
                .then(sysinfo::KernelCache::at_start)
                .flatten(),
            conv_choices: backend::conv_choices::file(backend_config)
                .map(|f| backend::conv_choices::ConvChoices::at_start(&f)),
            path_counts: None,
            os: sysinfo::os_description(),
            started: sysinfo::rfc3339(sysinfo::unix_seconds()),
            ended: None,
            resumed: Vec::new(),
            status: RunStatus::Running,
            error: None,
        }
    }

    /// Adds what this session's processes ran to what earlier ones did (a resumed run's).
    pub fn add_path_counts(&mut self, counts: crate::path_counts::PathCounts) {
        self.path_counts = Some(self.path_counts.unwrap_or_default().plus(counts));
    }

    /// Reads `dir/meta.json`.
    pub fn read(dir: &Path) -> Result<Self, RunError> {
        let path = dir.join("meta.json");
        let text = fs::read_to_string(&path).map_err(|e| RunError::io(&path, e))?;
        serde_json::from_str(&text)
            .map_err(|e| RunError::io(&path, format!("not a batchlab meta.json: {e}")))
    }

    /// Writes `dir/meta.json` atomically.
    pub fn write(&self, dir: &Path) -> Result<(), RunError> {
        let text = serde_json::to_string_pretty(self).expect("Meta serializes");
        write_atomically(&dir.join("meta.json"), &text)
    }
}

/// Writes `dir/findings.json`: the claims a run judged, with the run's commit, the rules'
/// version and the machine its meta.json names (docs/ARCHITECTURE.md, "Verdicts").
pub fn write_findings(
    dir: &Path,
    meta: &Meta,
    registry_sha256: &str,
    findings: Vec<Finding>,
) -> Result<(), RunError> {
    let file = FindingsFile {
        experiment: meta.experiment.clone(),
        run: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        run_commit: meta.git_commit.clone(),
        rules_version: RULES_VERSION,
        registry_sha256: Some(registry_sha256.to_string()),
        machine: meta.machine(),
        findings,
    };
    let text = serde_json::to_string_pretty(&file).expect("findings serialize");
    write_atomically(&dir.join("findings.json"), &format!("{text}\n"))
}

/// What a report says about the run in `dir`: the config's `[experiment]` table, the backend
/// and device from the run's meta.json (for a directory without one, what `backend` would
/// use on this machine) and the protocol in one line.
pub fn about(
    dir: &Path,
    experiment: &ExperimentHeader,
    backend: &BackendConfig,
    protocol: String,
) -> About {
    let (backend, device) = match Meta::read(dir) {
        Ok(meta) => (meta.backend, meta.device),
        Err(_) => (backend.name.to_string(), backend::device_name(backend)),
    };
    About {
        experiment: experiment.name.clone(),
        description: experiment.description.clone(),
        reproduces: experiment.reproduces.clone(),
        claim: experiment.claim.clone(),
        backend,
        device,
        protocol,
    }
}

/// The newest run of the experiment that did not complete, if made with the same config.
/// `resolved` is the resolved config of the run asked for, which must equal the saved one.
pub fn unfinished_run(experiment_dir: &Path, resolved: &str) -> Result<PathBuf, RunError> {
    let mut runs: Vec<PathBuf> = fs::read_dir(experiment_dir)
        .map_err(|e| RunError::io(experiment_dir, format!("no runs to resume ({e})")))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("meta.json").is_file() && !p.is_symlink())
        .collect();
    runs.sort();
    let newest = runs
        .into_iter()
        .rev()
        .find(|dir| Meta::read(dir).is_ok_and(|m| m.status != RunStatus::Complete))
        .ok_or_else(|| {
            RunError::Other(format!(
                "nothing to resume: every run under {} is complete (drop --resume to start a new one)",
                experiment_dir.display()
            ))
        })?;
    let config_path = newest.join("config.toml");
    let saved = fs::read_to_string(&config_path).map_err(|e| RunError::io(&config_path, e))?;
    if saved != resolved {
        return Err(RunError::Other(format!(
            "{} was made with a different config than the one given now; resume it with exactly its own config: batchlab run {} --resume",
            newest.display(),
            config_path.display()
        )));
    }
    Ok(newest)
}

/// `<experiment_dir>/<UTC timestamp>-<random suffix>`: sorts by time, never collides.
pub fn new_run_dir(experiment_dir: &Path) -> Result<PathBuf, RunError> {
    fs::create_dir_all(experiment_dir).map_err(|e| RunError::io(experiment_dir, e))?;
    let stamp = sysinfo::compact_timestamp(sysinfo::unix_seconds());
    loop {
        let suffix: u32 = rand::rng().random_range(0..0x100_0000);
        let dir = experiment_dir.join(format!("{stamp}-{suffix:06x}"));
        // create_dir (not _all) fails if it exists, so two runs can never share a directory.
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(RunError::io(&dir, e)),
        }
    }
}

/// Makes `<experiment_dir>/latest` a relative symlink to `dir`, replacing it atomically.
pub fn point_latest_at(experiment_dir: &Path, dir: &Path) -> Result<(), RunError> {
    let latest = experiment_dir.join("latest");
    let name = dir.file_name().expect("run dirs have a name");
    let temporary = experiment_dir.join(format!(".latest-{}", std::process::id()));
    let _ = fs::remove_file(&temporary);
    #[cfg(unix)]
    std::os::unix::fs::symlink(name, &temporary).map_err(|e| RunError::io(&temporary, e))?;
    #[cfg(not(unix))]
    fs::write(&temporary, name.to_string_lossy().as_bytes())
        .map_err(|e| RunError::io(&temporary, e))?;
    fs::rename(&temporary, &latest).map_err(|e| RunError::io(&latest, e))
}

/// Writes `text` to `path` through a synced temporary file and a rename, so readers never see half.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), RunError> {
    Ok(batchlab_method::files::write_atomic(path, text.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burn_version_matches_the_workspace_pin() {
        let manifest = include_str!("../../../Cargo.toml");
        assert!(
            manifest.contains(&format!("burn = {{ version = \"={BURN_VERSION}\"")),
            "update BURN_VERSION with the pin in Cargo.toml"
        );
    }

    #[test]
    fn meta_records_the_kernels_and_reads_runs_made_before_it_did() {
        let dir = tempfile::tempdir().unwrap();
        let header = ExperimentHeader {
            name: "x".into(),
            kind: crate::kind::Kind::StepTime,
            description: String::new(),
            reproduces: None,
            claim: None,
        };
        let meta = Meta::new(&header, &BackendConfig::default());
        if cfg!(target_arch = "x86_64") {
            assert!(meta.simd.iter().any(|f| f == "sse4.2"), "{:?}", meta.simd);
        }
        assert!(!meta.flex_kernels.is_empty());
        meta.write(dir.path()).unwrap();
        assert_eq!(Meta::read(dir.path()).unwrap(), meta);
        // A meta.json written before the fields existed.
        let mut old: serde_json::Value = serde_json::to_value(&meta).unwrap();
        let fields = old.as_object_mut().unwrap();
        fields.remove("simd");
        fields.remove("flex_kernels");
        fields.remove("libtorch");
        fs::write(dir.path().join("meta.json"), old.to_string()).unwrap();
        let read = Meta::read(dir.path()).unwrap();
        assert!(read.simd.is_empty() && read.flex_kernels.is_empty());
    }

    #[test]
    fn run_dirs_sort_by_time_and_never_collide() {
        let root = tempfile::tempdir().unwrap();
        let a = new_run_dir(root.path()).unwrap();
        let b = new_run_dir(root.path()).unwrap();
        assert_ne!(a, b);
        point_latest_at(root.path(), &b).unwrap();
        point_latest_at(root.path(), &a).unwrap();
        assert_eq!(
            fs::canonicalize(root.path().join("latest")).unwrap(),
            fs::canonicalize(&a).unwrap()
        );
    }
}
