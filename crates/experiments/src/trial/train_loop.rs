//! One trial: train a model for its step budget, evaluating on the validation split at the
//! planned steps and on the test split at the end.
//!
//! Clocks: training time is the sum of the steps (waiting for the batch, moving it to the
//! device, forward, loss, backward, update, reading the loss back, which synchronises the
//! device), data time the part of it spent waiting for and moving batches. Evaluations are timed
//! apart and never counted as training.

use batchlab_method::rows::Status;
use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use batchlab_datasets::{loader::Epoch, Loader, Order};
use batchlab_models::{classification_loss, Model, ModelSpec};
use burn::{
    module::{Module, ModuleVisitor, Param},
    optim::{GradientsParams, Optimizer},
    tensor::{backend::AutodiffBackend, ElementConversion, Int, Tensor},
};

use super::{data::VariantData, evaluate::evaluate, schedule::ScheduleConfig};
use crate::{
    backend::{dispatch, OnBackend},
    config::BackendConfig,
    optim::{with_optimizer, OptimizerConfig, WithOptimizer},
};

/// What a trial needs besides its model and optimizer.
#[derive(Debug, Clone)]
pub struct TrialPlan<'a> {
    /// The data.
    pub data: &'a VariantData,
    /// Training batch size.
    pub batch_size: usize,
    /// Seeds the shuffles and random augmentation.
    pub seed: u64,
    /// Total optimizer steps.
    pub total_steps: u64,
    /// Steps after which to evaluate on the validation split.
    pub evaluate_at: Vec<u64>,
    /// The optimizer's initial learning rate.
    pub learning_rate: f64,
    /// How it changes over the trial.
    pub schedule: &'a ScheduleConfig,
    /// Leave out the last partial batch of each epoch.
    pub drop_last: bool,
    /// Batch size of evaluation passes.
    pub eval_batch_size: usize,
    /// Divergence threshold as a multiple of the first loss.
    pub divergence_factor: f64,
    /// Batches prepared ahead.
    pub prefetch: usize,
    /// Evaluate on the test split at the end (steps-to-target trials only need validation).
    pub evaluate_test: bool,
    /// Measure the squared norms of the half-batch and whole-batch mean gradients before the
    /// update of every this many steps (the gradient noise scale's inputs); None: never.
    pub noise_every: Option<u64>,
}

/// The squared norms of two mean gradients at one step, from the same parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradientNorms {
    /// Optimizer steps taken before the measurement.
    pub step: u64,
    /// Examples behind the small mean gradient (the first half of the batch).
    pub b_small: u32,
    /// Examples behind the big one (the whole batch).
    pub b_big: u32,
    /// |G_small|^2.
    pub small_sq: f64,
    /// |G_big|^2.
    pub big_sq: f64,
}

/// A validation evaluation during training.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Epochs completed (fractional between epoch ends).
    pub epoch: f64,
    /// Optimizer steps so far.
    pub step: u64,
    /// Training examples seen so far.
    pub examples: u64,
    /// Mean training loss over the steps since the previous evaluation.
    pub train_loss: f64,
    /// Validation loss and accuracy.
    pub loss: f64,
    /// Accuracy in [0, 1].
    pub accuracy: f64,
    /// Cumulative training seconds.
    pub train_seconds: f64,
    /// Cumulative data seconds.
    pub data_seconds: f64,
    /// This evaluation's seconds.
    pub eval_seconds: f64,
}

/// How a trial ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// `ok` or `diverged`.
    pub status: Status,
    /// Why it diverged.
    pub message: String,
    /// Epochs completed (fractional).
    pub epochs: f64,
    /// Optimizer steps taken.
    pub steps: u64,
    /// Training examples seen.
    pub examples: u64,
    /// Training seconds.
    pub train_seconds: f64,
    /// Of which waiting for data.
    pub data_seconds: f64,
    /// Total seconds of validation evaluations.
    pub eval_seconds: f64,
    /// Inference over the whole test split.
    pub test_seconds: f64,
    /// Test loss (NaN unless ok).
    pub test_loss: f64,
    /// Test accuracy (NaN unless ok).
    pub test_accuracy: f64,
    /// Gradient-norm measurements (see [`TrialPlan::noise_every`]); their time is not training.
    pub gradient_norms: Vec<GradientNorms>,
}

impl Outcome {
    /// A trial that failed (`status` `oom` or `error`) with `message`: nothing measured.
    pub fn failed(status: Status, message: &str) -> Self {
        Self {
            status,
            message: message.into(),
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
        }
    }
}

/// Whether training goes on after an evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Keep training.
    Continue,
    /// Stop here (a steps-to-target trial that reached its target).
    Stop,
}

