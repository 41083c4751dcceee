//! Running a batch-size finder: its units for the one driver (one fresh worker process per
//! probe, crash records that tell an out-of-memory kill from any other death), the worker (one
//! probe under the limit), and the report.

use std::{
    panic::{catch_unwind, AssertUnwindSafe},
    path::Path,
};

use batchlab_method::rows::Status;
use batchlab_method::rows::{append_rows, find_batch::ProbeSample, read_rows_so_far};
use batchlab_method::stats::median;
use batchlab_report::about::About;
use batchlab_report::find_batch::{render_find_batch, FindBatchContext};
use bytesize::ByteSize;

use super::{
    limit::{probe_cgroup_name, reap_probe_cgroup, remove_probe_cgroups, AppliedLimit},
    plan::{next_probe, Probe},
    FindBatchStudy, MIB,
};
use crate::{
    backend::{self, panic_message},
    claim_registry::Registry,
    config::BackendKind,
    context::RunContext,
    drive::{Outcomes, Units},
    error::RunError,
    isolate::{failure_status, interrupted, Crash, Isolation, UnitEvents, WorkerExit},
    kind::Kind,
    study::Rendered,
    timed_step::{with_stepper, StepSetup, Warmup},
};

use batchlab_report::find_batch::PROBES;

/// The finder's units for the one driver: probes, each in a fresh process under the limit.
impl Units for FindBatchStudy {
    type Unit = Probe;
    const WHAT: &'static str = "batch-size finder";
    const UNIT: &'static str = "probe";
    /// The curve's probes left, and the search's most.
    fn units_left(&self, dir: &Path, context: &RunContext) -> Result<u64, RunError> {
        if matches!(context.isolation, Isolation::InProcess) {
            return Err(RunError::Other(
                "the batch-size finder runs every probe in a process of its own under the memory limit; run it without --in-process".into(),
            ));
        }
        let curve_left = self
            .curve()
            .len()
            .saturating_sub(curve_probes_done(&read_done(dir)?));
        Ok(curve_left as u64 + u64::from(self.search().max_probes()))
    }
    fn unit(&self, id: &str) -> Option<Probe> {
        Probe::parse_id(id)
    }
    /// The probe's cgroup, read and removed, tells an out-of-memory kill from another death.
    fn record_crash(&self, dir: &Path, probe: &Probe, crash: &Crash) -> Result<(), RunError> {
        let cgroup = probe_cgroup_name(std::process::id(), &probe.id());
        let row = crash_row(self, probe, crash, reap_probe_cgroup(&cgroup));
        append_rows(&dir.join(PROBES), &[row])?;
        Ok(())
    }
    fn after_supervision(&self) {
        remove_probe_cgroups(std::process::id());
    }
    fn outcomes(&self, dir: &Path) -> Result<Outcomes, RunError> {
        Ok(Outcomes {
            file: dir.join(PROBES),
            units: read_done(dir)?
                .into_iter()
                .map(|r| (format!("batch {}", r.batch_size), r.status, r.message))
                .collect(),
        })
    }
    fn work(
        &self,
        dir: &Path,
        context: &RunContext,
        events: &dyn UnitEvents,
    ) -> Result<WorkerExit, RunError> {
        work(self, dir, context, events)
    }
}

/// Runs the next probe in this process (a worker started for it), appends its rows, and asks
/// for a fresh process for the one after.
fn work(
    study: &FindBatchStudy,
    dir: &Path,
    context: &RunContext,
    events: &dyn UnitEvents,
) -> Result<WorkerExit, RunError> {
    let done = read_done(dir)?;
    let Some(probe) = next_probe(&study.curve(), study.search(), &done) else {
        return Ok(WorkerExit::Finished);
    };
    if !context.in_worker_process {
        return Err(RunError::Other(
            "a probe limits the memory of its own process: it runs only in a worker process".into(),
        ));
    }
    if interrupted() {
        return Err(RunError::Interrupted);
    }
    let unit = probe.id();
    events.begin(&unit);
    let rows = measure(study, &probe, &unit);
    append_rows(&dir.join(PROBES), &rows)?;
    let first = &rows[0];
    if !first.is_ok() {
        eprintln!(
            "batch size {} failed ({}): {}",
            probe.batch_size, first.status, first.message
        );
        events.end(&unit, first.status.as_str());
        return Ok(WorkerExit::PointFailed);
    }
    let step_ms: Vec<f64> = rows.iter().filter_map(|r| r.step_ms).collect();
    events.end(
        &unit,
        &format!(
            "{:.1} ms, peak {:.0} MiB",
            median(&step_ms),
            first.limited_peak_mb.unwrap_or(f64::NAN)
        ),
    );
    Ok(WorkerExit::UnitDone)
}

