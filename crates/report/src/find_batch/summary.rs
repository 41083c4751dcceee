//! `summary.csv` of a finder: one row per batch size measured.

use batchlab_method::rows::find_batch::ProbePhase;
use std::path::Path;

use polars_core::prelude::*;

use super::BatchPoint;
use crate::ReportError;

/// Writes `points` with polars (NaN as empty), atomically.
pub(super) fn write(path: &Path, points: &[BatchPoint]) -> Result<(), ReportError> {
    crate::io::write_csv(path, frame(points))
}

fn frame(points: &[BatchPoint]) -> PolarsResult<DataFrame> {
    let finite = |f: fn(&BatchPoint) -> f64| -> Vec<Option<f64>> {
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
            "phase".into(),
            points
                .iter()
                .map(|p| {
                    if p.in_curve {
                        ProbePhase::Curve
                    } else {
                        ProbePhase::Search
                    }
                    .name()
                })
                .collect::<Vec<&str>>(),
        ),
        Column::new(
            "ok_probes".into(),
            points.iter().map(|p| p.ok as u32).collect::<Vec<u32>>(),
        ),
        Column::new(
            "failed".into(),
            points
                .iter()
                .map(|p| {
                    p.failed
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<String>>(),
        ),
        Column::new("limited_peak_mb".into(), finite(|p| p.limited_peak_mb)),
        Column::new("peak_rss_mb".into(), finite(|p| p.peak_rss_mb)),
        Column::new("median_step_ms".into(), finite(|p| p.step_ms)),
        Column::new("examples_per_s".into(), finite(|p| p.examples_per_s)),
        Column::new("utilization".into(), finite(|p| p.utilization)),
    ];
    DataFrame::new(points.len(), columns)
}
