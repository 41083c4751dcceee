//! Killing a run's supervisor with SIGKILL at random moments and resuming at once: every point
//! or trial ends up in the results exactly once, and every whole row written before the kill is
//! still there, unchanged, at the start of its file. One kind of study per test (step-time,
//! train, steps-to-target, and steps-to-target in two shards); a few kills each in CI, and
//! `cargo test --release -p batchlab-cli --test crash -- --ignored` for the soak (20 kills per
//! kind).

mod common;

use common::{run_command as command, STEP_TIME, TARGET, TRAIN};
use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
    process::{Child, Output, Stdio},
    thread::sleep,
    time::{Duration, Instant},
};

/// A results file and the columns that name one row of it.
struct Keyed {
    file: &'static str,
    key: &'static [&'static str],
    /// Whether rows written before a kill must still open the file afterwards. (A training
    /// study's results.csv drops the evaluations of unfinished trials on resume.)
    append_only: bool,
}

const STEP_TIME_FILES: &[Keyed] = &[Keyed {
    file: "results.csv",
    key: &["batch_size", "round", "sample"],
    append_only: true,
}];

const TRAIN_FILES: &[Keyed] = &[
    Keyed {
        file: "trials.csv",
        key: &["trial"],
        append_only: true,
    },
    Keyed {
        file: "results.csv",
        key: &["trial", "step"],
        append_only: false,
    },
];

const TARGET_FILES: &[Keyed] = &[
    Keyed {
        file: "trials.csv",
        key: &["trial"],
        append_only: true,
    },
    Keyed {
        file: "search.csv",
        key: &["trial"],
        append_only: true,
    },
    Keyed {
        file: "results.csv",
        key: &["trial", "step"],
        append_only: false,
    },
    Keyed {
        file: "noise.csv",
        key: &["trial", "step"],
        append_only: true,
    },
];

fn finish(output: Output) -> Output {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A small deterministic generator for the kill moments.
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `key -> count` of a results file, and its lines.
fn keyed_rows(path: &Path, key: &[&str]) -> (BTreeMap<Vec<String>, usize>, Vec<String>) {
    // A finished run keeps its large tables as Parquet: read them back as their CSV text.
    let text = batchlab_method::rows::stored::read_text(path)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return (BTreeMap::new(), Vec::new());
    };
    let columns: Vec<&str> = header.split(',').collect();
    let at: Vec<usize> = key
        .iter()
        .map(|k| columns.iter().position(|c| c == k).unwrap())
        .collect();
    let mut counts = BTreeMap::new();
    for line in text.lines().skip(1) {
        // Key columns come before any quoted free text, so a split on commas finds them.
        let cells: Vec<&str> = line.split(',').collect();
        let k: Vec<String> = at.iter().map(|&i| cells[i].to_string()).collect();
        *counts.entry(k).or_insert(0) += 1;
    }
    (counts, text.lines().map(str::to_string).collect())
}

/// The whole lines of `path` (a line cut by the kill is not a row).
fn whole_lines(path: &Path) -> Vec<String> {
    // A finished run keeps its large tables as Parquet: read them back as their CSV text.
    let text = batchlab_method::rows::stored::read_text(path)
        .ok()
        .flatten()
        .unwrap_or_default();
    let end = text.rfind('\n').map_or(0, |i| i + 1);
    text[..end].lines().map(str::to_string).collect()
}

/// The values of `name`'s column in `lines` (a header, then rows), if it has one.
fn column(lines: &[String], name: &str) -> Vec<String> {
    let Some(at) = lines
        .first()
        .and_then(|h| h.split(',').position(|c| c == name))
    else {
        return Vec::new();
    };
    // Key columns come before any quoted free text, so a split on commas finds them.
    lines[1..]
        .iter()
        .map(|l| l.split(',').nth(at).unwrap_or_default().to_string())
        .collect()
}

