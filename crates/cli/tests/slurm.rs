//! Scale-out on a real Slurm (a one-node cluster in CI, started by `.ci/slurm-one-node.sh`):
//! `batchlab submit` runs a study as a job array whose merged report equals the unsharded run,
//! and a task cancelled mid-trial with `scancel` loses nothing once the study is submitted
//! again: every trial appears exactly once.
//!
//! Where no Slurm answers, these tests say so and pass; with `BATCHLAB_REQUIRE_SLURM` set (as
//! `.ci/run` sets it) they fail instead, so CI cannot skip them.

mod common;

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
    thread::sleep,
    time::{Duration, Instant},
};

use common::{run_command, TRAIN};

fn slurm_answers() -> bool {
    let answers = Command::new("sinfo")
        .arg("-h")
        .output()
        .is_ok_and(|o| o.status.success());
    if !answers {
        assert!(
            std::env::var_os("BATCHLAB_REQUIRE_SLURM").is_none(),
            "BATCHLAB_REQUIRE_SLURM is set, but no Slurm cluster answers (sinfo failed): .ci/slurm-one-node.sh starts one"
        );
        eprintln!(
            "SKIPPED: no Slurm cluster answers here (sinfo); `.ci/run` starts a one-node cluster (.ci/slurm-one-node.sh, as root)"
        );
    }
    answers
}

fn batchlab(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "batchlab {args:?}\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn last_line(output: &Output) -> PathBuf {
    PathBuf::from(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .last()
            .unwrap()
            .trim(),
    )
}

