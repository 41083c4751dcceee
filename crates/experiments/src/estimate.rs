//! The wall time `run` and `check` state before a run starts: the study's planned training
//! steps ([`Study::planned_steps`]) times a step time per batch size, taken from this machine's
//! step-time sweep of the same model under the report root (`predict`, with its interval) or,
//! where there is none, from a few steps of the study's own model timed here. Not from the fit
//! across models: it predicted 2.5 h for `accuracy-vs-batch-fmnist`'s MLP from four sweeps of
//! convolutional networks, whose trials took 18 minutes. Training steps only: evaluation, data
//! loading and worker start-up come on top.

use std::path::Path;

use batchlab_datasets::download::group;
use batchlab_models::ModelSpec;
use batchlab_report::predict::predict;

use crate::{
    bench::{time_case, Case},
    config::BackendConfig,
    error::RunError,
    optim::{label, OptimizerConfig},
    predict::{same_model_sweep, TrainingPlan},
    study::{PlannedSteps, Study},
    sweeps::{machine_here, model_name, Machine},
};

/// A duration in words: the reports' one format.
pub use batchlab_report::numbers::seconds as duration;

/// Above this, `run` asks for `--yes` in an interactive terminal.
pub const CONFIRM_ABOVE_S: f64 = 2.0 * 3600.0;

/// Steps timed per batch size when no sweep of the model exists, after one dropped warm-up
/// step.
const TIMED_STEPS: usize = 2;

/// The longest step the estimate times at its second batch size (seconds), so that `check`
/// stays quick.
const SECOND_STEP_S: f64 = 1.0;

/// What a run will take.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Seconds: value, low, high.
    pub seconds: (f64, f64, f64),
    /// Training steps counted.
    pub steps: u64,
    /// Whether the steps are caps the units may stop before (an upper bound).
    pub cap: bool,
    /// Where each model's step times came from, one line each.
    pub bases: Vec<String>,
}

impl Estimate {
    /// "about 2.3 h (1.9–2.8 h) for 1,234 training steps ...", with where it came from.
    pub fn lines(&self) -> Vec<String> {
        let (v, lo, hi) = self.seconds;
        let range = if hi > lo * 1.001 {
            format!(" ({}–{})", duration(lo), duration(hi))
        } else {
            String::new()
        };
        let mut lines = vec![format!(
            "expected wall time: {} {}{range} for {} training steps ({}; evaluation, data loading and start-up come on top)",
            if self.cap { "at most" } else { "about" },
            duration(v),
            group(self.steps),
            if self.cap {
                "each trial's cap: trials stop earlier at the target"
            } else {
                "every planned step"
            }
        )];
        lines.extend(self.bases.iter().map(|b| format!("  step times: {b}")));
        lines
    }

    /// This estimate for one shard of `of`: its share of the steps.
    pub fn share(&self, of: usize) -> Estimate {
        let n = of.max(1) as f64;
        let (v, lo, hi) = self.seconds;
        Estimate {
            seconds: (v / n, lo / n, hi / n),
            steps: self.steps / of.max(1) as u64,
            ..self.clone()
        }
    }
}

/// The wall time of `study`'s planned steps on its backend, from the sweeps under `root` or a
/// few timed steps; `None` when the kind plans no steps.
pub fn estimate(study: &dyn Study, root: &Path) -> Result<Option<Estimate>, RunError> {
    let planned = study.planned_steps();
    if planned.is_empty() {
        return Ok(None);
    }
    let config = study.backend();
    let machine = machine_here(config);
    let mut total = (0.0, 0.0, 0.0);
    let mut bases = Vec::new();
    for Group {
        model,
        optimizer,
        per_batch,
    } in groups(&planned)
    {
        let (seconds, basis) = match from_sweeps(root, &model, &optimizer, &machine, &per_batch) {
            Some(found) => found,
            // A CubeCL backend compiles (and with cuda autotunes) every kernel of a new shape on
            // its first steps: timed here they measure compilation (VGG16 at 224 on an H200: 6
            // minutes for the two steps before a study), not the study's steps.
            None if config.name.is_cubecl() => {
                return Err(RunError::Other(format!(
                    "no step-time sweep of {} on this device, and the first steps on {} compile its kernels, so timing them here would measure compilation",
                    model_name(&model),
                    config.name
                )))
            }
            None => timed_here(config, &model, &optimizer, &per_batch)?,
        };
        total = (
            total.0 + seconds.0,
            total.1 + seconds.1,
            total.2 + seconds.2,
        );
        bases.push(format!(
            "{} with {}: {basis}",
            model_name(&model),
            label(&optimizer)
        ));
    }
    Ok(Some(Estimate {
        seconds: total,
        steps: planned.iter().map(|p| p.steps).sum(),
        cap: planned.iter().any(|p| p.cap),
        bases,
    }))
}

