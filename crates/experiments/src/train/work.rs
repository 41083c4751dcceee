//! Running a training grid: the supervisor (child processes, crash records, resume), the worker
//! (trials one by one, results appended as they come) and rendering the report.

use std::{
    collections::{BTreeMap, BTreeSet},
    panic::{catch_unwind, AssertUnwindSafe},
    path::{Path, PathBuf},
    sync::Arc,
};

use batchlab_datasets::DataConfig;
use batchlab_method::rows::{
    append_rows, read_rows,
    train::{done_trials, TrainEval, TrialRecord},
};
use batchlab_report::train::{render_train, Published, TrainContext};

use super::{
    plan::evaluation_plan,
    trial::{self, Evaluation, Next, Outcome, TrialPlan, VariantData},
    TrainStudy, Trial,
};
use crate::{
    backend::panic_message,
    isolate::{failure_status, supervise, Crash, UnitEvents, WorkerExit},
    progress::Progress,
    registry::Study,
    session::{backend_and_device, Isolation, RunError},
    shard::{claim, pending, release_unfinished_claims, to_try},
};

/// Where datasets are read from: `--data-dir`, which the CLI passes on (to child processes too)
/// as `BATCHLAB_DATA_DIR`; `datasets/` by default.
pub fn data_dir() -> PathBuf {
    std::env::var_os("BATCHLAB_DATA_DIR").map_or_else(|| PathBuf::from("datasets"), PathBuf::from)
}

/// Checks every variant's data is present (before any training), then supervises the trials
/// until each has a row in trials.csv.
pub fn run(
    study: &TrainStudy,
    dir: &Path,
    isolation: &Isolation,
    progress: &dyn Progress,
) -> Result<(), RunError> {
    let trials = TrialRun {
        study,
        what: "training trials",
        trials: &study.trials,
        id: |t: &Trial| t.id.as_str(),
        worker_env: study.config.backend.worker_env(),
    };
    trials.supervise(
        dir,
        isolation,
        progress,
        &|events| work(study, dir, events),
        &|t, crash| {
            let row = failure_record(t, crash.status, &crash.message);
            append_rows(&dir.join("trials.csv"), &[row])?;
            Ok(())
        },
    )
}

/// What the trial runners share when supervising: the study, its trials in planned order and
/// how a trial is named.
pub(crate) struct TrialRun<'a, T> {
    /// For the inputs check.
    pub study: &'a dyn Study,
    /// The progress bar's title.
    pub what: &'static str,
    /// Every trial, in the planned order.
    pub trials: &'a [T],
    /// A trial's id (its unit name in the worker protocol and its key in trials.csv).
    pub id: fn(&T) -> &str,
    /// Environment of worker processes.
    pub worker_env: Vec<(String, String)>,
}

impl<T> TrialRun<'_, T> {
    /// Checks the inputs, drops half-written evaluations of unfinished trials, then runs `work`
    /// in workers until every trial of this directory's shard has a row in trials.csv;
    /// `record_failure` writes the rows of a trial whose worker died.
    pub fn supervise(
        &self,
        dir: &Path,
        isolation: &Isolation,
        progress: &dyn Progress,
        work: &dyn Fn(&dyn UnitEvents) -> Result<WorkerExit, RunError>,
        record_failure: &dyn Fn(&T, &Crash) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        self.study.check_inputs()?;
        let done = done_trials(dir)?;
        drop_unfinished_evaluations(dir, &done)?;
        release_unfinished_claims(dir, &done)?;
        let left = pending(self.trials, self.id, dir, &done)?.len();
        progress.start(left as u64, self.what);
        let record_crash = |unit: &str, crash: &Crash| {
            let trial = self
                .trials
                .iter()
                .find(|t| (self.id)(t) == unit)
                .ok_or_else(|| {
                    RunError::Other(format!("worker announced an unknown trial {unit:?}"))
                })?;
            record_failure(trial, crash)
        };
        let outcome = supervise(
            dir,
            isolation,
            progress,
            &self.worker_env,
            work,
            &record_crash,
        );
        progress.finish();
        outcome
    }
}

