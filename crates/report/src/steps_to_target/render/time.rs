//! Time to result (what batchlab adds beyond the seeds): steps to result at a batch size
//! times the time of one step there, on the same device, giving the batch size that reaches
//! the target soonest in wall-clock time.
//!
//! Steps to result are taken as exact (they are what was measured; their evaluation
//! granularity is stated in the report), so the interval of a time to result is the step
//! time's spread scaled by the steps: [S low, S high]. Two batch sizes whose intervals
//! overlap are not told apart by these step times.

use std::path::Path;

use super::analysis::Study;
use super::format::{seconds, sig};
use super::summary::TargetCell;
use super::TargetContext;
use crate::figures::{render_pair, Chart, LegendPosition, Scale, Series, VLine, PALETTE};
use crate::ReportError;

/// One step time as given, checked.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct StepTime {
    workload: String,
    batch_size: u32,
    median: f64,
    low: f64,
    high: f64,
}

/// Time to result at one batch size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimePoint {
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// Steps to result there.
    pub steps: u64,
    /// Steps x median seconds per step.
    pub seconds: f64,
    /// Steps x the step time's low end.
    pub low: f64,
    /// Steps x the step time's high end.
    pub high: f64,
}

/// Time to result of one workload over the batch sizes with both a steps to result and a
/// step time.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeToResult {
    /// In increasing batch size.
    pub points: Vec<TimePoint>,
    /// The point with the fewest median seconds.
    pub soonest: TimePoint,
    /// Other batch sizes whose interval overlaps the soonest's: not distinguishable from it
    /// by these step times.
    pub overlapping: Vec<u32>,
}

/// The usable step times, and a note for each one left out (non-finite, not positive, or
/// not low <= median <= high).
pub(super) fn parse_step_times(
    raw: &[(String, u32, f64, f64, f64)],
) -> (Vec<StepTime>, Vec<String>) {
    let mut times = vec![];
    let mut notes = vec![];
    for (workload, batch_size, median, low, high) in raw {
        let (median, low, high) = (*median, *low, *high);
        let finite = [median, low, high]
            .iter()
            .all(|v| v.is_finite() && *v > 0.0);
        if finite && low <= median && median <= high {
            times.push(StepTime {
                workload: workload.clone(),
                batch_size: *batch_size,
                median,
                low,
                high,
            });
        } else {
            notes.push(format!(
                "The step time given for {workload} at batch {batch_size} (median {median} s, low {low}, high {high}) is left out: expected positive numbers with low <= median <= high."
            ));
        }
    }
    (times, notes)
}

/// Time to result of the workload `label` (model `model`) from its summary rows; a step
/// time given for the exact label wins over one given for the model alone. `None` when no
/// batch size has both a result and a step time.
pub(super) fn time_to_result(
    label: &str,
    model: &str,
    cells: &[TargetCell],
    times: &[StepTime],
) -> Option<TimeToResult> {
    let find = |name: &str, b: u32| {
        times
            .iter()
            .rev()
            .find(|t| t.workload == name && t.batch_size == b)
    };
    let points: Vec<TimePoint> = cells
        .iter()
        .filter_map(|c| {
            let steps = c.steps_to_result?;
            let t = find(label, c.batch_size).or_else(|| find(model, c.batch_size))?;
            let s = steps as f64;
            Some(TimePoint {
                batch_size: c.batch_size,
                steps,
                seconds: s * t.median,
                low: s * t.low,
                high: s * t.high,
            })
        })
        .collect();
    let soonest = *points
        .iter()
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds))?;
    let overlapping = points
        .iter()
        .filter(|p| p.batch_size != soonest.batch_size && p.low <= soonest.high)
        .map(|p| p.batch_size)
        .collect();
    Some(TimeToResult {
        points,
        soonest,
        overlapping,
    })
}

/// "batch 256 reaches the target soonest: 12.3 s (11.0–13.9 s); 512 overlaps it".
pub(super) fn time_sentence(label: &str, t: &TimeToResult) -> String {
    let p = &t.soonest;
    let mut s = format!(
        "{label} reaches the target soonest at batch {}: {} steps x step time = {} (interval {}–{} from the step-time spread)",
        p.batch_size,
        p.steps,
        seconds(p.seconds),
        seconds(p.low),
        seconds(p.high)
    );
    if let (Some(first), Some(last)) = (t.points.first(), t.points.last()) {
        if t.points.len() > 1 {
            s.push_str(&format!(
                ", against {} at batch {} and {} at batch {}",
                seconds(first.seconds),
                first.batch_size,
                seconds(last.seconds),
                last.batch_size
            ));
        }
    }
    if t.overlapping.is_empty() {
        s.push_str("; no other batch size's interval overlaps it.");
    } else {
        let list: Vec<String> = t.overlapping.iter().map(u32::to_string).collect();
        s.push_str(&format!(
            "; batch size(s) {} overlap its interval: not distinguishable from it by these step times.",
            list.join(", ")
        ));
    }
    let fastest_steps = t.points.iter().min_by_key(|p| p.steps);
    if let Some(f) = fastest_steps.filter(|f| f.batch_size != p.batch_size) {
        s.push_str(&format!(
            " The fewest steps (batch {}, {} steps) is not the soonest: its steps cost {}x as long each.",
            f.batch_size,
            f.steps,
            sig((f.seconds / f.steps as f64) / (p.seconds / p.steps as f64))
        ));
    }
    s
}

/// `time_to_result.{svg,png}`: steps to result x median step time against batch size, one
/// line per workload with the step-time spread as bars, and a vertical line at each
/// workload's soonest batch size.
pub(super) fn draw_time_to_result(
    dir: &Path,
    ctx: &TargetContext,
    study: &Study,
) -> Result<(), ReportError> {
    let mut chart = Chart::new(
        format!("{}: time to result vs batch size", ctx.experiment),
        "batch size (examples per step, log2 scale)",
        "time to reach the target (s: steps x median step time, log scale)",
    );
    chart.x_scale = Scale::Log2;
    chart.y_scale = Scale::Log;
    chart.legend = LegendPosition::Auto;
    for (k, w) in study.workloads.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let Some(t) = &w.time else { continue };
        let points = t
            .points
            .iter()
            .map(|p| (f64::from(p.batch_size), p.seconds))
            .collect();
        let bars = t.points.iter().map(|p| (p.low, p.high)).collect();
        chart.series.push(
            Series::new(
                format!("{}: bars = step-time spread", w.label),
                points,
                color,
            )
            .with_error_bars(bars),
        );
        chart.vlines.push(VLine {
            x: f64::from(t.soonest.batch_size),
            text: format!("soonest {}", t.soonest.batch_size),
            legend: String::new(),
            color,
            dashed: true,
        });
    }
    render_pair(&chart, dir, "time_to_result").map(|_| ())
}
