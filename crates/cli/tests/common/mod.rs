//! Small studies shared by the tests that kill and stop runs: each takes well under a second
//! on two cores, on synthetic data.

#![allow(dead_code)] // each test file uses some of them

use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// The repository's root and the paths git tracks in it (the tree that travels).
pub fn tracked_files() -> (PathBuf, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("git runs in the checkout");
    assert!(listed.status.success(), "git ls-files failed: {listed:?}");
    let names = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    (root, names)
}

/// `batchlab run CONFIG --out OUT EXTRA...`, from the repository root.
pub fn run_command(config: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_batchlab"));
    command
        .args([
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(extra)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    command
}

/// Runs `config` into `out`, which must succeed; returns the run directory (the last line).
pub fn run_to_dir(config: &Path, out: &Path) -> PathBuf {
    let output = run_command(config, out, &[]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    PathBuf::from(stdout.lines().last().unwrap().trim())
}

pub const STEP_TIME: &str = r#"
[experiment]
name = "crash-step-time"
kind = "step-time"
description = "a seconds-long sweep to kill"

[model]
architecture = "mlp"
input = [1, 8, 8]
classes = 4
hidden = [64]

[sweep]
batch_range = [1, 24]
warmup_steps = 1
samples = 4
rounds = 3
"#;

pub const TRAIN: &str = r#"
[experiment]
name = "crash-train"
kind = "train"
description = "a seconds-long grid to kill"

[model]
architecture = "mlp"
input = [1, 8, 8]
classes = 4
hidden = [32]

[data]
name = "synthetic"
shape = [1, 8, 8]
classes = 4
examples = [256, 64, 64]

[[optimizers]]
name = "sgd"

[[optimizers]]
name = "adam"
learning_rate = 0.01

[grid]
batch_sizes = [4, 8, 16, 32]
seeds = [0, 1]
epochs = 2
evaluate_every = 20
"#;

pub const TARGET: &str = r#"
[experiment]
name = "crash-target"
kind = "steps-to-target"
description = "a seconds-long search to kill"

[data]
name = "synthetic"
shape = [1, 8, 8]
classes = 4
examples = [512, 128, 64]

[[workloads]]
model = { architecture = "mlp", input = [1, 8, 8], classes = 4, hidden = [32] }
optimizer = { name = "sgd", momentum = 0.9, nesterov = true }

[search]
batch_sizes = [8, 16, 32, 64]
trials = 4
learning_rate = [0.01, 10.0]
one_minus_momentum = [0.01, 0.5]

[budget]
target_error = 0.5
max_steps = 200
evaluate_every = 10
noise_every = 20
stop_when_beaten = false
"#;

/// The CSV text of a finished run's raw table at `path` (`dir/name.csv`), whichever form it is
/// stored in: a run compacts its large tables to Parquet when it finishes.
pub fn table(path: &Path) -> String {
    batchlab_method::rows::stored::read_text(path)
        .unwrap()
        .unwrap_or_else(|| panic!("no table {}", path.display()))
}

/// Whether the raw table `path` names exists, as CSV or as Parquet.
pub fn stored(path: &Path) -> bool {
    batchlab_method::rows::stored::exists(path)
}

/// What a rehearsal brought back, restored by `gpu-import`.
pub struct Rehearsal {
    /// The run directories, copied out of the rehearsal's scratch directory.
    pub runs: Vec<PathBuf>,
    /// The kernel caches restored (`gpu-cache/` of the import), for a next rehearsal's `--cache`.
    pub cache: PathBuf,
}

/// Rehearses the GPU campaign (scripts/gpu-campaign.sh) with the test binary on `backend`, the
/// sweeps of `only` (experiment names, comma-separated) shrunk, then overridden by `sets`
/// (`KEY=VALUE`, as `--set` takes them), its kernel caches under `cache`, then checks what it
/// packed: at most 8 files of at most 16 MiB, which `scripts/gpu-import.sh` restores into
/// another root as they were written, with `latest` pointing at each experiment's run.
pub fn rehearse_campaign(backend: &str, only: &str, sets: &[&str], cache: &Path) -> Rehearsal {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = tempfile::tempdir().unwrap();
    let (out, reports, import) = (
        tmp.path().join("out"),
        tmp.path().join("run/reports"),
        tmp.path().join("import"),
    );
    let rehearsal = Command::new("bash")
        .arg(root.join("scripts/gpu-campaign.sh"))
        .args(["--rehearse", env!("CARGO_BIN_EXE_batchlab")])
        .args(["--rehearse-backend", backend, "--budget", "600"])
        .args(["--only", only])
        .args(sets.iter().flat_map(|set| ["--set", set]))
        .arg("--out")
        .arg(&out)
        .arg("--reports")
        .arg(&reports)
        .arg("--cache")
        .arg(cache)
        .output()
        .unwrap();
    let log = std::fs::read_to_string(out.join("campaign.log")).unwrap_or_default();
    assert!(rehearsal.status.success(), "{rehearsal:?}\n{log}");
    let packed: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    assert!(packed.len() <= 8, "{} files packed", packed.len());
    for file in &packed {
        let size = file.metadata().unwrap().len();
        assert!(size <= 16 << 20, "{:?}: {size} bytes", file.path());
    }
    std::fs::create_dir_all(&import).unwrap();
    let imported = Command::new("bash")
        .arg(root.join("scripts/gpu-import.sh"))
        .arg(&out)
        .arg(&import)
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    let runs: Vec<PathBuf> = String::from_utf8_lossy(&imported.stdout)
        .lines()
        .map(|run| import.join(run))
        .collect();
    assert_eq!(runs.len(), only.split(',').count(), "{log}");
    for run in &runs {
        let name = run.strip_prefix(import.join("reports")).unwrap();
        let written = reports.join(name);
        for entry in std::fs::read_dir(&written).unwrap() {
            let file = entry.unwrap().file_name();
            if file.to_string_lossy().ends_with(".lock") {
                continue;
            }
            assert_eq!(
                std::fs::read(written.join(&file)).unwrap(),
                std::fs::read(run.join(&file)).unwrap(),
                "{name:?}/{file:?} restored differently"
            );
        }
        let latest = std::fs::read_link(run.parent().unwrap().join("latest")).unwrap();
        assert_eq!(Some(latest.as_os_str()), run.file_name());
    }
    // The runs and caches stay readable after the temporary directory goes: move them out.
    let keep = tempfile::tempdir().unwrap().keep();
    let runs = runs
        .iter()
        .map(|run| {
            let to = keep.join(run.strip_prefix(&import).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::rename(run, &to).unwrap();
            to
        })
        .collect();
    let cache = keep.join("gpu-cache");
    if import.join("gpu-cache").exists() {
        std::fs::rename(import.join("gpu-cache"), &cache).unwrap();
    }
    Rehearsal { runs, cache }
}
