//! The timed training step every measuring kind shares (the step-time sweep, the batch-size
//! finder): a model and its optimizer built on the configured backend, stepped on synthetic
//! data, each step closed by a device sync before the clock is read (docs/ARCHITECTURE.md,
//! "Measurement rules").
//!
//! [`with_stepper`] builds the model and optimizer on the backend the config names and hands a
//! backend-free [`Stepper`] to the caller, so a kind's measuring loop is written once, without
//! generics over backends and optimizers.

use std::time::Instant;

mod dissect;

pub use dissect::{DissectedSample, Dissection};

use batchlab_datasets::{SyntheticBatch, SyntheticImages};
pub use batchlab_method::rows::step_time::WarmupEnd;
use batchlab_models::{classification_loss, Model, ModelSpec};
use burn::{
    optim::{GradientsParams, Optimizer},
    tensor::{backend::AutodiffBackend, ElementConversion, Int, Tensor},
};

use crate::{
    backend::{self, dispatch, OnBackend},
    config::BackendConfig,
    error::RunError,
    optim::{with_optimizer, OptimizerConfig, WithOptimizer},
    sysinfo::{cpu_time_ms, memory},
};

/// How a visit warms up (docs/ARCHITECTURE.md, "Measurement rules"): at least `min` dropped
/// steps; then, up to `max` in all, more until the last [`SETTLE_WINDOW`] steps agree within
/// [`SETTLE_SPREAD`] (the largest over the smallest). `min == max` is a fixed count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Warmup {
    /// Steps always dropped.
    pub min: usize,
    /// The cap: warm-up ends here even if the step has not settled.
    pub max: usize,
}

/// Warm-up steps whose times must agree for the step to count as settled.
pub const SETTLE_WINDOW: usize = 3;
/// How far they may spread: the largest at most this much above the smallest.
pub const SETTLE_SPREAD: f64 = 0.10;

impl Warmup {
    /// Exactly `steps` dropped steps.
    pub fn fixed(steps: usize) -> Self {
        Self {
            min: steps,
            max: steps,
        }
    }

    /// Whether warm-up is over after the steps `ms` took, and how; `None`: take another.
    pub fn ended(&self, ms: &[f64]) -> Option<WarmupEnd> {
        let n = ms.len();
        let settled = || {
            let last = &ms[n.saturating_sub(SETTLE_WINDOW)..];
            let (lo, hi) = last.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
                (lo.min(t), hi.max(t))
            });
            n >= SETTLE_WINDOW && hi <= lo * (1.0 + SETTLE_SPREAD)
        };
        if n < self.min {
            None
        } else if self.max <= self.min {
            Some(WarmupEnd::Fixed)
        } else if settled() {
            Some(WarmupEnd::Settled)
        } else if n >= self.max {
            Some(WarmupEnd::Cap)
        } else {
            None
        }
    }
}

/// What one visit of a batch size measured.
#[derive(Debug, Clone, PartialEq)]
pub struct VisitResult {
    /// Wall time of every timed step, in milliseconds.
    pub step_ms: Vec<f64>,
    /// Wall time of every dropped warm-up step, in milliseconds, and how the warm-up ended.
    pub warmup_ms: Vec<f64>,
    /// How the warm-up ended.
    pub warmup_end: WarmupEnd,
    /// CPU time of the whole process (every thread) during every timed step, in milliseconds;
    /// empty where the clock cannot be read.
    pub step_cpu_ms: Vec<f64>,
    /// Peak resident set size of the process during the visit (flex only).
    pub peak_mem_mb: Option<f64>,
    /// Device memory read after every step, the largest (bytes in use, bytes reserved), on
    /// backends whose runtime reports it (cuda); the runtime keeps no peak of its own.
    pub device_memory_peak: Option<(u64, u64)>,
    /// Loss of the last step, read after the timed region (a non-finite loss is reported).
    pub last_loss: f64,
}

/// Timed training steps on synthetic data, whatever the backend and optimizer.
pub trait Stepper {
    /// Warm-up steps as `warmup` rules (each timed and kept), then `samples` timed steps on a
    /// synthetic batch of `batch_size` examples made from `data_seed` before the timed region.
    /// With `track_memory`, the process's peak RSS over the visit is recorded.
    fn visit(
        &mut self,
        batch_size: usize,
        data_seed: u64,
        warmup: Warmup,
        samples: usize,
        track_memory: bool,
    ) -> Result<VisitResult, String>;

