//! What a training loop needs from the models crate besides the network: the loss that matches
//! the head, and a parameter count that agrees with published (trainable) figures.

use burn::module::{Module, ModuleVisitor, Param};
use burn::nn::loss::{BinaryCrossEntropyLossConfig, CrossEntropyLossConfig};
use burn::prelude::*;

/// Mean loss for a classifier head: cross-entropy on raw logits when `classes > 1`; binary
/// cross-entropy with logits when the head has 1 column, labels 0/1 (burn computes it as
/// `(1 - y) x - log_sigmoid(x)`, which stays finite for large |x|; a sigmoid followed by a log
/// would not).
///
/// # Shapes
/// logits `[batch, classes]`, labels `[batch]` (class indices) -> loss `[1]`
pub fn classification_loss<B: Backend>(
    logits: Tensor<B, 2>,
    labels: Tensor<B, 1, Int>,
) -> Tensor<B, 1> {
    let [batch, columns] = logits.dims();
    let device = logits.device();
    if columns == 1 {
        BinaryCrossEntropyLossConfig::new()
            .with_logits(true)
            .init(&device)
            .forward(logits.reshape([batch]), labels)
    } else {
        CrossEntropyLossConfig::new()
            .init(&device)
            .forward(logits, labels)
    }
}

/// Parameters an optimiser updates. burn's `num_params` also counts BatchNorm's running mean
/// and variance (a `RunningState` is visited like a parameter), which published counts exclude.
/// They are recognised by where the visitor finds them: the `running_mean` / `running_var`
/// fields of a `BatchNorm`, the only `RunningState` holder in these networks. Shapes are read
/// without initialising lazy parameters, so counting allocates nothing.
pub fn trainable_param_count<B: Backend, M: Module<B>>(module: &M) -> usize {
    let mut counter = TrainableCounter::default();
    module.visit(&mut counter);
    counter.count
}

#[derive(Default)]
struct TrainableCounter {
    /// For each module entered, whether it is a BatchNorm running statistic.
    running: Vec<bool>,
    count: usize,
}

impl<B: Backend> ModuleVisitor<B> for TrainableCounter {
    fn enter_module(&mut self, name: &str, container_type: &str) {
        let running =
            container_type == "Struct:BatchNorm" && matches!(name, "running_mean" | "running_var");
        self.running.push(running);
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.running.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if !self.running.last().copied().unwrap_or(false) {
            self.count += param.lazy_shape().num_elements();
        }
    }
}
