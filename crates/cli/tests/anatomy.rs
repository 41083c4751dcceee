//! A step-time study with `[anatomy]`: after the sweep, steps taken apart at b - 1, b, b + 1 in
//! rounds of their own, written to stages.csv (every stage's forward and backward, the
//! optimizer, the whole step), resumable like the sweep; a network that is no chain is refused
//! before anything runs.

mod common;

use std::{collections::BTreeSet, fs};

use common::{run_to_dir, STEP_TIME};

const ANATOMY: &str = "\n[anatomy]\naround = [8]\nrounds = 2\nsamples = 2\n";

#[test]
fn steps_are_taken_apart_around_the_given_batch_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("anatomy.toml");
    fs::write(&config, STEP_TIME.to_string() + ANATOMY).unwrap();
    let reports = tmp.path().join("reports");
    let run = run_to_dir(&config, &reports);

    let mut reader =
        csv::Reader::from_reader(std::io::Cursor::new(common::table(&run.join("stages.csv"))));
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (b, round, phase, stage) = (
        column("batch_size"),
        column("round"),
        column("phase"),
        column("stage"),
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    // 3 batch sizes x 2 rounds x 2 repetitions x (2 stages x 2 phases + optimizer + step).
    assert_eq!(rows.len(), 3 * 2 * 2 * 6);
    let visits: BTreeSet<(String, String)> = rows
        .iter()
        .map(|r| (r[b].to_string(), r[round].to_string()))
        .collect();
    assert_eq!(visits.len(), 6);
    assert!(visits
        .iter()
        .all(|(b, _)| ["7", "8", "9"].contains(&b.as_str())));
    let stages: BTreeSet<&str> = rows.iter().map(|r| &r[stage]).collect();
    assert_eq!(
        stages,
        BTreeSet::from(["dense1+relu", "head", "optimizer", "step"])
    );
    let phases: BTreeSet<&str> = rows.iter().map(|r| &r[phase]).collect();
    assert_eq!(
        phases,
        BTreeSet::from(["backward", "forward", "optimizer", "step"])
    );
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("for the anatomy, 2 rounds over batch sizes [7, 8, 9]"),
        "{report}"
    );
}

#[test]
fn a_network_that_is_no_chain_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("resnet.toml");
    let resnet = STEP_TIME.replace(
        "architecture = \"mlp\"\ninput = [1, 8, 8]\nclasses = 4\nhidden = [64]",
        "architecture = \"resnet8\"\ninput = [3, 16, 16]\nclasses = 4",
    );
    assert!(resnet.contains("resnet8"));
    fs::write(&config, resnet + ANATOMY).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(["check", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("anatomy") && error.contains("cannot be taken apart"),
        "{error}"
    );
}