/// Trains `model` with `optimizer` as planned; `on_evaluation` gets each validation evaluation
/// as it happens (so it is written before the next one starts) and says whether to go on.
pub fn run<B, O>(
    mut model: Model<B>,
    mut optimizer: O,
    plan: &TrialPlan<'_>,
    device: &B::Device,
    on_evaluation: &mut dyn FnMut(&Evaluation) -> Result<Next, String>,
) -> Result<Outcome, String>
where
    B: AutodiffBackend,
    O: Optimizer<Model<B>, B>,
{
    let data = plan.data;
    let order = Order {
        batch_size: plan.batch_size,
        shuffle: true,
        drop_last: plan.drop_last,
        seed: plan.seed,
    };
    let loader = Loader::new(
        Arc::clone(&data.train),
        data.train_pipeline.clone(),
        order,
        plan.prefetch,
    );
    let steps_per_epoch = loader.batches_per_epoch().max(1) as u64;
    if loader.batches_per_epoch() == 0 {
        return Err(format!(
            "batch size {} leaves no full batch in {} training examples (drop_last)",
            plan.batch_size,
            data.train.len()
        ));
    }
    let mut epoch_index = 0u64;
    let mut epoch: Epoch = loader.epoch(epoch_index);
    let (mut step, mut examples) = (0u64, 0u64);
    // Clock readings summed as whole nanoseconds, so that every time written is a reading
    // (at most 9 decimals), not a float sum's rounding noise (docs/ARCHITECTURE.md, storage).
    let (mut train_time, mut data_time, mut eval_time) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut loss_sum, mut loss_count) = (0.0f64, 0u64);
    let mut first_loss = None;
    let mut norms = Vec::new();
    let mut evaluate_at = plan.evaluate_at.iter().copied().peekable();
    while step < plan.total_steps {
        let start = Instant::now();
        let batch = match epoch.next() {
            Some(batch) => batch,
            None => {
                epoch_index += 1;
                epoch = loader.epoch(epoch_index);
                epoch.next().expect("an epoch has at least one batch")
            }
        };
        let n = batch.len() as u64;
        let (images, labels) = batch.to_device::<B>(device);
        let data_now = start.elapsed();
        if plan.noise_every.is_some_and(|every| step % every == 0) && n >= 2 {
            // Outside the training clock: a measurement, not part of the step.
            norms.push(gradient_norms(&model, &images, &labels, step, device)?);
        }
        let compute = Instant::now();
        let lr = plan
            .schedule
            .rate(plan.learning_rate, step, plan.total_steps);
        let loss = classification_loss(model.forward(images), labels);
        let value = loss.clone().into_scalar().elem::<f64>();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optimizer.step(lr, model, grads);
        // Reading the loss synchronised the forward pass; sync again so the update is counted.
        B::sync(device).map_err(|e| format!("device sync failed: {e:?}"))?;
        data_time += data_now;
        train_time += data_now + compute.elapsed();
        step += 1;
        examples += n;
        loss_sum += value;
        loss_count += 1;
        let first = *first_loss.get_or_insert(value);
        if !value.is_finite() || value > plan.divergence_factor * first.max(1e-3) {
            return Ok(Outcome {
                status: Status::Diverged,
                message: format!("loss {value} at step {step} (first loss {first})"),
                epochs: step as f64 / steps_per_epoch as f64,
                steps: step,
                examples,
                train_seconds: train_time.as_secs_f64(),
                data_seconds: data_time.as_secs_f64(),
                eval_seconds: eval_time.as_secs_f64(),
                test_seconds: f64::NAN,
                test_loss: f64::NAN,
                test_accuracy: f64::NAN,
                gradient_norms: norms,
            });
        }
        if evaluate_at.peek() == Some(&step) {
            evaluate_at.next();
            let (loss, accuracy, took) = evaluate(
                &model,
                &data.validation,
                &data.eval_pipeline,
                plan.eval_batch_size,
                plan.prefetch,
                device,
            )?;
            eval_time += took;
            let next = on_evaluation(&Evaluation {
                epoch: step as f64 / steps_per_epoch as f64,
                step,
                examples,
                train_loss: loss_sum / loss_count as f64,
                loss,
                accuracy,
                train_seconds: train_time.as_secs_f64(),
                data_seconds: data_time.as_secs_f64(),
                eval_seconds: took.as_secs_f64(),
            })?;
            (loss_sum, loss_count) = (0.0, 0);
            if next == Next::Stop {
                break;
            }
        }
    }
    drop(epoch);
    let (test_loss, test_accuracy, test_seconds) = if plan.evaluate_test {
        evaluate(
            &model,
            &data.test,
            &data.eval_pipeline,
            plan.eval_batch_size,
            plan.prefetch,
            device,
        )
        .map(|(loss, accuracy, took)| (loss, accuracy, took.as_secs_f64()))?
    } else {
        (f64::NAN, f64::NAN, f64::NAN)
    };
    Ok(Outcome {
        status: Status::Ok,
        message: String::new(),
        epochs: step as f64 / steps_per_epoch as f64,
        steps: step,
        examples,
        train_seconds: train_time.as_secs_f64(),
        data_seconds: data_time.as_secs_f64(),
        eval_seconds: eval_time.as_secs_f64(),
        test_seconds,
        test_loss,
        test_accuracy,
        gradient_norms: norms,
    })
}