/// One probe: the limit applied to this process, then the model built and stepped. A failure
/// caught here (an error, a panic) is one row; a process the limit kills is recorded by the
/// supervisor.
fn measure(study: &FindBatchStudy, probe: &Probe, unit: &str) -> Vec<ProbeSample> {
    let config = &study.config;
    let mut template = base_row(study, probe);
    let limit = match study.budget {
        Some(budget) => {
            match AppliedLimit::apply(config.search.limit, budget, &worker_cgroup_name(unit)) {
                Ok(limit) => Some(limit),
                Err(message) => return vec![failed(template, Status::Error, message)],
            }
        }
        None => None,
    };
    template.limit = limit.as_ref().map_or("device", |l| l.kind).into();
    // The probe's peak memory is its measurement: no convolution path is timed here (both paths
    // would run), a shape the machine has not measured takes the thresholds.
    batchlab_fast::choice::without_measuring();
    let setup = StepSetup {
        backend: &config.backend,
        model: &config.model,
        optimizer: &config.optimizer,
        seed: config.probe.seed,
    };
    let measured = with_stepper(setup, |stepper| {
        catch_unwind(AssertUnwindSafe(|| {
            stepper.visit(
                probe.batch_size as usize,
                config.probe.seed ^ u64::from(probe.batch_size),
                Warmup::fixed(config.probe.warmup_steps),
                config.probe.samples,
                false,
            )
        }))
        .unwrap_or_else(|panic| Err(panic_message(&panic)))
    })
    .map_err(|e| e.to_string())
    .and_then(|visit| visit);
    let visit = match measured {
        Ok(visit) => visit,
        Err(message) => {
            let status = failure_status(&message);
            return vec![failed(template, status, message)];
        }
    };
    // A fresh process: its peak is this probe's alone.
    template.peak_rss_mb = crate::sysinfo::memory::peak_rss_mb();
    template.limited_peak_mb = match (&limit, visit.device_memory_peak) {
        (Some(limit), _) => limit.peak_mb(),
        (None, Some((_, reserved))) => Some(reserved as f64 / MIB),
        (None, None) => None,
    };
    if !visit.last_loss.is_finite() {
        template.message = format!("loss was {} after the probe", visit.last_loss);
    }
    visit
        .step_ms
        .iter()
        .enumerate()
        .map(|(i, &ms)| ProbeSample {
            sample: Some(i as u32),
            step_ms: Some(ms),
            cpu_ms: visit.step_cpu_ms.get(i).copied(),
            status: Status::Ok,
            ..template.clone()
        })
        .collect()
}

