//! Running a sweep: the supervisor side (child processes, crash records), the worker side (the
//! generic measuring loop), and rendering the report.

use std::{
    collections::HashSet,
    panic::{catch_unwind, AssertUnwindSafe},
    path::{Path, PathBuf},
};

use batchlab_method::rows::Status;
use batchlab_method::rows::{
    append_rows, read_rows_so_far, retain_rows,
    step_time::{StageSample, StepSample, WarmupSample},
};
use batchlab_method::stats::median;
use batchlab_report::step_time::{render_step_time, StepTimeContext, StepTimeRules};

use super::{anatomy::stage_rows, plan::Visit, remaining_visits, StepTimeStudy};
use crate::{
    backend::{self, panic_message},
    config::BackendKind,
    context::RunContext,
    error::RunError,
    isolate::{failure_status, interrupted, supervise, Crash, UnitEvents, WorkerExit},
    progress::Progress,
    run_dir::about,
    study::{Rendered, Study},
    sweeps::{machine_of, newest_run_on},
    timed_step::{with_stepper, StepSetup, Stepper},
};

/// Supervises the sweep until every visit is measured or recorded as failed.
pub fn run(
    study: &StepTimeStudy,
    dir: &Path,
    context: &RunContext,
    progress: &dyn Progress,
) -> Result<(), RunError> {
    let left = remaining_visits(&study.visits(), &read_done(dir)?, &read_dissected(dir)?).len();
    progress.start(left as u64, "step-time sweep");
    let record_crash = |unit: &str, crash: &Crash| {
        let visit = Visit::parse_id(unit)
            .ok_or_else(|| RunError::Other(format!("worker announced an unknown unit {unit:?}")))?;
        let row = failure_row(study, visit, crash.status, &crash.message);
        append_rows(&dir.join("results.csv"), &[row])?;
        Ok(())
    };
    let outcome = supervise(
        dir,
        &context.isolation,
        progress,
        &study.config.backend.worker_env(),
        &|events| study.work(dir, context, events),
        &record_crash,
    );
    progress.finish();
    outcome?;
    let samples = read_done(dir)?;
    match samples.iter().find(|s| s.status != Status::Ok) {
        Some(first) if samples.iter().all(|s| s.status != Status::Ok) => {
            Err(RunError::NothingSucceeded(format!(
                "every batch size failed; the first: batch {} ({}: {}); see {}",
                first.batch_size,
                first.status,
                first.message,
                dir.join("results.csv").display()
            )))
        }
        _ => Ok(()),
    }
}

/// Measures the visits still to do, in the planned order, appending each visit's samples to
/// results.csv as one block. Returns at the first failed visit, after recording it.
pub fn work(
    study: &StepTimeStudy,
    dir: &Path,
    events: &dyn UnitEvents,
) -> Result<WorkerExit, RunError> {
    let done = read_done(dir)?;
    drop_orphan_warmup(dir, &done)?;
    let todo = remaining_visits(&study.visits(), &done, &read_dissected(dir)?);
    if todo.is_empty() {
        return Ok(WorkerExit::Finished);
    }
    let setup = StepSetup {
        backend: &study.config.backend,
        model: &study.config.model,
        optimizer: &study.config.optimizer,
        seed: study.config.sweep.seed,
    };
    with_stepper(setup, |stepper| {
        measure_visits(study, dir, events, todo, stepper)
    })?
}

/// The newest complete run of experiment `name` in the report root that holds `dir`
/// (`<root>/<experiment>/<run>`) made on `dir`'s machine (backend, device, threads, kernels).
fn newest_run_beside(dir: &Path, name: &str) -> Option<PathBuf> {
    // The reference's newest complete run on this run's machine, not its `latest`: a sweep of
    // another CPU (or other kernels) says nothing about how much this one fluctuates.
    let root = dir.parent()?.parent()?;
    newest_run_on(root, name, &machine_of(dir)?)
}