/// Removes from results.csv the evaluations of trials that never finished (an interrupted run),
/// so a resumed trial's evaluations appear once. The file is replaced atomically.
fn drop_unfinished_evaluations(dir: &Path, done: &BTreeSet<String>) -> Result<(), RunError> {
    let results = dir.join("results.csv");
    if !results.exists() {
        return Ok(());
    }
    let rows: Vec<TrainEval> = read_rows(&results)?;
    let kept: Vec<TrainEval> = rows
        .iter()
        .filter(|r| done.contains(&r.trial))
        .cloned()
        .collect();
    if kept.len() == rows.len() {
        return Ok(());
    }
    let partial = dir.join("results.csv.partial");
    let _ = std::fs::remove_file(&partial);
    append_rows(&partial, &kept)?;
    if kept.is_empty() {
        // append_rows writes nothing for no rows; an absent file is the same as an empty one.
        let _ = std::fs::remove_file(&results);
        return Ok(());
    }
    std::fs::rename(&partial, &results).map_err(|e| RunError::io(&results, e))
}

/// Runs the trials without a row in trials.csv, in the planned order. Returns at the first
/// trial that fails with an error (after recording it); a diverged trial is a result, not a
/// failure, and the grid goes on.
pub fn work(
    study: &TrainStudy,
    dir: &Path,
    events: &dyn UnitEvents,
) -> Result<WorkerExit, RunError> {
    let done = done_trials(dir)?;
    let todo = to_try(&study.trials, |t: &Trial| &t.id, dir, &done)?;
    let data_dir = data_dir();
    let mut variants: BTreeMap<&str, VariantData> = BTreeMap::new();
    for trial in todo {
        if !claim(dir, &trial.id)? {
            continue;
        }
        if !variants.contains_key(trial.variant.as_str()) {
            let (label, config) = study
                .variants
                .iter()
                .find(|(label, _)| *label == trial.variant)
                .ok_or_else(|| RunError::Other(format!("unknown variant {}", trial.variant)))?;
            variants.insert(label, load_variant(config, &data_dir)?);
        }
        events.begin(&trial.id);
        let data = &variants[trial.variant.as_str()];
        let status = |message: &str| events.status(&trial.id, message);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            run_trial(study, dir, trial, data, &status)
        }))
        .unwrap_or_else(|panic| Err(panic_message(&panic)));
        match outcome {
            Ok(outcome) => {
                let summary = if outcome.status == "ok" {
                    format!("{:.1}% test accuracy", outcome.test_accuracy * 100.0)
                } else {
                    outcome.status.to_string()
                };
                append_rows(&dir.join("trials.csv"), &[record(trial, &outcome)])?;
                events.end(&trial.id, &summary);
            }
            Err(message) => {
                let status = failure_status(&message);
                append_rows(
                    &dir.join("trials.csv"),
                    &[failure_record(trial, status, &message)],
                )?;
                eprintln!("trial {} failed ({status}): {message}", trial.id);
                events.end(&trial.id, status);
                return Ok(WorkerExit::PointFailed);
            }
        }
    }
    Ok(WorkerExit::Finished)
}

/// Reads a `[data]` table's dataset into the shared form trials train on.
pub(crate) fn load_variant(config: &DataConfig, data_dir: &Path) -> Result<VariantData, RunError> {
    let data = config
        .load(data_dir)
        .map_err(|e| RunError::Other(e.to_string()))?;
    let splits = data.splits;
    Ok(VariantData {
        train: Arc::new(splits.train),
        validation: Arc::new(splits.validation),
        test: Arc::new(splits.test),
        train_pipeline: data.train,
        eval_pipeline: data.eval,
    })
}

fn run_trial(
    study: &TrainStudy,
    dir: &Path,
    trial: &Trial,
    data: &VariantData,
    status: &dyn Fn(&str),
) -> Result<Outcome, String> {
    let grid = &study.config.grid;
    let total_steps = trial.total_steps(grid, data.train.len());
    let optimizer = &study.config.optimizers[trial.optimizer];
    let plan = TrialPlan {
        data,
        batch_size: trial.batch_size as usize,
        seed: trial.seed,
        total_steps,
        evaluate_at: evaluation_plan(grid, total_steps),
        learning_rate: optimizer.learning_rate(),
        schedule: &study.config.schedule,
        drop_last: grid.drop_last,
        eval_batch_size: grid.eval_batch_size,
        divergence_factor: grid.divergence_factor,
        prefetch: grid.prefetch,
        evaluate_test: true,
        noise_every: None,
    };
    let results = dir.join("results.csv");
    let total = plan.total_steps;
    let mut write = |e: &Evaluation| {
        status(&format!(
            "epoch {:.1}, step {}/{total}, validation {:.1}%",
            e.epoch,
            e.step,
            e.accuracy * 100.0
        ));
        append_rows(&results, &[eval_row(trial, e)])
            .map(|()| Next::Continue)
            .map_err(|e| e.to_string())
    };
    trial::train(
        &study.config.backend,
        &study.spec,
        optimizer,
        trial.seed,
        &plan,
        &mut write,
    )
}