/// `batchlab submit CONFIG --array N --out OUT EXTRA...`.
fn submit(config: &Path, out: &Path, array: usize, extra: &[&str]) -> Output {
    let array = array.to_string();
    let mut args = vec![
        "submit",
        config.to_str().unwrap(),
        "--array",
        &array,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    batchlab(&args)
}

/// Rows keyed by some columns: key -> (how many rows have it, the first one's other columns).
type Keyed = BTreeMap<Vec<String>, (usize, Vec<String>)>;

/// The rows of a CSV file keyed by `key` columns, each mapped to the `values` columns, with
/// how many times each key appears.
fn rows(path: &Path, key: &[&str], values: &[&str]) -> Keyed {
    let mut reader = csv::Reader::from_reader(std::io::Cursor::new(common::table(path)));
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (key, values): (Vec<usize>, Vec<usize>) = (
        key.iter().map(|k| column(k)).collect(),
        values.iter().map(|v| column(v)).collect(),
    );
    let mut found = Keyed::new();
    for record in reader.records() {
        let record = record.unwrap();
        let pick = |columns: &[usize]| columns.iter().map(|&c| record[c].to_string()).collect();
        let entry = found.entry(pick(&key)).or_insert((0, pick(&values)));
        entry.0 += 1;
    }
    found
}

/// What must not depend on how the study was split: each trial's outcome, and every evaluation.
fn outcomes(dir: &Path) -> (Keyed, Keyed) {
    (
        rows(
            &dir.join("trials.csv"),
            &["trial"],
            &["status", "steps", "examples", "test_loss", "test_accuracy"],
        ),
        rows(
            &dir.join("results.csv"),
            &["trial", "step"],
            &["train_loss", "val_loss", "val_accuracy"],
        ),
    )
}

#[test]
fn a_job_array_equals_the_unsharded_run() {
    if !slurm_answers() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("train.toml");
    fs::write(&config, TRAIN).unwrap();
    let out = scratch.path().join("reports");

    let dry = submit(&config, &out, 4, &["--dry-run"]);
    assert!(String::from_utf8_lossy(&dry.stdout).contains("#SBATCH --array=0-3"));
    assert!(!out.exists(), "a dry run creates nothing");

    let started = Instant::now();
    let submitted = submit(&config, &out, 4, &["--wait"]);
    let array_time = started.elapsed();
    let merged = last_line(&submitted);
    assert!(
        merged.join("slurm").read_dir().unwrap().count() >= 5,
        "script and 4 logs"
    );
    for i in 0..4 {
        // Every task ran its shard (one that found its slice taken by faster shards has no rows).
        let meta = fs::read_to_string(merged.join(format!("shards/{i}-of-4/meta.json"))).unwrap();
        assert!(meta.contains("\"complete\""), "shard {i}: {meta}");
    }
    batchlab(&["report", merged.to_str().unwrap()]);

    let started = Instant::now();
    let whole = run_command(
        &config,
        &scratch.path().join("whole"),
        &["--set", "backend.threads=1"],
    )
    .output()
    .unwrap();
    let one_process = started.elapsed();
    assert!(
        whole.status.success(),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    let (trials, evaluations) = outcomes(&merged);
    assert_eq!(trials.len(), 16, "4 batch sizes x 2 optimizers x 2 seeds");
    assert!(trials.values().all(|(n, _)| *n == 1), "each trial once");
    assert!(
        evaluations.values().all(|(n, _)| *n == 1),
        "each evaluation once"
    );
    assert_eq!(
        outcomes(&merged),
        outcomes(&last_line(&whole)),
        "array = unsharded"
    );
    let status = batchlab(&["status", merged.to_str().unwrap()]);
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("16 done (0 failed), 0 in flight, 0 remaining of 16"),
        "{status}"
    );
    eprintln!(
        "16 trials: a 4-task array (1 CPU each, on this machine's cores) took {array_time:.2?} from submission to its end; one process on 1 thread {one_process:.2?}"
    );
}

/// TRAIN with trials long enough (about a second each) to cancel one midway.
fn slow_train() -> String {
    TRAIN
        .replace("name = \"crash-train\"", "name = \"slurm-cancel\"")
        .replace("examples = [256, 64, 64]", "examples = [4096, 64, 64]")
        .replace("hidden = [32]", "hidden = [128]")
}

#[test]
fn a_task_cancelled_mid_trial_loses_nothing_once_resubmitted() {
    if slurm_answers() {
        cancel_mid_trial_then_resubmit(false);
    }
}

/// The same with the whole array cancelled (every running task mid-trial, the rest never
/// started): the resubmission then has trials left to run, and stale claims of its own.
#[test]
fn a_cancelled_array_continues_when_submitted_again() {
    if slurm_answers() {
        let finished_before = cancel_mid_trial_then_resubmit(true);
        assert!(finished_before < 16, "the resubmission had trials to run");
    }
}

/// Submits the slow study as 4 tasks, cancels task 0 (or the whole array) once task 0 is
/// inside a trial, waits for the array to end, submits it again and checks that every trial
/// and evaluation appears once. Returns how many trials had finished before the resubmission.
fn cancel_mid_trial_then_resubmit(whole_array: bool) -> usize {
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("slow.toml");
    fs::write(&config, slow_train()).unwrap();
    let out = scratch.path().join("reports");
    let submitted = submit(&config, &out, 4, &[]);
    let dir = last_line(&submitted);
    let text = String::from_utf8_lossy(&submitted.stdout).into_owned();
    let job = text
        .split_whitespace()
        .nth(2)
        .map(|j| j.trim_end_matches(':').to_string())
        .unwrap();

    // Wait until task 0 is inside a trial: a claim of its own that its trials.csv lacks.
    let shard = dir.join("shards/0-of-4");
    let deadline = Instant::now() + Duration::from_secs(120);
    let in_flight = loop {
        assert!(Instant::now() < deadline, "task 0 never started a trial");
        let done: BTreeSet<String> = if shard.join("trials.csv").is_file() {
            rows(&shard.join("trials.csv"), &["trial"], &[])
                .into_keys()
                .map(|k| k[0].clone())
                .collect()
        } else {
            BTreeSet::new()
        };
        // A claim's draft (`.<id>.<pid>`, hard-linked to its name) holds the same words for an
        // instant: only a claim's own name counts.
        let claimed = fs::read_dir(dir.join("claims"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter(|e| fs::read_to_string(e.path()).is_ok_and(|h| h == "0-of-4"))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|id| !done.contains(id));
        if let Some(id) = claimed {
            break id;
        }
        sleep(Duration::from_millis(20));
    };
    let target = if whole_array {
        job.clone()
    } else {
        format!("{job}_0")
    };
    let cancel = Command::new("scancel").arg(&target).output().unwrap();
    assert!(
        cancel.status.success(),
        "{}",
        String::from_utf8_lossy(&cancel.stderr)
    );
    // Let the rest of the array end.
    let deadline = Instant::now() + Duration::from_secs(300);
    while Command::new("squeue")
        .args(["-h", "-j", &job])
        .output()
        .is_ok_and(|o| !o.stdout.is_empty())
    {
        assert!(Instant::now() < deadline, "job {job} did not end");
        sleep(Duration::from_millis(200));
    }
    // Merge what the shards recorded. When the array was cancelled before any task finished a
    // trial (each one in its first), there is nothing to merge, and `report` says so.
    let merged = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(["report", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert!(
        merged.status.success() || (whole_array && stderr.contains("no training trial recorded")),
        "{stderr}"
    );
    let before: BTreeSet<Vec<String>> = if dir.join("trials.csv").is_file() {
        rows(&dir.join("trials.csv"), &["trial"], &[])
            .into_keys()
            .collect()
    } else {
        BTreeSet::new()
    };
    let state = fs::read_to_string(shard.join("meta.json")).unwrap();
    assert!(
        !state.contains("\"complete\""),
        "task 0 was cancelled: {state}"
    );
    let status = batchlab(&["status", dir.to_str().unwrap()]);
    eprintln!(
        "cancelled {} while task 0 was in trial {in_flight}; then:\n{}",
        if whole_array { "the array" } else { "task 0" },
        String::from_utf8_lossy(&status.stdout)
    );

    let again = submit(&config, &out, 4, &["--wait"]);
    assert_eq!(
        last_line(&again),
        dir,
        "the same study continues in the same directory"
    );
    batchlab(&["report", dir.to_str().unwrap()]);
    let (trials, evaluations) = outcomes(&dir);
    assert_eq!(trials.len(), 16, "every trial");
    for (trial, (n, _)) in &trials {
        assert_eq!(*n, 1, "trial {trial:?} recorded {n} times");
    }
    for (key, (n, _)) in &evaluations {
        assert_eq!(*n, 1, "evaluation {key:?} recorded {n} times");
    }
    assert!(trials.contains_key(&vec![in_flight.clone()]));
    assert!(before.len() < 16 || before.contains(&vec![in_flight]));
    let status = batchlab(&["status", dir.to_str().unwrap()]);
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("0 remaining of 16"), "{status}");
    assert!(!status.contains("more than one shard"), "{status}");
    before.len()
}

/// Without Slurm, `submit` says how to run the shards without it, and creates nothing.
#[test]
fn without_sbatch_submit_points_to_run_parallel() {
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("train.toml");
    fs::write(&config, TRAIN).unwrap();
    let out = scratch.path().join("reports");
    let empty = scratch.path().join("bin");
    fs::create_dir_all(&empty).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(["submit", config.to_str().unwrap(), "--array", "3"])
        .args(["--out", out.to_str().unwrap()])
        .env("PATH", &empty)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("sbatch not found"), "{stderr}");
    assert!(
        stderr.contains("just run-parallel crash-train 3"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing created");
}
