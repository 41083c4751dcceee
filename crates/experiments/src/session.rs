//! A run's life: create (or resume) its report directory, record where and how it ran in
//! `meta.json`, run the study, render the report, and point `latest` at it.
//!
//! A report directory is write-once: a new run never touches an earlier one, and `--resume`
//! continues only an unfinished run made with the same resolved config.

use std::{
    fs,
    path::{Path, PathBuf},
};

use batchlab_method::rows::cut_tail;

use crate::{
    backend,
    claim_registry::Registry,
    compact::compact_run,
    config::Source,
    context::RunContext,
    error::RunError,
    isolate::{exit_with_supervisor, StdoutEvents, WorkerExit},
    lock::DirLock,
    path_counts,
    progress::Progress,
    registry::{config_key, load_study},
    run_dir::{
        new_run_dir, point_latest_at, unfinished_run, write_atomically, write_findings, Meta,
        RunStatus,
    },
    shard::{merge_shards, sharded_run_name, Shard, SHARDED_FILES},
    study::Study,
    sysinfo,
};

/// How `batchlab run` was asked to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Continue the newest unfinished run of this experiment instead of starting a new one.
    pub resume: bool,
    /// Report root (overrides the config's `output.dir`).
    pub out: Option<PathBuf>,
    /// The data directory and the isolation of units of work.
    pub context: RunContext,
    /// Run only this slice of the study's trials (see [`crate::shard`]).
    pub shard: Option<Shard>,
}

/// A finished run: its report directory and the headline findings.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The report directory.
    pub dir: PathBuf,
    /// A few lines of findings for the terminal.
    pub findings: Vec<String>,
}

/// Runs `study` into a new report directory (or resumes one) and renders its report.
pub fn run_study(
    study: &dyn Study,
    options: &RunOptions,
    progress: &dyn Progress,
) -> Result<Finished, RunError> {
    backend::ensure_available(study.backend())?;
    // Missing data is fetched, or stops the run, here: before a report directory exists and
    // before any worker starts.
    for line in options.context.ensure_datasets(&study.datasets())? {
        progress.note(&line);
    }
    let root = options
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(&study.output().dir));
    let experiment_dir = root.join(&study.header().name);
    if let Some(shard) = options.shard {
        return run_shard(study, shard, &experiment_dir, &options.context, progress);
    }
    let dir = if options.resume {
        unfinished_run(&experiment_dir, &study.resolved_toml())?
    } else {
        let dir = new_run_dir(&experiment_dir)?;
        write_atomically(&dir.join("config.toml"), &study.resolved_toml())?;
        dir
    };
    let _lock = DirLock::writer(&dir)?;
    let mut meta = if options.resume {
        let mut meta = Meta::read(&dir)?;
        // One run, one step: a build whose fast paths differ times another step, which the
        // run's rows so far would be mixed with (the same config reads the same on both).
        let now = backend::fast_paths(study.backend());
        if meta.fast_paths != now {
            return Err(RunError::Other(format!(
                "{} was made by a build with other fast paths (\"{}\") than this one's (\"{now}\"): resuming it would mix two steps in one run; start a new run (drop --resume)",
                dir.display(),
                meta.fast_paths
            )));
        }
        meta.resumed.push(sysinfo::rfc3339(sysinfo::unix_seconds()));
        meta.status = RunStatus::Running;
        meta.error = None;
        progress.note(&format!("resuming {}", dir.display()));
        meta
    } else {
        Meta::new(study.header(), study.backend())
    };
    meta.write(&dir)?;

    let paths = path_counts::total();
    let outcome = study.run(&dir, &options.context, progress);
    meta.add_path_counts(path_counts::total().since(paths));
    let outcome = outcome
        .and_then(|()| render_and_record(study, &dir, &options.context, &Registry::builtin()?));
    meta.ended = Some(sysinfo::rfc3339(sysinfo::unix_seconds()));
    meta.kernel_cache = meta.kernel_cache.take().map(sysinfo::KernelCache::at_end);
    meta.conv_choices = meta
        .conv_choices
        .take()
        .map(backend::conv_choices::ConvChoices::at_end);
    match outcome {
        Ok(findings) => {
            meta.status = RunStatus::Complete;
            meta.write(&dir)?;
            point_latest_at(&experiment_dir, &dir)?;
            compact_run(&dir)?;
            Ok(Finished { dir, findings })
        }
        Err(e) => {
            meta.status = status_of(&e);
            meta.error = Some(e.to_string());
            meta.write(&dir)?;
            Err(with_resume_hint(e, &dir))
        }
    }
}

