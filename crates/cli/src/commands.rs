//! The subcommands. Each returns `anyhow::Result`; main prints the error and exits non-zero.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{anyhow, bail, Context, Result};
use batchlab_datasets::{acquire::Acquire, download::group};
use batchlab_experiments::{
    claim_registry::Registry,
    compact::{compact_run, export_csv},
    config::BackendKind,
    find_batch::QuickFind,
    isolate::{POINT_FAILED_EXIT, UNIT_DONE_EXIT},
    load_study,
    optim::OptimizerKind,
    render_report_with, run_study, run_worker,
    shard::Shard,
    Isolation, RunContext, RunOptions, Source, Study, WorkerExit,
};
use batchlab_method::rows::stored::Compacted;
use batchlab_models::{Architecture, ModelSpec};
use batchlab_report::figures::with_png;

use crate::bar::Bar;
use crate::data::FetchArgs;
use crate::out::outln;

/// `--input 3,224,224`.
pub fn parse_input(text: &str) -> Result<[usize; 3], String> {
    let parts: Vec<usize> = text
        .split(',')
        .map(|p| p.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("expected C,H,W such as 3,224,224, got {text:?}"))?;
    <[usize; 3]>::try_from(parts).map_err(|_| format!("expected three numbers C,H,W, got {text:?}"))
}

/// An experiment argument: a TOML path, or a name in experiments/.
fn experiment_path(experiment: &str) -> Result<PathBuf> {
    let path = PathBuf::from(experiment);
    if path.is_dir() {
        bail!(
            "{}: is a directory; expected an experiment's TOML file or name",
            path.display()
        );
    }
    if path.extension().is_some_and(|e| e == "toml") || path.is_file() {
        if !path.is_file() {
            bail!("{}: no such file", path.display());
        }
        return Ok(path);
    }
    let named = Path::new("experiments").join(format!("{experiment}.toml"));
    if named.is_file() {
        return Ok(named);
    }
    let known = experiment_files(Path::new("experiments"))
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect::<Vec<_>>();
    Err(anyhow!(
        "no experiment named {experiment:?}: {} does not exist. Known experiments: {}",
        named.display(),
        if known.is_empty() {
            "none (run batchlab from the repository root)".into()
        } else {
            known.join(", ")
        }
    ))
}

fn experiment_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list experiments", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

pub(crate) fn source(experiment: &str, overrides: &[String]) -> Result<Source> {
    Ok(Source::from_file(&experiment_path(experiment)?)?.with_overrides(overrides))
}

pub fn list(dir: &Path) -> Result<()> {
    let mut broken = 0;
    for path in experiment_files(dir)? {
        match Source::from_file(&path).and_then(|s| load_study(&s)) {
            Ok(study) => {
                let h = study.header();
                outln!(
                    "{:<28} {:<10} {}{}",
                    h.name,
                    h.kind,
                    h.description,
                    h.reproduces
                        .as_ref()
                        .map(|r| format!(" [reproduces: {r}]"))
                        .unwrap_or_default()
                );
            }
            Err(e) => {
                broken += 1;
                eprintln!("error: {e}");
            }
        }
    }
    if broken > 0 {
        bail!(
            "{broken} experiment file(s) in {} do not load",
            dir.display()
        );
    }
    Ok(())
}

/// The values `--backend` accepts: every backend's name, from the one list of them.
pub fn backend_names() -> clap::builder::PossibleValuesParser {
    BackendKind::ALL.map(BackendKind::name).into()
}

/// Validates a config and what `run` checks before creating anything (the backend, the
/// data): what `run` would refuse, `check` refuses.
pub fn check(
    experiment: &str,
    overrides: &[String],
    data_dir: &Path,
    fetch: &FetchArgs,
) -> Result<()> {
    let source = source(experiment, overrides)?;
    let study = load_study(&source)?;
    outln!(
        "{}: ok ({} experiment {:?})",
        source.origin,
        study.header().kind,
        study.header().name
    );
    for line in study.plan() {
        outln!("  {line}");
    }
    let context = RunContext {
        acquire: fetch.plan(),
        ..RunContext::in_process(data_dir)
    };
    let runnable = batchlab_experiments::backend::ensure_available(study.backend())
        .map_err(batchlab_experiments::RunError::from)
        .and_then(|()| context.ensure_datasets(&study.datasets()));
    let lines = match runnable {
        Ok(lines) => lines,
        Err(e) => bail!("the config is valid, but `run` would stop here: {e}"),
    };
    for line in lines {
        outln!("  {line}");
    }
    let root = PathBuf::from(&study.output().dir);
    for line in crate::estimate::lines(study.as_ref(), &root, None).1 {
        outln!("  {line}");
    }
    Ok(())
}

