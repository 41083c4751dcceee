//! Bad configs: values through `--set`, `--set` itself, config files, the train grid,
//! dataset-dependent limits (steps-to-target searches in `target_cases`).

use super::{case, numbers, owned, repo, Case};

fn check(set: &str) -> [&str; 4] {
    ["check", "step.toml", "--set", set]
}
fn train(set: &str) -> [&str; 4] {
    ["check", "train.toml", "--set", set]
}

pub fn cases() -> Vec<Case> {
    let fmnist = repo("experiments/sgd-vs-adam-fmnist.toml");
    let fashion = |set: &str| {
        vec![
            "check".to_string(),
            fmnist.clone(),
            "--set".into(),
            set.into(),
        ]
    };
    let many_seeds = numbers("grid.seeds", 0..20_000);
    let wide_grid = numbers("grid.seeds", 0..5_000);
    let wide_batches = numbers("grid.batch_sizes", 1..102);
    let mut cases = vec![
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
            "a step-time local minimum of two sizes",
            &check("analysis.local_minimum_at=[127,128]"),
            1,
            &["analysis.local_minimum_at", "[below, at, above]"],
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
            &[
                "unknown variant `tpu`",
                "expected one of `flex`, `cuda`, `tch`, `tch-cuda`",
            ],
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
            "evaluation batch size neither a number nor train",
            &train("grid.eval_batch_size=\"test\""),
            1,
            &[
                "grid.eval_batch_size",
                "a batch size (a whole number of examples) or \"train\"",
            ],
        ),
        case(
            "inference claim at a fixed evaluation batch size",
            &train(
                r#"analysis.claims=[{claim="x",source="s",series="sgd",rule="inference-powers-of-two-flat",tolerance=0.07}]"#,
            ),
            1,
            &[
                "analysis.claims[0].rule",
                "needs grid.eval_batch_size = \"train\"",
            ],
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
        // --- claims a training report judges
        owned(
            fashion(
                r#"analysis.claims=[{claim="x",source="s",series="momentum",rule="accuracy-falls",batch_sizes=[16,128]}]"#,
            ),
            "a claim about a line the grid lacks",
            1,
            &["analysis.claims[0].series", "names no line", "sgd, adam"],
        ),
        owned(
            fashion(
                r#"analysis.claims=[{claim="x",source="s",series="sgd",rule="gets-better",batch_sizes=[16,128]}]"#,
            ),
            "an unknown rule",
            1,
            &["unknown variant `gets-better`", "accuracy-falls"],
        ),
        owned(
            fashion(
                r#"analysis.claims=[{claim="x",source="s",series="sgd",rule="accuracy-holds",batch_sizes=[16]}]"#,
            ),
            "an accuracy rule with one batch size",
            1,
            &["analysis.claims[0].batch_sizes", "[from, to]"],
        ),
        owned(
            fashion(
                r#"analysis.claims=[{claim="x",source="s",series="sgd",rule="powers-of-two-flat",tolerance=3}]"#,
            ),
            "a tolerance in percent",
            1,
            &["analysis.claims[0].tolerance", "fraction in (0, 1)"],
        ),
        owned(
            fashion(
                r#"analysis.claims=[{claim="x",source="s",series="sgd",rule="local-minimum-at",batch_sizes=[129,128,127]}]"#,
            ),
            "a local minimum's batch sizes out of order",
            1,
            &["analysis.claims[0].batch_sizes", "[below, at, above]"],
        ),
    ];
    cases.push(
        case(
            "a config file of megabytes",
            &["check", "huge.toml"],
            1,
            &["huge.toml", "bytes (1 MiB) are refused before parsing"],
        )
        .with("huge.toml", huge_config()),
    );
    cases.extend(super::find_batch_cases::cases());
    cases.extend(super::target_cases::cases());
    cases
}

/// A step-time config listing two million batch sizes one by one (about 16 MB).
fn huge_config() -> Vec<u8> {
    let sizes: Vec<String> = (1..=2_000_000u32).map(|b| b.to_string()).collect();
    format!(
        "[experiment]\nname = \"huge\"\nkind = \"step-time\"\n\n[model]\narchitecture = \"mlp\"\ninput = [1, 8, 8]\nclasses = 4\n\n[sweep]\nbatch_sizes = [{}]\n",
        sizes.join(", ")
    )
    .into_bytes()
}
