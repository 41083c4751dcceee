//! Time to result (what batchlab adds beyond the seeds): steps to result at a batch size
//! times the time of one step there, on the same device, giving the batch size that reaches
//! the target soonest in wall-clock time.
//!
//! Steps to result are taken as exact (they are what was measured; their evaluation
//! granularity is stated in the report), so the interval of a time to result is the step
//! time's spread scaled by the steps: [S low, S high]. Two batch sizes whose intervals
//! overlap are not told apart by these step times.

use crate::steps_to_target::TargetCell;

/// One step time as given, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepTime {
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
pub(crate) fn parse_step_times(
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
pub(crate) fn time_to_result(
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