/// `batchlab run`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// An experiment name (experiments/NAME.toml) or a TOML file.
    experiment: String,
    /// Override a config value, e.g. --set sweep.rounds=3 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Backend to run on (overrides backend.name).
    #[arg(long, value_parser = backend_names())]
    backend: Option<String>,
    /// Report root (overrides output.dir).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue the newest unfinished run of this experiment.
    #[arg(long)]
    resume: bool,
    /// Run every point in this process instead of child processes (an out-of-memory kill
    /// then ends the whole run).
    #[arg(long)]
    in_process: bool,
    /// Run only slice i of n of the trials (train and steps-to-target studies), into the
    /// config's shared report directory; e.g. --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    shard: Option<Shard>,
    #[command(flatten)]
    fetch: FetchArgs,
    /// Start without asking, however long the run is expected to take.
    #[arg(long)]
    yes: bool,
}

/// SIGINT (Ctrl-C) and SIGTERM (`scancel`, `kill`) stop a run cleanly: the supervisor stops its
/// worker, records nothing as failed and marks the run `interrupted`, resumable. A second signal
/// ends the process at once.
fn stop_on_signals() -> Result<()> {
    use signal_hook::{consts::TERM_SIGNALS, flag};
    let stop = batchlab_experiments::isolate::interruption_flag();
    for &signal in TERM_SIGNALS {
        flag::register_conditional_shutdown(signal, INTERRUPTED_EXIT.into(), stop)
            .context("cannot install a signal handler")?;
        flag::register(signal, stop).context("cannot install a signal handler")?;
    }
    Ok(())
}

/// Exit code of a run stopped by a signal (the shell's 128 + SIGINT).
pub const INTERRUPTED_EXIT: u8 = 130;

pub fn run(args: RunArgs, data_dir: &Path) -> Result<()> {
    stop_on_signals()?;
    let RunArgs {
        experiment,
        mut overrides,
        backend,
        out,
        resume,
        in_process,
        shard,
        fetch,
        yes,
    } = args;
    if let Some(name) = backend {
        overrides.push(format!("backend.name={name}"));
    }
    let study = load_study(&source(&experiment, &overrides)?)?;
    if !resume {
        // Said before anything starts; a resumed run has already been told.
        batchlab_experiments::backend::ensure_available(study.backend())?;
        let root = out
            .clone()
            .unwrap_or_else(|| PathBuf::from(&study.output().dir));
        crate::estimate::confirm(study.as_ref(), &root, shard, yes)?;
    }
    let choices = RunChoices {
        out,
        resume,
        in_process,
        shard,
        acquire: fetch.acquire(),
    };
    run_loaded(study.as_ref(), data_dir, choices)
}

/// How `run` (or `find-batch`) was asked to run a loaded study.
struct RunChoices {
    out: Option<PathBuf>,
    resume: bool,
    in_process: bool,
    shard: Option<Shard>,
    acquire: Acquire,
}

/// Runs a loaded study to its report; prints the findings and, last, the report directory.
fn run_loaded(study: &dyn Study, data_dir: &Path, choices: RunChoices) -> Result<()> {
    let RunChoices {
        out,
        resume,
        in_process,
        shard,
        acquire,
    } = choices;
    let isolation = if in_process {
        Isolation::InProcess
    } else {
        Isolation::ChildProcess {
            program: std::env::current_exe().context("cannot find the batchlab executable")?,
            // Workers get the data directory as an argument, like every other choice of the run.
            args: vec!["--data-dir".into(), data_dir.into(), "worker".into()],
        }
    };
    let options = RunOptions {
        resume,
        out,
        context: RunContext {
            data_dir: data_dir.to_path_buf(),
            acquire,
            isolation,
            in_worker_process: false,
        },
        shard,
    };
    let bar = Bar::new();
    let finished = run_study(study, &options, &bar)?;
    for line in &finished.findings {
        outln!("{line}");
    }
    outln!("{}", finished.dir.display());
    Ok(())
}

