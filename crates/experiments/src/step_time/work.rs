//! Running a sweep: its units for the one driver (visits, their crash records), the worker
//! side (the measuring loop), and rendering the report.

use std::{collections::HashSet, path::Path};

use batchlab_method::rows::Status;
use batchlab_method::rows::{
    append_rows, read_rows_so_far, retain_rows,
    step_time::{StageSample, StepSample, WarmupSample},
};
use batchlab_method::stats::median;
use batchlab_report::about::About;
use batchlab_report::step_time::{render_step_time, StepTimeContext, StepTimeRules};

use super::{anatomy::stage_rows, plan::Visit, remaining_visits, StepTimeStudy};
use crate::{
    backend,
    claim_registry::Registry,
    config::BackendKind,
    context::RunContext,
    drive::{one_unit, Outcomes, Units},
    error::RunError,
    isolate::{interrupted, Crash, UnitEvents, WorkerExit},
    kind::Kind,
    study::Rendered,
    sweeps::newest_study_run_beside,
    timed_step::{with_stepper, Dissection, StepSetup, Stepper, VisitResult},
};

/// The sweep's units for the one driver: visits, each a block of rows in results.csv.
impl Units for StepTimeStudy {
    type Unit = Visit;
    const WHAT: &'static str = "step-time sweep";
    const UNIT: &'static str = "visit";
    fn units_left(&self, dir: &Path, _context: &RunContext) -> Result<u64, RunError> {
        let left = remaining_visits(&self.visits(), &read_done(dir)?, &read_dissected(dir)?);
        Ok(left.len() as u64)
    }
    fn unit(&self, id: &str) -> Option<Visit> {
        Visit::parse_id(id)
    }
    fn record_crash(&self, dir: &Path, visit: &Visit, crash: &Crash) -> Result<(), RunError> {
        record_failure(self, dir, *visit, crash.status, &crash.message)
    }
    fn outcomes(&self, dir: &Path) -> Result<Outcomes, RunError> {
        Ok(Outcomes {
            file: dir.join("results.csv"),
            units: read_done(dir)?
                .into_iter()
                .map(|s| (format!("batch {}", s.batch_size), s.status, s.message))
                .collect(),
        })
    }
    fn work(
        &self,
        dir: &Path,
        _context: &RunContext,
        events: &dyn UnitEvents,
    ) -> Result<WorkerExit, RunError> {
        work(self, dir, events)
    }
}

