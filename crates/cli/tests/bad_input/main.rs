//! Bad input, case by case: configs, `--set`, command-line flags, report directories and
//! dataset files. Each case gets a clear error naming what is wrong, the exit code a user can
//! script against (1 for bad input found by batchlab, 2 for arguments clap refuses), and never
//! a panic or an abort.

mod command_cases;
#[path = "../common/mod.rs"]
mod common;
mod config_cases;
mod find_batch_cases;
mod target_cases;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use command_cases::RESULTS_HEADER;
use common::{TARGET, TRAIN};

pub const STEP: &str = r#"
[experiment]
name = "bad"
kind = "step-time"
description = "bad input"

[model]
architecture = "mlp"
input = [1, 8, 8]
classes = 4
hidden = [16]

[sweep]
batch_sizes = [1, 2]
samples = 2
rounds = 1
"#;

/// One bad input: files written into a scratch directory (the working directory of the
/// command), the command's arguments, and what must come back.
pub struct Case {
    name: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    args: Vec<String>,
    code: i32,
    words: &'static [&'static str],
}

pub fn case(name: &'static str, args: &[&str], code: i32, words: &'static [&'static str]) -> Case {
    Case {
        name,
        files: vec![
            ("step.toml", STEP.into()),
            ("train.toml", TRAIN.into()),
            ("target.toml", TARGET.into()),
        ],
        args: args.iter().map(|a| a.to_string()).collect(),
        code,
        words,
    }
}

impl Case {
    pub fn with(mut self, path: &'static str, content: impl Into<Vec<u8>>) -> Self {
        self.files.push((path, content.into()));
        self
    }
}

pub fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// A case whose arguments are built at run time.
pub fn owned(
    args: Vec<String>,
    name: &'static str,
    code: i32,
    words: &'static [&'static str],
) -> Case {
    let mut c = case(name, &[], code, words);
    c.args = args;
    c
}

/// `key=[a,b,...]` for the numbers of `range`.
pub fn numbers(key: &str, range: std::ops::Range<u64>) -> String {
    let listed: Vec<String> = range.map(|i| i.to_string()).collect();
    format!("{key}=[{}]", listed.join(","))
}

fn cases() -> Vec<Case> {
    let mut cases = config_cases::cases();
    cases.extend(command_cases::cases());
    cases
}

fn run(case: &Case) -> Result<(), String> {
    let scratch = tempfile::tempdir().unwrap();
    for (path, content) in &case.files {
        let path: PathBuf = scratch.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
    }
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(&case.args)
        .current_dir(scratch.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut problems = Vec::new();
    if output.status.code() != Some(case.code) {
        problems.push(format!(
            "exit {:?}, expected {}",
            output.status.code(),
            case.code
        ));
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        problems.push("a panic".into());
    }
    for word in case.words {
        if !stderr.contains(word) {
            problems.push(format!("no `{word}`"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}\n  stderr: {}",
            case.name,
            problems.join("; "),
            stderr.trim()
        ))
    }
}

#[test]
fn every_bad_input_gets_a_clear_error_and_no_panic() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|c| run(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn a_row_cut_by_a_crash_is_reported_not_dropped_silently() {
    let scratch = tempfile::tempdir().unwrap();
    let run = scratch.path().join("run");
    fs::create_dir_all(&run).unwrap();
    fs::write(run.join("config.toml"), STEP).unwrap();
    fs::write(
        run.join("results.csv"),
        format!("{RESULTS_HEADER}1,0,0,2.5,ok,flex,cpu,,\n1,0,1,2.7,ok,flex,cpu,,\n2,0,0,3."),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(["report", "run"])
        .current_dir(scratch.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("results.csv: its last row is incomplete (8 bytes"),
        "{stdout}"
    );
}
