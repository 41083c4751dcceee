//! What each visit's first steps cost (`warmup.csv`, kept by runs whose warm-up is measured):
//! per batch size, how many warm-up steps the visits took, how many stopped at the cap before
//! the step settled, the first step's time and what the warm-up cost beyond steady steps (the
//! kernel compilation and tuning of a GPU's first visits, an allocator's first pages).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use batchlab_method::rows::step_time::{StepSample, WarmupEnd, WarmupSample};
use batchlab_method::rows::{read_rows, stored};
use batchlab_method::stats::median;

use super::markdown::ms;
use crate::markdown::table;
use crate::ReportError;

/// Reads `dir/warmup.csv` (or its Parquet form); empty without it.
pub(super) fn read(dir: &Path) -> Result<Vec<WarmupSample>, ReportError> {
    let path = dir.join("warmup.csv");
    if !stored::exists(&path) {
        return Ok(Vec::new());
    }
    Ok(read_rows(&path)?)
}

/// One visit's warm-up beside its steady step (the median of its timed steps).
struct VisitWarmup {
    steps: usize,
    capped: bool,
    first_ms: f64,
    /// Warm-up time beyond as many steady steps, in ms.
    extra_ms: f64,
}

/// The report.md section on `warmup` (empty without rows), beside the visits' timed `samples`.
pub(super) fn section(warmup: &[WarmupSample], samples: &[StepSample]) -> String {
    if warmup.is_empty() {
        return String::new();
    }
    let mut steps: BTreeMap<(u32, u32), Vec<&WarmupSample>> = BTreeMap::new();
    for w in warmup {
        steps.entry((w.batch_size, w.round)).or_default().push(w);
    }
    let mut timed: BTreeMap<(u32, u32), Vec<f64>> = BTreeMap::new();
    for s in samples {
        if let Some(ms) = s.step_ms {
            timed.entry((s.batch_size, s.round)).or_default().push(ms);
        }
    }
    let mut by_batch: BTreeMap<u32, Vec<VisitWarmup>> = BTreeMap::new();
    for ((batch, round), mut rows) in steps {
        rows.sort_by_key(|w| w.step);
        let steady = timed.get(&(batch, round)).map_or(f64::NAN, |t| median(t));
        let total: f64 = rows.iter().map(|w| w.step_ms).sum();
        by_batch.entry(batch).or_default().push(VisitWarmup {
            steps: rows.len(),
            capped: rows.iter().any(|w| w.ended == WarmupEnd::Cap),
            first_ms: rows[0].step_ms,
            extra_ms: total - rows.len() as f64 * steady,
        });
    }
    let rows: Vec<Vec<String>> = by_batch
        .iter()
        .map(|(batch, visits)| {
            let mut counts: Vec<f64> = visits.iter().map(|v| v.steps as f64).collect();
            counts.sort_by(f64::total_cmp);
            let first: Vec<f64> = visits.iter().map(|v| v.first_ms).collect();
            let extra: Vec<f64> = visits.iter().map(|v| v.extra_ms).collect();
            vec![
                batch.to_string(),
                visits.len().to_string(),
                format!(
                    "{} ({} – {})",
                    median(&counts),
                    counts[0],
                    counts[counts.len() - 1]
                ),
                visits.iter().filter(|v| v.capped).count().to_string(),
                ms(median(&first)),
                ms(median(&extra)),
            ]
        })
        .collect();
    let mut md = String::from("\n## Warm-up: what the first steps cost\n\n");
    let _ = writeln!(
        md,
        "Every visit's dropped warm-up steps, kept in `warmup.csv`. Per batch size over its visits: the warm-up steps taken (median, range), the visits whose warm-up stopped at the cap before the step settled, the first step's time (median) and the warm-up's time beyond as many steady steps (median; steady: the median of the visit's timed steps).\n"
    );
    md.push_str(&table(
        &[
            "batch",
            "visits",
            "warm-up steps",
            "stopped at the cap",
            "first step (ms)",
            "cost beyond steady steps (ms)",
        ],
        &rows,
    ));
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlab_method::rows::Status;

    fn sample(batch_size: u32, round: u32, ms: f64) -> StepSample {
        StepSample {
            batch_size,
            round,
            sample: Some(0),
            step_ms: Some(ms),
            status: Status::Ok,
            backend: "cuda".into(),
            device: "gpu".into(),
            peak_mem_mb: None,
            message: String::new(),
        }
    }

    fn warm(
        batch_size: u32,
        round: u32,
        step: u32,
        step_ms: f64,
        ended: WarmupEnd,
    ) -> WarmupSample {
        WarmupSample {
            batch_size,
            round,
            step,
            step_ms,
            ended,
        }
    }

    #[test]
    fn the_first_steps_cost_is_measured_per_batch_size() {
        use WarmupEnd::{Cap, Settled};
        let warmup = [
            warm(16, 0, 0, 4000.0, Settled),
            warm(16, 0, 1, 12.0, Settled),
            warm(16, 0, 2, 10.0, Settled),
            warm(16, 0, 3, 10.5, Settled),
            warm(16, 1, 0, 30.0, Cap),
            warm(16, 1, 1, 20.0, Cap),
        ];
        let samples = [sample(16, 0, 10.0), sample(16, 1, 10.0)];
        let md = section(&warmup, &samples);
        // Visit 0: 4 steps, 4032.5 - 4 x 10 = 3992.5 ms beyond; visit 1: 2 steps, capped,
        // 50 - 20 = 30 ms; medians: 3 steps, first step 2015 ms, cost 2011.25 ms.
        assert!(md.contains("| 16 | 2 | 3 (2 – 4) | 1 |"), "{md}");
        assert!(section(&[], &samples).is_empty());
    }
}
