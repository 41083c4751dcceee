//! The paths batchlab's fast paths measured on this machine (`batchlab_fast::choice`: flex's
//! convolutions and dense products, LibTorch's dense products' operand order on the CPU): the
//! file a machine keeps them in, and what meta.json records of it. (Named for the convolutions,
//! the first paths measured.)

use std::path::{Path, PathBuf};

use crate::config::{BackendConfig, BackendKind};
use crate::sysinfo;

/// Where this machine's measured paths are kept (`batchlab_fast::choice`): one file per CPU,
/// matrix kernels (flex's, or the libtorch release), thread count and generation of the paths
/// (`choice::GENERATION`), since each moves the point where one path overtakes another, under
/// `$BATCHLAB_CACHE_DIR`, else `$XDG_CACHE_HOME/batchlab`, else `~/.cache/batchlab`; `None` off
/// flex and LibTorch on the CPU (a GPU's ops run asynchronously: a race would time their
/// launches), with the fast paths off, without a home, or with `BATCHLAB_CONV_PATHS=thresholds`
/// (the fixed thresholds, to compare against; meta.json's fast-path words say which chose).
pub fn file(config: &BackendConfig) -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let thresholds = env("BATCHLAB_CONV_PATHS").is_some_and(|v| v == "thresholds");
    let measures = matches!(config.name, BackendKind::Flex | BackendKind::Tch);
    if !measures || !config.fast_paths || thresholds {
        return None;
    }
    let root = env("BATCHLAB_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| env("XDG_CACHE_HOME").map(|d| Path::new(&d).join("batchlab")))
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".cache/batchlab")))?;
    // flex's matrix kernels' first word (avx512, avx2+fma or portable), or libtorch's release.
    let kernels = match config.name {
        BackendKind::Tch => {
            let version = super::libtorch_version(config);
            let release = version.split_whitespace().next().unwrap_or("unknown");
            format!(
                "libtorch-{}",
                release.replace(|c: char| !c.is_ascii_alphanumeric() && c != '.', "-")
            )
        }
        _ => {
            let words = super::kernels(config);
            words
                .split_whitespace()
                .next()
                .unwrap_or("portable")
                .to_string()
        }
    };
    let name = format!(
        "{}-{kernels}-{}t-g{}.tsv",
        sysinfo::cpu_slug(),
        super::threads(config),
        batchlab_fast::choice::GENERATION
    );
    Some(root.join("conv-paths").join(name))
}

/// flex's measured convolution paths a run reads and grows (`batchlab_fast::conv::choice`: one
/// file per machine), and the shapes in it when the run started and when it ended: a run that
/// met only known shapes measured nothing, and the difference is what it measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConvChoices {
    /// The file.
    pub file: String,
    /// Shapes chosen in it when the run started.
    pub shapes_at_start: usize,
    /// Shapes chosen in it when the run ended (`None` while it runs).
    pub shapes_at_end: Option<usize>,
}

impl ConvChoices {
    /// The file `file`, read now.
    pub fn at_start(file: &Path) -> Self {
        Self {
            file: file.display().to_string(),
            shapes_at_start: shapes(file),
            shapes_at_end: None,
        }
    }

    /// The same file read again at the end of the run.
    pub fn at_end(self) -> Self {
        Self {
            shapes_at_end: Some(shapes(Path::new(&self.file))),
            ..self
        }
    }
}

/// Lines (one chosen shape each) in a choices file; 0 without one.
fn shapes(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0)
}
