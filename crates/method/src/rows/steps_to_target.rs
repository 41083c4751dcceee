//! The two files of a steps-to-target study beside the training runner's: `search.csv`, the
//! metaparameters of every trial, and `noise.csv`, the gradient noise scale measured during
//! each trial.
//!
//! A runner may append a trial's `search.csv` row twice (it writes the row before the
//! trial's `trials.csv` row, and a supervisor that sees the worker crash in between writes
//! both again); [`latest_search`] keeps the last row of each trial.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::number::{nan_if_empty, shortest};
use super::{Row, TrialRow};

/// The header of `search.csv`, exactly.
pub const SEARCH_HEADER: &str =
    "trial,workload,batch_size,index,learning_rate,momentum,effective_learning_rate";

/// One row of `search.csv`: the metaparameters one trial was trained with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRow {
    /// The trial's id, as in `trials.csv` and `results.csv`.
    pub trial: String,
    /// `<model>/<optimizer>`, e.g. `simple-cnn/sgd-momentum`.
    pub workload: String,
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// The trial's position in the quasi-random sequence (the same index gives the same
    /// metaparameters at every batch size).
    pub index: u64,
    /// The learning rate.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub learning_rate: f64,
    /// The momentum; 0 for plain SGD.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub momentum: f64,
    /// `learning_rate / (1 - momentum)`: the step size momentum amounts to at equilibrium,
    /// which Shallue et al. plot for momentum workloads.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub effective_learning_rate: f64,
}

impl SearchRow {
    /// Whether the trial used momentum (a momentum above 0).
    pub fn has_momentum(&self) -> bool {
        self.momentum > 0.0
    }
}

impl Row for SearchRow {
    const HEADER: &'static str = SEARCH_HEADER;
}

impl TrialRow for SearchRow {
    fn trial(&self) -> &str {
        &self.trial
    }
}

/// The last row of each trial id: a row written twice (see the module documentation)
/// counts once.
pub fn latest_search(rows: Vec<SearchRow>) -> BTreeMap<String, SearchRow> {
    rows.into_iter().map(|r| (r.trial.clone(), r)).collect()
}

/// The header of `noise.csv`, exactly.
pub const NOISE_HEADER: &str =
    "trial,workload,batch_size,step,b_small,b_big,g_small_sq,g_big_sq,b_simple";

/// One row of `noise.csv`: one measurement of the gradient noise scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseRow {
    /// The trial's id.
    pub trial: String,
    /// `<model>/<optimizer>`.
    pub workload: String,
    /// The trial's batch size.
    pub batch_size: u32,
    /// Optimizer steps taken before the measurement.
    pub step: u64,
    /// Examples behind the small mean gradient (half the batch).
    pub b_small: u32,
    /// Examples behind the big mean gradient (the whole batch).
    pub b_big: u32,
    /// |G_small|^2.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub g_small_sq: f64,
    /// |G_big|^2.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub g_big_sq: f64,
    /// The trial's moving-average B_simple after this measurement (NaN until defined).
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub b_simple: f64,
}

impl Row for NoiseRow {
    const HEADER: &'static str = NOISE_HEADER;
}

impl TrialRow for NoiseRow {
    fn trial(&self) -> &str {
        &self.trial
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod search_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{append_rows, read_rows, serde_header};

    fn noise_row() -> NoiseRow {
        NoiseRow {
            trial: "mlp-sgd-b16-t0".into(),
            workload: "mlp/sgd".into(),
            batch_size: 16,
            step: 50,
            b_small: 8,
            b_big: 16,
            g_small_sq: 0.25,
            g_big_sq: 0.125,
            b_simple: f64::NAN,
        }
    }

    #[test]
    fn headers_are_the_serde_fields() {
        assert_eq!(serde_header(&noise_row()), NOISE_HEADER);
        let search = SearchRow {
            trial: "t".into(),
            workload: "mlp/sgd".into(),
            batch_size: 8,
            index: 3,
            learning_rate: 0.1,
            momentum: 0.0,
            effective_learning_rate: 0.1,
        };
        assert_eq!(serde_header(&search), SEARCH_HEADER);
    }

    #[test]
    fn noise_rows_round_trip_with_nan() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("noise.csv");
        let row = noise_row();
        let second = NoiseRow {
            b_simple: 12.5,
            step: 100,
            ..row.clone()
        };
        append_rows(&path, std::slice::from_ref(&row)).unwrap();
        append_rows(&path, std::slice::from_ref(&second)).unwrap();
        let back: Vec<NoiseRow> = read_rows(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert!(back[0].b_simple.is_nan());
        assert_eq!(back[1], second);
        assert_eq!(back[0].g_small_sq, row.g_small_sq);
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains(",16,50,8,16,0.25,0.125,NaN\n"));
    }
}
