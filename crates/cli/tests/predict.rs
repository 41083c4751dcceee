//! `batchlab predict` end to end: a real (tiny) step-time sweep, then predictions from it: at a
//! measured batch size the sweep's median, an epoch as its full steps plus the partial batch
//! at its own size, beyond the sweep an extrapolation said so, and a model without a sweep
//! refused with what is missing.

mod common;

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use batchlab_experiments::estimate::duration;
use common::{run_command, run_to_dir, STEP_TIME};

/// summary.csv's median milliseconds per batch size, read by column name.
fn medians(dir: &Path) -> HashMap<u32, f64> {
    let mut reader = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (b, m) = (column("batch_size"), column("median_ms"));
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[b].parse().unwrap(), r[m].parse().unwrap())
        })
        .collect()
}

fn predict(reports: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args([
            "predict",
            "--model",
            "mlp",
            "--input",
            "1,8,8",
            "--classes",
            "4",
        ])
        .args(args)
        .args(["--reports", reports.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn predictions_come_from_the_sweep_of_the_same_model() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("sweep.toml");
    fs::write(&config, STEP_TIME).unwrap();
    let reports = tmp.path().join("reports");
    let run = run_to_dir(&config, &reports);
    let median = medians(&run);

    // 100 examples at batch 8: 12 full steps and one of 4 examples.
    let out = predict(
        &reports,
        &["--hidden", "64", "--batch", "8", "--examples", "100"],
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("per step:  {}", duration(median[&8] / 1e3))),
        "{text}\n{median:?}"
    );
    let epoch = 12.0 * median[&8] + median[&4];
    assert!(
        text.contains(&format!("per epoch: {}", duration(epoch / 1e3))),
        "{text}\n{epoch}"
    );
    assert!(
        text.contains("(13 steps)") && text.contains("measured at this batch size"),
        "{text}"
    );
    let dropped = predict(
        &reports,
        &[
            "--hidden",
            "64",
            "--batch",
            "8",
            "--examples",
            "100",
            "--drop-last",
        ],
    );
    assert!(String::from_utf8_lossy(&dropped.stdout).contains("(12 steps)"));

    let beyond = predict(
        &reports,
        &["--hidden", "64", "--batch", "40", "--examples", "100"],
    );
    assert!(String::from_utf8_lossy(&beyond.stdout).contains("extrapolated beyond the sweep"));

    // Another width is another model: no sweep of it, and one sweep is too few to fit across.
    let other = predict(
        &reports,
        &["--hidden", "32", "--batch", "8", "--examples", "100"],
    );
    assert_eq!(other.status.code(), Some(1));
    let error = String::from_utf8_lossy(&other.stderr);
    assert!(
        error.contains("no step-time sweep of mlp 1x8x8") && error.contains("needs at least 3"),
        "{error}"
    );

    // Another machine (7 threads): the error names the experiment that would time this model
    // here and how long its run took where it ran; --any-machine predicts from that run.
    let experiments = tmp.path().join("experiments");
    fs::create_dir_all(&experiments).unwrap();
    fs::write(experiments.join("crash-step-time.toml"), STEP_TIME).unwrap();
    let elsewhere = |extra: &[&str]| {
        let mut args = vec![
            "--hidden",
            "64",
            "--batch",
            "8",
            "--examples",
            "100",
            "--threads",
            "7",
            "--experiments",
            experiments.to_str().unwrap(),
        ];
        args.extend(extra);
        predict(&reports, &args)
    };
    let refused = elsewhere(&[]);
    assert_eq!(refused.status.code(), Some(1));
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(
        error.contains(
            "To time it here, run `just run experiment=crash-step-time` (this model; took "
        ) && error.contains(" on flex on ")
            && error.contains("or add --any-machine"),
        "{error}"
    );
    let any = elsewhere(&["--any-machine"]);
    let text = String::from_utf8_lossy(&any.stdout);
    assert!(any.status.success(), "{text}");
    assert!(
        text.starts_with("warning: no sweep of this machine (flex on ")
            && text.contains("7 threads")
            && text.contains(&format!("per step:  {}", duration(median[&8] / 1e3))),
        "{text}"
    );
}

/// Runs the sweep `sweep_toml`, then the study `study_toml`, into one report root under `tmp`;
/// returns the root, the study's run directory and its report's prediction section.
fn study_beside_a_sweep(
    tmp: &Path,
    sweep_toml: &str,
    study_toml: &str,
) -> (PathBuf, PathBuf, String) {
    let reports = tmp.join("reports");
    for (name, toml) in [("sweep.toml", sweep_toml), ("study.toml", study_toml)] {
        let config = tmp.join(name);
        fs::write(&config, toml).unwrap();
        let output = run_command(&config, &reports, &[]).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        if name == "study.toml" {
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let run = PathBuf::from(stdout.lines().last().unwrap().trim());
            let report = fs::read_to_string(run.join("report.md")).unwrap();
            let start = report
                .find("## Training time against the step-time prediction")
                .expect("the section");
            let section = &report[start..];
            let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
            return (reports, run, section[..end].to_string());
        }
    }
    unreachable!("the study runs second")
}

#[test]
fn a_training_report_checks_its_times_against_the_sweep_of_its_model() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = STEP_TIME.replace("hidden = [64]", "hidden = [32]");
    let (reports, run, section) = study_beside_a_sweep(tmp.path(), &sweep, common::TRAIN);
    assert!(section.contains("Median absolute error"), "{section}");
    // The sweep timed SGD; the grid's Adam has no sweep and is not in the table.
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| sgd")).collect();
    assert_eq!(rows.len(), 4, "one per batch size:\n{section}");
    assert!(!section.contains("| adam"), "{section}");

    // The checks are kept as rows, and `--history` gathers them.
    assert!(run.join("prediction.csv").is_file());
    let past = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args([
            "predict",
            "--history",
            "--reports",
            reports.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&past.stdout);
    assert!(past.status.success(), "{text}");
    let listed = text
        .lines()
        .filter(|l| l.contains("| sgd | epochs |"))
        .count();
    assert_eq!(listed, 4, "{text}");
    assert!(text.contains("past checks: 4 cells in 1 runs"), "{text}");
}

#[test]
fn a_steps_to_target_report_checks_its_trials_against_the_sweep_of_each_workload() {
    let tmp = tempfile::tempdir().unwrap();
    let nesterov = STEP_TIME.replace("hidden = [64]", "hidden = [32]")
        + "\n[optimizer]\nname = \"sgd\"\nmomentum = 0.9\nnesterov = true\n";
    let (_, _, section) = study_beside_a_sweep(tmp.path(), &nesterov, common::TARGET);
    let rows = section
        .lines()
        .filter(|l| l.starts_with("| mlp/sgd-nesterov | all trials |"))
        .count();
    assert_eq!(rows, 4, "one per batch size:\n{section}");
}
