//! `batchlab`: run batch-size studies and render their reports.

mod allocator;
mod bar;
mod bench;
mod claims;
mod cluster;
mod commands;
mod data;
mod estimate;
mod out;
mod predict;
mod threads;

use std::{path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};

/// mimalloc rather than the system's malloc (set up in `allocator`). glibc's malloc hands every block over 32 MiB (and,
/// by its dynamic threshold, many smaller ones) to mmap and back to the kernel on free, so a
/// CPU training step page-faults its large tensors in afresh every step: flex's weight gradient
/// of a 4096x4096 dense layer at batch 16 took 55-62 ms, of which the product is 10-14 ms. mimalloc
/// keeps freed memory for reuse (docs/flex-performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Reproducible research on how batch size shapes training.
#[derive(Debug, Parser)]
#[command(name = "batchlab", version, about, long_about = None)]
struct Cli {
    /// Where datasets live (downloads, extracted files, decoded caches).
    #[arg(
        long,
        global = true,
        default_value = "datasets",
        env = "BATCHLAB_DATA_DIR"
    )]
    data_dir: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every experiment in experiments/ with the figure it reproduces.
    List {
        /// Directory of experiment TOMLs.
        #[arg(long, default_value = "experiments")]
        dir: PathBuf,
    },
    /// Validate an experiment without running it.
    Check {
        /// An experiment name (experiments/NAME.toml) or a TOML file.
        experiment: String,
        /// Override a config value, e.g. --set sweep.rounds=3 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
        #[command(flatten)]
        fetch: data::FetchArgs,
    },
    /// Run an experiment; the last line printed is its report directory.
    Run(commands::RunArgs),
    /// The largest batch size of a model under a memory budget, and the right one: a
    /// find-batch study with the defaults (the last line printed is its report directory).
    FindBatch(commands::FindBatchArgs),
    /// Training time per step, per epoch and in total, predicted from the step-time sweeps of
    /// this device (the same model's when there is one, else a fit across models).
    Predict(predict::PredictArgs),
    /// Run a shardable study (train, steps-to-target) as a Slurm job array, one shard per task;
    /// the last line printed is its report directory.
    Submit(cluster::SubmitArgs),
    /// Where a sharded run stands: per shard, trials done, claimed and left, failures; the
    /// merged report's state. With or without Slurm.
    Status {
        /// The sharded run's directory (reports/<experiment>/sharded-<hash>).
        dir: PathBuf,
    },
    /// Re-render summary.csv, figures and report.md of a run from its raw tables.
    Report {
        /// The run's report directory.
        dir: PathBuf,
        /// Judge the claims with this claims registry's parameters (e.g. other margins) instead
        /// of those the run's config.toml carries; findings.json records the registry's hash.
        #[arg(long)]
        registry: Option<PathBuf>,
        /// Also draw every figure as PNG beside its SVG (reports keep SVG alone).
        #[arg(long)]
        png: bool,
    },
    /// Store finished runs compactly: a sharded run's rows in its top directory alone, and
    /// each large raw table as Parquet (what a run does when it finishes; for runs
    /// made before it did).
    Compact {
        /// Report directories of finished runs.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Write a run's raw tables as CSV, whichever form they are stored in.
    Csv {
        /// The run's report directory.
        dir: PathBuf,
        /// Where to write them (default: DIR/csv).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Every registered claim (claims/registry.toml) with its verdict of record (per machine the
    /// newest run, of those the most faithful backend's), or why it is not tested here.
    Claims {
        /// The report root whose runs are read.
        #[arg(long, default_value = "reports")]
        reports: PathBuf,
    },
    /// Write docs/results.md from the registry and the committed findings.json files.
    Results(claims::ResultsArgs),
    /// Table of the models: trainable parameters and forward FLOPs per sample.
    Models {
        /// Input as C,H,W.
        #[arg(long, default_value = "3,224,224", value_parser = commands::parse_input)]
        input: [usize; 3],
        /// Classes of the head.
        #[arg(long, default_value_t = 1000)]
        classes: usize,
    },
    /// Fixed training-step benchmarks on every backend built in, interleaved, and the sweep
    /// harness's overhead on each.
    Bench {
        /// Timed steps per case, backend and round.
        #[arg(long, default_value_t = 10)]
        samples: usize,
        /// Rounds of the step benchmarks; each visits every case on every backend once.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// A backend to benchmark (repeat for several); default: every one built in that can run
        /// here.
        #[arg(long = "backend", value_parser = crate::commands::backend_names())]
        backends: Vec<String>,
        /// Which benchmarks: training steps, the data loader, the split of a training epoch of
        /// sgd-vs-adam-fmnist at its largest batch, or all.
        #[arg(long, value_enum, default_value_t = bench::Only::All)]
        only: bench::Only,
        /// Repeats of each loader figure.
        #[arg(long, default_value_t = 3)]
        repeats: usize,
        /// Also time each backend that has fast paths (flex, LibTorch) on burn's own ops
        /// (`backend.fast_paths = false`), interleaved with the fast paths.
        #[arg(long)]
        burn_ops: bool,
        /// A step case to time (repeat for several): vgg16, small-cnn or mlp; default: all three
        /// and the harness's overhead, which a picked case leaves out.
        #[arg(long = "case")]
        cases: Vec<String>,
        /// The step cases' batch size, in place of each one's own (16, 32, 1024).
        #[arg(long)]
        batch: Option<usize>,
    },
    /// batchlab's fast convolution + ReLU against burn's on a backend (output and gradients,
    /// 1e-4 relative): the check the GPU campaign runs on the card before its sweeps. Exits
    /// non-zero when a case disagrees.
    CheckFastPaths {
        /// The backend to check on.
        #[arg(long, default_value = "flex", value_parser = commands::backend_names())]
        backend: String,
        /// GPU index (CUDA's, or wgpu's).
        #[arg(long, default_value_t = 0)]
        device: usize,
    },
    /// Get and inspect datasets.
    Data {
        #[command(subcommand)]
        action: data::Action,
    },
    /// Internal: the child process of a run (do not call by hand).
    #[command(hide = true)]
    Worker {
        /// The run's report directory.
        dir: PathBuf,
    },
}

fn main() -> ExitCode {
    allocator::keep_freed_memory();
    batchlab_experiments::sysinfo::set_allocator(allocator::words());
    let cli = Cli::parse();
    threads::on_the_pool(|| dispatch(cli))
}

/// The command's outcome as the process's exit status (its error printed).
fn dispatch(cli: Cli) -> ExitCode {
    let outcome = match cli.command {
        Command::List { dir } => commands::list(&dir),
        Command::Check {
            experiment,
            overrides,
            fetch,
        } => commands::check(&experiment, &overrides, &cli.data_dir, &fetch),
        Command::Run(args) => commands::run(args, &cli.data_dir),
        Command::FindBatch(args) => commands::find_batch(args, &cli.data_dir),
        Command::Predict(args) => predict::predict(args),
        Command::Submit(args) => cluster::submit(args, &cli.data_dir),
        Command::Status { dir } => cluster::status(&dir),
        Command::Report { dir, registry, png } => {
            commands::report(&dir, registry.as_deref(), png, &cli.data_dir)
        }
        Command::Compact { dirs } => commands::compact(&dirs),
        Command::CheckFastPaths { backend, device } => commands::check_fast_paths(&backend, device),
        Command::Csv { dir, out } => commands::csv(&dir, out.as_deref()),
        Command::Models { input, classes } => commands::models(input, classes),
        Command::Claims { reports } => claims::claims(&reports),
        Command::Results(args) => claims::results(&args),
        Command::Bench {
            samples,
            rounds,
            backends,
            only,
            repeats,
            burn_ops,
            cases,
            batch,
        } => bench::bench(
            bench::BenchArgs {
                samples,
                rounds,
                backends: &backends,
                only,
                repeats,
                burn_ops,
                cases: &cases,
                batch,
            },
            &cli.data_dir,
        ),
        Command::Data { action } => data::run(action, &cli.data_dir),
        Command::Worker { dir } => return commands::worker(&dir, &cli.data_dir),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<out::StdoutClosed>().is_some() => {
            ExitCode::from(out::CLOSED_EXIT)
        }
        Err(e)
            if matches!(
                e.downcast_ref(),
                Some(batchlab_experiments::RunError::Interrupted)
            ) =>
        {
            eprintln!("stopped: {e:#}; what finished is kept, continue with --resume");
            ExitCode::from(commands::INTERRUPTED_EXIT)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
