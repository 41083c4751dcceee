//! Running a study made of independent training trials: the supervisor (child workers, crash
//! records, resume) and the worker loop (claim, train, write rows, announce). `train` and
//! `steps_to_target` both run through here; neither knows the other.

use std::{
    collections::BTreeSet,
    panic::{catch_unwind, AssertUnwindSafe},
    path::Path,
    time::Duration,
};

use batchlab_datasets::spec::DatasetName;
use batchlab_method::rows::Status;
use batchlab_method::rows::{
    append_rows, read_rows_so_far, retain_rows,
    train::{done_trials, TrainEval, TrialRecord},
    TrialRow,
};

use super::rows::{failure_record, TrialLabels};
use crate::{
    backend::panic_message,
    context::RunContext,
    error::RunError,
    isolate::{failure_status, interrupted, supervise, Crash, UnitEvents, WorkerExit},
    progress::Progress,
    shard::{claim, done_in_run, pending, release_unfinished_claims, to_try},
    study::{PlannedSteps, Rendered, Study, StudyConfig},
};

/// A study whose units are training trials, each done once it has a row in trials.csv. A kind
/// implements this; the [`Study`] the session runs comes with it (supervisor, worker loop,
/// shards, resume and crash records are the same for every such kind).
pub trait TrialStudy {
    /// One trial of the study.
    type Trial;
    /// What a worker keeps between trials.
    type Worker<'a>: TrialWorker<Self::Trial>
    where
        Self: 'a;
    /// The progress bar's title, e.g. "training trials".
    const WHAT: &'static str;
    /// See [`Study::config`].
    fn config(&self) -> &dyn StudyConfig;
    /// See [`Study::plan`].
    fn plan(&self) -> Vec<String>;
    /// See [`Study::datasets`].
    fn datasets(&self) -> Vec<DatasetName>;
    /// See [`Study::planned_steps`].
    fn planned_steps(&self) -> Vec<PlannedSteps>;
    /// See [`Study::render`].
    fn render(&self, dir: &Path, context: &RunContext) -> Result<Rendered, RunError>;
    /// Every trial, in the planned order.
    fn trials(&self) -> &[Self::Trial];
    /// A trial's id: its unit name in the worker protocol and its key in trials.csv.
    fn id(trial: &Self::Trial) -> &str;
    /// Whether `trial` may start, given the trials finished anywhere in the run (every
    /// shard's): a trial planned from others' results waits for them. By default, always.
    fn ready(&self, _trial: &Self::Trial, _done_in_run: &BTreeSet<String>) -> bool {
        true
    }
    /// How the trial is named in the result rows.
    fn labels(&self, trial: &Self::Trial) -> TrialLabels;
    /// A worker for `dir`, before its first trial.
    fn worker<'a>(&'a self, dir: &'a Path, context: &'a RunContext) -> Self::Worker<'a>;
    /// Drops from `dir` the rows of trials that never finished (not in `done`: an interrupted
    /// run), so that a trial run again writes its rows once. By default, its evaluations in
    /// results.csv.
    fn drop_unfinished(&self, dir: &Path, done: &BTreeSet<String>) -> Result<(), RunError> {
        drop_unfinished::<TrainEval>(&dir.join("results.csv"), done)
    }
    /// Writes the rows of a trial that failed (`status` `oom` or `error`), in the worker or, when
    /// its process died, in the supervisor. By default, its trials.csv row.
    fn record_failure(
        &self,
        dir: &Path,
        trial: &Self::Trial,
        status: Status,
        message: &str,
    ) -> Result<(), RunError> {
        append_failure(dir, &self.labels(trial), status, message)
    }
}

impl<S: TrialStudy> Study for S {
    fn config(&self) -> &dyn StudyConfig {
        TrialStudy::config(self)
    }
    fn plan(&self) -> Vec<String> {
        TrialStudy::plan(self)
    }
    fn datasets(&self) -> Vec<DatasetName> {
        TrialStudy::datasets(self)
    }
    fn planned_steps(&self) -> Vec<PlannedSteps> {
        TrialStudy::planned_steps(self)
    }
    fn shardable(&self) -> bool {
        true
    }
    fn unit_ids(&self) -> Vec<String> {
        self.trials().iter().map(|t| S::id(t).to_string()).collect()
    }
    fn run(
        &self,
        dir: &Path,
        context: &RunContext,
        progress: &dyn Progress,
    ) -> Result<(), RunError> {
        supervise_trials(self, dir, context, progress)
    }
    fn work(
        &self,
        dir: &Path,
        context: &RunContext,
        events: &dyn UnitEvents,
    ) -> Result<WorkerExit, RunError> {
        work_trials(self, dir, events, &mut self.worker(dir, context))
    }
    fn render(&self, dir: &Path, context: &RunContext) -> Result<Rendered, RunError> {
        TrialStudy::render(self, dir, context)
    }
}

/// What a kind does with one trial inside a worker (it may keep loaded data between trials).
pub trait TrialWorker<T> {
    /// What training returns to [`TrialWorker::finish`].
    type Outcome;
    /// Gets what the trial needs (its dataset) before it is announced; an error here stops
    /// the worker rather than failing one trial, as every trial would fail alike.
    fn prepare(&mut self, _trial: &T) -> Result<(), RunError> {
        Ok(())
    }
    /// Trains the trial (a panic in here is caught and recorded as a failure), saying where it
    /// is through `status`. An `Err` is the failure's message.
    fn train(&mut self, trial: &T, status: &dyn Fn(&str)) -> Result<Self::Outcome, String>;
    /// Writes the rows of a trial that trained; returns its one-line summary.
    fn finish(&mut self, trial: &T, outcome: Self::Outcome) -> Result<String, RunError>;
}