/// The planned steps of one model and optimizer.
struct Group {
    model: ModelSpec,
    optimizer: OptimizerConfig,
    /// (batch size, steps), in increasing batch size.
    per_batch: Vec<(u32, u64)>,
}

/// The planned steps per (model, optimizer), summed per batch size, in the order first met.
fn groups(planned: &[PlannedSteps]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for p in planned {
        let at = match out
            .iter()
            .position(|g| g.model == p.model && label(&g.optimizer) == label(&p.optimizer))
        {
            Some(i) => i,
            None => {
                out.push(Group {
                    model: p.model.clone(),
                    optimizer: p.optimizer.clone(),
                    per_batch: Vec::new(),
                });
                out.len() - 1
            }
        };
        let steps = &mut out[at].per_batch;
        match steps.iter_mut().find(|(b, _)| *b == p.batch_size) {
            Some((_, s)) => *s += p.steps,
            None => steps.push((p.batch_size, p.steps)),
        }
    }
    for g in &mut out {
        g.per_batch.sort();
    }
    out
}

/// Seconds (value, low, high) from this machine's sweep of the same model, and where it came
/// from; `None` without one.
fn from_sweeps(
    root: &Path,
    model: &ModelSpec,
    optimizer: &OptimizerConfig,
    machine: &Machine,
    per_batch: &[(u32, u64)],
) -> Option<((f64, f64, f64), String)> {
    let sweep = same_model_sweep(root, model, &label(optimizer), machine)?;
    let mut total = (0.0, 0.0, 0.0);
    for &(batch_size, steps) in per_batch {
        // One "epoch" of exactly `steps` full batches.
        let plan = TrainingPlan {
            batch_size,
            examples: steps * u64::from(batch_size),
            epochs: 1.0,
            drop_last: true,
        };
        let (v, lo, hi) = predict(&plan, |b| sweep.curve.at(b))?.total;
        total = (total.0 + v, total.1 + lo, total.2 + hi);
    }
    let basis = format!("its own sweep on this machine, {}", sweep.dir.display());
    Some((total, basis))
}

/// Seconds from [`TIMED_STEPS`] steps of the model timed here at the smallest planned batch
/// size and at a second one, the step time drawn as a line through the two and carried to the
/// other batch sizes. The second is the largest planned size whose step should take under
/// [`SECOND_STEP_S`] (judged from the first, as if time grew with the batch alone), at least
/// four times the smallest: a line from two small sizes overshoots (quickstart: 4 min from
/// batch 1 and 4, against 96 s measured).
fn timed_here(
    config: &BackendConfig,
    model: &ModelSpec,
    optimizer: &OptimizerConfig,
    per_batch: &[(u32, u64)],
) -> Result<((f64, f64, f64), String), RunError> {
    let smallest = per_batch.first().map_or(1, |(b, _)| *b);
    let largest = per_batch.last().map_or(1, |(b, _)| *b);
    let time = |batch_size: u32| -> Result<f64, RunError> {
        let case = Case {
            name: "estimate".into(),
            spec: model.clone(),
            batch_size: batch_size as usize,
            optimizer: optimizer.clone(),
        };
        Ok(time_case(config, &case, 1, TIMED_STEPS)?.median_ms / 1e3)
    };
    let t1 = time(smallest)?;
    let affordable = f64::from(smallest) * SECOND_STEP_S / t1.max(1e-6);
    let second = per_batch
        .iter()
        .map(|(b, _)| *b)
        .filter(|&b| f64::from(b) <= affordable)
        .max()
        .unwrap_or(smallest)
        .max(smallest.saturating_mul(4).min(largest));
    let (t2, slope) = if second > smallest {
        let t2 = time(second)?;
        (t2, ((t2 - t1) / f64::from(second - smallest)).max(0.0))
    } else {
        (t1, 0.0)
    };
    let seconds: f64 = per_batch
        .iter()
        .map(|&(b, steps)| steps as f64 * (t1 + slope * f64::from(b.saturating_sub(smallest))))
        .sum();
    let basis = if second > smallest {
        format!(
            "no sweep of it on this machine: {TIMED_STEPS} steps timed here at batch {smallest} ({} per step) and {second} ({}), a line through them elsewhere (a rough figure: `batchlab predict` and a step-time sweep give a better one)",
            duration(t1),
            duration(t2)
        )
    } else {
        format!(
            "no sweep of it on this machine: {TIMED_STEPS} steps timed here at batch {smallest} ({} per step)",
            duration(t1)
        )
    };
    Ok(((seconds, seconds, seconds), basis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_counts_read_at_a_glance() {
        assert_eq!(duration(0.00042), "0.42 ms");
        assert_eq!(duration(42.0), "42 s");
        assert_eq!(duration(1020.0), "17 min");
    }
}
