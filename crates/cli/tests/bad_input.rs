//! Bad input, case by case: configs, `--set`, command-line flags, report directories and
//! dataset files. Each case gets a clear error naming what is wrong, the exit code a user can
//! script against (1 for bad input found by batchlab, 2 for arguments clap refuses), and never
//! a panic or an abort.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use common::{TARGET, TRAIN};

const STEP: &str = r#"
[experiment]
name = "bad"
kind = "step-time"
description = "bad input"

[model]
architecture = "mlp"
input = [1, 8, 8]
classes = 4
hidden = [16]

[sweep]
batch_sizes = [1, 2]
samples = 2
rounds = 1
"#;

/// One bad input: files written into a scratch directory (the working directory of the
/// command), the command's arguments, and what must come back.
struct Case {
    name: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    args: Vec<String>,
    code: i32,
    words: &'static [&'static str],
}

fn case(name: &'static str, args: &[&str], code: i32, words: &'static [&'static str]) -> Case {
    Case {
        name,
        files: vec![
            ("step.toml", STEP.into()),
            ("train.toml", TRAIN.into()),
            ("target.toml", TARGET.into()),
        ],
        args: args.iter().map(|a| a.to_string()).collect(),
        code,
        words,
    }
}

impl Case {
    fn with(mut self, path: &'static str, content: impl Into<Vec<u8>>) -> Self {
        self.files.push((path, content.into()));
        self
    }
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// A step-time report directory whose results.csv is `results`.
fn report_dir(case: Case, results: &str) -> Case {
    case.with("run/config.toml", STEP)
        .with("run/results.csv", results)
}

const RESULTS_HEADER: &str =
    "batch_size,round,sample,step_ms,status,backend,device,peak_mem_mb,message\n";

fn cases() -> Vec<Case> {
    fn check(set: &str) -> [&str; 4] {
        ["check", "step.toml", "--set", set]
    }
    fn train(set: &str) -> [&str; 4] {
        ["check", "train.toml", "--set", set]
    }
    fn target(set: &str) -> [&str; 4] {
        ["check", "target.toml", "--set", set]
    }
    let fmnist = repo("experiments/sgd-vs-adam-fmnist.toml");
    let fashion = |set: &str| {
        vec![
            "check".to_string(),
            fmnist.clone(),
            "--set".into(),
            set.into(),
        ]
    };
    let many_seeds = format!(
        "grid.seeds=[{}]",
        (0..20_000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let wide_grid = format!(
        "grid.seeds=[{}]",
        (0..5_000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let wide_batches = format!(
        "grid.batch_sizes=[{}]",
        (1..=101)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let owned = |args: Vec<String>, name, code, words| {
        let mut c = case(name, &[], code, words);
        c.args = args;
        c
    };
    vec![
        // --- step-time config values, through --set
        case(
            "unknown key",
            &check("sweep.oops=1"),
            1,
            &["unknown field `oops`", "expected one of"],
        ),
        case(
            "wrong type",
            &check("sweep.rounds=\"many\""),
            1,
            &["invalid type", "sweep.rounds"],
        ),
        case(
            "negative count",
            &check("sweep.rounds=-1"),
            1,
            &["invalid value", "sweep.rounds"],
        ),
        case(
            "range reversed",
            &check("sweep.batch_range=[5,1]"),
            1,
            &["sweep.batch_range", "1 <= from <= to"],
        ),
        case(
            "range too wide",
            &check("sweep.batch_range=[1,4294967295]"),
            1,
            &["sweep.batch_range", "<= 16777216"],
        ),
        case(
            "range of too many points",
            &check("sweep.batch_range=[1,1000000]"),
            1,
            &["1000000 batch sizes planned; at most 10000"],
        ),
        case(
            "batch size zero",
            &check("sweep.batch_sizes=[0]"),
            1,
            &["sweep.batch_sizes", "batch sizes must be 1 to"],
        ),
        case(
            "batch size too large",
            &check("sweep.batch_sizes=[20000000]"),
            1,
            &["got 20000000"],
        ),
        case(
            "batch size repeated",
            &check("sweep.batch_sizes=[2,2]"),
            1,
            &["sweep.batch_sizes", "2 is listed twice"],
        ),
        case(
            "no batch sizes",
            &check("sweep.batch_sizes=[]"),
            1,
            &["no batch sizes"],
        ),
        case(
            "zero rounds",
            &check("sweep.rounds=0"),
            1,
            &["sweep.rounds", "expected at least 1"],
        ),
        case(
            "zero samples",
            &check("sweep.samples=0"),
            1,
            &["sweep.samples", "expected at least 1"],
        ),
        case(
            "rounds beyond any run",
            &check("sweep.rounds=1000000000000"),
            1,
            &["2000000000000 visits", "at most 1000000"],
        ),
        case(
            "samples beyond any run",
            &check("sweep.samples=100000000"),
            1,
            &["sweep.samples", "steps (visits x (warm-up + samples))"],
        ),
        case(
            "too few resamples",
            &check("analysis.bootstrap_resamples=10"),
            1,
            &["at least 100 resamples"],
        ),
        case(
            "unknown backend",
            &check("backend.name=tpu"),
            1,
            &["unknown variant `tpu`", "`flex` or `cuda`"],
        ),
        case(
            "unknown architecture",
            &check("model.architecture=vgg17"),
            1,
            &["vgg17", "vgg16"],
        ),
        case(
            "no classes",
            &check("model.classes=0"),
            1,
            &["key `model`", "classes must be >= 1"],
        ),
        case(
            "unknown kind",
            &check("experiment.kind=magic"),
            1,
            &["unknown kind \"magic\"", "step-time"],
        ),
        case(
            "name escaping the report tree",
            &check("experiment.name=../x"),
            1,
            &["experiment.name", "names a directory"],
        ),
        case(
            "nesterov without momentum",
            &check("optimizer.nesterov=true"),
            1,
            &["Nesterov needs"],
        ),
        // --- --set itself
        case(
            "--set without a value",
            &check("sweep.rounds"),
            1,
            &["expected key=value"],
        ),
        case(
            "--set with an empty key part",
            &check("a..b=1"),
            1,
            &["dotted key"],
        ),
        case(
            "--set into a value that is not a table",
            &check("sweep.rounds.x=1"),
            1,
            &["sweep.rounds"],
        ),
        // --- files
        case(
            "syntax error",
            &["check", "broken.toml"],
            1,
            &["broken.toml:1:12", "unclosed table"],
        )
        .with("broken.toml", "[experiment\nname = \"x\"\n"),
        case(
            "no [experiment]",
            &["check", "headless.toml"],
            1,
            &["headless.toml", "missing field `experiment`"],
        )
        .with("headless.toml", "[sweep]\nrounds = 1\n"),
        case(
            "empty file",
            &["check", "empty.toml"],
            1,
            &["empty.toml", "missing field `experiment`"],
        )
        .with("empty.toml", ""),
        case(
            "not UTF-8",
            &["check", "binary.toml"],
            1,
            &["binary.toml", "cannot read the file"],
        )
        .with("binary.toml", vec![0xff, 0xfe, 0x00, 0x41]),
        case(
            "a directory as the config",
            &["check", "somedir"],
            1,
            &["somedir: is a directory"],
        )
        .with("somedir/x", ""),
        case(
            "missing file",
            &["check", "nothere.toml"],
            1,
            &["nothere.toml: no such file"],
        ),
        case(
            "unknown experiment name",
            &["check", "nothere"],
            1,
            &["no experiment named \"nothere\""],
        ),
        // --- train grid
        case(
            "train batch size repeated",
            &train("grid.batch_sizes=[16,16]"),
            1,
            &["grid.batch_sizes", "16 is listed twice"],
        ),
        case(
            "train seed repeated",
            &train("grid.seeds=[0,0]"),
            1,
            &["grid.seeds", "0 is listed twice"],
        ),
        case(
            "train no seeds",
            &train("grid.seeds=[]"),
            1,
            &["at least one seed"],
        ),
        case(
            "train zero epochs",
            &train("grid.epochs=0"),
            1,
            &["grid.epochs", "expected at least 1"],
        ),
        case(
            "train evaluate every 0",
            &train("grid.evaluate_every=0"),
            1,
            &["grid.evaluate_every"],
        ),
        case(
            "train divergence factor",
            &train("grid.divergence_factor=0.5"),
            1,
            &["grid.divergence_factor", "above 1"],
        ),
        case(
            "train unknown schedule",
            &train("schedule.kind=step"),
            1,
            &["schedule.kind", "constant, linear or cosine"],
        ),
        case(
            "train one class",
            &train("data.classes=1"),
            1,
            &["data.classes", "at least 2"],
        ),
        case(
            "train empty image",
            &train("data.shape=[0,8,8]"),
            1,
            &["data.shape", "at least 1"],
        ),
        case(
            "train too many seeds",
            &["check", "train.toml", "--set", &many_seeds],
            1,
            &["grid.seeds", "20000 entries; at most 10000"],
        ),
        case(
            "train grid beyond any run",
            &[
                "check",
                "train.toml",
                "--set",
                &wide_grid,
                "--set",
                &wide_batches,
            ],
            1,
            &["trials (batch sizes x seeds", "at most 1000000"],
        ),
        // --- dataset-dependent limits, known before any file is read
        owned(
            fashion("data.train_examples=0"),
            "no training examples",
            1,
            &["data.train_examples", "expected at least 1"],
        ),
        owned(
            fashion("data.validation=70000"),
            "hold-out larger than the data",
            1,
            &["data.validation", "not less than fashion-mnist's 60000"],
        ),
        owned(
            fashion("data.train_examples=59500"),
            "more examples than remain",
            1,
            &["data.train_examples", "more than the 59000"],
        ),
        owned(
            fashion("data.per_class=10"),
            "a key of another dataset",
            1,
            &["data.per_class", "not used by fashion-mnist"],
        ),
        // --- steps-to-target
        case(
            "search batch size repeated",
            &target("search.batch_sizes=[8,8]"),
            1,
            &["search.batch_sizes", "8 is listed twice"],
        ),
        case(
            "search zero trials",
            &target("search.trials=0"),
            1,
            &["search.trials", "expected at least 1"],
        ),
        case(
            "search beyond any run",
            &target("search.trials=1000000"),
            1,
            &["4000000 trials", "at most 1000000"],
        ),
        case(
            "search no workloads",
            &target("workloads=[]"),
            1,
            &["at least one [[workloads]]"],
        ),
        // --- command-line flags
        case(
            "shard out of range",
            &["run", "step.toml", "--shard", "3/2"],
            2,
            &["--shard", "0 <= i < n"],
        ),
        case(
            "shard not i/n",
            &["run", "step.toml", "--shard", "x"],
            2,
            &["--shard", "expected i/n"],
        ),
        case(
            "unknown --backend",
            &["run", "step.toml", "--backend", "tpu"],
            2,
            &["'tpu'", "possible values"],
        ),
        case(
            "sharding a sweep",
            &["run", "step.toml", "--shard", "0/2", "--out", "out"],
            1,
            &["does not split into shards"],
        ),
        case(
            "nothing to resume",
            &["run", "step.toml", "--resume", "--out", "out"],
            1,
            &["no runs to resume"],
        ),
        case(
            "unknown command",
            &["frobnicate"],
            2,
            &["unrecognized subcommand"],
        ),
        case(
            "bad --input",
            &["models", "--input", "3,x"],
            2,
            &["expected C,H,W"],
        ),
        case(
            "unknown dataset",
            &["data", "info", "nope"],
            2,
            &["unknown dataset `nope`"],
        ),
        // --- dataset files
        case(
            "a gzip that is not IDX",
            &["--data-dir", "dd", "data", "info", "mnist"],
            1,
            &["dd/mnist/train-images-idx3-ubyte.gz", "not an IDX file"],
        )
        .with("dd/mnist/train-images-idx3-ubyte.gz", "garbage")
        .with("dd/mnist/train-labels-idx1-ubyte.gz", "garbage")
        .with("dd/mnist/t10k-images-idx3-ubyte.gz", "garbage")
        .with("dd/mnist/t10k-labels-idx1-ubyte.gz", "garbage"),
        case(
            "a truncated IDX header",
            &["--data-dir", "dd", "data", "info", "mnist"],
            1,
            &["dd/mnist/train-images-idx3-ubyte", "truncated"],
        )
        .with(
            "dd/mnist/train-images-idx3-ubyte",
            b"\x00\x00\x08\x03\x00\x00\x00\x05".to_vec(),
        )
        .with(
            "dd/mnist/train-labels-idx1-ubyte",
            b"\x00\x00\x08\x01\x00\x00\x00\x05".to_vec(),
        )
        .with(
            "dd/mnist/t10k-images-idx3-ubyte",
            b"\x00\x00\x08\x01\x00\x00\x00\x05".to_vec(),
        )
        .with(
            "dd/mnist/t10k-labels-idx1-ubyte",
            b"\x00\x00\x08\x01\x00\x00\x00\x05".to_vec(),
        ),
        owned(
            vec![
                "--data-dir".into(),
                "dd".into(),
                "run".into(),
                repo("experiments/accuracy-vs-batch.toml"),
                "--backend".into(),
                "flex".into(),
                "--out".into(),
                "out".into(),
            ],
            "a run on missing data",
            1,
            &["cifar10"],
        ),
        owned(
            vec![
                "--data-dir".into(),
                "dd".into(),
                "check".into(),
                repo("experiments/accuracy-vs-batch.toml"),
                "--set".into(),
                "backend.name=flex".into(),
            ],
            "check on missing data",
            1,
            &["the config is valid, but `run` would stop here", "cifar10"],
        ),
        // --- report directories
        case(
            "report of a directory without a run",
            &["report", "emptydir"],
            1,
            &["not a batchlab report directory"],
        )
        .with("emptydir/x", ""),
        report_dir(
            case(
                "report without results",
                &["report", "run"],
                1,
                &["results.csv"],
            ),
            RESULTS_HEADER,
        )
        .with("run/results.csv", ""),
        report_dir(
            case(
                "report with a wrong header",
                &["report", "run"],
                1,
                &["results.csv", "header"],
            ),
            "a,b\n1,2\n",
        ),
        report_dir(
            case(
                "report with a word for a time",
                &["report", "run"],
                1,
                &["results.csv", "line 2", "step_ms", "expected a number"],
            ),
            &format!("{RESULTS_HEADER}1,0,0,fast,ok,flex,cpu,,\n"),
        ),
        report_dir(
            case(
                "report with a negative time",
                &["report", "run"],
                1,
                &[
                    "results.csv",
                    "line 3",
                    "(`step_ms`)",
                    "-5 is not a possible time",
                ],
            ),
            &format!("{RESULTS_HEADER}1,0,0,2.5,ok,flex,cpu,,\n1,0,1,-5,ok,flex,cpu,,\n"),
        ),
        report_dir(
            case(
                "report with an unknown status",
                &["report", "run"],
                1,
                &["results.csv", "line 2", "unknown status `weird`"],
            ),
            &format!("{RESULTS_HEADER}1,0,0,2.5,weird,flex,cpu,,\n"),
        ),
        report_dir(
            case(
                "report with an infinite size",
                &["report", "run"],
                1,
                &["peak_mem_mb", "inf is not a possible"],
            ),
            &format!("{RESULTS_HEADER}1,0,0,2.5,ok,flex,cpu,inf,\n"),
        ),
        case(
            "report with a bad config",
            &["report", "run"],
            1,
            &["config.toml", "unknown field `oops`"],
        )
        .with("run/config.toml", format!("{STEP}oops = 1\n"))
        .with("run/results.csv", RESULTS_HEADER),
    ]
}

fn run(case: &Case) -> Result<(), String> {
    let scratch = tempfile::tempdir().unwrap();
    for (path, content) in &case.files {
        let path: PathBuf = scratch.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
    }
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(&case.args)
        .current_dir(scratch.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut problems = Vec::new();
    if output.status.code() != Some(case.code) {
        problems.push(format!(
            "exit {:?}, expected {}",
            output.status.code(),
            case.code
        ));
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        problems.push("a panic".into());
    }
    for word in case.words {
        if !stderr.contains(word) {
            problems.push(format!("no `{word}`"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}\n  stderr: {}",
            case.name,
            problems.join("; "),
            stderr.trim()
        ))
    }
}

#[test]
fn every_bad_input_gets_a_clear_error_and_no_panic() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|c| run(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn a_row_cut_by_a_crash_is_reported_not_dropped_silently() {
    let scratch = tempfile::tempdir().unwrap();
    let run = scratch.path().join("run");
    fs::create_dir_all(&run).unwrap();
    fs::write(run.join("config.toml"), STEP).unwrap();
    fs::write(
        run.join("results.csv"),
        format!("{RESULTS_HEADER}1,0,0,2.5,ok,flex,cpu,,\n1,0,1,2.7,ok,flex,cpu,,\n2,0,0,3."),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(["report", "run"])
        .current_dir(scratch.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("results.csv: its last row is incomplete (8 bytes"),
        "{stdout}"
    );
}
