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
        stdout.contains(
            "gpu-speed-order-v100-p100-t4-k80: cannot be tested here (needs the four GPUs"
        ),
        "{stdout}"
    );
    // A verdict whose parameters were fixed after its run says so, as docs/results.md does.
    let memory = stdout
        .lines()
        .find(|l| l.starts_with("memory-growth-depends-on-model: "))
        .unwrap();
    assert!(
        memory.contains(", post hoc (margin, than fixed after its run started)"),
        "{memory}"
    );
}

#[test]
fn report_with_another_registry_rejudges_with_its_margins_and_says_which() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("sgd-vs-adam-fmnist/run");
    copy_tree(
        &root().join("reports/sgd-vs-adam-fmnist/20261124T160938Z-ac9b7f"),
        &run,
    );
    let registry = fs::read_to_string(root().join("claims/registry.toml")).unwrap();
    let block = "series = \"adam\"\nbudget = \"epochs\"\nfrom = 16\nto = 64\nmargin = 2.5";
    assert!(
        registry.contains(block),
        "adam-holds-up-to-64's parameters moved"
    );
    let other = tmp.path().join("other.toml");
    fs::write(
        &other,
        registry.replacen(block, &block.replace("2.5", "0.5"), 1),
    )
    .unwrap();
    let verdict = |extra: &[&str]| {
        let mut args = vec!["report", run.to_str().unwrap()];
        args.extend(extra);
        batchlab(&args);
        let text = fs::read_to_string(run.join("findings.json")).unwrap();
        let file: serde_json::Value = serde_json::from_str(&text).unwrap();
        let holds = file["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "adam-holds-up-to-64")
            .unwrap()
            .clone();
        (holds["verdict"].clone(), file["registry_sha256"].clone())
    };
    let (narrow, narrow_hash) = verdict(&["--registry", other.to_str().unwrap()]);
    // -1.07 points with a 90% interval about ±1 point wide: inside ±2.5, not inside ±0.5.
    assert_eq!(narrow, "inconclusive");
    let (builtin, builtin_hash) = verdict(&[]);
    assert_eq!(builtin, "reproduces");
    assert_ne!(narrow_hash, builtin_hash);
}

#[test]
fn a_rerender_without_the_dataset_judges_as_the_runs_own_render() {
    // The power-of-two run's training-time claim needs the training examples per epoch (the
    // steps its prediction counts). Its data renamed to MNIST (the same official sizes, and no
    // system copy, unlike Debian's Fashion-MNIST) in an empty data directory: unloadable on
    // every machine, so the count comes from the config alone.
    let tmp = tempfile::tempdir().unwrap();
    let (experiment, run) = ("power-of-two-cpu", "20261127T121416Z-fda0bc");
    let sweep = "power-of-two-step-time-cpu/20261127T121243Z-d98396";
    let reports = tmp.path().join("reports");
    let copy = reports.join(experiment).join(run);
    copy_tree(&root().join("reports").join(experiment).join(run), &copy);
    copy_tree(&root().join("reports").join(sweep), &reports.join(sweep));
    let config = fs::read_to_string(copy.join("config.toml")).unwrap();
    let renamed = config.replacen("name = \"fashion-mnist\"", "name = \"mnist\"", 1);
    assert_ne!(renamed, config, "the run's dataset moved");
    fs::write(copy.join("config.toml"), renamed).unwrap();
    let data = tmp.path().join("data");
    fs::create_dir_all(&data).unwrap();
    batchlab(&[
        "--data-dir",
        data.to_str().unwrap(),
        "report",
        copy.to_str().unwrap(),
    ]);
    let report = fs::read_to_string(copy.join("report.md")).unwrap();
    assert!(
        report.contains("20000 training examples per epoch counted from the config"),
        "the data line: {report}"
    );
    let committed = root().join("reports").join(experiment).join(run);
    assert_eq!(
        fs::read_to_string(copy.join("findings.json")).unwrap(),
        fs::read_to_string(committed.join("findings.json")).unwrap()
    );
}

#[test]
fn report_with_another_registry_words_a_step_time_claim_as_that_registry_does() {
    // A step-time rule judged from `[analysis]` keys takes its registered claim's words and its
    // id from one registry: the file given, not the builtin one.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("power-of-two-step-time-cpu/run");
    copy_tree(
        &root().join("reports/power-of-two-step-time-cpu/20261127T121243Z-d98396"),
        &run,
    );
    let registry = fs::read_to_string(root().join("claims/registry.toml")).unwrap();
    let id = "id = \"powers-of-two-no-step-time-jump\"\nquote = \"Again, as we saw before";
    assert!(
        registry.contains(id),
        "powers-of-two-no-step-time-jump's quote moved"
    );
    let other = tmp.path().join("other.toml");
    let reworded = id.replace("Again, as we saw before", "In another registry's words");
    fs::write(&other, registry.replacen(id, &reworded, 1)).unwrap();
    let claim_of = || {
        let text = fs::read_to_string(run.join("findings.json")).unwrap();
        let file: serde_json::Value = serde_json::from_str(&text).unwrap();
        let finding = file["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "powers-of-two-no-step-time-jump")
            .unwrap()
            .clone();
        finding["claim"].as_str().unwrap().to_string()
    };
    batchlab(&[
        "report",
        run.to_str().unwrap(),
        "--registry",
        other.to_str().unwrap(),
    ]);
    assert!(
        claim_of().starts_with("In another registry's words, batch sizes"),
        "{}",
        claim_of()
    );
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("In another registry's words"), "{report}");
    batchlab(&["report", run.to_str().unwrap()]);
    assert!(
        claim_of().starts_with("Again, as we saw before"),
        "{}",
        claim_of()
    );
}
