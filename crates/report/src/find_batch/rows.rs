//! A finder's raw rows, `probes.csv`, gathered into one record per probe.

use batchlab_method::rows::find_batch::ProbePhase;
use batchlab_method::rows::Status;
use std::path::Path;

use batchlab_method::rows::{find_batch::ProbeSample, read_rows};
use batchlab_method::stats::median;

use crate::ReportError;

/// One probe: a batch size run in a process of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRecord {
    /// `curve` or `search`.
    pub phase: ProbePhase,
    /// Index within the phase.
    pub index: u32,
    /// The batch size.
    pub batch_size: u32,
    /// `ok`, `oom` or `error`.
    pub status: Status,
    /// What failed, or a note.
    pub message: String,
    /// How the budget was enforced.
    pub limit: String,
    /// Peak resident set size of the process, MiB.
    pub peak_rss_mb: Option<f64>,
    /// Peak of what the limit binds, MiB.
    pub limited_peak_mb: Option<f64>,
    /// Every timed step, ms.
    pub step_ms: Vec<f64>,
    /// Utilization of every timed step that has its CPU time.
    pub utilization: Vec<f64>,
}

impl ProbeRecord {
    /// Whether the probe ran within the budget.
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// Median step time, ms (NaN for a failed probe).
    pub fn median_ms(&self) -> f64 {
        median(&self.step_ms)
    }
}

/// Reads `path` and gathers its rows by probe, in file order.
pub(super) fn read(path: &Path) -> Result<Vec<ProbeRecord>, ReportError> {
    let rows: Vec<ProbeSample> = read_rows(path)?;
    Ok(gather(&rows))
}

pub(super) fn gather(rows: &[ProbeSample]) -> Vec<ProbeRecord> {
    let mut records: Vec<ProbeRecord> = Vec::new();
    for row in rows {
        let same = records
            .iter_mut()
            .find(|r| r.phase == row.phase && r.index == row.probe);
        let record = match same {
            Some(record) => record,
            None => {
                records.push(ProbeRecord {
                    phase: row.phase,
                    index: row.probe,
                    batch_size: row.batch_size,
                    status: row.status,
                    message: row.message.clone(),
                    limit: row.limit.clone(),
                    peak_rss_mb: row.peak_rss_mb,
                    limited_peak_mb: row.limited_peak_mb,
                    step_ms: Vec::new(),
                    utilization: Vec::new(),
                });
                records.last_mut().expect("just pushed")
            }
        };
        record.step_ms.extend(row.step_ms);
        record.utilization.extend(row.utilization());
    }
    records
}
