//! `batchlab bench`: training steps on every backend built in (interleaved, with the ratio to
//! flex), the harness's overhead on each, the data loader, and the split of a training epoch.

use std::path::Path;

use anyhow::{anyhow, Context, Result};
use batchlab_experiments::{
    backend::{
        built_backends, conv_choices, ensure_available, fast_paths, kernels, libtorch_version,
        threads,
    },
    bench::{self, Rounds},
    config::{BackendConfig, BackendKind},
    epoch_bench::{data_percent_summary, epoch_splits},
    loader_bench, products_bench,
};

use crate::bar::Bar;
use crate::out::outln;

/// Which benchmarks `batchlab bench --only` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Only {
    /// Every one.
    All,
    /// The training steps.
    Steps,
    /// The data loader.
    Loader,
    /// The split of a training epoch.
    Epoch,
    /// The MLP step's matrix products alone, on flex's kernel and on batchlab's packed one.
    Products,
}

impl Only {
    /// Whether `group` runs.
    fn runs(self, group: Only) -> bool {
        self == Only::All || self == group
    }
}

/// What `batchlab bench` was asked for.
pub struct BenchArgs<'a> {
    /// Timed steps per visit.
    pub samples: usize,
    /// Interleaved rounds of the step benchmarks.
    pub rounds: usize,
    /// Backends named on the command line; none: every backend built in that can run here.
    pub backends: &'a [String],
    /// Which benchmarks.
    pub only: Only,
    /// Repeats of each loader figure.
    pub repeats: usize,
    /// Each backend that has fast paths on burn's own ops too.
    pub burn_ops: bool,
    /// The step cases to time, by [`bench::Case::key`]; none: all three.
    pub cases: &'a [String],
    /// The step cases' batch size, in place of each one's own.
    pub batch: Option<usize>,
}

pub fn bench(args: BenchArgs, data_dir: &Path) -> Result<()> {
    let mut backends = backends(args.backends)?;
    if args.burn_ops {
        let burn: Vec<BackendConfig> = backends
            .iter()
            .filter(|b| b.name.has_fast_paths())
            .map(|b| BackendConfig {
                fast_paths: false,
                ..b.clone()
            })
            .collect();
        backends.extend(burn);
    }
    let cases =
        bench::select_cases(args.cases, args.batch).map_err(|e| anyhow!("--case/--batch: {e}"))?;
    if args.only.runs(Only::Steps) {
        let picked = !args.cases.is_empty();
        step_benchmarks(&backends, &cases, args.rounds, args.samples, picked)?;
    }
    if args.only.runs(Only::Epoch) {
        epoch_benchmark(data_dir)?;
    }
    if args.only.runs(Only::Products) {
        products_benchmark(args.rounds)?;
    }
    if args.only.runs(Only::Loader) {
        loader_benchmark(
            &backends[0],
            // The small CNN's images, whichever step cases `--case` chose.
            &bench::standard_cases()[1],
            args.samples,
            args.repeats,
            data_dir,
        )?;
    }
    Ok(())
}

/// The backends named, each checked; with none named, every backend built in, leaving out (and
/// saying why) those that cannot run here, such as a GPU backend on a machine without one.
fn backends(named: &[String]) -> Result<Vec<BackendConfig>> {
    let config = |name| BackendConfig {
        name,
        ..BackendConfig::default()
    };
    if named.is_empty() {
        let mut usable = Vec::new();
        for kind in built_backends() {
            match ensure_available(&config(kind)) {
                Ok(()) => usable.push(config(kind)),
                Err(why) => outln!("{kind}: left out ({why})"),
            }
        }
        return Ok(usable);
    }
    named
        .iter()
        .map(|name| {
            let kind = BackendKind::parse(name).map_err(|e| anyhow!("--backend: {e}"))?;
            ensure_available(&config(kind)).map_err(|e| anyhow!("--backend {name}: {e}"))?;
            Ok(config(kind))
        })
        .collect()
}

/// What ran: kernels, threads, the libtorch release.
fn describe(config: &BackendConfig) -> String {
    let mut parts = vec![format!("{} threads", threads(config))];
    let kernels = kernels(config);
    if !kernels.is_empty() {
        parts.push(format!("{kernels} matrix kernels"));
    }
    let libtorch = libtorch_version(config);
    if !libtorch.is_empty() {
        parts.push(format!("libtorch {libtorch}"));
    }
    parts.push(format!("fast paths: {}", fast_paths(config)));
    // Named, so that a log can quote the paths its runs chose (`just bench-frameworks` does).
    if let Some(file) = conv_choices::file(config) {
        parts.push(format!("paths measured here kept in {}", file.display()));
    }
    format!("{}: {}", label(config), parts.join(", "))
}

/// The backend column: its name, and `/burn` where it runs burn's own ops.
fn label(config: &BackendConfig) -> String {
    match config.fast_paths {
        false => format!("{}/burn", config.name),
        true => config.name.to_string(),
    }
}

