//! The one driver (docs/ARCHITECTURE.md, "The one driver"): how every kind of study runs.
//! A kind implements [`StudyPlan`] (its resolved plan and its analysis) and [`Units`] (its
//! unit of work and the rows one unit writes, also when its worker dies). Supervision, crash records, "every
//! unit failed", the header context of the report and the session's [`Study`] are written here
//! once, for all of them.

use std::{
    panic::{catch_unwind, AssertUnwindSafe},
    path::{Path, PathBuf},
};

use batchlab_datasets::spec::DatasetName;
use batchlab_method::rows::Status;
use batchlab_report::about::About;

use crate::{
    backend::panic_message,
    claim_registry::Registry,
    context::RunContext,
    error::RunError,
    isolate::{failure_status, supervise, Crash, UnitEvents, WorkerExit},
    progress::Progress,
    run_dir::about,
    study::{PlannedSteps, Rendered, Study, StudyConfig},
};

/// What a kind of study is: its resolved plan and its analysis.
pub trait StudyPlan {
    /// See [`Study::config`].
    fn config(&self) -> &dyn StudyConfig;
    /// See [`Study::plan`].
    fn plan(&self) -> Vec<String>;
    /// See [`Study::datasets`].
    fn datasets(&self) -> Vec<DatasetName> {
        Vec::new()
    }
    /// See [`Study::planned_steps`].
    fn planned_steps(&self) -> Vec<PlannedSteps> {
        Vec::new()
    }
    /// The protocol in one line, for the report's header.
    fn protocol(&self) -> String;
    /// Analyses the run in `dir` and writes summary.csv, the figures and report.md under the
    /// header `about`, each registered claim in `registry`'s words.
    fn render(
        &self,
        dir: &Path,
        about: About,
        context: &RunContext,
        registry: &Registry,
    ) -> Result<Rendered, RunError>;
}

/// How a kind's work divides into units, and what one unit writes.
pub trait Units {
    /// One unit of work: a visit of a batch size, a probe, a trial.
    type Unit;
    /// The progress bar's title, e.g. "step-time sweep".
    const WHAT: &'static str;
    /// What a unit is called where every one failed, e.g. "trial".
    const UNIT: &'static str;
    /// See [`Study::shardable`].
    fn shardable(&self) -> bool {
        false
    }
    /// See [`Study::unit_ids`].
    fn unit_ids(&self) -> Vec<String> {
        Vec::new()
    }
    /// Readies `dir` before its workers start (drops what an interrupted run half-wrote,
    /// refuses what cannot run under `context`), and says how many units the progress bar
    /// counts.
    fn units_left(&self, dir: &Path, context: &RunContext) -> Result<u64, RunError>;
    /// The unit a worker announced as `id`, if the plan has one.
    fn unit(&self, id: &str) -> Option<Self::Unit>;
    /// Writes the rows of `unit`, whose worker process died.
    fn record_crash(&self, dir: &Path, unit: &Self::Unit, crash: &Crash) -> Result<(), RunError>;
    /// What supervision leaves behind to clear, whatever its outcome. By default, nothing.
    fn after_supervision(&self) {}
    /// Every unit's recorded outcome in `dir`, for "every unit failed".
    fn outcomes(&self, dir: &Path) -> Result<Outcomes, RunError>;
    /// Does the remaining work in `dir`, announcing each unit: the worker side of
    /// [`crate::isolate`], in a child process or in this one.
    fn work(
        &self,
        dir: &Path,
        context: &RunContext,
        events: &dyn UnitEvents,
    ) -> Result<WorkerExit, RunError>;
}

/// The units recorded in a run directory: their file, and each unit's label, status and
/// message (a unit measured in several rows may give one per row).
#[derive(Debug, Clone, Default)]
pub struct Outcomes {
    /// The file the rows are in, for the error to point at.
    pub file: PathBuf,
    /// `(label, status, message)` per unit or row, in the file's order.
    pub units: Vec<(String, Status, String)>,
}

impl Outcomes {
    /// An error if the run recorded units and every one of them failed (`oom` or `error`):
    /// such a run has no result, and its exit code and meta.json must say so.
    fn every_one_failed(&self, unit: &str) -> Result<(), RunError> {
        let Some((label, status, message)) = self.units.first() else {
            return Ok(());
        };
        if self.units.iter().any(|(_, s, _)| !s.failed()) {
            return Ok(());
        }
        let n = self.units.len();
        Err(RunError::NothingSucceeded(format!(
            "every {unit} failed ({n} of {n}); the first: {label} ({status}: {message}); see {}",
            self.file.display()
        )))
    }
}

