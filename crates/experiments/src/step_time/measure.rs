//! The timed training step.

use std::time::Instant;

use batchlab_datasets::SyntheticBatch;
use batchlab_models::{classification_loss, Model};
use burn::{
    optim::{GradientsParams, Optimizer},
    tensor::{backend::AutodiffBackend, ElementConversion, Int, Tensor},
};

use crate::sysinfo::memory;

/// What one visit of a batch size measured.
#[derive(Debug, Clone, PartialEq)]
pub struct VisitResult {
    /// Wall time of every timed step, in milliseconds.
    pub step_ms: Vec<f64>,
    /// Peak resident set size of the process during the visit (flex only).
    pub peak_mem_mb: Option<f64>,
    /// Loss of the last step, read after the timed region (a non-finite loss is reported).
    pub last_loss: f64,
}

/// A model and its optimizer, stepped and timed.
pub struct StepTimer<B: AutodiffBackend, O: Optimizer<Model<B>, B>> {
    model: Option<Model<B>>,
    optimizer: O,
    learning_rate: f64,
    device: B::Device,
}

impl<B: AutodiffBackend, O: Optimizer<Model<B>, B>> StepTimer<B, O> {
    /// Wraps an initialised model and optimizer.
    pub fn new(model: Model<B>, optimizer: O, learning_rate: f64, device: B::Device) -> Self {
        Self {
            model: Some(model),
            optimizer,
            learning_rate,
            device,
        }
    }

    /// One training step: forward, loss, backward, optimizer update. Returns the loss without
    /// reading it (reading forces a device-to-host sync).
    pub fn step(
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
    pub fn sync(&self) -> Result<(), String> {
        B::sync(&self.device).map_err(|e| format!("device sync failed: {e:?}"))
    }

    /// `warmup` dropped steps, then `samples` timed steps on `batch`, each closed by a sync.
    /// With `track_memory`, the process's peak RSS over the visit is recorded.
    pub fn visit(
        &mut self,
        batch: &SyntheticBatch<B>,
        warmup: usize,
        samples: usize,
        track_memory: bool,
    ) -> Result<VisitResult, String> {
        let tracking = track_memory && memory::reset_peak_rss();
        self.sync()?;
        let mut step_ms = Vec::with_capacity(samples);
        let mut last_loss = None;
        for i in 0..warmup + samples {
            let start = Instant::now();
            let loss = self.step(batch.images.clone(), batch.labels.clone());
            self.sync()?;
            let elapsed = start.elapsed();
            if i >= warmup {
                step_ms.push(elapsed.as_secs_f64() * 1e3);
            }
            last_loss = Some(loss);
        }
        let last_loss = last_loss.map_or(f64::NAN, |l| l.into_scalar().elem::<f64>());
        Ok(VisitResult {
            step_ms,
            peak_mem_mb: if tracking {
                memory::peak_rss_mb()
            } else {
                None
            },
            last_loss,
        })
    }
}
