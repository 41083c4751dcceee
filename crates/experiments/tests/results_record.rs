//! The verdict of record is a declared rule, not the newest run: a run on a less faithful
//! backend never replaces it, another model's run is listed but never of record, and a
//! verdict whose parameter was fixed after its run started is marked post hoc.

use std::path::Path;

use batchlab_experiments::claim_registry::Registry;
use batchlab_experiments::results::{collect, results_markdown};
use batchlab_experiments::Source;
use batchlab_method::findings::{ClaimText, Finding, FindingsFile, Outcome, RULES_VERSION};
use batchlab_method::machine::Machine;

const REGISTRY: &str = r#"
version = 1
[[claim]]
id = "a-claim"
quote = "q"
source = "seed 000"
kind = "step-time"
rule = "linear"
test_of_record = "study-cpu"
judged_by = ["study-gpu"]
see_also = ["other-model-cpu"]
[claim.params]
margin = 0.25
[claim.provenance]
margin = "a stated convention"
[claim.fixed]
margin = { commit = "abc", date = "2026-11-25T00:00:00Z" }
"#;

/// A run of `experiment` on `backend` started at `started`, judging the claim `outcome`.
fn run(root: &Path, experiment: &str, name: &str, backend: &str, started: &str, outcome: Outcome) {
    let dir = root.join(experiment).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = serde_json::json!({
        "experiment": experiment, "batchlab_version": "0", "git_commit": "x",
        "burn_version": "0.21.0", "backend": backend, "device": "dev", "cpu": "cpu",
        "threads": 2, "os": "linux", "started": started, "ended": started,
        "resumed": [], "status": "complete", "error": null
    });
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
    let finding = Finding::new(ClaimText::new("q", "s"), "linear", outcome, "m", "t");
    let file = FindingsFile {
        experiment: experiment.into(),
        run: name.into(),
        run_commit: "x".into(),
        rules_version: RULES_VERSION,
        registry_sha256: None,
        machine: Machine {
            backend: backend.into(),
            device: "dev".into(),
            threads: 2,
            ..Machine::default()
        },
        findings: vec![finding],
    };
    std::fs::write(
        dir.join("findings.json"),
        serde_json::to_string(&file).unwrap(),
    )
    .unwrap();
}

fn registry() -> Registry {
    Registry::parse(&Source {
        origin: "r.toml".into(),
        text: REGISTRY.into(),
        overrides: vec![],
    })
    .unwrap()
}

#[test]
fn the_most_faithful_backend_holds_the_record_whatever_ran_last() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    run(
        r,
        "study-cpu",
        "tch-old",
        "tch",
        "2026-11-26T00:00:00Z",
        Outcome::reproduces(),
    );
    // Newer, but on burn's own kernels: listed, of record on its machine only.
    let refuted = Outcome::does_not_reproduce("no");
    run(
        r,
        "study-cpu",
        "flex-new",
        "flex",
        "2026-11-27T00:00:00Z",
        refuted.clone(),
    );
    // Another model, newest of all: listed last, never of record.
    run(
        r,
        "other-model-cpu",
        "other",
        "tch",
        "2026-11-28T00:00:00Z",
        refuted,
    );
    let registry = registry();
    let results = collect(&registry, r).unwrap();
    let record = results[0].of_record().unwrap();
    assert_eq!(record.run, "tch-old");
    let order: Vec<&str> = results[0].runs.iter().map(|v| v.run.as_str()).collect();
    assert_eq!(order, ["tch-old", "flex-new", "other"]);
    assert!(results[0].runs[1].newest_on_machine);
    assert!(!results[0].runs[2].of_record_kind);

    // The same study on a GPU through LibTorch outranks both.
    run(
        r,
        "study-gpu",
        "gpu",
        "tch-cuda",
        "2026-11-24T00:00:00Z",
        Outcome::reproduces(),
    );
    let results = collect(&registry, r).unwrap();
    let record = results[0].of_record().unwrap();
    assert_eq!(record.run, "gpu");
    // It started before the margin was fixed: post hoc; the later runs are not.
    assert_eq!(record.post_hoc, ["margin"]);
    assert!(results[0].runs[1].post_hoc.is_empty());
    let md = results_markdown(&registry, &results);
    assert!(md.contains("verdict of record (tch-cuda"), "{md}");
    assert!(
        md.contains("*post hoc*: margin fixed after this run started"),
        "{md}"
    );
    assert!(md.contains(", another model or kernels ("), "{md}");
    // The table read first: one line per claim, the verdict of record per device (one device
    // here: its most faithful backend's), the report of the claim's verdict of record.
    let glance = md.split("## At a glance").nth(1).unwrap();
    let line = glance.lines().find(|l| l.contains("[`a-claim`]")).unwrap();
    assert!(
        line.contains("| reproduces, post hoc on dev (tch-cuda) |"),
        "{line}"
    );
    assert!(
        line.contains("(../reports/study-gpu/gpu/report.md)"),
        "{line}"
    );

    // A newer GPU run that could not test the claim gives no verdict: the machines that gave
    // one hold the record, the GPU's reading listed after them.
    run(
        r,
        "study-gpu",
        "gpu-untested",
        "tch-cuda",
        "2026-11-29T00:00:00Z",
        Outcome::cannot_test("no reference here"),
    );
    let results = collect(&registry, r).unwrap();
    assert_eq!(results[0].of_record().unwrap().run, "tch-old");
    let order: Vec<&str> = results[0].runs.iter().map(|v| v.run.as_str()).collect();
    assert_eq!(
        order,
        ["tch-old", "flex-new", "gpu-untested", "gpu", "other"]
    );
}

/// Sets `key` of a run's meta.json to `value`.
fn restamp(root: &Path, experiment: &str, name: &str, key: &str, value: &str) {
    let path = root.join(experiment).join(name).join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    meta[key] = value.into();
    std::fs::write(&path, meta.to_string()).unwrap();
}

#[test]
fn a_run_stopped_early_or_without_its_fast_paths_is_listed_never_of_record() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let at = |name, started, outcome| run(r, "study-gpu", name, "tch-cuda", started, outcome);
    at("whole", "2026-11-26T00:00:00Z", Outcome::reproduces());
    // Newer runs on the same machine, each refuting it: one interrupted, one with its backend's
    // fast paths turned off.
    let refuted = Outcome::does_not_reproduce("no");
    at("stopped", "2026-11-27T00:00:00Z", refuted.clone());
    restamp(r, "study-gpu", "stopped", "status", "interrupted");
    at("burn-ops", "2026-11-28T00:00:00Z", refuted);
    let off = "off (backend.fast_paths = false): burn's own ops";
    restamp(r, "study-gpu", "burn-ops", "fast_paths", off);
    let registry = registry();
    let results = collect(&registry, r).unwrap();
    assert_eq!(results[0].of_record().unwrap().run, "whole");
    assert_eq!(results[0].runs.len(), 3);
    let md = results_markdown(&registry, &results);
    assert!(md.contains(", set aside (tch-cuda"), "{md}");
    assert!(md.contains(", stopped before its end)"), "{md}");
    assert!(md.contains(", fast paths off: burn's own ops)"), "{md}");
}