/// Appends the trials.csv row of a failed trial.
pub fn append_failure(
    dir: &Path,
    labels: &TrialLabels,
    status: Status,
    message: &str,
) -> Result<(), RunError> {
    let row = failure_record(labels, status, message);
    append_rows(&dir.join("trials.csv"), &[row])?;
    Ok(())
}

/// Drops half-written evaluations of unfinished trials, then runs the study's workers until
/// every trial of this directory's shard has a row in trials.csv.
fn supervise_trials<S: TrialStudy>(
    study: &S,
    dir: &Path,
    context: &RunContext,
    progress: &dyn Progress,
) -> Result<(), RunError> {
    let done = done_trials(dir)?;
    study.drop_unfinished(dir, &done)?;
    release_unfinished_claims(dir, &done)?;
    let left = pending(study.trials(), S::id, dir, &done)?.len();
    progress.start(left as u64, S::WHAT);
    let record_crash = |unit: &str, crash: &Crash| {
        let trial = study
            .trials()
            .iter()
            .find(|t| S::id(t) == unit)
            .ok_or_else(|| {
                RunError::Other(format!("worker announced an unknown trial {unit:?}"))
            })?;
        study.record_failure(dir, trial, crash.status, &crash.message)
    };
    let outcome = supervise(
        dir,
        &context.isolation,
        progress,
        &study.backend().worker_env(),
        &|events| study.work(dir, context, events),
        &record_crash,
    );
    progress.finish();
    outcome?;
    every_trial_failed(dir)
}

/// An error if every trial recorded in `dir` failed (`oom` or `error`): such a run has no
/// result, and its exit code and meta.json must say so.
fn every_trial_failed(dir: &Path) -> Result<(), RunError> {
    let path = dir.join("trials.csv");
    if !batchlab_method::rows::stored::exists(&path) {
        return Ok(());
    }
    let trials: Vec<TrialRecord> = read_rows_so_far(&path)?;
    let failed = |t: &TrialRecord| t.status == Status::Oom || t.status == Status::Error;
    match trials.iter().find(|t| !failed(t)) {
        Some(_) => Ok(()),
        None if trials.is_empty() => Ok(()),
        None => Err(RunError::NothingSucceeded(format!(
            "every trial failed ({} of {}); the first: {} ({}: {}); see {}",
            trials.len(),
            trials.len(),
            trials[0].trial,
            trials[0].status,
            trials[0].message,
            path.display()
        ))),
    }
}

/// How long a worker whose remaining trials all wait for others' results sleeps before it
/// looks again.
const WAIT_FOR_READY: Duration = Duration::from_secs(3);

/// The worker: runs the trials without a row in trials.csv, in the planned order (then, for a
/// shard, the other shards' unclaimed ones), passing over those not yet [`TrialStudy::ready`]
/// and coming back to them until none is left waiting. Returns at the first trial that fails,
/// after recording it; a diverged trial is a result, not a failure, and the study goes on.
fn work_trials<S: TrialStudy, W: TrialWorker<S::Trial>>(
    study: &S,
    dir: &Path,
    events: &dyn UnitEvents,
    worker: &mut W,
) -> Result<WorkerExit, RunError> {
    loop {
        let done = done_trials(dir)?;
        let done_in_run = done_in_run(dir)?;
        let (mut waiting, mut ran) = (false, false);
        for trial in to_try(study.trials(), S::id, dir, &done)? {
            if interrupted() {
                return Err(RunError::Interrupted);
            }
            let id = S::id(trial);
            if done_in_run.contains(id) {
                continue;
            }
            if !study.ready(trial, &done_in_run) {
                waiting = true;
                continue;
            }
            if !claim(dir, id)? {
                continue;
            }
            ran = true;
            if let Some(exit) = run_one(study, dir, events, worker, trial)? {
                return Ok(exit);
            }
        }
        if !waiting {
            return Ok(WorkerExit::Finished);
        }
        if !ran {
            std::thread::sleep(WAIT_FOR_READY);
        }
    }
}

/// Trains one claimed trial and writes its rows; `Some` ends the worker (the trial failed).
fn run_one<S: TrialStudy, W: TrialWorker<S::Trial>>(
    study: &S,
    dir: &Path,
    events: &dyn UnitEvents,
    worker: &mut W,
    trial: &S::Trial,
) -> Result<Option<WorkerExit>, RunError> {
    let id = S::id(trial);
    worker.prepare(trial)?;
    events.begin(id);
    let status = |message: &str| events.status(id, message);
    let outcome = catch_unwind(AssertUnwindSafe(|| worker.train(trial, &status)))
        .unwrap_or_else(|panic| Err(panic_message(&panic)));
    match outcome {
        Ok(outcome) => {
            let summary = worker.finish(trial, outcome)?;
            events.end(id, &summary);
            Ok(None)
        }
        Err(message) => {
            let status = failure_status(&message);
            study.record_failure(dir, trial, status, &message)?;
            eprintln!("trial {id} failed ({status}): {message}");
            events.end(id, status.as_str());
            Ok(Some(WorkerExit::PointFailed))
        }
    }
}

/// Removes from the file at `path` the rows of trials not in `done` (an interrupted run), so a
/// resumed trial's rows appear once. The file is replaced atomically.
pub fn drop_unfinished<T: TrialRow + Clone>(
    path: &Path,
    done: &BTreeSet<String>,
) -> Result<(), RunError> {
    Ok(retain_rows(path, |r: &T| done.contains(r.trial()))?)
}
