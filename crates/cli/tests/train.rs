//! The training studies end to end on few-sample fixture datasets in the real file formats:
//! every shipped study runs and writes its whole report, a fixed seed reproduces, resume neither
//! repeats nor loses trials, and missing data stops a run before anything is created.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
};

use batchlab_datasets::fixtures::write_pet_images;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn batchlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the batchlab binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `cats-vs-dogs/PetImages` with 10 photo-like JPEGs per class.
fn pets_fixture(data_dir: &Path) {
    write_pet_images(&data_dir.join("cats-vs-dogs"), 10, 1).unwrap();
}

/// `cifar10/cifar-10-batches-bin` with 8 records per file (label = record index % 10).
fn cifar_fixture(data_dir: &Path) {
    let dir = data_dir.join("cifar10/cifar-10-batches-bin");
    fs::create_dir_all(&dir).unwrap();
    let files = [
        "data_batch_1.bin",
        "data_batch_2.bin",
        "data_batch_3.bin",
        "data_batch_4.bin",
        "data_batch_5.bin",
        "test_batch.bin",
    ];
    for (f, name) in files.iter().enumerate() {
        let mut bytes = Vec::new();
        for i in 0..8usize {
            bytes.push((i % 10) as u8);
            bytes.extend((0..3072).map(|p| ((p * 7 + i * 31 + f * 11) % 256) as u8));
        }
        fs::write(dir.join(name), bytes).unwrap();
    }
}

const PETS_SMALL: &[&str] = &[
    "--set",
    "data.per_class=10",
    "--set",
    "data.split=[4,3,3]",
    "--set",
    "data.size=24",
    "--set",
    "model.input=[3,24,24]",
    "--set",
    "grid.batch_sizes=[2,4]",
    "--set",
    "grid.seeds=[0]",
    "--set",
    "grid.epochs=2",
];

const CIFAR_SMALL: &[&str] = &[
    "--backend",
    "flex",
    "--set",
    "data.validation=4",
    "--set",
    "data.train.resize=36",
    "--set",
    "data.train.crop=32",
    "--set",
    "data.eval.resize=36",
    "--set",
    "data.eval.crop=32",
    "--set",
    "model.input=[3,32,32]",
    "--set",
    "grid.batch_sizes=[4,5]",
    "--set",
    "grid.seeds=[0]",
    "--set",
    "grid.epochs=1",
];

/// Runs `experiment` with `extra` arguments against `data_dir`, reports under `out`; returns
/// the report directory.
fn run(experiment: &str, data_dir: &Path, out: &Path, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "--data-dir",
        data_dir.to_str().unwrap(),
        "run",
        experiment,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = batchlab(&args);
    assert!(
        output.status.success(),
        "{experiment} failed:\n{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    PathBuf::from(text(&output.stdout).lines().last().unwrap().trim())
}

/// `trial -> test_accuracy` from trials.csv (trial ids and accuracies are the 1st and 16th
/// columns; ids contain no commas).
fn accuracies(dir: &Path) -> Vec<(String, String)> {
    let text = common::table(&dir.join("trials.csv"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "test_accuracy").unwrap();
    let mut rows: Vec<(String, String)> = lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells[0].to_string(), cells[column].to_string())
        })
        .collect();
    rows.sort();
    rows
}

fn assert_report(dir: &Path) {
    for file in [
        "config.toml",
        "meta.json",
        "results.csv",
        "trials.csv",
        "summary.csv",
        "report.md",
        "accuracy_vs_batch.svg",
        "learning_curves.svg",
        "train_time.svg",
    ] {
        assert!(dir.join(file).is_file(), "{} lacks {file}", dir.display());
    }
}

#[test]
fn every_training_study_runs_end_to_end_on_fixtures() {
    let data = tempfile::tempdir().unwrap();
    pets_fixture(data.path());
    cifar_fixture(data.path());
    let out = tempfile::tempdir().unwrap();
    for (experiment, extra) in [
        ("sgd-vs-adam", PETS_SMALL),
        ("augmentation", PETS_SMALL),
        ("power-of-two", CIFAR_SMALL),
        ("accuracy-vs-batch", CIFAR_SMALL),
    ] {
        let dir = run(experiment, data.path(), out.path(), extra);
        assert_report(&dir);
        let trials = accuracies(&dir);
        let expected = match experiment {
            "sgd-vs-adam" => 8,  // 2 batch sizes x 2 optimizers x 2 budgets
            "augmentation" => 8, // 2 batch sizes x 2 variants x 2 budgets
            _ => 2,
        };
        assert_eq!(trials.len(), expected, "{experiment}: {trials:?}");
        let report = fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(
            report.contains("## The published shape beside the measured one"),
            "{experiment}: no published section"
        );
        if experiment != "accuracy-vs-batch" {
            // Its config's claims are judged; with the grid narrowed to batch 2 and 4 by
            // `--set`, those about batch sizes that did not run say so.
            assert!(
                report.contains("## The claims, judged"),
                "{experiment}: no verdicts"
            );
        }
    }
}