/// `batchlab find-batch`'s arguments.
#[derive(Debug, clap::Args)]
pub struct FindBatchArgs {
    /// The model, e.g. vgg16 (`batchlab models` lists them).
    #[arg(value_parser = clap::value_parser!(Architecture))]
    model: Architecture,
    /// Input as C,H,W.
    #[arg(long, default_value = "3,32,32", value_parser = parse_input)]
    input: [usize; 3],
    /// Classes of the head.
    #[arg(long, default_value_t = 10)]
    classes: usize,
    /// The optimizer (its state is part of the memory).
    #[arg(long, default_value = "sgd", value_parser = OptimizerKind::parse)]
    optimizer: OptimizerKind,
    /// The memory budget, e.g. 4GiB or 512MiB; "available": the memory available now.
    #[arg(long, default_value = "available")]
    memory_budget: String,
    /// Batch sizes of the memory curve, comma-separated.
    #[arg(long, default_value = "1,2,4,8,16,32", value_delimiter = ',')]
    curve: Vec<u32>,
    /// Backend to run on.
    #[arg(long, default_value = "flex", value_parser = backend_names())]
    backend: String,
    /// Report root (default: reports/).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The one-line batch-size finder: a find-batch study of one model with the defaults.
pub fn find_batch(args: FindBatchArgs, data_dir: &Path) -> Result<()> {
    stop_on_signals()?;
    let quick = QuickFind {
        model: ModelSpec::new(args.model, args.input, args.classes),
        optimizer: args.optimizer,
        memory_budget: args.memory_budget,
        curve: args.curve,
        backend: BackendKind::parse(&args.backend).map_err(|e| anyhow!(e))?,
    };
    let study = load_study(&quick.source())?;
    // A find-batch study reads no dataset (synthetic batches): nothing to fetch.
    let choices = RunChoices {
        out: args.out,
        resume: false,
        in_process: false,
        shard: None,
        acquire: Acquire::Offline,
    };
    run_loaded(study.as_ref(), data_dir, choices)
}

pub fn report(dir: &Path, registry: Option<&Path>, png: bool, data_dir: &Path) -> Result<()> {
    let registry = registry.map(Registry::from_file).transpose()?;
    let context = RunContext::in_process(data_dir);
    let render = || render_report_with(dir, &context, registry.as_ref());
    let lines = if png { with_png(render) } else { render() }?;
    for line in lines {
        outln!("{line}");
    }
    outln!("{}", dir.display());
    Ok(())
}

pub fn compact(dirs: &[PathBuf]) -> Result<()> {
    for dir in dirs {
        let done = compact_run(dir)?;
        if done.unfinished_shards {
            outln!("{}: a shard has not finished; left as it is", dir.display());
            continue;
        }
        if done.pruned_shards {
            outln!(
                "{}: shards merged for good (shards/merged.json)",
                dir.display()
            );
        }
        for (path, what) in &done.tables {
            if let Compacted::Parquet { csv, parquet } = what {
                outln!(
                    "{}: {csv} bytes of CSV -> {parquet} bytes of Parquet",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

pub fn check_fast_paths(backend: &str, device: usize) -> Result<()> {
    use batchlab_experiments::fast_check::{TOLERANCE, TOLERANCE_GPU};
    let config = batchlab_experiments::config::BackendConfig {
        name: BackendKind::parse(backend).map_err(|e| anyhow!(e))?,
        device,
        ..Default::default()
    };
    let checked = batchlab_experiments::fast_check::check_fast_paths(&config)?;
    let tolerance = if config.name.on_cpu() {
        TOLERANCE
    } else {
        TOLERANCE_GPU
    };
    for a in &checked {
        let [y, dx, dw, db] = a.relative;
        outln!(
            "{}: {} (largest difference relative to the largest value: output {y:.1e}, dx {dx:.1e}, dw {dw:.1e}, db {db:.1e}) {}",
            a.case,
            if a.fast_path_ran { "batchlab's path against burn's" } else { "burn's path on both sides (no fast path here)" },
            if a.agrees_within(tolerance) { "agrees" } else { "DISAGREES" },
        );
    }
    let bad = checked
        .iter()
        .filter(|a| !a.agrees_within(tolerance))
        .count();
    if bad > 0 {
        bail!(
            "{bad} of {} cases differ by more than {tolerance:e} on {backend}",
            checked.len()
        );
    }
    outln!("every case agrees within {tolerance:e} on {backend}");
    Ok(())
}

pub fn csv(dir: &Path, out: Option<&Path>) -> Result<()> {
    let out = out.map_or_else(|| dir.join("csv"), Path::to_path_buf);
    for path in export_csv(dir, &out)? {
        outln!("{}", path.display());
    }
    Ok(())
}

pub fn worker(dir: &Path, data_dir: &Path) -> ExitCode {
    match run_worker(dir, &RunContext::worker(data_dir)) {
        Ok(WorkerExit::Finished) => ExitCode::SUCCESS,
        Ok(WorkerExit::PointFailed) => ExitCode::from(POINT_FAILED_EXIT as u8),
        Ok(WorkerExit::UnitDone) => ExitCode::from(UNIT_DONE_EXIT as u8),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

pub fn models(input: [usize; 3], classes: usize) -> Result<()> {
    let [c, h, w] = input;
    outln!("input {c}x{h}x{w}, {classes} classes");
    outln!(
        "{:<20} {:>22} {:>22} {:>16} {:>20} {:>7}",
        "model",
        "trainable parameters",
        "forward GFLOPs/sample",
        "of it depthwise",
        "activations/sample",
        "layers"
    );
    for architecture in Architecture::ALL {
        let spec = ModelSpec::new(architecture, input, classes);
        let row = || -> Result<String, batchlab_models::ModelError> {
            Ok(format!(
                "{:<20} {:>22} {:>22.3} {:>16.3} {:>20} {:>7}",
                architecture.name(),
                group(spec.trainable_params()? as u64),
                spec.forward_flops()? as f64 / 1e9,
                spec.grouped_flops()? as f64 / 1e9,
                group(spec.activation_elements()?),
                spec.layer_count()?
            ))
        };
        match row() {
            Ok(line) => outln!("{line}"),
            Err(e) => outln!("{:<20} not available: {e}", architecture.name()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_and_numbers_format() {
        assert_eq!(parse_input("3,224, 224").unwrap(), [3, 224, 224]);
        assert!(parse_input("3,224").is_err());
        assert!(parse_input("a,b,c").is_err());
        assert_eq!(group(138_357_544), "138,357,544");
        assert_eq!(group(999), "999");
    }
}