/// Measures the visits still to do, in the planned order, appending each visit's samples to
/// results.csv as one block. Returns at the first failed visit, after recording it.
fn work(
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

/// Writes summary.csv, figures and report.md; returns the headline findings.
pub fn render(
    study: &StepTimeStudy,
    dir: &Path,
    about: About,
    registry: &Registry,
) -> Result<Rendered, RunError> {
    let config = &study.config;
    let memory_kind = match BackendKind::parse(&about.backend) {
        Ok(kind) if kind.on_cpu() => "peak resident set size of the batchlab process during a visit, lowest over the rounds (memory the allocator kept from an earlier, larger visit can only inflate a reading)",
        Ok(BackendKind::Cuda | BackendKind::Wgpu) => "device memory reserved by the CubeCL allocator, the most seen after any step of a visit (its memory statistics, for the worker's stream), lowest over the rounds",
        _ => "not measured on this backend",
    };
    // Another model's sweep on this machine, under whichever name it ran here (on a GPU, the
    // campaign's `<config>-<backend>`).
    let beside = |name: &String| match newest_study_run_beside(dir, name, "results.csv") {
        Some((found, run)) => (found, Some(run)),
        None => (name.clone(), None),
    };
    // The registered claim each of this kind's rules judges here, in its own words.
    let registered_claims = registry.claims_by_rule(&about.experiment, Kind::StepTime);
    let context = StepTimeContext {
        about,
        registered_claims,
        claimed_jumps: config.analysis.claimed_jumps.clone(),
        no_jumps_at: config.analysis.no_jumps_at.clone(),
        local_minimum_at: config.analysis.local_minimum_at(),
        rules: StepTimeRules {
            linear_margin: config.analysis.linear_margin,
            no_jumps_margin: config.analysis.no_jumps_margin,
            jump_margin: config.analysis.jump_margin,
            gap: config.analysis.jump_gap,
            max_jump_ratio: config.analysis.max_jump_ratio,
            slower_max_ratio: config.analysis.slower_max_ratio,
            autotune: config
                .analysis
                .autotune_margin
                .map(|margin| (margin, config.analysis.autotune_max_gain)),
        },
        fluctuates_more_than: config.analysis.fluctuates_more_than.as_ref().map(beside),
        slower_than: config.analysis.slower_than.as_ref().map(beside),
        model: study.model_line(),
        memory_kind: memory_kind.into(),
        bootstrap_resamples: config.analysis.bootstrap_resamples,
        seed: config.sweep.seed,
    };
    Ok(render_step_time(dir, &context)?.into())
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
    for visit in todo {
        if interrupted() {
            return Err(RunError::Interrupted);
        }
        let exit = if visit.dissect {
            dissect_visit(study, dir, events, visit, &mut *stepper)?
        } else {
            time_visit(study, dir, events, visit, &mut *stepper)?
        };
        if let Some(exit) = exit {
            return Ok(exit);
        }
    }
    Ok(WorkerExit::Finished)
}

/// The label of a failed visit on stderr.
fn label(visit: Visit) -> String {
    format!("batch size {}", visit.batch_size)
}

/// Records a visit that failed as its batch size's row in results.csv (a dissecting visit's
/// too: the same shape fails the same way).
fn record_failure(
    study: &StepTimeStudy,
    dir: &Path,
    visit: Visit,
    status: Status,
    message: &str,
) -> Result<(), RunError> {
    let row = failure_row(study, visit, status, message);
    append_rows(&dir.join("results.csv"), &[row])?;
    Ok(())
}

/// One visit of the sweep: warm-up rows, then its timed samples, each file a block.
fn time_visit(
    study: &StepTimeStudy,
    dir: &Path,
    events: &dyn UnitEvents,
    visit: Visit,
    stepper: &mut dyn Stepper,
) -> Result<Option<WorkerExit>, RunError> {
    let config = &study.config;
    let (backend_name, device_name) = (
        config.backend.name.to_string(),
        backend::device_name(&config.backend),
    );
    let measure = || {
        // Same data for a batch size in every round.
        stepper.visit(
            visit.batch_size as usize,
            config.sweep.seed ^ u64::from(visit.batch_size),
            study.warmup(),
            config.sweep.samples,
            config.backend.name.on_cpu(),
        )
    };
    let write = |result: VisitResult| {
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
                // On a device, the memory its CubeCL allocator had reserved at its peak
                // during the visit (what a step needs there, in MiB).
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
        // Warm-up first: a visit with samples has its warm-up rows (see `drop_orphan_warmup`).
        append_rows(&dir.join(WARMUP), &warmup)?;
        append_rows(&dir.join("results.csv"), &rows)?;
        Ok(format!("{:.1} ms", median(&result.step_ms)))
    };
    one_unit(
        events,
        &visit.id(),
        &label(visit),
        measure,
        write,
        |status, message| record_failure(study, dir, visit, status, message),
    )
}

/// One visit of `[anatomy]`: its steps taken apart, appended to stages.csv as one block.
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
    let measure = || {
        stepper.dissect(
            visit.batch_size as usize,
            config.sweep.seed ^ u64::from(visit.batch_size),
            anatomy.warmup_steps,
            anatomy.samples,
        )
    };
    let write = |d: Dissection| {
        let steps: Vec<f64> = d.samples.iter().map(|s| s.step_ms).collect();
        append_rows(
            &dir.join("stages.csv"),
            &stage_rows(visit.batch_size, visit.round, &d),
        )?;
        Ok(format!("{:.1} ms, taken apart", median(&steps)))
    };
    one_unit(
        events,
        &visit.id(),
        &label(visit),
        measure,
        write,
        |status, message| {
            let message = format!("taking the step apart: {message}");
            record_failure(study, dir, visit, status, &message)
        },
    )
}