impl<S: StudyPlan + Units> Study for S {
    fn config(&self) -> &dyn StudyConfig {
        StudyPlan::config(self)
    }
    fn plan(&self) -> Vec<String> {
        StudyPlan::plan(self)
    }
    fn datasets(&self) -> Vec<DatasetName> {
        StudyPlan::datasets(self)
    }
    fn planned_steps(&self) -> Vec<PlannedSteps> {
        StudyPlan::planned_steps(self)
    }
    fn shardable(&self) -> bool {
        Units::shardable(self)
    }
    fn unit_ids(&self) -> Vec<String> {
        Units::unit_ids(self)
    }
    fn run(
        &self,
        dir: &Path,
        context: &RunContext,
        progress: &dyn Progress,
    ) -> Result<(), RunError> {
        drive(self, dir, context, progress)
    }
    fn work(
        &self,
        dir: &Path,
        context: &RunContext,
        events: &dyn UnitEvents,
    ) -> Result<WorkerExit, RunError> {
        Units::work(self, dir, context, events)
    }
    fn render(
        &self,
        dir: &Path,
        context: &RunContext,
        registry: &Registry,
    ) -> Result<Rendered, RunError> {
        let config = StudyPlan::config(self);
        let about = about(
            dir,
            config.experiment(),
            config.backend(),
            StudyPlan::protocol(self),
        );
        StudyPlan::render(self, dir, about, context, registry)
    }
}

/// Runs the study's workers until every unit is done or recorded as failed, a dead worker's
/// unit recorded by the kind; then refuses a run in which every unit failed.
fn drive<S: StudyPlan + Units>(
    study: &S,
    dir: &Path,
    context: &RunContext,
    progress: &dyn Progress,
) -> Result<(), RunError> {
    let left = study.units_left(dir, context)?;
    progress.start(left, S::WHAT);
    let record_crash = |id: &str, crash: &Crash| {
        let unit = study
            .unit(id)
            .ok_or_else(|| RunError::Other(format!("worker announced an unknown unit {id:?}")))?;
        study.record_crash(dir, &unit, crash)
    };
    let outcome = supervise(
        dir,
        &context.isolation,
        progress,
        &StudyPlan::config(study).backend().worker_env(),
        &|events| Units::work(study, dir, context, events),
        &record_crash,
    );
    study.after_supervision();
    progress.finish();
    outcome?;
    study.outcomes(dir)?.every_one_failed(S::UNIT)
}

/// One unit inside a worker: announced, measured (a panic caught as its failure), then its
/// rows written by `done` (which gives the one-line summary) or its failure by `failed`.
/// `Some` ends the worker: the unit failed, and a fresh process takes the next.
pub fn one_unit<T>(
    events: &dyn UnitEvents,
    id: &str,
    label: &str,
    measure: impl FnOnce() -> Result<T, String>,
    done: impl FnOnce(T) -> Result<String, RunError>,
    failed: impl FnOnce(Status, &str) -> Result<(), RunError>,
) -> Result<Option<WorkerExit>, RunError> {
    events.begin(id);
    let measured =
        catch_unwind(AssertUnwindSafe(measure)).unwrap_or_else(|panic| Err(panic_message(&panic)));
    match measured {
        Ok(value) => {
            let summary = done(value)?;
            events.end(id, &summary);
            Ok(None)
        }
        Err(message) => {
            let status = failure_status(&message);
            failed(status, &message)?;
            eprintln!("{label} failed ({status}): {message}");
            events.end(id, status.as_str());
            Ok(Some(WorkerExit::PointFailed))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes(statuses: &[Status]) -> Outcomes {
        Outcomes {
            file: "trials.csv".into(),
            units: statuses
                .iter()
                .enumerate()
                .map(|(i, &s)| (format!("u{i}"), s, "why".to_string()))
                .collect(),
        }
    }

    #[test]
    fn a_run_fails_only_when_every_recorded_unit_failed() {
        assert!(outcomes(&[]).every_one_failed("trial").is_ok());
        assert!(outcomes(&[Status::Oom, Status::Ok])
            .every_one_failed("trial")
            .is_ok());
        // A diverged trial is a result, not a failure.
        assert!(outcomes(&[Status::Error, Status::Diverged])
            .every_one_failed("trial")
            .is_ok());
        let err = outcomes(&[Status::Error, Status::Oom])
            .every_one_failed("trial")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("every trial failed (2 of 2); the first: u0 (error: why); see trials.csv"),
            "{err}"
        );
    }

    #[test]
    fn a_panicking_unit_is_a_recorded_failure_that_ends_the_worker() {
        struct Quiet;
        impl UnitEvents for Quiet {
            fn begin(&self, _: &str) {}
            fn end(&self, _: &str, _: &str) {}
        }
        let recorded = std::cell::RefCell::new(None);
        let exit = one_unit::<()>(
            &Quiet,
            "u",
            "unit u",
            || panic!("out of memory"),
            |_| Ok(String::new()),
            |status, message| {
                *recorded.borrow_mut() = Some((status, message.to_string()));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(exit, Some(WorkerExit::PointFailed));
        let (status, message) = recorded.into_inner().unwrap();
        assert_eq!(status, Status::Oom, "{message}");
        let ok = one_unit(
            &Quiet,
            "u",
            "unit u",
            || Ok(3),
            |v| Ok(format!("{v}")),
            |_, _| unreachable!(),
        );
        assert_eq!(ok.unwrap(), None);
    }
}
