//! A run's exit code and meta.json tell the truth: SIGTERM (or Ctrl-C's SIGINT) stops a run as
//! `interrupted`, resumable, with nothing recorded as failed; a run in which every trial failed
//! exits non-zero as `failed`; neither moves `latest`.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread::sleep,
    time::{Duration, Instant},
};

use batchlab_experiments::run_dir::RunStatus;
use common::{run_command as batchlab, STEP_TIME, TRAIN};

/// The one run directory under `out/<experiment>`.
fn run_dir(out: &Path, experiment: &str) -> PathBuf {
    let runs: Vec<PathBuf> = fs::read_dir(out.join(experiment))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.is_symlink())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

fn status(dir: &Path) -> RunStatus {
    batchlab_experiments::run_dir::Meta::read(dir)
        .unwrap()
        .status
}

#[test]
fn sigterm_stops_a_run_as_interrupted_and_resume_finishes_it() {
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("sweep.toml");
    // More rounds than the kill test's, so that the signal lands mid-sweep.
    fs::write(&config, STEP_TIME.replace("rounds = 3", "rounds = 40")).unwrap();
    let out = scratch.path().join("out");
    let child = batchlab(&config, &out, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first measured visit, then signal the supervisor alone (its worker is not
    // signalled: the supervisor must stop it).
    let started = Instant::now();
    let results = || {
        fs::read_dir(out.join("crash-step-time"))
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path().join("results.csv"))
            .filter(|p| fs::metadata(p).is_ok_and(|m| m.len() > 200))
    };
    while results().is_none() {
        assert!(started.elapsed() < Duration::from_secs(60), "no results");
        sleep(Duration::from_millis(10));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("continue with --resume"), "{stderr}");
    let dir = run_dir(&out, "crash-step-time");
    assert_eq!(status(&dir), RunStatus::Interrupted);
    assert!(!out.join("crash-step-time/latest").exists());
    let text = common::table(&dir.join("results.csv"));
    let rows = text.lines().count() - 1;
    assert!(
        rows < 24 * 40 * 4,
        "the signal came after the sweep: {rows} rows"
    );
    assert!(
        !text.contains(",error,") && !text.contains(",oom,"),
        "an interrupted visit was recorded as failed:\n{text}"
    );

    let resumed = batchlab(&config, &out, &["--resume"]).output().unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(status(&dir), RunStatus::Complete);
    let text = common::table(&dir.join("results.csv"));
    assert_eq!(text.lines().count() - 1, 24 * 40 * 4);
    assert!(out.join("crash-step-time/latest").exists());
}

#[test]
fn a_run_whose_every_trial_failed_exits_non_zero_as_failed() {
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("grid.toml");
    fs::write(&config, TRAIN).unwrap();
    let out = scratch.path().join("out");
    // 256 training examples and the last partial batch dropped: batch 512 never steps.
    let output = batchlab(
        &config,
        &out,
        &[
            "--set",
            "grid.batch_sizes=[512]",
            "--set",
            "grid.drop_last=true",
        ],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("every trial failed (4 of 4)"), "{stderr}");
    assert!(stderr.contains("would not retry them"), "{stderr}");
    let dir = run_dir(&out, "crash-train");
    assert_eq!(status(&dir), RunStatus::Failed);
    assert!(!out.join("crash-train/latest").exists());
}

/// A unit that runs long without a word (a GPU's first steps compile and tune for minutes) is
/// stopped as soon as the supervisor is signalled, not at the worker's next line.
#[test]
fn sigterm_stops_a_silent_long_unit_at_once() {
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("sweep.toml");
    // One visit of 5,000,000 steps: minutes without a line from the worker.
    let long = STEP_TIME
        .replace("batch_range = [1, 24]", "batch_sizes = [64]")
        .replace("samples = 4", "samples = 5000000")
        .replace("rounds = 3", "rounds = 1");
    fs::write(&config, long).unwrap();
    let out = scratch.path().join("out");
    let child = batchlab(&config, &out, &["--yes"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The worker has announced its visit once the run directory exists; give it a moment more.
    let started = Instant::now();
    while fs::read_dir(out.join("crash-step-time")).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no run directory"
        );
        sleep(Duration::from_millis(10));
    }
    sleep(Duration::from_secs(2));
    let signalled = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stopped_in = signalled.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stopped_in < Duration::from_secs(10),
        "took {stopped_in:?} to stop"
    );
    assert_eq!(
        status(&run_dir(&out, "crash-step-time")),
        RunStatus::Interrupted
    );
}

/// A build whose fast paths differ from the ones a run recorded times another step: it may not
/// continue that run, and the run is left as it was.
#[test]
fn a_build_with_other_fast_paths_may_not_resume_a_run() {
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("sweep.toml");
    fs::write(&config, STEP_TIME).unwrap();
    let out = scratch.path().join("reports");
    let dir = common::run_to_dir(&config, &out);
    let meta = fs::read_to_string(dir.join("meta.json")).unwrap();
    let other = meta.replace("\"complete\"", "\"interrupted\"").replace(
        "\"fast_paths\": \"",
        "\"fast_paths\": \"an older build's paths; ",
    );
    assert!(other.contains("an older build's paths"), "{meta}");
    fs::write(dir.join("meta.json"), &other).unwrap();
    let refused = batchlab(&config, &out, &["--resume"]).output().unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("other fast paths"), "{stderr}");
    assert_eq!(fs::read_to_string(dir.join("meta.json")).unwrap(), other);
    assert_eq!(status(&dir), RunStatus::Interrupted);
}
