//! Small studies shared by the tests that kill and stop runs: each takes well under a second
//! on two cores, on synthetic data.

#![allow(dead_code)] // each test file uses some of them

use std::{
    path::{Path, PathBuf},
    process::Command,
};

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
