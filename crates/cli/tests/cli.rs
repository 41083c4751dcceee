//! The `batchlab` binary end to end: commands, a tiny sweep in child processes, resume, re-render,
//! crash isolation, and clear errors.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
};

const TINY: &str = r#"
[experiment]
name = "tiny"
kind = "step-time"
description = "a few-second sweep for the tests"

[model]
architecture = "mlp"
input = [1, 8, 8]
classes = 4
hidden = [16]

[sweep]
batch_sizes = [1, 2, 3, 4]
warmup_steps = 1
samples = 3
rounds = 2

[analysis]
claimed_jumps = [3]
bootstrap_resamples = 200
"#;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn batchlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn tiny_config(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("tiny.toml");
    fs::write(&path, format!("{TINY}{extra}")).unwrap();
    path
}

fn last_line(output: &Output) -> PathBuf {
    let stdout = text(&output.stdout);
    PathBuf::from(stdout.trim_end().lines().last().expect("stdout has lines"))
}

fn run_ok(args: &[&str]) -> PathBuf {
    let output = batchlab(args);
    assert!(
        output.status.success(),
        "batchlab {args:?} failed:\n{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    last_line(&output)
}

const REPORT_FILES: [&str; 7] = [
    "config.toml",
    "meta.json",
    "results.csv",
    "summary.csv",
    "step_time.svg",
    "throughput.svg",
    "report.md",
];

fn ok_rows(results: &Path) -> Vec<(u32, u32, u32)> {
    let csv = common::table(results);
    let mut rows: Vec<(u32, u32, u32)> = csv
        .lines()
        .skip(1)
        .filter(|l| l.contains(",ok,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    rows.sort_unstable();
    rows
}

#[test]
fn a_sweep_writes_the_whole_report_and_resumes_without_repeating() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tiny_config(tmp.path(), "");
    let out = tmp.path().join("reports");
    let dir = run_ok(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(dir.starts_with(out.join("tiny")), "{}", dir.display());
    for file in REPORT_FILES {
        assert!(
            dir.join(file).is_file(),
            "{file} missing from {}",
            dir.display()
        );
    }
    let all = ok_rows(&dir.join("results.csv"));
    assert_eq!(all.len(), 4 * 2 * 3, "4 batch sizes x 2 rounds x 3 samples");
    let meta = fs::read_to_string(dir.join("meta.json")).unwrap();
    assert!(meta.contains("\"status\": \"complete\""), "{meta}");
    assert!(meta.contains("\"burn_version\": \"0.21.0\""), "{meta}");
    // The worker processes' fast paths, counted: an MLP's dense layers and updates, no
    // convolution.
    let paths: serde_json::Value = serde_json::from_str(&meta).unwrap();
    let paths = &paths["path_counts"];
    assert!(paths["dense"]["fast"].as_u64() > Some(0), "{meta}");
    assert!(paths["updates"]["fast"].as_u64() > Some(0), "{meta}");
    assert_eq!(paths["convolutions"]["fast"].as_u64(), Some(0), "{meta}");
    assert!(fs::read_link(out.join("tiny/latest")).is_ok());

    // Interrupt it after three visits: keep the header and the first 9 rows, mark it running.
    let csv = common::table(&dir.join("results.csv"));
    let kept: Vec<&str> = csv.lines().take(1 + 9).collect();
    fs::write(dir.join("results.csv"), format!("{}\n", kept.join("\n"))).unwrap();
    let first_rows = ok_rows(&dir.join("results.csv"));
    fs::write(
        dir.join("meta.json"),
        meta.replace("\"complete\"", "\"running\""),
    )
    .unwrap();

    let resumed = run_ok(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
    ]);
    assert_eq!(resumed, dir, "resume continues the same directory");
    let after = ok_rows(&dir.join("results.csv"));
    assert_eq!(after, all, "every (batch, round, sample) exactly once");
    let csv_after = common::table(&dir.join("results.csv"));
    assert!(
        csv_after.starts_with(&kept.join("\n")),
        "finished rows kept as they were"
    );
    assert_eq!(first_rows.len(), 9);

    // Nothing left to resume now.
    let again = batchlab(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
    ]);
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("nothing to resume"),
        "{}",
        text(&again.stderr)
    );

    // The report re-renders from results.csv alone.
    for file in [
        "summary.csv",
        "report.md",
        "step_time.svg",
        "throughput.svg",
    ] {
        fs::remove_file(dir.join(file)).unwrap();
    }
    let rendered = run_ok(&["report", dir.to_str().unwrap()]);
    assert_eq!(rendered, dir);
    for file in REPORT_FILES {
        assert!(dir.join(file).is_file(), "{file} not re-rendered");
    }
    let report = fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("tiny"));

    // PNG copies on demand, gone again at the next plain rendering (no figure older than
    // its SVG); the raw table as CSV on demand, byte for byte.
    run_ok(&["report", dir.to_str().unwrap(), "--png"]);
    for png in ["step_time.png", "throughput.png"] {
        let bytes = fs::read(dir.join(png)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{png}");
    }
    run_ok(&["report", dir.to_str().unwrap()]);
    assert!(!dir.join("step_time.png").exists());
    let listed = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(["csv", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    assert_eq!(
        fs::read(dir.join("csv/results.csv")).unwrap(),
        fs::read(dir.join("results.csv")).unwrap()
    );
}

#[test]
fn a_point_that_kills_its_process_is_recorded_and_the_sweep_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    // Batch 5,000,000 needs more memory than the 2 GB address-space limit set below: the
    // allocation fails, the worker aborts, and the supervisor records the point as oom.
    let config = tiny_config(tmp.path(), "").to_str().unwrap().to_string();
    fs::write(
        &config,
        TINY.replace(
            "batch_sizes = [1, 2, 3, 4]",
            "batch_sizes = [1, 2, 5000000]",
        ),
    )
    .unwrap();
    let out = tmp.path().join("reports");
    let script = format!(
        "ulimit -v 2000000 && exec {} run {config} --out {}",
        env!("CARGO_BIN_EXE_batchlab"),
        out.display()
    );
    let output = Command::new("bash")
        .args(["-c", &script])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let dir = last_line(&output);
    let csv = common::table(&dir.join("results.csv"));
    let failed: Vec<&str> = csv.lines().filter(|l| l.starts_with("5000000,")).collect();
    assert_eq!(
        failed.len(),
        1,
        "one failure row, no retry in the next round:\n{csv}"
    );
    assert!(failed[0].contains(",oom,"), "{}", failed[0]);
    assert_eq!(ok_rows(&dir.join("results.csv")).len(), 2 * 2 * 3);
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert!(summary.contains("oom"), "{summary}");
}

#[test]
fn list_check_and_models_work_from_the_repository_root() {
    let list = batchlab(&["list"]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let listed = text(&list.stdout);
    for name in ["quickstart", "vgg16-step-time", "vgg16-step-time-cpu"] {
        assert!(
            listed.lines().any(|l| l.starts_with(name)),
            "{name} not listed:\n{listed}"
        );
    }
    assert!(listed.contains("reproduces: seed 000/001"));

    let check = batchlab(&["check", "quickstart"]);
    assert!(check.status.success(), "{}", text(&check.stderr));

    let models = batchlab(&["models"]);
    let table = text(&models.stdout);
    assert!(table.contains("138,357,544"), "{table}");
    assert!(table.contains("25,557,032"), "{table}");
}

#[test]
fn check_and_run_state_the_expected_wall_time_from_the_best_source_here() {
    let dir = tempfile::tempdir().unwrap();
    let config = tiny_config(dir.path(), "");
    let config = config.to_str().unwrap();
    let out = dir.path().join("out");
    let root = format!("output.dir={}", out.display());
    let check = || {
        let output = batchlab(&["check", config, "--set", &root]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    // 4 batch sizes x 2 rounds x (1 warm-up + 3 timed steps), every one planned.
    let before = check();
    assert!(
        before.contains("expected wall time: about")
            && before.contains("for 32 training steps (every planned step"),
        "{before}"
    );
    // No sweep of this model under the report root yet: a few of its steps timed here.
    assert!(
        before.contains(
            "mlp 1x8x8 hidden 16 with sgd: no sweep of it on this machine: 2 steps timed here at batch 1"
        ),
        "{before}"
    );
    // `run` says the same on stderr before it starts (non-interactive: no question).
    let output = batchlab(&["run", config, "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("expected wall time: about"),
        "{}",
        text(&output.stderr)
    );
    // Its own sweep now exists on this machine: the estimate reads it.
    let run = last_line(&output);
    let after = check();
    assert!(
        after.contains(&format!(
            "mlp 1x8x8 hidden 16 with sgd: its own sweep on this machine, {}",
            run.display()
        )),
        "{after}"
    );
}

#[test]
fn a_reader_that_stops_early_ends_the_command_quietly() {
    // `batchlab check NAME | head`: the reader closes the pipe before the command writes
    // (closed before the command starts, so that a fast command cannot fill the pipe first).
    for args in [&["check", "quickstart"][..], &["list"], &["models"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
            .args(args)
            .current_dir(root())
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(141), "{args:?}: {stderr}");
    }
}

#[test]
fn bad_input_gets_a_clear_error_and_no_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tiny_config(tmp.path(), "");
    let bad = tmp.path().join("bad.toml");
    fs::write(&bad, TINY.replace("rounds = 2", "roundz = 2")).unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["check".into(), bad.display().to_string()],
            ":17:1: key `sweep.roundz`: unknown field",
        ),
        (
            vec!["check".into(), "no-such-experiment".into()],
            "Known experiments:",
        ),
        (
            vec![
                "check".into(),
                config.display().to_string(),
                "--set".into(),
                "sweep.rounds=0".into(),
            ],
            "sweep.rounds",
        ),
        (
            vec![
                "check".into(),
                config.display().to_string(),
                "--set".into(),
                "model.architecture=vgg16".into(),
            ],
            "vgg16 needs height and width >= 32",
        ),
        (
            vec!["report".into(), tmp.path().display().to_string()],
            "not a batchlab report directory",
        ),
        #[cfg(not(feature = "cuda"))]
        (
            vec![
                "run".into(),
                config.display().to_string(),
                "--backend".into(),
                "cuda".into(),
                "--out".into(),
                tmp.path().join("r").display().to_string(),
            ],
            "--features cuda",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = batchlab(&args);
        let stderr = text(&output.stderr);
        assert!(!output.status.success(), "{args:?} should fail");
        assert!(
            stderr.contains(expected),
            "{args:?}: expected {expected:?} in:\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?} panicked:\n{stderr}");
    }
}

#[test]
fn data_commands_report_what_is_there_and_how_to_get_the_rest() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let list = batchlab(&["--data-dir", dir, "data", "list"]);
    assert!(list.status.success());
    let listed = text(&list.stdout);
    assert!(
        listed.contains("cifar10        missing: batchlab data fetch cifar10"),
        "{listed}"
    );
    assert!(listed.contains("synthetic      present"), "{listed}");

    let info = batchlab(&["data", "info", "cats-vs-dogs", "--data-dir", dir]);
    assert_eq!(info.status.code(), Some(1));
    let err = text(&info.stderr);
    assert!(err.contains("batchlab data fetch cats-vs-dogs"), "{err}");
    assert!(err.contains("kagglecatsanddogs_5340.zip"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let synthetic = batchlab(&["--data-dir", dir, "data", "info", "synthetic"]);
    assert!(synthetic.status.success());
    assert!(text(&synthetic.stdout).contains("images: 1x28x28, 10 classes"));

    let unknown = batchlab(&["data", "fetch", "imagenet"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("expected one of cifar10, cats-vs-dogs"));
}

#[test]
fn a_measured_warm_up_keeps_its_steps_and_the_report_shows_the_first_step_cost() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tiny_config(tmp.path(), "");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        text.replace(
            "warmup_steps = 1\n",
            "warmup_steps = 1\nwarmup_max_steps = 5\n",
        ),
    )
    .unwrap();
    let out = tmp.path().join("reports");
    let dir = run_ok(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let warmup = common::table(&dir.join("warmup.csv"));
    let mut lines = warmup.lines();
    assert_eq!(lines.next(), Some("batch_size,round,step,step_ms,ended"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // Every visit (4 batch sizes x 2 rounds) kept its warm-up: at least 1 step, at most 5,
    // ended by the rule or the cap.
    let visits: std::collections::BTreeSet<(&str, &str)> =
        rows.iter().map(|r| (r[0], r[1])).collect();
    assert_eq!(visits.len(), 8, "{warmup}");
    assert!(
        rows.iter().all(|r| r[2].parse::<u32>().unwrap() < 5),
        "{warmup}"
    );
    assert!(
        rows.iter().all(|r| r[4] == "settled" || r[4] == "cap"),
        "{warmup}"
    );
    let report = fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("## Warm-up: what the first steps cost"),
        "{report}"
    );
    assert!(
        report.contains("at least 1 and at most 5 warm-up steps dropped"),
        "{report}"
    );
}