/// |G|^2 of the mean gradient of the first half of the batch and of the whole batch, at the
/// current parameters (McCandlish et al. 2018, Appendix A's two batch sizes).
fn gradient_norms<B: AutodiffBackend>(
    model: &Model<B>,
    images: &Tensor<B, 4>,
    labels: &Tensor<B, 1, Int>,
    step: u64,
    device: &B::Device,
) -> Result<GradientNorms, String> {
    let n = images.dims()[0];
    let half = n / 2;
    let norm = |images: Tensor<B, 4>, labels: Tensor<B, 1, Int>| -> f64 {
        let grads = classification_loss(model.forward(images), labels).backward();
        let mut visitor = SquaredNorm::<B> {
            grads: &grads,
            total: None,
        };
        model.visit(&mut visitor);
        visitor.total.map_or(0.0, |t| t.into_scalar().elem::<f64>())
    };
    let small_sq = norm(
        images.clone().narrow(0, 0, half),
        labels.clone().narrow(0, 0, half),
    );
    let big_sq = norm(images.clone(), labels.clone());
    B::sync(device).map_err(|e| format!("device sync failed: {e:?}"))?;
    Ok(GradientNorms {
        step,
        b_small: half as u32,
        b_big: n as u32,
        small_sq,
        big_sq,
    })
}

/// Sums the squares of every parameter's gradient (parameters without one, such as batch
/// norm's running statistics, are skipped).
struct SquaredNorm<'a, B: AutodiffBackend> {
    grads: &'a B::Gradients,
    total: Option<Tensor<B::InnerBackend, 1>>,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for SquaredNorm<'_, B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(grad) = param.val().grad(self.grads) {
            let sum = grad.powf_scalar(2.0).sum();
            self.total = Some(match self.total.take() {
                Some(total) => total + sum,
                None => sum,
            });
        }
    }
}

/// Builds the model (`spec`, initialised from `seed`) and `optimizer` on the configured backend
/// and trains as planned: the entry point of every runner that trains.
pub fn train(
    backend: &BackendConfig,
    spec: &ModelSpec,
    optimizer: &OptimizerConfig,
    seed: u64,
    plan: &TrialPlan<'_>,
    on_evaluation: &mut dyn FnMut(&Evaluation) -> Result<Next, String>,
) -> Result<Outcome, String> {
    let task = Task {
        spec,
        optimizer,
        seed,
        plan,
        on_evaluation,
    };
    dispatch(backend, task).map_err(|e| e.to_string())?
}

struct Task<'a, 'b> {
    spec: &'a ModelSpec,
    optimizer: &'a OptimizerConfig,
    seed: u64,
    plan: &'a TrialPlan<'b>,
    on_evaluation: &'a mut dyn FnMut(&Evaluation) -> Result<Next, String>,
}

impl OnBackend for Task<'_, '_> {
    type Output = Result<Outcome, String>;

    fn run<B: AutodiffBackend>(self, device: B::Device) -> Self::Output {
        B::seed(&device, self.seed);
        let model = self.spec.init::<B>(&device).map_err(|e| e.to_string())?;
        with_optimizer::<B, Model<B>, _>(
            self.optimizer,
            WithModel {
                task: self,
                model,
                device,
            },
        )
    }
}

struct WithModel<'a, 'b, B: AutodiffBackend> {
    task: Task<'a, 'b>,
    model: Model<B>,
    device: B::Device,
}

impl<B: AutodiffBackend> WithOptimizer<B, Model<B>> for WithModel<'_, '_, B> {
    type Output = Result<Outcome, String>;

    fn run<O: Optimizer<Model<B>, B>>(self, optimizer: O) -> Self::Output {
        let Task {
            plan,
            on_evaluation,
            ..
        } = self.task;
        run(self.model, optimizer, plan, &self.device, on_evaluation)
    }
}