/// A probe's process died. Under a cgroup, the kernel's own count of out-of-memory kills
/// decides whether the limit killed it; otherwise its last words do (an allocation the
/// rlimit refused says so). A death for another reason is an `error`, never taken as memory.
fn crash_row(
    study: &FindBatchStudy,
    probe: &Probe,
    crash: &Crash,
    cgroup: Option<(&'static str, u64)>,
) -> ProbeSample {
    let (status, message) = match cgroup.map(|(_, kills)| kills) {
        Some(kills) if kills > 0 => (
            Status::Oom,
            format!(
                "killed by the kernel at the cgroup's memory limit ({kills} oom kill(s)); {}",
                crash.message
            ),
        ),
        Some(_) => (
            Status::Error,
            format!(
                "died, but not at the memory limit (its cgroup counts no oom kill): {}",
                crash.message
            ),
        ),
        None => (failure_status(&crash.message), crash.message.clone()),
    };
    // A process killed without a word leaves "...(signal: 9 (SIGKILL)): " behind.
    let message = message.trim_end_matches([':', ' ']).to_string();
    let mut row = base_row(study, probe);
    // The probe's own limit: its cgroup's kind, else the rlimit (a probe whose limit could not
    // be applied recorded that itself), else the device's memory.
    row.limit = match (cgroup, study.budget) {
        (Some((kind, _)), _) => kind,
        (None, Some(_)) => "rlimit-as",
        (None, None) => "device",
    }
    .into();
    failed(row, status, message)
}

fn base_row(study: &FindBatchStudy, probe: &Probe) -> ProbeSample {
    let config = &study.config;
    ProbeSample {
        phase: probe.phase,
        probe: probe.index,
        batch_size: probe.batch_size,
        repeat: probe.repeat,
        sample: None,
        step_ms: None,
        cpu_ms: None,
        status: Status::Ok,
        peak_rss_mb: None,
        limited_peak_mb: None,
        limit: String::new(),
        budget_mb: study.budget.map_or(f64::NAN, |b| b as f64 / MIB),
        threads: backend::threads(&config.backend) as u32,
        backend: config.backend.name.to_string(),
        device: backend::device_name(&config.backend),
        message: String::new(),
    }
}

fn failed(template: ProbeSample, status: Status, message: String) -> ProbeSample {
    ProbeSample {
        status,
        message,
        ..template
    }
}

/// In a worker: its probe's cgroup, named after the supervisor (this process's parent), which
/// reads and removes it once the worker is gone.
fn worker_cgroup_name(unit: &str) -> String {
    probe_cgroup_name(std::os::unix::process::parent_id(), unit)
}

fn curve_probes_done(done: &[ProbeSample]) -> usize {
    let mut seen: Vec<u32> = done
        .iter()
        .filter(|r| r.phase == batchlab_method::rows::find_batch::ProbePhase::Curve)
        .map(|r| r.probe)
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

fn read_done(dir: &Path) -> Result<Vec<ProbeSample>, RunError> {
    let path = dir.join(PROBES);
    if batchlab_method::rows::stored::exists(&path) {
        Ok(read_rows_so_far(&path)?)
    } else {
        Ok(Vec::new())
    }
}

/// Writes summary.csv, figures and report.md; returns the headline findings.
pub fn render(
    study: &FindBatchStudy,
    dir: &Path,
    about: About,
    registry: &Registry,
) -> Result<Rendered, RunError> {
    let config = &study.config;
    let registered_claims = registry.claims_by_rule(&about.experiment, Kind::FindBatch);
    let utilization_measured = BackendKind::parse(&about.backend).is_ok_and(BackendKind::on_cpu);
    let activation_elements = config.model.activation_elements().unwrap_or(0) as f64;
    let context = FindBatchContext {
        about,
        model: study.model_line(),
        budget_mb: study.budget.map(|b| b as f64 / MIB),
        budget: study.budget.map_or_else(
            || "the device's own memory".into(),
            |b| ByteSize(b).display().iec().to_string(),
        ),
        fixed_estimate_mb: study.fixed_estimate_bytes() / MIB,
        fixed_estimate: study.fixed_estimate_line(),
        activations_mb_per_example: 4.0 * activation_elements / MIB,
        search_start: config.search.start,
        search_cap: config.search.max_batch,
        headroom: config.recommendation.headroom,
        throughput_tolerance: config.recommendation.throughput_tolerance,
        utilization_step: config.analysis.utilization_step,
        utilization_measured,
        memory_references: config
            .analysis
            .memory_growth_differs_from
            .iter()
            .map(|name| {
                (
                    name.clone(),
                    crate::sweeps::newest_run_beside(dir, name, PROBES),
                )
            })
            .collect(),
        memory_margin: config.analysis.memory_growth_margin,
        registered_claims,
    };
    Ok(render_find_batch(&dir.join(PROBES), dir, &context)?.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_death_is_oom_only_when_the_limit_caused_it() {
        let source = crate::config::Source {
            origin: "t.toml".into(),
            text: "[experiment]\nname = \"t\"\nkind = \"find-batch\"\n[model]\narchitecture = \"mlp\"\ninput = [1, 4, 4]\nclasses = 2\n[search]\nmemory_budget = \"1GiB\"\n".into(),
            overrides: vec![],
        };
        let study = FindBatchStudy::resolve(&source).unwrap();
        let probe = Probe::parse_id("s3-b64").unwrap();
        let killed = Crash {
            status: Status::Oom,
            message: "worker process died (signal: 9 (SIGKILL)): ".into(),
        };
        let oom = crash_row(&study, &probe, &killed, Some(("cgroup-v1", 1)));
        assert_eq!(
            (oom.status.as_str(), oom.limit.as_str()),
            ("oom", "cgroup-v1")
        );
        assert!(!oom.message.ends_with(": "), "{}", oom.message);
        assert_eq!(
            crash_row(&study, &probe, &killed, Some(("cgroup-v2", 0))).status,
            Status::Error
        );
        // Without a cgroup, a SIGKILL with no words is not taken as memory...
        assert_eq!(
            crash_row(&study, &probe, &killed, None).status,
            Status::Error
        );
        // ...but an allocation the rlimit refused is.
        let refused = Crash {
            status: Status::Oom,
            message:
                "worker process died (signal: 6 (SIGABRT)): memory allocation of 8 bytes failed"
                    .into(),
        };
        let refused = crash_row(&study, &probe, &refused, None);
        assert_eq!(
            (refused.status.as_str(), refused.limit.as_str()),
            ("oom", "rlimit-as")
        );
        let panic = Crash {
            status: Status::Error,
            message: "worker process died (exit status: 101): index out of bounds".into(),
        };
        assert_eq!(
            crash_row(&study, &probe, &panic, None).status,
            Status::Error
        );
    }
}