    /// `warmup` dropped and `samples` timed steps taken apart (see [`dissect`](self::dissect)):
    /// each stage's forward and backward and the optimizer update on their own, beside the
    /// whole step. An error for a network that is not a chain of stages.
    fn dissect(
        &mut self,
        batch_size: usize,
        data_seed: u64,
        warmup: usize,
        samples: usize,
    ) -> Result<Dissection, String>;
}

/// What to build: the backend, the model, its optimizer and the seed of its initialisation.
#[derive(Debug, Clone, Copy)]
pub struct StepSetup<'a> {
    /// `[backend]`.
    pub backend: &'a BackendConfig,
    /// `[model]`.
    pub model: &'a ModelSpec,
    /// `[optimizer]` (resolved).
    pub optimizer: &'a OptimizerConfig,
    /// Seeds the backend before the model is initialised.
    pub seed: u64,
}

/// Builds the model and optimizer of `setup` on its backend and runs `work` with a [`Stepper`]
/// over them.
pub fn with_stepper<R>(
    setup: StepSetup<'_>,
    work: impl FnOnce(&mut dyn Stepper) -> R,
) -> Result<R, RunError> {
    dispatch(setup.backend, OnDevice { setup, work })?
}

struct OnDevice<'a, F> {
    setup: StepSetup<'a>,
    work: F,
}

impl<R, F: FnOnce(&mut dyn Stepper) -> R> OnBackend for OnDevice<'_, F> {
    type Output = Result<R, RunError>;

    fn run<B: AutodiffBackend>(self, device: B::Device) -> Self::Output {
        B::seed(&device, self.setup.seed);
        let model = self
            .setup
            .model
            .init::<B>(&device)
            .map_err(|e| RunError::Other(e.to_string()))?;
        Ok(with_optimizer::<B, Model<B>, _>(
            self.setup.optimizer,
            WithModel {
                setup: self.setup,
                work: self.work,
                model,
                device,
            },
        ))
    }
}

struct WithModel<'a, B: AutodiffBackend, F> {
    setup: StepSetup<'a>,
    work: F,
    model: Model<B>,
    device: B::Device,
}

impl<B: AutodiffBackend, R, F: FnOnce(&mut dyn Stepper) -> R> WithOptimizer<B, Model<B>>
    for WithModel<'_, B, F>
{
    type Output = R;

    fn run<O: Optimizer<Model<B>, B>>(self, optimizer: O) -> R {
        let mut timer = StepTimer {
            model: Some(self.model),
            optimizer,
            learning_rate: self.setup.optimizer.learning_rate(),
            device: self.device,
            images: SyntheticImages {
                shape: self.setup.model.input,
                classes: self.setup.model.classes,
            },
            backend: self.setup.backend.clone(),
        };
        (self.work)(&mut timer)
    }
}

/// A model and its optimizer, stepped and timed.
struct StepTimer<B: AutodiffBackend, O: Optimizer<Model<B>, B>> {
    model: Option<Model<B>>,
    optimizer: O,
    learning_rate: f64,
    device: B::Device,
    images: SyntheticImages,
    backend: BackendConfig,
}

impl<B: AutodiffBackend, O: Optimizer<Model<B>, B>> StepTimer<B, O> {
    /// One training step: forward, loss, backward, optimizer update. Returns the loss without
    /// reading it (reading forces a device-to-host sync).
    fn step(
        &mut self,
        images: Tensor<B, 4>,
        labels: Tensor<B, 1, Int>,
    ) -> Tensor<B::InnerBackend, 1> {
        let model = self
            .model
            .take()
            .expect("the model is put back after every step");
        let loss = classification_loss(model.forward(images), labels);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        self.model = Some(self.optimizer.step(self.learning_rate, model, grads));
        loss.inner()
    }

    /// Waits until the device has finished all queued work.
    fn sync(&self) -> Result<(), String> {
        B::sync(&self.device).map_err(|e| format!("device sync failed: {e:?}"))
    }