/// What meta.json records for a run that stopped with `e`.
fn status_of(e: &RunError) -> RunStatus {
    match e {
        RunError::Interrupted => RunStatus::Interrupted,
        _ => RunStatus::Failed,
    }
}

/// `e`, saying where the results so far are and, where it can help, how to go on.
fn with_resume_hint(e: RunError, dir: &Path) -> RunError {
    match e {
        RunError::Interrupted => RunError::Interrupted,
        RunError::NothingSucceeded(message) => RunError::NothingSucceeded(format!(
            "{message}\n(the run is in {}; failed units are results, so --resume would not retry them)",
            dir.display()
        )),
        e => RunError::Other(format!(
            "{e}\n(the run's results so far are in {}; continue it with --resume)",
            dir.display()
        )),
    }
}

/// Runs one shard of `study` in its own directory under the config's shared run directory,
/// then merges every shard's results so far and renders the (possibly partial) report there.
/// Running a shard again continues it.
fn run_shard(
    study: &dyn Study,
    shard: Shard,
    experiment_dir: &Path,
    context: &RunContext,
    progress: &dyn Progress,
) -> Result<Finished, RunError> {
    if !study.shardable() {
        return Err(RunError::Other(format!(
            "kind {:?} does not split into shards: its points are timed against each other on one machine",
            study.header().kind
        )));
    }
    let resolved = study.resolved_toml();
    let top = experiment_dir.join(sharded_run_name(&resolved));
    let dir = shard.dir(&top);
    fs::create_dir_all(&dir).map_err(|e| RunError::io(&dir, e))?;
    write_atomically(&top.join("config.toml"), &resolved)?;
    write_atomically(&dir.join("config.toml"), &resolved)?;
    let description = serde_json::to_string(&shard).expect("a shard serializes");
    write_atomically(&dir.join("shard.json"), &description)?;
    let lock = DirLock::writer(&dir)?;
    let mut meta = match Meta::read(&dir) {
        Ok(mut meta) => {
            meta.resumed.push(sysinfo::rfc3339(sysinfo::unix_seconds()));
            progress.note(&format!("continuing {}", dir.display()));
            meta
        }
        Err(_) => Meta::new(study.header(), study.backend()),
    };
    meta.status = RunStatus::Running;
    meta.error = None;
    meta.write(&dir)?;
    let paths = path_counts::total();
    let outcome = study.run(&dir, context, progress);
    meta.add_path_counts(path_counts::total().since(paths));
    meta.ended = Some(sysinfo::rfc3339(sysinfo::unix_seconds()));
    meta.kernel_cache = meta.kernel_cache.take().map(sysinfo::KernelCache::at_end);
    meta.conv_choices = meta
        .conv_choices
        .take()
        .map(backend::conv_choices::ConvChoices::at_end);
    meta.status = match &outcome {
        Ok(()) => RunStatus::Complete,
        Err(e) => status_of(e),
    };
    meta.error = outcome.as_ref().err().map(ToString::to_string);
    meta.write(&dir)?;
    outcome?;
    // The shared directory's meta.json tells the report which backend and device ran.
    meta.status = RunStatus::Sharded;
    meta.write(&top)?;
    let findings = render_report(&top, context)?;
    // The last shard to finish stores the whole run compactly; it needs every shard idle.
    drop(lock);
    compact_run(&top)?;
    Ok(Finished { dir: top, findings })
}

/// The child-process entry point: continues the study whose report directory is `dir`, for as
/// long as the supervisor that started it lives.
pub fn run_worker(dir: &Path, context: &RunContext) -> Result<WorkerExit, RunError> {
    exit_with_supervisor();
    let _lock = DirLock::worker(dir)?;
    load_from_dir(dir)?.work(dir, context, &StdoutEvents)
}

/// Re-renders summary, figures and report.md of a finished (or partial) run from its raw results.
pub fn render_report(dir: &Path, context: &RunContext) -> Result<Vec<String>, RunError> {
    render_report_with(dir, context, None)
}

