//! The LibTorch backend end to end (a build with `--features tch`, `just test-tch`): a
//! step-time sweep and a training grid run on `tch` as on flex, and each run's meta.json names
//! the libtorch that ran and its threads.

#![cfg(feature = "tch")]

mod common;

use std::{fs, path::Path};

use common::{run_to_dir, STEP_TIME, TRAIN};

fn meta(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap()
}

fn on_tch(config: &str, threads: usize) -> String {
    format!("{config}\n[backend]\nname = \"tch\"\nthreads = {threads}\n")
}

#[test]
fn studies_run_on_tch_and_record_its_libtorch() {
    let scratch = tempfile::tempdir().unwrap();
    for (name, config) in [("step-time", STEP_TIME), ("train", TRAIN)] {
        let path = scratch.path().join(format!("{name}.toml"));
        fs::write(&path, on_tch(config, 1)).unwrap();
        let dir = run_to_dir(&path, &scratch.path().join("reports"));
        let meta = meta(&dir);
        assert_eq!(meta["backend"], "tch", "{name}: {meta}");
        assert_eq!(meta["status"], "complete", "{name}: {meta}");
        assert_eq!(meta["threads"], 1, "{name}: {meta}");
        let libtorch = meta["libtorch"].as_str().unwrap();
        assert!(libtorch.starts_with("2.9.0"), "{name}: {libtorch}");
        assert_eq!(meta["flex_kernels"], "", "{name}: {meta}");
        let results = common::table(&dir.join("results.csv"));
        assert!(results.lines().count() > 1, "{name}: no results");
        assert!(dir.join("report.md").is_file(), "{name}");
    }
}
