//! The rows a trial writes: one per evaluation (results.csv) and one per trial (trials.csv),
//! the same for every kind of study that trains. A kind names its trial through
//! [`TrialLabels`]; nothing here knows which kind it is.

use batchlab_method::rows::train::{Budget, TrainEval, TrialRecord};
use batchlab_method::rows::Status;

use super::train_loop::{Evaluation, Outcome};

/// How a trial is named in the result rows: its id and the series it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialLabels {
    /// Unique and stable across runs: the unit name in the worker protocol and the key in
    /// trials.csv.
    pub id: String,
    /// Seeds initialisation and shuffles (a search trial: its position in the sequence).
    pub seed: u64,
    /// The batch size.
    pub batch_size: u32,
    /// The `optimizer` column: the optimizer's label.
    pub optimizer: String,
    /// The `variant` column: the data variant (train) or the model (steps to target).
    pub variant: String,
    /// The `budget` column.
    pub budget: Budget,
}

/// The results.csv row of one evaluation.
pub fn eval_row(trial: &TrialLabels, e: &Evaluation) -> TrainEval {
    TrainEval {
        trial: trial.id.clone(),
        seed: trial.seed,
        batch_size: trial.batch_size,
        optimizer: trial.optimizer.clone(),
        variant: trial.variant.clone(),
        budget: trial.budget,
        epoch: e.epoch,
        step: e.step,
        examples: e.examples,
        train_loss: e.train_loss,
        val_loss: e.loss,
        val_accuracy: e.accuracy,
        train_seconds: e.train_seconds,
        data_seconds: e.data_seconds,
        eval_seconds: e.eval_seconds,
    }
}

/// The trials.csv row of a trial that trained (to its end, a stop, or a divergence).
pub fn record(trial: &TrialLabels, o: &Outcome) -> TrialRecord {
    TrialRecord {
        trial: trial.id.clone(),
        seed: trial.seed,
        batch_size: trial.batch_size,
        optimizer: trial.optimizer.clone(),
        variant: trial.variant.clone(),
        budget: trial.budget,
        status: o.status,
        epochs: o.epochs,
        steps: o.steps,
        examples: o.examples,
        train_seconds: o.train_seconds,
        data_seconds: o.data_seconds,
        eval_seconds: o.eval_seconds,
        test_seconds: o.test_seconds,
        test_loss: o.test_loss,
        test_accuracy: o.test_accuracy,
        message: o.message.clone(),
    }
}

/// The trials.csv row of a trial that failed (`status` `oom` or `error`): no measurements.
pub fn failure_record(trial: &TrialLabels, status: Status, message: &str) -> TrialRecord {
    record(trial, &Outcome::failed(status, message))
}
