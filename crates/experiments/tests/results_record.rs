//! The verdict of record is a declared rule, not the newest run: a run on a less faithful
//! backend never replaces it, another model's run is listed but never of record, and a
//! verdict whose parameter was fixed after its run started is marked post hoc.

use std::path::Path;

use batchlab_experiments::claim_registry::Registry;
use batchlab_experiments::results::{collect, results_markdown};
use batchlab_experiments::Source;
use batchlab_method::findings::{
    ClaimText, Finding, FindingsFile, MachineKey, Outcome, RULES_VERSION,
};

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
        machine: MachineKey {
            backend: backend.into(),
            device: "dev".into(),
            threads: 2,
            kernels: String::new(),
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
    assert!(md.contains("another model"), "{md}");
}
