//! The two raw files of a training study, appended while it runs: `results.csv` (one row per
//! validation evaluation of a trial) and `trials.csv` (one row per finished trial, failed
//! ones too).

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::number::{nan_if_empty, shortest};
use super::{check_fraction, check_time, read_rows_so_far, Row, Status, TrialRow};
use crate::FileError;
/// How long a trial trains: a word in configs (a claim's `budget`) and in the results files.
/// Ordered as reports list them: the seeds' epochs first, the steps control second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Budget {
    /// `grid.epochs` passes over the training set (the seeds' setup).
    Epochs,
    /// The same number of steps for every batch size (the control).
    Steps,
}

impl Budget {
    /// `epochs` or `steps`, as in configs and results files.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Epochs => "epochs",
            Self::Steps => "steps",
        }
    }
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Budget {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Read from its word; any other is an error naming the two.
impl std::str::FromStr for Budget {
    type Err = String;
    fn from_str(word: &str) -> Result<Self, String> {
        [Budget::Epochs, Budget::Steps]
            .into_iter()
            .find(|b| b.as_str() == word)
            .ok_or_else(|| format!("expected \"epochs\" or \"steps\", got {word:?}"))
    }
}

/// Read from its word; any other is an error at its value.
impl<'de> Deserialize<'de> for Budget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The header of `results.csv`, exactly.
pub const RESULTS_HEADER: &str = "trial,seed,batch_size,optimizer,variant,budget,epoch,step,examples,train_loss,val_loss,val_accuracy,train_seconds,data_seconds,eval_seconds";

/// The header of `trials.csv`, exactly.
pub const TRIALS_HEADER: &str = "trial,seed,batch_size,optimizer,variant,budget,status,epochs,steps,examples,train_seconds,data_seconds,eval_seconds,test_seconds,test_loss,test_accuracy,message";

/// One row of `results.csv`: a trial evaluated on the validation split during training.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainEval {
    /// The trial's id, e.g. `b32-adam-standard-epochs-s0`; unique within a run.
    pub trial: String,
    /// The trial's seed.
    pub seed: u64,
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// The optimizer's label, e.g. `adam` or `sgd-momentum`.
    pub optimizer: String,
    /// The data variant, e.g. `standard` or `augmented`.
    pub variant: String,
    /// `epochs` (the seed's epoch-matched setup) or `steps` (every batch size gets the same
    /// number of optimizer steps).
    pub budget: Budget,
    /// Epochs completed; fractional between epoch ends.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub epoch: f64,
    /// Optimizer steps so far.
    pub step: u64,
    /// Training examples seen so far.
    pub examples: u64,
    /// Mean training loss over the steps since the previous evaluation (NaN or infinite once
    /// a trial diverges).
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub train_loss: f64,
    /// Validation loss.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub val_loss: f64,
    /// Validation accuracy in [0, 1].
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub val_accuracy: f64,
    /// Cumulative training time in seconds, evaluations excluded.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub train_seconds: f64,
    /// Cumulative seconds the training loop waited for data (part of `train_seconds`).
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub data_seconds: f64,
    /// Duration of this evaluation in seconds.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub eval_seconds: f64,
}

/// One row of `trials.csv`: a finished trial, or one that failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// The trial's id, as in `results.csv`.
    pub trial: String,
    /// The trial's seed.
    pub seed: u64,
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// The optimizer's label.
    pub optimizer: String,
    /// The data variant.
    pub variant: String,
    /// `epochs` or `steps` (see [`TrainEval::budget`]).
    pub budget: Budget,
    /// `ok`, `diverged`, `oom` or `error`.
    pub status: Status,
    /// Epochs trained (fractional under the steps budget).
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub epochs: f64,
    /// Optimizer steps taken.
    pub steps: u64,
    /// Training examples seen.
    pub examples: u64,
    /// Training seconds, evaluations excluded.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub train_seconds: f64,
    /// Seconds the training loop waited for data.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub data_seconds: f64,
    /// Seconds of all validation evaluations together.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub eval_seconds: f64,
    /// Inference seconds over the whole test split.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub test_seconds: f64,
    /// Test loss (NaN when not ok).
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub test_loss: f64,
    /// Test accuracy in [0, 1] (NaN when not ok).
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub test_accuracy: f64,
    /// Empty when ok; otherwise what went wrong (may hold commas, quotes, line breaks).
    pub message: String,
}

impl TrialRecord {
    /// Whether the trial trained to the end and was tested.
    pub fn is_ok(&self) -> bool {
        self.status.is_ok()
    }
}

impl Row for TrainEval {
    const HEADER: &'static str = RESULTS_HEADER;
    fn check(&self) -> Result<(), (&'static str, String)> {
        check_time("epoch", self.epoch)?;
        check_time("train_seconds", self.train_seconds)?;
        check_time("data_seconds", self.data_seconds)?;
        check_time("eval_seconds", self.eval_seconds)?;
        check_fraction("val_accuracy", self.val_accuracy)
    }
}

impl TrialRow for TrainEval {
    fn trial(&self) -> &str {
        &self.trial
    }
}

impl Row for TrialRecord {
    const HEADER: &'static str = TRIALS_HEADER;
    fn check(&self) -> Result<(), (&'static str, String)> {
        check_time("epochs", self.epochs)?;
        check_time("train_seconds", self.train_seconds)?;
        check_time("data_seconds", self.data_seconds)?;
        check_time("eval_seconds", self.eval_seconds)?;
        check_time("test_seconds", self.test_seconds)?;
        check_fraction("test_accuracy", self.test_accuracy)
    }
}

/// The ids of the trials with a row in `dir/trials.csv`, failed ones included: a resumed
/// run skips them (a failure is a result, recorded once; delete its row to retry it). An
/// absent file means no trial has finished yet.
pub fn done_trials(dir: &Path) -> Result<BTreeSet<String>, FileError> {
    let path = dir.join("trials.csv");
    if !super::stored::exists(&path) {
        return Ok(BTreeSet::new());
    }
    Ok(read_rows_so_far::<TrialRecord>(&path)?
        .into_iter()
        .map(|r| r.trial)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{append_rows, serde_header};

    #[test]
    fn headers_are_the_serde_fields_and_numbers_are_shortest() {
        let eval = TrainEval {
            trial: "b16-s0".into(),
            seed: 0,
            batch_size: 16,
            optimizer: "sgd".into(),
            variant: "mlp".into(),
            budget: Budget::Steps,
            epoch: 1.0,
            step: 20,
            examples: 320,
            train_loss: f64::INFINITY,
            val_loss: f64::NAN,
            val_accuracy: 0.1,
            train_seconds: 1.5,
            data_seconds: 0.25,
            eval_seconds: 1e-7,
        };
        assert_eq!(serde_header(&eval), RESULTS_HEADER);
        let record = TrialRecord {
            trial: "b16-s0".into(),
            seed: 0,
            batch_size: 16,
            optimizer: "sgd".into(),
            variant: "mlp".into(),
            budget: Budget::Steps,
            status: Status::Ok,
            epochs: 1.0,
            steps: 20,
            examples: 320,
            train_seconds: 1.5,
            data_seconds: 0.25,
            eval_seconds: 0.5,
            test_seconds: 0.5,
            test_loss: -f64::INFINITY,
            test_accuracy: 0.9,
            message: String::new(),
        };
        assert_eq!(serde_header(&record), TRIALS_HEADER);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        append_rows(&path, &[eval]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{RESULTS_HEADER}\nb16-s0,0,16,sgd,mlp,steps,1,20,320,inf,NaN,0.1,1.5,0.25,0.0000001\n")
        );
    }
}
