//! `results.csv` of a step-time sweep: one row per timed sample, appended as it is measured.

use serde::{Deserialize, Serialize};

use super::number::finite_or_empty;
use super::{check_status, check_time, Row};

/// The header of `results.csv`, exactly.
pub const RESULTS_HEADER: &str =
    "batch_size,round,sample,step_ms,status,backend,device,peak_mem_mb,message";

/// One row of `results.csv`: a timed step, or one failed visit of a batch size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSample {
    /// Examples per step.
    pub batch_size: u32,
    /// The round (pass over the shuffled batch sizes) this sample belongs to, from 0.
    pub round: u32,
    /// Index of the sample within its visit, from 0; `None` on a failure row.
    pub sample: Option<u32>,
    /// Wall time of the step in milliseconds; `None` on a failure row. A non-finite value
    /// is written as empty, and so reads back as `None`.
    #[serde(serialize_with = "finite_or_empty")]
    pub step_ms: Option<f64>,
    /// `ok`, `oom` or `error`.
    pub status: String,
    /// The burn backend, e.g. `flex` or `cuda`.
    pub backend: String,
    /// The device name.
    pub device: String,
    /// Peak memory of the visit in MB, if measured.
    #[serde(serialize_with = "finite_or_empty")]
    pub peak_mem_mb: Option<f64>,
    /// Empty when ok; the error text of a failure (may contain commas, quotes, newlines).
    pub message: String,
}

impl Row for StepSample {
    const HEADER: &'static str = RESULTS_HEADER;
    fn check(&self) -> Result<(), (&'static str, String)> {
        check_status(&self.status, &["ok", "oom", "error"])?;
        if self.status == "ok" && self.step_ms.is_none() {
            return Err(("step_ms", "an ok sample needs its step time".into()));
        }
        check_time("step_ms", self.step_ms.unwrap_or(0.0))?;
        check_time("peak_mem_mb", self.peak_mem_mb.unwrap_or(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{append_rows, read_rows, serde_header};

    #[test]
    fn header_and_text_are_the_files_own() {
        let row = StepSample {
            batch_size: 8,
            round: 1,
            sample: Some(2),
            step_ms: Some(1.0),
            status: "ok".into(),
            backend: "flex".into(),
            device: "cpu".into(),
            peak_mem_mb: Some(f64::NAN),
            message: String::new(),
        };
        assert_eq!(serde_header(&row), RESULTS_HEADER);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        append_rows(&path, std::slice::from_ref(&row)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{RESULTS_HEADER}\n8,1,2,1,ok,flex,cpu,,\n")
        );
        let back: Vec<StepSample> = read_rows(&path).unwrap();
        assert_eq!(back[0].peak_mem_mb, None);
    }
}