/// [`render_report`], judging the claims with `registry`'s parameters instead of those of the
/// run's config.toml when one is given (`batchlab report DIR --registry FILE`): the config is
/// rewritten in memory by [`Registry::apply_to`], the file stays as it was run.
pub fn render_report_with(
    dir: &Path,
    context: &RunContext,
    registry: Option<&Registry>,
) -> Result<Vec<String>, RunError> {
    // A sharded run: first gather what every shard has finished.
    merge_shards(dir)?;
    let mut notes = vec![];
    // The builtin registry, parsed once, both fills in the claims registered since the run
    // and judges them.
    let builtin;
    let (study, registry) = match registry {
        None => {
            builtin = Registry::builtin()?;
            (load_with_later_claims(dir, &builtin, &mut notes)?, &builtin)
        }
        Some(registry) => {
            let source = config_source(dir)?;
            let mut table: toml::Table = source.parse()?;
            let experiment = Meta::read(dir).map(|m| m.experiment).unwrap_or_default();
            registry.apply_to(&experiment, &mut table, config_key);
            let study = load_study(&Source {
                origin: format!("{} with the registry's parameters", source.origin),
                text: toml::to_string(&table).map_err(|e| RunError::io(dir, e.to_string()))?,
                overrides: Vec::new(),
            })?;
            (study, registry)
        }
    };
    let mut findings = render_and_record(study.as_ref(), dir, context, registry)?;
    findings.extend(notes);
    // Rows cut short are left out of the report; say so rather than drop them silently.
    for name in SHARDED_FILES {
        if let Some(bytes) = cut_tail(&dir.join(name)) {
            findings.push(format!(
                "{name}: its last row is incomplete ({bytes} bytes, a write cut short by a crash or a full disk) and was left out; --resume writes it again"
            ));
        }
    }
    Ok(findings)
}

/// Renders the run and writes its judged claims to `findings.json` beside report.md, keyed by
/// the machine meta.json names (docs/ARCHITECTURE.md, "Verdicts"); returns the terminal lines.
fn render_and_record(
    study: &dyn Study,
    dir: &Path,
    context: &RunContext,
    registry: &Registry,
) -> Result<Vec<String>, RunError> {
    // One registry both words the claims (a step-time rule's) and gives them their ids.
    let mut rendered = study.render(dir, context, registry)?;
    // A directory without meta.json (rows copied by hand) renders as its reports do: with what
    // the config would use on this machine, and no commit.
    let meta = Meta::read(dir).unwrap_or_else(|_| Meta {
        git_commit: "unknown: no meta.json".into(),
        ..Meta::new(study.header(), study.backend())
    });
    registry.assign_ids(&meta.experiment, &mut rendered.claims);
    write_findings(dir, &meta, &registry.sha256, rendered.claims)?;
    Ok(rendered.lines)
}

/// The run's study from its config.toml, with what the builtin registry adds that the config
/// lacks ([`Registry::fill_missing`]: claims registered after the run, parameters it had no
/// key for). Where the config with them does not load (a claim about a workload this run did
/// not have), the run renders from its config as it is, and `notes` says why.
fn load_with_later_claims(
    dir: &Path,
    builtin: &Registry,
    notes: &mut Vec<String>,
) -> Result<Box<dyn Study>, RunError> {
    let source = config_source(dir)?;
    let mut table: toml::Table = source.parse()?;
    let experiment = Meta::read(dir).map(|m| m.experiment).unwrap_or_default();
    if !builtin.fill_missing(&experiment, &mut table, config_key) {
        return Ok(load_study(&source)?);
    }
    let filled = Source {
        origin: format!("{} with the claims registered since", source.origin),
        text: toml::to_string(&table).map_err(|e| RunError::io(dir, e.to_string()))?,
        overrides: Vec::new(),
    };
    match load_study(&filled) {
        Ok(study) => Ok(study),
        Err(e) => {
            notes.push(format!(
                "claims registered after this run are not judged on it: {e}"
            ));
            Ok(load_study(&source)?)
        }
    }
}

pub(crate) fn load_from_dir(dir: &Path) -> Result<Box<dyn Study>, RunError> {
    Ok(load_study(&config_source(dir)?)?)
}

/// A run directory's config.toml.
fn config_source(dir: &Path) -> Result<Source, RunError> {
    let config = dir.join("config.toml");
    if !config.exists() {
        return Err(RunError::io(
            &config,
            "missing: not a batchlab report directory (expected config.toml, meta.json, results.csv)",
        ));
    }
    Ok(Source::from_file(&config)?)
}