    fn timed_steps(
        &mut self,
        batch: &SyntheticBatch<B>,
        warmup: Warmup,
        samples: usize,
        track_memory: bool,
    ) -> Result<VisitResult, String> {
        let tracking = track_memory && memory::reset_peak_rss();
        self.sync()?;
        let mut step_ms = Vec::with_capacity(samples);
        let mut step_cpu_ms = Vec::with_capacity(samples);
        let mut warmup_ms = Vec::with_capacity(warmup.min);
        let mut warmup_end = warmup.ended(&warmup_ms);
        let mut last_loss = None;
        let mut device_memory_peak: Option<(u64, u64)> = None;
        while warmup_end.is_none() || step_ms.len() < samples {
            let cpu_start = cpu_time_ms();
            let start = Instant::now();
            let loss = self.step(batch.images.clone(), batch.labels.clone());
            self.sync()?;
            let elapsed = start.elapsed();
            let cpu = cpu_time_ms().zip(cpu_start).map(|(end, start)| end - start);
            if let Some((in_use, reserved)) = backend::device_memory(&self.backend) {
                let (u, r) = device_memory_peak.unwrap_or((0, 0));
                device_memory_peak = Some((u.max(in_use), r.max(reserved)));
            }
            if warmup_end.is_some() {
                step_ms.push(elapsed.as_secs_f64() * 1e3);
                step_cpu_ms.extend(cpu);
            } else {
                warmup_ms.push(elapsed.as_secs_f64() * 1e3);
                warmup_end = warmup.ended(&warmup_ms);
            }
            last_loss = Some(loss);
        }
        let last_loss = last_loss.map_or(f64::NAN, |l| l.into_scalar().elem::<f64>());
        if step_cpu_ms.len() != step_ms.len() {
            step_cpu_ms.clear();
        }
        Ok(VisitResult {
            step_ms,
            warmup_ms,
            warmup_end: warmup_end.expect("the timed steps start once warm-up has ended"),
            step_cpu_ms,
            peak_mem_mb: if tracking {
                memory::peak_rss_mb()
            } else {
                None
            },
            device_memory_peak,
            last_loss,
        })
    }
}

impl<B: AutodiffBackend, O: Optimizer<Model<B>, B>> Stepper for StepTimer<B, O> {
    fn visit(
        &mut self,
        batch_size: usize,
        data_seed: u64,
        warmup: Warmup,
        samples: usize,
        track_memory: bool,
    ) -> Result<VisitResult, String> {
        // Made before the timed region; the same (batch size, seed) gives the same data.
        let batch = self.images.batch::<B>(batch_size, data_seed, &self.device);
        self.timed_steps(&batch, warmup, samples, track_memory)
    }

    fn dissect(
        &mut self,
        batch_size: usize,
        data_seed: u64,
        warmup: usize,
        samples: usize,
    ) -> Result<Dissection, String> {
        let batch = self.images.batch::<B>(batch_size, data_seed, &self.device);
        self.dissected(&batch, warmup, samples)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_ends_fixed_settled_or_at_its_cap() {
        let fixed = Warmup::fixed(2);
        assert_eq!(fixed.ended(&[900.0]), None);
        assert_eq!(fixed.ended(&[900.0, 50.0]), Some(WarmupEnd::Fixed));
        assert_eq!(Warmup::fixed(0).ended(&[]), Some(WarmupEnd::Fixed));
        let rule = Warmup { min: 2, max: 6 };
        // Compiling, then tuning, then three steps within 10% of each other.
        assert_eq!(rule.ended(&[4000.0, 900.0]), None);
        assert_eq!(rule.ended(&[4000.0, 900.0, 52.0, 50.0]), None);
        assert_eq!(
            rule.ended(&[4000.0, 900.0, 52.0, 50.0, 54.0]),
            Some(WarmupEnd::Settled)
        );
        assert_eq!(
            rule.ended(&[4000.0, 900.0, 52.0, 80.0, 50.0, 70.0]),
            Some(WarmupEnd::Cap)
        );
        // Settled already at the minimum when the minimum spans the window.
        assert_eq!(
            Warmup { min: 3, max: 9 }.ended(&[10.0, 10.5, 10.2]),
            Some(WarmupEnd::Settled)
        );
    }
}
