//! The committed verdicts are the ones the current rules derive (docs/ARCHITECTURE.md,
//! "Verdicts"): every committed run's `findings.json` is re-derived from its committed rows,
//! and `docs/results.md` is regenerated from the registry and those files. A rule change that
//! leaves an old verdict standing fails here.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `batchlab ARGS` in the repository root; its stdout, after asserting it succeeded.
fn batchlab(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "batchlab {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Copies `from` into `to`, leaving out symbolic links (`latest`).
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap().flatten() {
        let kind = entry.file_type().unwrap();
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_file() {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every committed run directory with a findings.json: `reports/<experiment>/<run>`.
fn committed_runs(reports: &Path) -> Vec<PathBuf> {
    let mut runs = vec![];
    for experiment in fs::read_dir(reports).unwrap().flatten() {
        if !experiment.file_type().unwrap().is_dir() {
            continue;
        }
        for run in fs::read_dir(experiment.path()).unwrap().flatten() {
            if run.file_type().unwrap().is_dir() && run.path().join("findings.json").exists() {
                runs.push(run.path());
            }
        }
    }
    runs.sort();
    runs
}

#[test]
fn every_committed_findings_json_is_what_the_rules_derive_from_its_rows() {
    let reports = root().join("reports");
    let runs = committed_runs(&reports);
    assert!(runs.len() >= 20, "{runs:?}");
    // The whole tree: a fluctuation claim reads its reference run beside it.
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&reports, tmp.path());
    let mut stale = vec![];
    for run in &runs {
        let relative = run.strip_prefix(&reports).unwrap();
        let copy = tmp.path().join(relative);
        let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
            .arg("report")
            .arg(&copy)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            relative.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        let committed = fs::read_to_string(run.join("findings.json")).unwrap();
        let derived = fs::read_to_string(copy.join("findings.json")).unwrap();
        if committed != derived {
            stale.push(relative.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "findings.json differs from what the current rules derive (re-render with `batchlab report DIR` and commit): {}",
        stale.join(", ")
    );
}

#[test]
fn docs_results_md_is_current() {
    batchlab(&["results", "--check"]);
}

#[test]
fn claims_lists_every_registered_claim_once() {
    let stdout = batchlab(&["claims"]);
    let registry = fs::read_to_string(root().join("claims/registry.toml")).unwrap();
    let registered = registry.matches("\n[[claim]]").count();
    assert_eq!(stdout.lines().count(), registered, "{stdout}");
    assert!(
        stdout.contains("vgg16-jumps-on-four-gpus: cannot be tested here (needs a GPU"),
        "{stdout}"
    );
}
