//! Per-batch-size summary of a step-time sweep (`summary.csv`, the table figures are drawn
//! from). Medians and spreads, never means alone (docs/ARCHITECTURE.md,
//! "Measurement rules").

use batchlab_method::rows::Status;
use std::collections::BTreeMap;
use std::path::Path;

use polars_core::prelude::*;

use crate::ReportError;
use batchlab_method::rows::step_time::StepSample;
use batchlab_method::stats::{bootstrap_median_ci, quantile_sorted};

/// Confidence level of the bootstrap interval of each median.
pub const CI_LEVEL: f64 = 0.95;

/// The summary of one batch size. Statistics are over its `ok` samples and NaN when it has
/// none.
#[derive(Debug, Clone, PartialEq)]
pub struct StepPoint {
    /// Examples per step.
    pub batch_size: u32,
    /// `ok` when the batch size has ok samples and no failed visit; otherwise the status of
    /// its first failure row (`oom` or `error`).
    pub status: Status,
    /// Number of ok samples.
    pub samples: usize,
    /// Median step time.
    pub median_ms: f64,
    /// First quartile of the samples (type-7 quantile).
    pub q1_ms: f64,
    /// Third quartile of the samples.
    pub q3_ms: f64,
    /// Lower end of the [`CI_LEVEL`] percentile-bootstrap interval of the median.
    pub ci_low_ms: f64,
    /// Upper end of that interval.
    pub ci_high_ms: f64,
    /// Median step time divided by the batch size.
    pub ms_per_example: f64,
    /// Batch size divided by the median step time, per second.
    pub examples_per_s: f64,
    /// The smallest per-visit peak memory recorded over the batch size's rows (its rounds),
    /// if any was measured. Smallest, because a process's peak resident set size also counts
    /// memory the allocator kept from an earlier, larger visit: every reading is an upper
    /// bound of what the batch size needs, and the lowest is the tightest.
    pub peak_mem_mb: Option<f64>,
}

impl StepPoint {
    /// Whether the point is usable for fits and jumps.
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok && self.samples > 0
    }
}

/// Summarises raw rows per batch size, in increasing batch size. Each batch size's
/// bootstrap gets its own seed derived from `seed` and the batch size, so adding a batch
/// size to a sweep does not change the intervals of the others.
pub fn summarize(samples: &[StepSample], bootstrap_resamples: usize, seed: u64) -> Vec<StepPoint> {
    let mut groups: BTreeMap<u32, Vec<&StepSample>> = BTreeMap::new();
    for s in samples {
        groups.entry(s.batch_size).or_default().push(s);
    }
    groups
        .into_iter()
        .map(|(batch_size, rows)| {
            let mut times: Vec<f64> = rows
                .iter()
                .filter(|r| r.status == Status::Ok)
                .filter_map(|r| r.step_ms)
                .filter(|t| t.is_finite())
                .collect();
            times.sort_by(f64::total_cmp);
            let failure = rows
                .iter()
                .find(|r| r.status != Status::Ok)
                .map(|r| r.status);
            let status = match failure {
                Some(status) => status,
                None if times.is_empty() => Status::Error,
                None => Status::Ok,
            };
            let median_ms = quantile_sorted(&times, 0.5);
            let (ci_low_ms, ci_high_ms) = bootstrap_median_ci(
                &times,
                bootstrap_resamples,
                CI_LEVEL,
                point_seed(seed, batch_size),
            );
            let b = f64::from(batch_size);
            StepPoint {
                batch_size,
                status,
                samples: times.len(),
                median_ms,
                q1_ms: quantile_sorted(&times, 0.25),
                q3_ms: quantile_sorted(&times, 0.75),
                ci_low_ms,
                ci_high_ms,
                ms_per_example: median_ms / b,
                examples_per_s: 1000.0 * b / median_ms,
                peak_mem_mb: rows.iter().filter_map(|r| r.peak_mem_mb).reduce(f64::min),
            }
        })
        .collect()
}

