//! The units of a study made of independent training trials, for the one driver
//! ([`crate::drive`]): resume (rows of unfinished trials dropped, claims released), crash
//! records, and the worker loop (claim, train, write rows, announce). `train` and
//! `steps_to_target` both run through here; neither knows the other.

use std::{collections::BTreeSet, path::Path, time::Duration};

use batchlab_method::rows::Status;
use batchlab_method::rows::{
    append_rows, read_rows_so_far, retain_rows,
    train::{done_trials, TrainEval, TrialRecord},
    TrialRow,
};

use super::rows::{failure_record, TrialLabels};
use crate::{
    context::RunContext,
    drive::{one_unit, Outcomes, Units},
    error::RunError,
    isolate::{interrupted, Crash, UnitEvents, WorkerExit},
    shard::{claim, done_in_run, pending, release_unfinished_claims, to_try},
};

/// A study whose units are training trials, each done once it has a row in trials.csv. A kind
/// implements this beside its [`crate::drive::StudyPlan`]; its [`Units`] come with it (worker loop, shards,
/// resume and crash records are the same for every such kind).
pub trait TrialStudy {
    /// One trial of the study.
    type Trial;
    /// What a worker keeps between trials.
    type Worker<'a>: TrialWorker<Self::Trial>
    where
        Self: 'a;
    /// The progress bar's title, e.g. "training trials".
    const WHAT: &'static str;
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

impl<S: TrialStudy> Units for S {
    type Unit = usize;
    const WHAT: &'static str = S::WHAT;
    const UNIT: &'static str = "trial";
    fn shardable(&self) -> bool {
        true
    }
    fn unit_ids(&self) -> Vec<String> {
        self.trials().iter().map(|t| S::id(t).to_string()).collect()
    }
    /// Drops half-written rows of unfinished trials and releases their claims; counts the
    /// trials of this directory's shard without a row in trials.csv.
    fn units_left(&self, dir: &Path, _context: &RunContext) -> Result<u64, RunError> {
        let done = done_trials(dir)?;
        self.drop_unfinished(dir, &done)?;
        release_unfinished_claims(dir, &done)?;
        Ok(pending(self.trials(), S::id, dir, &done)?.len() as u64)
    }
    /// The trial's index in the plan.
    fn unit(&self, id: &str) -> Option<usize> {
        self.trials().iter().position(|t| S::id(t) == id)
    }
    fn record_crash(&self, dir: &Path, unit: &usize, crash: &Crash) -> Result<(), RunError> {
        self.record_failure(dir, &self.trials()[*unit], crash.status, &crash.message)
    }
    fn outcomes(&self, dir: &Path) -> Result<Outcomes, RunError> {
        let file = dir.join("trials.csv");
        let trials: Vec<TrialRecord> = if batchlab_method::rows::stored::exists(&file) {
            read_rows_so_far(&file)?
        } else {
            Vec::new()
        };
        Ok(Outcomes {
            units: trials
                .into_iter()
                .map(|t| (t.trial, t.status, t.message))
                .collect(),
            file,
        })
    }
    fn work(
        &self,
        dir: &Path,
        context: &RunContext,
        events: &dyn UnitEvents,
    ) -> Result<WorkerExit, RunError> {
        work_trials(self, dir, events, &mut self.worker(dir, context))
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
    let status = |message: &str| events.status(id, message);
    let worker = std::cell::RefCell::new(worker);
    one_unit(
        events,
        id,
        &format!("trial {id}"),
        || worker.borrow_mut().train(trial, &status),
        |outcome| worker.borrow_mut().finish(trial, outcome),
        |status, message| study.record_failure(dir, trial, status, message),
    )
}

/// Removes from the file at `path` the rows of trials not in `done` (an interrupted run), so a
/// resumed trial's rows appear once. The file is replaced atomically.
pub fn drop_unfinished<T: TrialRow + Clone>(
    path: &Path,
    done: &BTreeSet<String>,
) -> Result<(), RunError> {
    Ok(retain_rows(path, |r: &T| done.contains(r.trial()))?)
}
