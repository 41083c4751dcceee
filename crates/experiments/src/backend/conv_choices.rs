//! flex's measured convolution paths (`batchlab_fast::conv::choice`): the file a machine keeps
//! them in, and what meta.json records of it.

use std::path::{Path, PathBuf};

use crate::config::{BackendConfig, BackendKind};
use crate::sysinfo;

/// Where flex keeps this machine's measured convolution paths (`batchlab_fast::conv::choice`):
/// one file per CPU, matrix kernels, thread count and generation of the paths (`choice::GENERATION`), since each moves the point where Winograd
/// wins, under `$BATCHLAB_CACHE_DIR`, else `$XDG_CACHE_HOME/batchlab`, else `~/.cache/batchlab`;
/// `None` off flex, with the fast paths off, without a home, or with
/// `BATCHLAB_CONV_PATHS=thresholds` (the fixed thresholds, to compare against; meta.json's
/// fast-path words say which chose).
pub fn file(config: &BackendConfig) -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let thresholds = env("BATCHLAB_CONV_PATHS").is_some_and(|v| v == "thresholds");
    if config.name != BackendKind::Flex || !config.fast_paths || thresholds {
        return None;
    }
    let root = env("BATCHLAB_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| env("XDG_CACHE_HOME").map(|d| Path::new(&d).join("batchlab")))
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".cache/batchlab")))?;
    // The matrix kernels' first word: avx512, avx2+fma or portable.
    let words = super::kernels(config);
    let kernels = words.split_whitespace().next().unwrap_or("portable");
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
