//! `probes.csv` of a batch-size finder: one row per timed step of a probe (a batch size run in a
//! fresh process under the memory limit), or one row for a probe that failed.

use serde::{Deserialize, Serialize};

use super::number::{finite_or_empty, shortest};
use super::status::check_cannot_diverge;
use super::{check_time, Row, Status};

/// The header of `probes.csv`, exactly.
pub const PROBES_HEADER: &str = "phase,probe,batch_size,repeat,sample,step_ms,cpu_ms,status,peak_rss_mb,limited_peak_mb,limit,budget_mb,threads,backend,device,message";

/// The phase a probe belongs to, as `probes.csv` spells it (an unknown name is an error at its
/// column when the file is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum ProbePhase {
    /// The listed batch sizes, each measured `repeats` times, in shuffled order.
    Curve,
    /// Doubling, then bisection, for the largest batch size that fits.
    Search,
}

impl TryFrom<String> for ProbePhase {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        [ProbePhase::Curve, ProbePhase::Search]
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown phase `{s}`; expected curve or search"))
    }
}

impl ProbePhase {
    /// The name `probes.csv` and the reports use.
    pub fn name(self) -> &'static str {
        match self {
            ProbePhase::Curve => "curve",
            ProbePhase::Search => "search",
        }
    }
}

/// One row of `probes.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeSample {
    /// Which phase.
    pub phase: ProbePhase,
    /// The probe's index within its phase, from 0 (the search's order of probing).
    pub probe: u32,
    /// Examples per step.
    pub batch_size: u32,
    /// Which repeat of this batch size in the curve phase, from 0 (0 in the search).
    pub repeat: u32,
    /// Index of the timed step within the probe; `None` on a failure row.
    pub sample: Option<u32>,
    /// Wall time of the step in milliseconds, device synchronised; `None` on a failure row.
    #[serde(serialize_with = "finite_or_empty")]
    pub step_ms: Option<f64>,
    /// CPU time the whole process spent during the step (every thread), in milliseconds.
    #[serde(serialize_with = "finite_or_empty")]
    pub cpu_ms: Option<f64>,
    /// `ok`, `oom` or `error`.
    pub status: Status,
    /// Peak resident set size of the probe's process (VmHWM), MiB.
    #[serde(serialize_with = "finite_or_empty")]
    pub peak_rss_mb: Option<f64>,
    /// Peak of the quantity the limit binds (the cgroup's memory usage, or the address space
    /// under an rlimit), MiB.
    #[serde(serialize_with = "finite_or_empty")]
    pub limited_peak_mb: Option<f64>,
    /// How the budget was enforced: `cgroup-v2`, `cgroup-v1`, `rlimit-as`, or `none`.
    pub limit: String,
    /// The memory budget, MiB.
    #[serde(serialize_with = "shortest")]
    pub budget_mb: f64,
    /// CPU threads the backend computes with (utilization is CPU time / (wall x threads)).
    pub threads: u32,
    /// The burn backend.
    pub backend: String,
    /// The device name.
    pub device: String,
    /// Empty when ok; what failed otherwise.
    pub message: String,
}

impl ProbeSample {
    /// Whether the probe ran its steps within the budget.
    pub fn is_ok(&self) -> bool {
        self.status.is_ok()
    }

    /// The fraction of the threads' time spent computing during the step.
    pub fn utilization(&self) -> Option<f64> {
        match (self.cpu_ms, self.step_ms) {
            (Some(cpu), Some(wall)) if wall > 0.0 && self.threads > 0 => {
                Some(cpu / (wall * f64::from(self.threads)))
            }
            _ => None,
        }
    }
}

impl Row for ProbeSample {
    const HEADER: &'static str = PROBES_HEADER;
    fn check(&self) -> Result<(), (&'static str, String)> {
        check_cannot_diverge(self.status)?;
        if self.is_ok() && self.step_ms.is_none() {
            return Err(("step_ms", "an ok sample needs its step time".into()));
        }
        for (column, value) in [
            ("step_ms", self.step_ms),
            ("cpu_ms", self.cpu_ms),
            ("peak_rss_mb", self.peak_rss_mb),
            ("limited_peak_mb", self.limited_peak_mb),
            ("budget_mb", Some(self.budget_mb)),
        ] {
            check_time(column, value.unwrap_or(0.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{append_rows, read_rows, serde_header};

    fn row() -> ProbeSample {
        ProbeSample {
            phase: ProbePhase::Search,
            probe: 3,
            batch_size: 64,
            repeat: 0,
            sample: Some(1),
            step_ms: Some(100.0),
            cpu_ms: Some(150.0),
            status: Status::Ok,
            peak_rss_mb: Some(900.5),
            limited_peak_mb: Some(880.0),
            limit: "cgroup-v1".into(),
            budget_mb: 1024.0,
            threads: 2,
            backend: "flex".into(),
            device: "cpu".into(),
            message: String::new(),
        }
    }

    #[test]
    fn header_and_text_are_the_files_own() {
        let row = row();
        assert_eq!(serde_header(&row), PROBES_HEADER);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probes.csv");
        append_rows(&path, std::slice::from_ref(&row)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{PROBES_HEADER}\nsearch,3,64,0,1,100,150,ok,900.5,880,cgroup-v1,1024,2,flex,cpu,\n")
        );
        let back: Vec<ProbeSample> = read_rows(&path).unwrap();
        assert_eq!(back, vec![row]);
        assert_eq!(back[0].utilization(), Some(0.75));
    }

    #[test]
    fn impossible_rows_are_refused() {
        // A phase of no name is refused where the file is read, naming the column.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probes.csv");
        std::fs::write(
            &path,
            format!("{PROBES_HEADER}\nwarmup,3,64,0,1,100,150,ok,900.5,880,cgroup-v1,1024,2,flex,cpu,\n"),
        )
        .unwrap();
        let err = read_rows::<ProbeSample>(&path).unwrap_err().to_string();
        assert!(err.contains("phase") && err.contains("warmup"), "{err}");
        let mut bad = row();
        bad.limited_peak_mb = Some(-1.0);
        assert_eq!(bad.check().unwrap_err().0, "limited_peak_mb");
        let mut bad = row();
        bad.status = Status::Ok;
        bad.step_ms = None;
        assert_eq!(bad.check().unwrap_err().0, "step_ms");
    }
}