#[test]
fn a_fixed_seed_reproduces_and_resume_neither_repeats_nor_loses_trials() {
    let data = tempfile::tempdir().unwrap();
    pets_fixture(data.path());
    let out = tempfile::tempdir().unwrap();
    let first = run("sgd-vs-adam", data.path(), out.path(), PETS_SMALL);
    let second = run("sgd-vs-adam", data.path(), out.path(), PETS_SMALL);
    assert_ne!(first, second);
    assert_eq!(
        accuracies(&first),
        accuracies(&second),
        "same seed, same accuracy"
    );

    // Interrupt the second run: forget its last two trials, leave a half-written evaluation of
    // one of them behind, and mark the run unfinished.
    let trials_csv = second.join("trials.csv");
    let text = common::table(&trials_csv);
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[..lines.len() - 2].join("\n") + "\n";
    fs::write(&trials_csv, kept).unwrap();
    let lost: Vec<String> = lines[lines.len() - 2..]
        .iter()
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    let meta = second.join("meta.json");
    let status = fs::read_to_string(&meta)
        .unwrap()
        .replace("\"complete\"", "\"running\"");
    fs::write(&meta, status).unwrap();
    let resumed = run(
        "sgd-vs-adam",
        data.path(),
        out.path(),
        &[PETS_SMALL, &["--resume"]].concat(),
    );
    assert_eq!(resumed, second);
    assert_eq!(
        accuracies(&resumed),
        accuracies(&first),
        "every trial once, same results"
    );
    let results = common::table(&resumed.join("results.csv"));
    for trial in &lost {
        let evaluations = results
            .lines()
            .filter(|l| l.starts_with(&format!("{trial},")))
            .count();
        assert_eq!(
            evaluations, 2,
            "{trial}: one evaluation per epoch, none repeated"
        );
    }
}

#[test]
fn missing_data_is_fetched_first_or_stops_the_run_before_anything_is_created() {
    let empty = tempfile::tempdir().unwrap();
    let data_dir = empty.path().to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().to_str().unwrap();

    // `check` says what `run` would fetch, and fetches nothing.
    let check = batchlab(&["--data-dir", data_dir, "check", "sgd-vs-adam"]);
    assert!(check.status.success(), "{}", text(&check.stderr));
    let plan = text(&check.stdout);
    assert!(
        plan.contains("cats-vs-dogs is not in") && plan.contains("`run` fetches it first"),
        "{plan}"
    );

    // Offline: the files to put where.
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--data-dir",
            data_dir,
            "run",
            "sgd-vs-adam",
            "--out",
            out_dir,
        ];
        args.extend(extra);
        batchlab(&args)
    };
    let offline = run(&["--offline"]);
    assert_eq!(offline.status.code(), Some(1));
    let err = text(&offline.stderr);
    assert!(err.contains("cats-vs-dogs is not on this machine"), "{err}");
    assert!(err.contains("batchlab data fetch cats-vs-dogs"), "{err}");

    // No network (a mirror nobody listens on): the download's error, naming the file to put
    // where.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mirror = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let unreachable = run(&["--mirror", &mirror]);
    assert_eq!(unreachable.status.code(), Some(1));
    let err = text(&unreachable.stderr);
    assert!(
        err.contains("cannot download kagglecatsanddogs_5340.zip from"),
        "{err}"
    );
    assert!(err.contains(data_dir), "{err}");
    for output in [&check, &offline, &unreachable] {
        assert!(!text(&output.stderr).contains("panicked"));
    }
    assert_eq!(
        fs::read_dir(out.path()).unwrap().count(),
        0,
        "no report directory"
    );
}

#[test]
fn a_diverging_trial_is_recorded_and_the_grid_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("diverge.toml");
    fs::write(
        &config,
        r#"
[experiment]
name = "diverge"
kind = "train"
description = "an absurd learning rate next to a sane one, on the synthetic teacher task"

[model]
architecture = "mlp"
input = [1, 8, 8]
classes = 4
hidden = [32]

[data]
name = "synthetic"
shape = [1, 8, 8]
classes = 4
examples = [256, 64, 64]

[[optimizers]]
name = "sgd"
learning_rate = 1e7

[[optimizers]]
name = "adam"
learning_rate = 0.01

[grid]
batch_sizes = [16]
epochs = 8
evaluate_every = 30
"#,
    )
    .unwrap();
    let out = dir.path().join("reports");
    let report = run(config.to_str().unwrap(), dir.path(), &out, &[]);
    let trials = common::table(&report.join("trials.csv"));
    let status = |prefix: &str| {
        trials
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in {trials}"))
            .split(',')
            .nth(6)
            .unwrap()
            .to_string()
    };
    assert_eq!(status("b16-sgd-lr10000000-"), "diverged", "{trials}");
    assert_eq!(status("b16-adam-"), "ok", "{trials}");
    // Adam learns the teacher's labels well above chance (25%) in 128 steps, evaluated every
    // 30 steps and at the end.
    let (_, accuracy) = accuracies(&report)
        .into_iter()
        .find(|(t, _)| t.starts_with("b16-adam-"))
        .unwrap();
    assert!(
        accuracy.parse::<f64>().unwrap() > 0.4,
        "test accuracy {accuracy}"
    );
    let results = common::table(&report.join("results.csv"));
    let adam_steps: Vec<&str> = results
        .lines()
        .filter(|l| l.starts_with("b16-adam-"))
        .map(|l| l.split(',').nth(7).unwrap())
        .collect();
    assert_eq!(adam_steps, ["30", "60", "90", "120", "128"], "{results}");
}
