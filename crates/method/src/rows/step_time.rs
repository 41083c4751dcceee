//! `results.csv` of a step-time sweep: one row per timed sample, appended as it is measured.

use serde::{Deserialize, Serialize};

use super::number::finite_or_empty;
use super::status::check_cannot_diverge;
use super::{check_time, Row, Status};

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
    pub status: Status,
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
        check_cannot_diverge(self.status)?;
        if self.status.is_ok() && self.step_ms.is_none() {
            return Err(("step_ms", "an ok sample needs its step time".into()));
        }
        check_time("step_ms", self.step_ms.unwrap_or(0.0))?;
        check_time("peak_mem_mb", self.peak_mem_mb.unwrap_or(0.0))
    }
}

/// The header of `warmup.csv`, exactly.
pub const WARMUP_HEADER: &str = "batch_size,round,step,step_ms,ended";

/// How a visit's warm-up ended (`timed_step::Warmup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarmupEnd {
    /// After a fixed number of steps (the minimum is the cap).
    Fixed,
    /// The last steps agreed: the step had settled.
    Settled,
    /// At the cap, before the steps agreed.
    Cap,
}

/// One row of `warmup.csv`: a dropped warm-up step of a visit, kept so that the first-step
/// cost (kernel compilation, autotuning, allocation) is measured rather than assumed away.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmupSample {
    /// Examples per step.
    pub batch_size: u32,
    /// The round of the visit, from 0.
    pub round: u32,
    /// The warm-up step's index within its visit, from 0.
    pub step: u32,
    /// Its wall time in milliseconds.
    #[serde(serialize_with = "super::number::shortest")]
    pub step_ms: f64,
    /// How the visit's warm-up ended (the same on every row of the visit).
    pub ended: WarmupEnd,
}

impl Row for WarmupSample {
    const HEADER: &'static str = WARMUP_HEADER;
    fn check(&self) -> Result<(), (&'static str, String)> {
        check_time("step_ms", self.step_ms)
    }
}

/// Which part of a step a `stages.csv` row times, as the file spells it (an unknown one is an
/// error at its column when the file is read); ordered as a step runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum StagePhase {
    /// A stage's forward pass.
    Forward,
    /// A stage's backward pass.
    Backward,
    /// The optimizer's update.
    Optimizer,
    /// The whole step the parts are compared with.
    Step,
}

impl StagePhase {
    /// The word `stages.csv` and the anatomy use.
    pub fn name(self) -> &'static str {
        match self {
            StagePhase::Forward => "forward",
            StagePhase::Backward => "backward",
            StagePhase::Optimizer => "optimizer",
            StagePhase::Step => "step",
        }
    }
}

impl TryFrom<String> for StagePhase {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        [
            StagePhase::Forward,
            StagePhase::Backward,
            StagePhase::Optimizer,
            StagePhase::Step,
        ]
        .into_iter()
        .find(|p| p.name() == s)
        .ok_or_else(|| {
            format!("unknown phase `{s}`; expected forward, backward, optimizer or step")
        })
    }
}

impl std::fmt::Display for StagePhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The header of `stages.csv`, exactly.
pub const STAGES_HEADER: &str = "batch_size,round,sample,stage_index,stage,phase,ms";

/// One row of `stages.csv`: one part of a step taken apart (`timed_step::dissect`): a stage's
/// `forward` or `backward`, the `optimizer` update, or the whole `step` it was compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageSample {
    /// Examples per step.
    pub batch_size: u32,
    /// The round of the dissecting visit, from 0.
    pub round: u32,
    /// Index of the repetition within its visit, from 0.
    pub sample: u32,
    /// The stage's position in the network (0 for `optimizer` and `step`).
    pub stage_index: u32,
    /// The stage's name, e.g. `conv+relu`; `optimizer` or `step` for those phases.
    pub stage: String,
    /// Which part of the step.
    pub phase: StagePhase,
    /// Wall time in milliseconds.
    pub ms: f64,
}

impl Row for StageSample {
    const HEADER: &'static str = STAGES_HEADER;
    fn check(&self) -> Result<(), (&'static str, String)> {
        check_time("ms", self.ms)
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
            status: Status::Ok,
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

    #[test]
    fn a_warmup_row_goes_out_and_comes_back() {
        let row = WarmupSample {
            batch_size: 16,
            round: 0,
            step: 3,
            step_ms: 1234.5,
            ended: WarmupEnd::Settled,
        };
        assert_eq!(serde_header(&row), WARMUP_HEADER);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("warmup.csv");
        append_rows(&path, std::slice::from_ref(&row)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{WARMUP_HEADER}\n16,0,3,1234.5,settled\n")
        );
        assert_eq!(read_rows::<WarmupSample>(&path).unwrap(), [row]);
        std::fs::write(&path, format!("{WARMUP_HEADER}\n16,0,3,-1,cap\n")).unwrap();
        assert!(read_rows::<WarmupSample>(&path).is_err());
    }

    #[test]
    fn a_stage_row_goes_out_and_comes_back_and_an_unknown_phase_is_refused() {
        let row = StageSample {
            batch_size: 128,
            round: 0,
            sample: 1,
            stage_index: 2,
            stage: "dense+relu".into(),
            phase: StagePhase::Backward,
            ms: 1.5,
        };
        assert_eq!(serde_header(&row), STAGES_HEADER);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stages.csv");
        append_rows(&path, std::slice::from_ref(&row)).unwrap();
        assert_eq!(read_rows::<StageSample>(&path).unwrap(), vec![row.clone()]);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("backward", "sideways");
        std::fs::write(&path, text).unwrap();
        let err = read_rows::<StageSample>(&path).unwrap_err().to_string();
        assert!(err.contains("unknown phase `sideways`"), "{err}");
    }
}