fn step_benchmarks(
    backends: &[BackendConfig],
    cases: &[bench::Case],
    rounds: usize,
    samples: usize,
    picked: bool,
) -> Result<()> {
    let plan = Rounds {
        rounds,
        warmup: 2,
        samples,
        seed: 0,
    };
    outln!("training-step benchmarks: {rounds} round(s), each visiting every case on every backend once in a shuffled order; per visit a fresh model, 2 warm-up steps dropped, {samples} timed steps, the device synchronised before each clock read");
    for backend in backends {
        outln!("  {}", describe(backend));
    }
    let timings = bench::compare(backends, cases, plan, &Bar::new())?;
    outln!(
        "{:<30} {:<10} {:>10} {:>23} {:>8}",
        "case",
        "backend",
        "median ms",
        "IQR ms",
        "vs flex"
    );
    for (case, per_backend) in cases.iter().zip(&timings) {
        let flex = backends
            .iter()
            .position(|b| b.name == BackendKind::Flex && b.fast_paths)
            .map(|i| per_backend[i].median_ms);
        for (backend, t) in backends.iter().zip(per_backend) {
            let ratio = flex.map_or("-".into(), |f| format!("{:.2}x", t.median_ms / f));
            outln!(
                "{:<30} {:<10} {:>10.1} {:>10.1} .. {:<9.1} {:>8}",
                case.name,
                label(backend),
                t.median_ms,
                t.q1_ms,
                t.q3_ms,
                ratio
            );
        }
    }
    // The harness's overhead is a benchmark of its own, on the MLP: it runs with every case and
    // is left out when `--case` picks some (a profile of one case must time that case alone).
    let (Some(mlp), false) = (cases.iter().find(|c| c.key() == "mlp"), picked) else {
        return Ok(());
    };
    for backend in backends {
        let (harness, bare) = bench::harness_overhead(backend, mlp, 10, samples)?;
        let overhead = (harness.median_ms - bare.median_ms) / bare.median_ms * 100.0;
        outln!(
            "harness overhead on {} ({}): sweep median {:.2} ms (IQR {:.2} .. {:.2}) vs bare loop {:.2} ms (IQR {:.2} .. {:.2}) per step: {overhead:+.2}% (goal < 2%; 10 alternating rounds of {samples} steps)",
            label(backend), mlp.name, harness.median_ms, harness.q1_ms, harness.q3_ms, bare.median_ms, bare.q1_ms, bare.q3_ms
        );
    }
    Ok(())
}

/// The data loader's rates against what a training step consumes.
fn loader_benchmark(
    config: &BackendConfig,
    small_cnn: &bench::Case,
    samples: usize,
    repeats: usize,
    data_dir: &Path,
) -> Result<()> {
    let backend = config.name;
    // What the loader has to keep up with: the seed-003 small CNN's training step.
    let consumer = bench::time_case(config, small_cnn, 2, samples.min(5))?;
    let consumed = small_cnn.batch_size as f64 / (consumer.median_ms / 1e3);
    outln!();
    outln!(
        "data-loader benchmarks ({} threads, {repeats} repeats, median (min .. max))",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let scratch = tempfile::tempdir().context("cannot create a scratch directory")?;
    let [cold, warm, batches] = loader_bench::pets_rates(scratch.path(), repeats)?;
    for rate in [&cold, &warm, &batches] {
        outln!("{}", rate.line());
    }
    match loader_bench::fashion_mnist_rates(data_dir, repeats) {
        Some(rates) => {
            for r in rates {
                outln!("{}", r.line());
            }
        }
        None => {
            outln!("fashion-mnist: not installed (apt-get install dataset-fashion-mnist); skipped")
        }
    }
    outln!(
        "consumer: {} on {backend}: {:.0} ms per step = {consumed:.1} images/s",
        small_cnn.name,
        consumer.median_ms
    );
    outln!(
        "warm loader / consumer = {:.0}x (goal >= 3x); cold loader / consumer = {:.0}x (goal >= 1x)",
        warm.median() / consumed,
        cold.median() / consumed
    );
    Ok(())
}

/// The MLP step's eight products, `rounds` rounds of [`products_bench::round`].
fn products_benchmark(rounds: usize) -> Result<()> {
    outln!();
    outln!("the MLP step's eight matrix products (784-512-512-10, batch 1024, 3.29 GFLOP a pass), {} threads, {rounds} round(s) of 20 untimed and 60 timed passes, the kernels taking turns pass by pass", threads(&BackendConfig::default()));
    for round in 1..=rounds {
        for line in products_bench::floors() {
            outln!("round {round}: {line}");
        }
        for passes in products_bench::round() {
            outln!("round {round}: {}", passes.line());
        }
    }
    Ok(())
}

/// Per-epoch data / step / evaluation time of sgd-vs-adam-fmnist at its largest batch size (128),
/// both optimizers, 3 seeds, run in this process.
fn epoch_benchmark(data_dir: &Path) -> Result<()> {
    let experiment = Path::new("experiments/sgd-vs-adam-fmnist.toml");
    let overrides = vec!["grid.batch_sizes=[128]".to_string()];
    outln!();
    outln!(
        "training-epoch split: {} at batch 128 ({})",
        experiment.display(),
        data_dir.display()
    );
    let scratch = tempfile::tempdir().context("cannot create a scratch directory")?;
    let splits = epoch_splits(experiment, &overrides, scratch.path(), data_dir)?;
    outln!(
        "{:<34} {:>10} {:>10} {:>10} {:>8}",
        "trial",
        "data s",
        "step s",
        "eval s",
        "data %"
    );
    for s in &splits {
        outln!(
            "{:<34} {:>10.4} {:>10.3} {:>10.3} {:>7.2}%",
            s.trial,
            s.data,
            s.step,
            s.eval,
            s.data_percent()
        );
    }
    let (median, worst) = data_percent_summary(&splits);
    outln!("data time per epoch: median {median:.2}%, worst {worst:.2}% of the epoch (goal < 5%)");
    Ok(())
}
