//! A training step taken apart: each stage's forward and backward, and the optimizer update,
//! timed on their own (the jump anatomy: which layer makes a batch size slow), beside the whole
//! step timed as usual.
//!
//! A stage is timed on its own input, computed beforehand by the stages before it and cut off
//! from their graph (`detach`, then `require_grad`, as a layer in the middle of a network sees
//! it): its forward, then the backward of the sum of its output, which computes the gradient of
//! its input and of its own weights and nothing else. The first stage's input is the batch
//! itself, which takes no gradient, as in the step: a first layer's backward computes its
//! weights' gradient alone (with one, the small CNN's 1 -> 32 convolution at batch 128 took 9.4
//! ms to back-propagate on a step of 7.3, in the 2026-11-29 sweep of power-of-two-step-time-cpu). The optimizer update is timed on the
//! gradients of a whole step. The device is synchronised before every clock read. What the
//! parts leave out of the whole step (the loss, the graph's bookkeeping between stages, a sync
//! per stage) is the difference between the step and the sum of the parts, which the report
//! states rather than hides.

use std::time::Instant;

use batchlab_datasets::SyntheticBatch;
use batchlab_models::{classification_loss, Flow, Model};
use burn::{
    optim::{GradientsParams, Optimizer},
    tensor::backend::AutodiffBackend,
};

use super::StepTimer;

/// One timed repetition of a dissected step, in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct DissectedSample {
    /// Each stage's forward, in order.
    pub forward_ms: Vec<f64>,
    /// Each stage's backward, in order.
    pub backward_ms: Vec<f64>,
    /// The optimizer update.
    pub optimizer_ms: f64,
    /// The whole step (forward, loss, backward, update), timed as the step-time sweep times it.
    pub step_ms: f64,
}

/// What one visit of a batch size measured: the stages' names and every timed repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct Dissection {
    /// The stages, in order.
    pub stages: Vec<String>,
    /// The timed repetitions (warm-up dropped).
    pub samples: Vec<DissectedSample>,
}

/// Each stage's name, forward and backward of one repetition.
struct StageTimes {
    names: Vec<String>,
    forward_ms: Vec<f64>,
    backward_ms: Vec<f64>,
}

/// A flow cut from the graph that made it, as the leaf a stage's gradient is taken to.
fn leaf<B: AutodiffBackend>(x: &Flow<B>) -> Flow<B> {
    match x {
        Flow::Images(t) => Flow::Images(t.clone().detach().require_grad()),
        Flow::Features(t) => Flow::Features(t.clone().detach().require_grad()),
    }
}

/// Backward of the sum of a stage's output.
fn backward<B: AutodiffBackend>(y: Flow<B>) {
    let _grads = match y {
        Flow::Images(t) => t.sum().backward(),
        Flow::Features(t) => t.sum().backward(),
    };
}

impl<B: AutodiffBackend, O: Optimizer<Model<B>, B>> StepTimer<B, O> {
    fn clock(&self, work: impl FnOnce()) -> Result<f64, String> {
        self.sync()?;
        let start = Instant::now();
        work();
        self.sync()?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }

    /// One dissected repetition on `batch`.
    fn dissect_once(
        &mut self,
        batch: &SyntheticBatch<B>,
    ) -> Result<(Vec<String>, DissectedSample), String> {
        self.sync()?;
        let start = Instant::now();
        let _ = self.step(batch.images.clone(), batch.labels.clone());
        self.sync()?;
        let step_ms = start.elapsed().as_secs_f64() * 1e3;
        let model = self
            .model
            .take()
            .expect("the model is put back after every step");
        let parts = self.time_stages(&model, batch);
        // The update, on the gradients of a whole step (not timed).
        let loss = classification_loss(model.forward(batch.images.clone()), batch.labels.clone());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        self.sync()?;
        let start = Instant::now();
        let updated = self.optimizer.step(self.learning_rate, model, grads);
        self.sync()?;
        let optimizer_ms = start.elapsed().as_secs_f64() * 1e3;
        self.model = Some(updated);
        let parts = parts?;
        Ok((
            parts.names,
            DissectedSample {
                forward_ms: parts.forward_ms,
                backward_ms: parts.backward_ms,
                optimizer_ms,
                step_ms,
            },
        ))
    }

    /// Each stage's forward and backward on its own input.
    fn time_stages(
        &self,
        model: &Model<B>,
        batch: &SyntheticBatch<B>,
    ) -> Result<StageTimes, String> {
        let stages = model.stages().map_err(|e| e.to_string())?;
        let (mut forward_ms, mut backward_ms) = (vec![], vec![]);
        let mut input = Flow::Images(batch.images.clone().detach());
        for (i, stage) in stages.iter().enumerate() {
            let x = if i == 0 { input.clone() } else { leaf(&input) };
            let mut y = None;
            forward_ms.push(self.clock(|| y = Some(stage.forward(x)))?);
            let y = y.expect("the forward ran");
            let next = match &y {
                Flow::Images(t) => Flow::Images(t.clone().detach()),
                Flow::Features(t) => Flow::Features(t.clone().detach()),
            };
            backward_ms.push(self.clock(|| backward(y))?);
            input = next;
        }
        Ok(StageTimes {
            names: stages.iter().map(|s| s.name.clone()).collect(),
            forward_ms,
            backward_ms,
        })
    }