/// Writes summary.csv, figures and report.md; returns the headline findings.
pub fn render(study: &StepTimeStudy, dir: &Path) -> Result<Rendered, RunError> {
    let config = &study.config;
    let about = about(dir, &config.experiment, &config.backend, study.protocol());
    let memory_kind = match BackendKind::parse(&about.backend) {
        Ok(kind) if kind.on_cpu() => "peak resident set size of the batchlab process during a visit, lowest over the rounds (memory the allocator kept from an earlier, larger visit can only inflate a reading)",
        Ok(BackendKind::Cuda | BackendKind::Wgpu) => "device memory reserved by the CubeCL allocator, the most seen after any step of a visit (its memory statistics, for the worker's stream), lowest over the rounds",
        _ => "not measured on this backend",
    };
    let context = StepTimeContext {
        about,
        claimed_jumps: config.analysis.claimed_jumps.clone(),
        no_jumps_at: config.analysis.no_jumps_at.clone(),
        rules: StepTimeRules {
            linear_margin: config.analysis.linear_margin,
            no_jumps_margin: config.analysis.no_jumps_margin,
            jump_margin: config.analysis.jump_margin,
            gap: config.analysis.jump_gap,
            max_jump_ratio: config.analysis.max_jump_ratio,
            slower_max_ratio: config.analysis.slower_max_ratio,
        },
        fluctuates_more_than: config
            .analysis
            .fluctuates_more_than
            .as_ref()
            .map(|name| (name.clone(), newest_run_beside(dir, name))),
        slower_than: config
            .analysis
            .slower_than
            .as_ref()
            .map(|name| (name.clone(), newest_run_beside(dir, name))),
        model: study.model_line(),
        memory_kind: memory_kind.into(),
        bootstrap_resamples: config.analysis.bootstrap_resamples,
        seed: config.sweep.seed,
    };
    let findings = render_step_time(dir, &context)?;
    Ok(Rendered {
        lines: findings.lines(),
        claims: findings.claims,
    })
}

fn read_done(dir: &Path) -> Result<Vec<StepSample>, RunError> {
    let results = dir.join("results.csv");
    if batchlab_method::rows::stored::exists(&results) {
        Ok(read_rows_so_far(&results)?)
    } else {
        Ok(Vec::new())
    }
}

/// Drops the warm-up rows of visits with no row in results.csv: a visit's warm-up rows are
/// written just before its samples, so a worker killed in between leaves them for a visit that
/// runs again.
fn drop_orphan_warmup(dir: &Path, done: &[StepSample]) -> Result<(), RunError> {
    let visits: HashSet<(u32, u32)> = done.iter().map(|s| (s.round, s.batch_size)).collect();
    Ok(retain_rows(&dir.join(WARMUP), |r: &WarmupSample| {
        visits.contains(&(r.round, r.batch_size))
    })?)
}

/// The raw table of every visit's warm-up steps.
const WARMUP: &str = "warmup.csv";

/// (round, batch size) of every dissecting visit with rows in stages.csv.
fn read_dissected(dir: &Path) -> Result<HashSet<(u32, u32)>, RunError> {
    let stages = dir.join("stages.csv");
    if !batchlab_method::rows::stored::exists(&stages) {
        return Ok(HashSet::new());
    }
    let rows: Vec<StageSample> = read_rows_so_far(&stages)?;
    Ok(rows.iter().map(|r| (r.round, r.batch_size)).collect())
}

fn failure_row(study: &StepTimeStudy, visit: Visit, status: Status, message: &str) -> StepSample {
    StepSample {
        batch_size: visit.batch_size,
        round: visit.round,
        sample: None,
        step_ms: None,
        status,
        backend: study.config.backend.name.to_string(),
        device: backend::device_name(&study.config.backend),
        peak_mem_mb: None,
        message: message.into(),
    }
}

