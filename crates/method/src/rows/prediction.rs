//! `prediction.csv`: a training report's check of the step-time prediction, one row per cell
//! (written whole by the report at every rendering), so that `batchlab predict --history` can
//! gather every check ever made under a report root.

use serde::{Deserialize, Serialize};

use super::number::{nan_if_empty, shortest};
use super::Row;

/// The header of `prediction.csv`, exactly.
pub const PREDICTION_HEADER: &str =
    "series,budget,batch_size,measured_s,predicted_s,predicted_low_s,predicted_high_s,error,sweep";

/// One cell's measured training time beside the predicted one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictionRow {
    /// The cell's series (an optimizer label, or a steps-to-target workload).
    pub series: String,
    /// Its budget (`epochs`, `steps`, `all trials`).
    pub budget: String,
    /// Examples per step.
    pub batch_size: u32,
    /// Measured training seconds.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub measured_s: f64,
    /// Predicted training seconds.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub predicted_s: f64,
    /// Low end of the prediction.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub predicted_low_s: f64,
    /// High end of the prediction.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub predicted_high_s: f64,
    /// predicted / measured - 1.
    #[serde(serialize_with = "shortest", deserialize_with = "nan_if_empty")]
    pub error: f64,
    /// The step-time sweep the prediction came from (its run directory).
    pub sweep: String,
}

impl Row for PredictionRow {
    const HEADER: &'static str = PREDICTION_HEADER;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{append_rows, read_rows};

    #[test]
    fn a_row_goes_out_and_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prediction.csv");
        let row = PredictionRow {
            series: "adam-lr0.0005".into(),
            budget: "epochs".into(),
            batch_size: 128,
            measured_s: 61.5,
            predicted_s: 58.25,
            predicted_low_s: 57.0,
            predicted_high_s: 60.0,
            error: 58.25 / 61.5 - 1.0,
            sweep: "reports/x/1".into(),
        };
        append_rows(&path, std::slice::from_ref(&row)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(PREDICTION_HEADER));
        assert_eq!(read_rows::<PredictionRow>(&path).unwrap(), vec![row]);
    }
}