pub(crate) fn eval_row(trial: &Trial, e: &Evaluation) -> TrainEval {
    TrainEval {
        trial: trial.id.clone(),
        seed: trial.seed,
        batch_size: trial.batch_size,
        optimizer: trial.optimizer_label.clone(),
        variant: trial.variant.clone(),
        budget: trial.budget.as_str().into(),
        epoch: e.epoch,
        step: e.step,
        examples: e.examples,
        train_loss: e.train_loss,
        val_loss: e.loss,
        val_accuracy: e.accuracy,
        train_seconds: e.train_seconds,
        data_seconds: e.data_seconds,
        eval_seconds: e.eval_seconds,
    }
}

pub(crate) fn record(trial: &Trial, o: &Outcome) -> TrialRecord {
    TrialRecord {
        trial: trial.id.clone(),
        seed: trial.seed,
        batch_size: trial.batch_size,
        optimizer: trial.optimizer_label.clone(),
        variant: trial.variant.clone(),
        budget: trial.budget.as_str().into(),
        status: o.status.into(),
        epochs: o.epochs,
        steps: o.steps,
        examples: o.examples,
        train_seconds: o.train_seconds,
        data_seconds: o.data_seconds,
        eval_seconds: o.eval_seconds,
        test_seconds: o.test_seconds,
        test_loss: o.test_loss,
        test_accuracy: o.test_accuracy,
        message: o.message.clone(),
    }
}

pub(crate) fn failure_record(trial: &Trial, status: &str, message: &str) -> TrialRecord {
    TrialRecord {
        status: status.into(),
        message: message.into(),
        ..record(
            trial,
            &Outcome {
                status: "error",
                message: String::new(),
                epochs: f64::NAN,
                steps: 0,
                examples: 0,
                train_seconds: f64::NAN,
                data_seconds: f64::NAN,
                eval_seconds: f64::NAN,
                test_seconds: f64::NAN,
                test_loss: f64::NAN,
                test_accuracy: f64::NAN,
                gradient_norms: Vec::new(),
            },
        )
    }
}

/// Writes summary.csv, figures and report.md; returns the headline findings.
pub fn render(study: &TrainStudy, dir: &Path) -> Result<Vec<String>, RunError> {
    let config = &study.config;
    let (backend, device) = backend_and_device(dir, &config.backend);
    let data_dir = data_dir();
    let mut dataset = vec![format!(
        "{} (data directory {})",
        config.data.name.as_str(),
        data_dir.display()
    )];
    let mut test_examples = 0;
    for (label, data) in &study.variants {
        match data.load(&data_dir) {
            Ok(loaded) => {
                test_examples = loaded.splits.test.len();
                dataset.push(format!(
                    "variant {label}: {} train / {} validation / {} test examples",
                    loaded.splits.train.len(),
                    loaded.splits.validation.len(),
                    loaded.splits.test.len()
                ));
                dataset.extend(
                    loaded
                        .notes
                        .into_iter()
                        .map(|n| format!("variant {label}: {n}")),
                );
            }
            Err(e) => dataset.push(format!("variant {label}: not loadable here ({e})")),
        }
    }
    let context = TrainContext {
        experiment: config.experiment.name.clone(),
        description: config.experiment.description.clone(),
        reproduces: config.experiment.reproduces.clone(),
        claim: config.experiment.claim.clone(),
        model: study.model_line(),
        dataset,
        backend,
        device,
        protocol: study.protocol(),
        test_examples,
        published: config
            .analysis
            .published
            .iter()
            .map(|p| Published {
                batch_size: p.batch_size,
                series: p.series.clone(),
                metric: p.metric.clone(),
                value: p.value,
                source: p.source.clone(),
            })
            .collect(),
    };
    let findings = render_train(dir, &context)?;
    Ok(findings.lines)
}