/// The header of `lines` and the rows whose trial is in `finished` (all of them in a file
/// without a trial column).
fn rows_of(lines: &[String], finished: &BTreeSet<String>) -> Vec<String> {
    let trials = column(lines, "trial");
    if trials.is_empty() {
        return lines.to_vec();
    }
    let rows = lines[1..]
        .iter()
        .zip(&trials)
        .filter(|(_, t)| finished.contains(*t))
        .map(|(l, _)| l.clone());
    lines[..1].iter().cloned().chain(rows).collect()
}

/// The directory that holds a run's merged results under `out`: the run `latest` points at once
/// one has completed (a run killed before its meta.json existed can share its second with the
/// fresh one after it), else the newest.
fn report_dir(out: &Path, experiment: &str) -> Option<PathBuf> {
    let dir = out.join(experiment);
    if let Ok(latest) = fs::canonicalize(dir.join("latest")) {
        return Some(latest);
    }
    let mut runs: Vec<PathBuf> = fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.is_symlink())
        .collect();
    runs.sort();
    runs.pop()
}

/// Runs the study once without a kill (the reference), then `kills` times: start, SIGKILL the
/// supervisor after a random part of the reference's duration, snapshot the files, resume at
/// once, and compare.
fn crash_and_resume(
    name: &str,
    toml: &str,
    files: &[Keyed],
    shards: usize,
    kills: usize,
    seed: u64,
) {
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join(format!("{name}.toml"));
    fs::write(&config, toml).unwrap();
    let shard_args: Vec<Vec<String>> = (0..shards)
        .map(|i| {
            if shards == 1 {
                Vec::new()
            } else {
                vec!["--shard".into(), format!("{i}/{shards}")]
            }
        })
        .collect();
    let start_all = |out: &Path, resume: bool| -> Vec<Child> {
        shard_args
            .iter()
            .map(|args| {
                let mut extra: Vec<&str> = args.iter().map(String::as_str).collect();
                if resume && shards == 1 {
                    extra.push("--resume");
                }
                command(&config, out, &extra)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect()
    };

    let reference_out = scratch.path().join("reference");
    let started = Instant::now();
    for child in start_all(&reference_out, false) {
        finish(child.wait_with_output().unwrap());
    }
    let duration = started.elapsed();
    let reference_dir = report_dir(&reference_out, name).unwrap();
    let reference: Vec<BTreeSet<Vec<String>>> = files
        .iter()
        .map(|f| {
            let (counts, _) = keyed_rows(&reference_dir.join(f.file), f.key);
            assert!(
                !counts.is_empty() || f.file == "noise.csv",
                "{name}: no rows in {}",
                f.file
            );
            counts.into_keys().collect()
        })
        .collect();

    let mut random = Lcg(seed);
    // (delay, rows of the first file on disk at the kill) per kill, printed at the end.
    let mut landed: Vec<(Duration, usize)> = Vec::new();
    for kill in 0..kills {
        let out = scratch.path().join(format!("kill-{kill}"));
        let delay = duration.mul_f64(0.05 + 0.8 * random.unit());
        let mut children = start_all(&out, false);
        sleep(delay);
        for child in &mut children {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        let Some(dir) = report_dir(&out, name) else {
            continue; // killed before its directory existed: nothing to check
        };
        // Where each shard (or the run) writes, and what it had written at the kill.
        let work_dirs: Vec<PathBuf> = if shards == 1 {
            vec![dir.clone()]
        } else {
            (0..shards)
                .map(|i| dir.join("shards").join(format!("{i}-of-{shards}")))
                .collect()
        };
        let before: Vec<Vec<Vec<String>>> = work_dirs
            .iter()
            .map(|d| files.iter().map(|f| whole_lines(&d.join(f.file))).collect())
            .collect();
        landed.push((
            delay,
            before
                .iter()
                .map(|files| files[0].len().saturating_sub(1))
                .sum(),
        ));
        let resumed_at_once = start_all(&out, true);
        for child in resumed_at_once {
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let nothing_to_resume =
                stderr.contains("nothing to resume") || stderr.contains("no runs to resume");
            if !output.status.success() && nothing_to_resume {
                // Killed before meta.json was written: a fresh run is the user's next step.
                finish(command(&config, &out, &[]).output().unwrap());
            } else {
                finish(output);
            }
        }
        let dir = report_dir(&out, name).unwrap();
        for (f, expected) in files.iter().zip(&reference) {
            let (counts, _) = keyed_rows(&dir.join(f.file), f.key);
            let repeated: Vec<_> = counts.iter().filter(|(_, &n)| n > 1).collect();
            assert!(
                repeated.is_empty(),
                "{name}, kill {kill} after {delay:?}: rows repeated in {}: {repeated:?}",
                f.file
            );
            let keys: BTreeSet<Vec<String>> = counts.into_keys().collect();
            assert_eq!(
                &keys, expected,
                "{name}, kill {kill} after {delay:?}: {} lost or gained rows",
                f.file
            );
        }
        for (work_dir, before) in work_dirs.iter().zip(&before) {
            // A kill inside a trial's last writes (its search.csv and noise.csv rows go before
            // its trials.csv row) leaves rows of a trial that is unfinished and runs again:
            // resume drops them. Every row of the trials finished at the kill must stay.
            let finished = files.iter().position(|f| f.file == "trials.csv").map(|i| {
                column(&before[i], "trial")
                    .into_iter()
                    .collect::<BTreeSet<_>>()
            });
            for (f, lines) in files.iter().zip(before) {
                if !f.append_only || lines.is_empty() {
                    continue;
                }
                let kept = match &finished {
                    Some(finished) => rows_of(lines, finished),
                    None => lines.clone(),
                };
                // A sharded run merged for good (shards/merged.json) keeps its shards' rows in
                // its top directory alone: there, each of them must still be found as it was.
                let unchanged = if dir.join("shards/merged.json").exists() {
                    let after: BTreeSet<String> =
                        whole_lines(&dir.join(f.file)).into_iter().collect();
                    kept.iter().all(|row| after.contains(row))
                } else {
                    whole_lines(&work_dir.join(f.file)).starts_with(&kept)
                };
                assert!(
                    unchanged,
                    "{name}, kill {kill} after {delay:?}: rows of {} written before the kill changed",
                    work_dir.join(f.file).display()
                );
            }
        }
    }
    let rows: Vec<usize> = landed.iter().map(|(_, r)| *r).collect();
    eprintln!(
        "{name} ({shards} shard(s)): reference run {duration:.2?}; {} kills checked, at {:.2?} to {:.2?}, with {} to {} rows of {} on disk (of {}); every unit once, earlier rows unchanged",
        landed.len(),
        landed.iter().map(|(d, _)| *d).min().unwrap_or_default(),
        landed.iter().map(|(d, _)| *d).max().unwrap_or_default(),
        rows.iter().min().unwrap_or(&0),
        rows.iter().max().unwrap_or(&0),
        files[0].file,
        reference[0].len()
    );
}

#[test]
fn step_time_survives_kills() {
    crash_and_resume("crash-step-time", STEP_TIME, STEP_TIME_FILES, 1, 3, 1);
}

#[test]
fn train_survives_kills() {
    crash_and_resume("crash-train", TRAIN, TRAIN_FILES, 1, 3, 2);
}

#[test]
fn steps_to_target_survives_kills() {
    crash_and_resume("crash-target", TARGET, TARGET_FILES, 1, 3, 3);
}

#[test]
fn sharded_steps_to_target_survives_kills() {
    crash_and_resume("crash-target", TARGET, TARGET_FILES, 2, 2, 4);
}

#[test]
#[ignore = "soak: 20 kills per kind, several minutes"]
fn soak_every_kind_survives_twenty_kills() {
    crash_and_resume("crash-step-time", STEP_TIME, STEP_TIME_FILES, 1, 20, 11);
    crash_and_resume("crash-train", TRAIN, TRAIN_FILES, 1, 20, 12);
    crash_and_resume("crash-target", TARGET, TARGET_FILES, 1, 20, 13);
    crash_and_resume("crash-target", TARGET, TARGET_FILES, 2, 20, 14);
}