    /// `warmup` dropped and `samples` timed dissected repetitions on `batch`.
    pub(super) fn dissected(
        &mut self,
        batch: &SyntheticBatch<B>,
        warmup: usize,
        samples: usize,
    ) -> Result<Dissection, String> {
        let mut stages = vec![];
        let mut timed = Vec::with_capacity(samples);
        for i in 0..warmup + samples {
            let (names, sample) = self.dissect_once(batch)?;
            stages = names;
            if i >= warmup {
                timed.push(sample);
            }
        }
        Ok(Dissection {
            stages,
            samples: timed,
        })
    }
}

#[cfg(test)]
mod tests {
    use batchlab_method::stats::median;
    use batchlab_models::{Architecture, ModelSpec};

    use crate::{
        config::BackendConfig,
        optim::OptimizerConfig,
        timed_step::{with_stepper, StepSetup},
    };

    fn dissect(model: &ModelSpec, batch_size: usize) -> Result<super::Dissection, String> {
        let backend = BackendConfig::default();
        let optimizer = OptimizerConfig::default();
        let setup = StepSetup {
            backend: &backend,
            model,
            optimizer: &optimizer,
            seed: 0,
        };
        with_stepper(setup, |s| s.dissect(batch_size, 0, 2, 7)).unwrap()
    }

    /// The parts of a 784-512-512-10 MLP's step at batch 256 add up to the whole step within a
    /// factor of 1.5 either way: what they leave out (the loss, the graph between stages) is small
    /// next to the matrix products, and what they add (a sync per stage, each stage's backward
    /// starting a graph of its own) too; on the 2-core development machine, under load, the
    /// parts came to 1.15-1.34x the step. Not a speed claim: both sides are measured in the same
    /// process, alternately, so load on the machine moves them together.
    #[test]
    fn every_stage_is_timed_and_the_parts_add_up_to_about_the_step() {
        let model = ModelSpec::new(Architecture::Mlp, [1, 28, 28], 10);
        let d = dissect(&model, 256).unwrap();
        assert_eq!(d.stages, ["dense1+relu", "dense2+relu", "head"]);
        assert_eq!(d.samples.len(), 7);
        let positive = |x: f64| x.is_finite() && x > 0.0;
        for s in &d.samples {
            assert_eq!((s.forward_ms.len(), s.backward_ms.len()), (3, 3));
            assert!(
                s.forward_ms
                    .iter()
                    .chain(&s.backward_ms)
                    .all(|&x| positive(x)),
                "{s:?}"
            );
            assert!(positive(s.optimizer_ms) && positive(s.step_ms), "{s:?}");
        }
        parts_add_up_to_the_step(&model, 256, d);
        // A first convolution's input is the batch: its backward computes no input gradient,
        // as in the step. With one, the small CNN's parts came to 2.0x its step at batch 128.
        let cnn = ModelSpec::new(Architecture::SmallCnn, [1, 28, 28], 10);
        parts_add_up_to_the_step(&cnn, 64, dissect(&cnn, 64).unwrap());

        let resnet = ModelSpec::new(Architecture::ResNet18, [3, 32, 32], 10);
        let refused = dissect(&resnet, 2).unwrap_err();
        assert!(
            refused.contains("cannot be timed stage by stage"),
            "{refused}"
        );
    }

    /// The parts of `model`'s dissected step at `batch_size` (`d`) add up to the whole step
    /// within a factor of 1.5 either way. Quiet, the MLP's come to 1.07-1.10x the step here;
    /// with both cores taken by other work up to 1.6x. A part left out or counted twice is off
    /// in every attempt: up to three dissections, the first within 1.5x passes.
    fn parts_add_up_to_the_step(model: &ModelSpec, batch_size: usize, d: super::Dissection) {
        let ratio = |d: &super::Dissection| {
            let parts: Vec<f64> = d
                .samples
                .iter()
                .map(|s| s.forward_ms.iter().chain(&s.backward_ms).sum::<f64>() + s.optimizer_ms)
                .collect();
            let steps: Vec<f64> = d.samples.iter().map(|s| s.step_ms).collect();
            median(&parts) / median(&steps)
        };
        let mut ratios = vec![ratio(&d)];
        while !(1.0 / 1.5..=1.5).contains(ratios.last().unwrap()) && ratios.len() < 3 {
            ratios.push(ratio(&dissect(model, batch_size).unwrap()));
        }
        eprintln!("{}: parts / step = {ratios:.3?}", model.architecture.name());
        assert!(
            (1.0 / 1.5..=1.5).contains(ratios.last().unwrap()),
            "parts / step = {ratios:?}: {d:?}"
        );
    }
}
