//! A step-time claim judged against another experiment's sweep ("fluctuates more than VGG16")
//! compares with that experiment's newest complete run on the same machine: a newer run of it
//! on another CPU, even one its `latest` link points at, says nothing about this machine.

mod common;

use std::{fs, path::Path};

use common::{run_to_dir, STEP_TIME};

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap().flatten() {
        if entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn a_fluctuation_claim_compares_with_the_reference_run_of_this_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let reference = tmp.path().join("reference.toml");
    fs::write(
        &reference,
        STEP_TIME.replace("crash-step-time", "reference-sweep"),
    )
    .unwrap();
    let here = run_to_dir(&reference, &reports);

    // A newer run of the reference, made on another CPU, which `latest` points at.
    let elsewhere = reports.join("reference-sweep/29991231T000000Z-000000");
    copy_dir(&here, &elsewhere);
    let meta = fs::read_to_string(elsewhere.join("meta.json")).unwrap();
    let start = meta
        .find("\"device\": \"")
        .expect("meta.json names the device")
        + 11;
    let end = start + meta[start..].find('"').unwrap();
    let meta = format!("{}Another CPU{}", &meta[..start], &meta[end..]);
    fs::write(elsewhere.join("meta.json"), meta).unwrap();
    let latest = reports.join("reference-sweep/latest");
    fs::remove_file(&latest).unwrap();
    std::os::unix::fs::symlink("29991231T000000Z-000000", &latest).unwrap();

    let claim = tmp.path().join("claim.toml");
    fs::write(
        &claim,
        format!(
            "{}\n[analysis]\nfluctuates_more_than = \"reference-sweep\"\n",
            STEP_TIME.replace("crash-step-time", "claiming-sweep")
        ),
    )
    .unwrap();
    let run = run_to_dir(&claim, &reports);
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    let here_id = here.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        report.contains(&format!("reference-sweep (run {here_id}, this machine)")),
        "{report}"
    );
    assert!(!report.contains("29991231T000000Z-000000"), "{report}");
}

/// A comparison with another model's sweep finds it under whichever name that study ran on
/// this machine: named by its CPU config (`reference-sweep-cpu`), found as its GPU config
/// (`reference-sweep`), as a GPU campaign's run would be (`<config>-<backend>`).
#[test]
fn a_reference_sweep_is_found_under_the_name_its_study_ran_here() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let reference = tmp.path().join("reference.toml");
    fs::write(
        &reference,
        STEP_TIME.replace("crash-step-time", "reference-sweep"),
    )
    .unwrap();
    let here = run_to_dir(&reference, &reports);
    let claim = tmp.path().join("claim.toml");
    fs::write(
        &claim,
        format!(
            "{}\n[analysis]\nfluctuates_more_than = \"reference-sweep-cpu\"\n",
            STEP_TIME.replace("crash-step-time", "claiming-sweep")
        ),
    )
    .unwrap();
    let run = run_to_dir(&claim, &reports);
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    let here_id = here.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        report.contains(&format!("reference-sweep (run {here_id}, this machine)")),
        "{report}"
    );
    assert!(!report.contains("no complete run of"), "{report}");
}
