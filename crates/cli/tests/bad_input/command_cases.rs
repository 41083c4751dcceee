//! Bad command lines, dataset files and report directories.

use super::{case, owned, repo, Case, STEP};

/// A step-time report directory whose results.csv is `results`.
fn report_dir(case: Case, results: &str) -> Case {
    case.with("run/config.toml", STEP)
        .with("run/results.csv", results)
}

pub const RESULTS_HEADER: &str =
    "batch_size,round,sample,step_ms,status,backend,device,peak_mem_mb,message\n";

pub fn cases() -> Vec<Case> {
    vec![
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
            "submitting a sweep",
            &["submit", "step.toml", "--array", "2", "--out", "out"],
            1,
            &["does not split into shards", "batchlab run bad"],
        ),
        case(
            "submitting no tasks",
            &["submit", "train.toml", "--array", "0", "--out", "out"],
            1,
            &["--array 0", "from 1 to 1000"],
        ),
        case(
            "a time that would break the script",
            &["submit", "train.toml", "--array", "2", "--time", "1:00 x"],
            1,
            &["--time \"1:00 x\"", "2:00:00"],
        ),
        case(
            "status of a run that is not sharded",
            &["status", "run"],
            1,
            &["a step-time study, which does not split into shards"],
        )
        .with("run/config.toml", STEP),
        case(
            "status of a train run without shards",
            &["status", "run"],
            1,
            &["not a sharded run directory"],
        )
        .with("run/config.toml", super::TRAIN),
        case(
            "status of no run",
            &["status", "nowhere"],
            1,
            &["nowhere/config.toml", "not a batchlab report directory"],
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
                "--offline".into(),
            ],
            "an offline run on missing data",
            1,
            &["cifar10 is not on this machine"],
        ),
        owned(
            vec![
                "--data-dir".into(),
                "dd".into(),
                "check".into(),
                repo("experiments/accuracy-vs-batch.toml"),
                "--set".into(),
                "backend.name=flex".into(),
                "--offline".into(),
            ],
            "an offline check on missing data",
            1,
            &[
                "the config is valid, but `run` would stop here",
                "cifar10 is not on this machine",
            ],
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