/// SplitMix64's finaliser: decorrelates the seeds of neighbouring batch sizes.
fn point_seed(seed: u64, batch_size: u32) -> u64 {
    let mut z = seed ^ u64::from(batch_size).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Writes `points` to `path` as CSV with polars (columns named as the fields; NaN and
/// missing values are empty), atomically.
pub fn write_summary(path: &Path, points: &[StepPoint]) -> Result<(), ReportError> {
    crate::io::write_csv(path, summary_frame(points))
}

fn summary_frame(points: &[StepPoint]) -> PolarsResult<DataFrame> {
    let finite = |f: fn(&StepPoint) -> f64| -> Vec<Option<f64>> {
        points
            .iter()
            .map(|p| Some(f(p)).filter(|v| v.is_finite()))
            .collect()
    };
    let columns = vec![
        Column::new(
            "batch_size".into(),
            points.iter().map(|p| p.batch_size).collect::<Vec<u32>>(),
        ),
        Column::new(
            "status".into(),
            points
                .iter()
                .map(|p| p.status.as_str())
                .collect::<Vec<&str>>(),
        ),
        Column::new(
            "samples".into(),
            points
                .iter()
                .map(|p| p.samples as u32)
                .collect::<Vec<u32>>(),
        ),
        Column::new("median_ms".into(), finite(|p| p.median_ms)),
        Column::new("q1_ms".into(), finite(|p| p.q1_ms)),
        Column::new("q3_ms".into(), finite(|p| p.q3_ms)),
        Column::new("ci_low_ms".into(), finite(|p| p.ci_low_ms)),
        Column::new("ci_high_ms".into(), finite(|p| p.ci_high_ms)),
        Column::new("ms_per_example".into(), finite(|p| p.ms_per_example)),
        Column::new("examples_per_s".into(), finite(|p| p.examples_per_s)),
        Column::new(
            "peak_mem_mb".into(),
            points
                .iter()
                .map(|p| p.peak_mem_mb)
                .collect::<Vec<Option<f64>>>(),
        ),
    ];
    DataFrame::new(points.len(), columns)
}

#[cfg(test)]
mod tests {
    use super::super::rows::tests::{failed, ok};
    use super::*;

    fn fixture() -> Vec<StepSample> {
        let mut rows = vec![];
        for (i, t) in [10.0, 12.0, 11.0, 13.0].into_iter().enumerate() {
            rows.push(ok(2, 0, i as u32, t));
        }
        rows.push(StepSample {
            peak_mem_mb: Some(600.0),
            ..ok(1, 0, 0, 5.0)
        });
        // A later round after a larger batch size: inflated by retained memory.
        rows.push(StepSample {
            peak_mem_mb: Some(900.0),
            ..ok(1, 1, 0, 5.0)
        });
        rows.push(ok(64, 0, 0, 300.0)); // ran once, then ran out of memory
        rows.push(failed(64, 1, "oom", "out of memory"));
        rows.push(failed(128, 0, "oom", "out of memory"));
        rows
    }

    #[test]
    fn summarizes_per_batch_size() {
        let points = summarize(&fixture(), 500, 1);
        assert_eq!(
            points.iter().map(|p| p.batch_size).collect::<Vec<_>>(),
            [1, 2, 64, 128]
        );
        let p2 = &points[1];
        assert_eq!((p2.status.as_str(), p2.samples), ("ok", 4));
        assert_eq!(p2.median_ms, 11.5);
        assert_eq!((p2.q1_ms, p2.q3_ms), (10.75, 12.25));
        assert!(p2.ci_low_ms <= 11.5 && 11.5 <= p2.ci_high_ms);
        assert_eq!(p2.ms_per_example, 5.75);
        assert!((p2.examples_per_s - 2000.0 / 11.5).abs() < 1e-9);
        assert_eq!(p2.peak_mem_mb, Some(512.25));
        assert_eq!(points[0].peak_mem_mb, Some(600.0), "lowest over the rounds");
        // A failed visit makes the point failed even with ok samples, which are still summarised.
        assert_eq!(
            (
                points[2].status.as_str(),
                points[2].samples,
                points[2].median_ms
            ),
            ("oom", 1, 300.0)
        );
        assert!(!points[2].is_ok());
        let p128 = &points[3];
        assert_eq!((p128.status.as_str(), p128.samples), ("oom", 0));
        assert!(p128.median_ms.is_nan() && p128.ci_low_ms.is_nan() && p128.peak_mem_mb.is_none());
        // NaN != NaN, so compare the printed form.
        assert_eq!(
            format!("{:?}", summarize(&fixture(), 500, 1)),
            format!("{points:?}"),
            "seeded"
        );
    }

    #[test]
    fn writes_summary_csv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.csv");
        write_summary(&path, &summarize(&fixture(), 100, 1)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "batch_size,status,samples,median_ms,q1_ms,q3_ms,ci_low_ms,ci_high_ms,ms_per_example,examples_per_s,peak_mem_mb"
        );
        let first = lines.next().unwrap();
        assert!(first.starts_with("1,ok,2,5.0,"), "{first}");
        assert_eq!(lines.last().unwrap(), "128,oom,0,,,,,,,,");
    }
}