/// Measures `todo` in order in this process, one results block per visit; stops at the first
/// failed visit after recording it.
fn measure_visits(
    study: &StepTimeStudy,
    dir: &Path,
    events: &dyn UnitEvents,
    todo: Vec<Visit>,
    stepper: &mut dyn Stepper,
) -> Result<WorkerExit, RunError> {
    let config = &study.config;
    let results = dir.join("results.csv");
    let backend_name = config.backend.name.to_string();
    let device_name = backend::device_name(&config.backend);
    let track_memory = config.backend.name.on_cpu();
    for visit in todo {
        if interrupted() {
            return Err(RunError::Interrupted);
        }
        events.begin(&visit.id());
        if visit.dissect {
            if let Some(exit) = dissect_visit(study, dir, events, visit, stepper)? {
                return Ok(exit);
            }
            continue;
        }
        let measured = catch_unwind(AssertUnwindSafe(|| {
            // Same data for a batch size in every round.
            stepper.visit(
                visit.batch_size as usize,
                config.sweep.seed ^ u64::from(visit.batch_size),
                study.warmup(),
                config.sweep.samples,
                track_memory,
            )
        }))
        .unwrap_or_else(|panic| Err(panic_message(&panic)));
        match measured {
            Ok(result) => {
                let message = if result.last_loss.is_finite() {
                    String::new()
                } else {
                    format!("loss was {} after the visit", result.last_loss)
                };
                let rows: Vec<StepSample> = result
                    .step_ms
                    .iter()
                    .enumerate()
                    .map(|(i, ms)| StepSample {
                        batch_size: visit.batch_size,
                        round: visit.round,
                        sample: Some(i as u32),
                        step_ms: Some(*ms),
                        status: Status::Ok,
                        backend: backend_name.clone(),
                        device: device_name.clone(),
                        // On a device, the memory its CubeCL allocator had reserved at its
                        // peak during the visit (what a step needs there, in MiB).
                        peak_mem_mb: result.peak_mem_mb.or(result
                            .device_memory_peak
                            .map(|(_, reserved)| reserved as f64 / (1024.0 * 1024.0))),
                        message: message.clone(),
                    })
                    .collect();
                let warmup: Vec<WarmupSample> = result
                    .warmup_ms
                    .iter()
                    .enumerate()
                    .map(|(i, &step_ms)| WarmupSample {
                        batch_size: visit.batch_size,
                        round: visit.round,
                        step: i as u32,
                        step_ms,
                        ended: result.warmup_end,
                    })
                    .collect();
                // Warm-up first: a visit with samples has its warm-up rows (see
                // `drop_orphan_warmup`).
                append_rows(&dir.join(WARMUP), &warmup)?;
                append_rows(&results, &rows)?;
                events.end(&visit.id(), &format!("{:.1} ms", median(&result.step_ms)));
            }
            Err(message) => {
                let status = failure_status(&message);
                let row = failure_row(study, visit, status, &message);
                append_rows(&results, &[row])?;
                eprintln!(
                    "batch size {} failed ({status}): {message}",
                    visit.batch_size
                );
                events.end(&visit.id(), status.as_str());
                return Ok(WorkerExit::PointFailed);
            }
        }
    }
    Ok(WorkerExit::Finished)
}

/// One visit of `[anatomy]`: its steps taken apart, appended to stages.csv as one block. A
/// failure is recorded in results.csv as the batch size's (the same shape fails the same way)
/// and ends the worker (`Some`).
fn dissect_visit(
    study: &StepTimeStudy,
    dir: &Path,
    events: &dyn UnitEvents,
    visit: Visit,
    stepper: &mut dyn Stepper,
) -> Result<Option<WorkerExit>, RunError> {
    let config = &study.config;
    let anatomy = config
        .anatomy
        .as_ref()
        .ok_or_else(|| RunError::Other("a dissecting visit without [anatomy]".into()))?;
    let measured = catch_unwind(AssertUnwindSafe(|| {
        stepper.dissect(
            visit.batch_size as usize,
            config.sweep.seed ^ u64::from(visit.batch_size),
            anatomy.warmup_steps,
            anatomy.samples,
        )
    }))
    .unwrap_or_else(|panic| Err(panic_message(&panic)));
    match measured {
        Ok(d) => {
            let steps: Vec<f64> = d.samples.iter().map(|s| s.step_ms).collect();
            append_rows(
                &dir.join("stages.csv"),
                &stage_rows(visit.batch_size, visit.round, &d),
            )?;
            events.end(
                &visit.id(),
                &format!("{:.1} ms, taken apart", median(&steps)),
            );
            Ok(None)
        }
        Err(message) => {
            let status = failure_status(&message);
            let message = format!("taking the step apart: {message}");
            let row = failure_row(study, visit, status, &message);
            append_rows(&dir.join("results.csv"), &[row])?;
            eprintln!(
                "batch size {} failed ({status}): {message}",
                visit.batch_size
            );
            events.end(&visit.id(), status.as_str());
            Ok(Some(WorkerExit::PointFailed))
        }
    }
}
