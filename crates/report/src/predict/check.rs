//! Every training report (train, steps-to-target) checks the step-time prediction: per cell,
//! the median measured training time of its trials beside the time the same model's step-time
//! sweep on the same device predicts for the steps they took, and the relative error.
//!
//! A cell's trials took a median S steps at batch B over N training examples per epoch, which
//! is S / steps-per-epoch epochs of floor(N / B) full steps plus, unless the last partial batch
//! is dropped, one step of N mod B examples; each is timed from the sweep at its own batch size.

use crate::markdown::table;
use crate::numbers::seconds;
use crate::predict::{StepCurve, StepEstimate};
use batchlab_method::rows::train::Budget;
use batchlab_method::stats::median;

/// The step times a training study's cells are checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTimes {
    /// The series of the cells it times (a train study's optimizer labels, e.g.
    /// `adam-lr0.0005`; a steps-to-target study's workloads).
    pub optimizers: Vec<String>,
    /// The same model's sweep with that optimizer on the same device.
    pub curve: StepCurve,
}

/// What the check needs beyond the rows: the sweeps found, and the epoch's shape.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PredictionInputs {
    /// Sweeps per optimizer; empty when none was found.
    pub step_times: Vec<StepTimes>,
    /// Where the sweeps were looked for and with what, for the sentence when none was found.
    pub searched: String,
    /// Sweeps of series without one here that exist only on another machine or build, each
    /// with what differs (`<dir> (<model> with <optimizer>; other <what>)`).
    pub elsewhere: Vec<String>,
    /// Training examples per epoch.
    pub train_examples: u64,
    /// Whether the last partial batch is dropped.
    pub drop_last: bool,
}

/// The budget of the cells a prediction is checked against: a training grid's (epochs,
/// steps), or every trial of a steps-to-target search (each to its own step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckBudget {
    /// A training grid's budget.
    Trained(Budget),
    /// Every trial of a search.
    AllTrials,
}

impl std::fmt::Display for CheckBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckBudget::Trained(b) => f.write_str(b.as_str()),
            CheckBudget::AllTrials => f.write_str("all trials"),
        }
    }
}

/// A cell as the check sees it: its series, budget, batch size, and its trials' median
/// training seconds and steps.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredCell {
    /// The series (see [`StepTimes::optimizers`]).
    pub series: String,
    /// The budget its trials trained under.
    pub budget: CheckBudget,
    /// Examples per step.
    pub batch_size: u32,
    /// Median training seconds of its trials.
    pub seconds: f64,
    /// Median steps of its trials.
    pub steps: f64,
}

/// One cell's check.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionCheck {
    /// The cell's series.
    pub optimizer: String,
    /// Its batch size.
    pub batch_size: u32,
    /// Its budget.
    pub budget: CheckBudget,
    /// Median measured training seconds.
    pub measured: f64,
    /// Predicted seconds (value, low, high).
    pub predicted: (f64, f64, f64),
}

impl PredictionCheck {
    /// predicted / measured - 1.
    pub fn error(&self) -> f64 {
        self.predicted.0 / self.measured - 1.0
    }
}

/// The predicted time of `steps` steps at `batch_size` (see the module documentation).
fn predicted(
    inputs: &PredictionInputs,
    curve: &StepCurve,
    batch_size: u32,
    steps: f64,
) -> Option<(f64, f64, f64)> {
    let n = inputs.train_examples;
    let b = u64::from(batch_size);
    if n == 0 || b == 0 {
        return None;
    }
    let (full, rest) = (n / b, n % b);
    let partial = rest > 0 && !inputs.drop_last;
    let per_epoch_steps = full + u64::from(partial);
    if per_epoch_steps == 0 {
        return None;
    }
    let step = curve.at(batch_size)?;
    let last = if partial {
        curve.at(u32::try_from(rest).ok()?)?
    } else {
        StepEstimate {
            seconds: 0.0,
            low: 0.0,
            high: 0.0,
            ..step
        }
    };
    let epochs = steps / per_epoch_steps as f64;
    let epoch = |s: f64, l: f64| full as f64 * s + l;
    Some((
        epochs * epoch(step.seconds, last.seconds),
        epochs * epoch(step.low, last.low),
        epochs * epoch(step.high, last.high),
    ))
}

/// Every cell with a positive time and steps whose series has a sweep.
pub fn checks(inputs: &PredictionInputs, cells: &[MeasuredCell]) -> Vec<PredictionCheck> {
    cells
        .iter()
        .filter(|c| c.seconds > 0.0 && c.steps > 0.0)
        .filter_map(|c| {
            let times = inputs
                .step_times
                .iter()
                .find(|t| t.optimizers.contains(&c.series))?;
            Some(PredictionCheck {
                optimizer: c.series.clone(),
                batch_size: c.batch_size,
                budget: c.budget,
                measured: c.seconds,
                predicted: predicted(inputs, &times.curve, c.batch_size, c.steps)?,
            })
        })
        .collect()
}

/// The report's section: the table and the median absolute error, or why there is none.
pub fn section(inputs: &PredictionInputs, checks: &[PredictionCheck]) -> String {
    let mut md = String::from("\n## Training time against the step-time prediction\n\n");
    if checks.is_empty() {
        md.push_str(&format!(
            "Not checked: no complete step-time sweep of this model and optimizer on this device was found ({}).{} Run one on the same machine and build to check the prediction.\n",
            inputs.searched,
            elsewhere(inputs)
        ));
        return md;
    }
    let sources: Vec<String> = inputs
        .step_times
        .iter()
        .map(|t| format!("{} from `{}`", t.optimizers.join(", "), t.curve.source))
        .collect();
    let errors: Vec<f64> = checks.iter().map(|c| c.error().abs()).collect();
    md.push_str(&format!(
        "Each cell's median training time (the training loop's clock, evaluation excluded) beside the time predicted for its median steps from the same model's step-time sweep on this device ({}): the sweep's median at the batch size (or between its measured neighbours), times the steps, the last partial batch of each epoch at its own size. Median absolute error {:.1}% over {} cells; the largest {:.1}%.\n\n",
        sources.join("; "),
        100.0 * median(&errors),
        checks.len(),
        100.0 * errors.iter().copied().fold(0.0, f64::max)
    ));
    let rows: Vec<Vec<String>> = checks
        .iter()
        .map(|c| {
            vec![
                c.optimizer.clone(),
                c.budget.to_string(),
                c.batch_size.to_string(),
                seconds(c.measured),
                format!(
                    "{} ({}–{})",
                    seconds(c.predicted.0),
                    seconds(c.predicted.1),
                    seconds(c.predicted.2)
                ),
                format!("{:+.1}%", 100.0 * c.error()),
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "optimizer",
            "budget",
            "batch",
            "measured",
            "predicted (interval)",
            "error",
        ],
        &rows,
    ));
    if !inputs.elsewhere.is_empty() {
        md.push_str(&format!(
            "\nOther series are not checked.{}\n",
            elsewhere(inputs)
        ));
    }
    md
}

/// " Found only on another machine or build: ..." where such sweeps are, else nothing.
fn elsewhere(inputs: &PredictionInputs) -> String {
    if inputs.elsewhere.is_empty() {
        return String::new();
    }
    format!(
        " Found only on another machine or build: {}.",
        inputs.elsewhere.join("; ")
    )
}

/// Writes `dir/prediction.csv`, the checks as rows (replaced whole at every rendering; removed
/// when there are none), which `batchlab predict --history` gathers.
pub fn write_rows(
    dir: &std::path::Path,
    inputs: &PredictionInputs,
    checks: &[PredictionCheck],
) -> Result<(), crate::ReportError> {
    use batchlab_method::rows::{append_rows, prediction::PredictionRow};
    let path = dir.join("prediction.csv");
    let partial = dir.join("prediction.csv.partial");
    let _ = std::fs::remove_file(&partial);
    if checks.is_empty() {
        if path.exists() {
            std::fs::remove_file(&path)
                .map_err(crate::ReportError::io("remove the stale file", &path))?;
        }
        return Ok(());
    }
    let rows: Vec<PredictionRow> = checks
        .iter()
        .map(|c| PredictionRow {
            series: c.optimizer.clone(),
            budget: c.budget.to_string(),
            batch_size: c.batch_size,
            measured_s: c.measured,
            predicted_s: c.predicted.0,
            predicted_low_s: c.predicted.1,
            predicted_high_s: c.predicted.2,
            error: c.error(),
            sweep: inputs
                .step_times
                .iter()
                .find(|t| t.optimizers.contains(&c.optimizer))
                .map_or(String::new(), |t| t.curve.source.clone()),
        })
        .collect();
    append_rows(&partial, &rows)?;
    std::fs::rename(&partial, &path).map_err(crate::ReportError::io("rename", &path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::CurvePoint;

    #[test]
    fn an_epoch_with_a_partial_batch_times_it_at_its_own_size() {
        let point = |b: u32, s: f64| CurvePoint {
            batch_size: b,
            median: s,
            low: s,
            high: s,
        };
        let curve = StepCurve::new("sweep", vec![point(2, 1.0), point(8, 2.0)]).unwrap();
        let inputs = PredictionInputs {
            train_examples: 50,
            ..PredictionInputs::default()
        };
        // 50 at batch 8: 6 full steps (2 s) and one of 2 (1 s) = 13 s per epoch of 7 steps;
        // 14 steps are 2 epochs.
        assert_eq!(predicted(&inputs, &curve, 8, 14.0).unwrap().0, 26.0);
        let dropped = PredictionInputs {
            drop_last: true,
            ..inputs.clone()
        };
        assert_eq!(predicted(&dropped, &curve, 8, 12.0).unwrap().0, 24.0);
        assert!(predicted(&inputs, &curve, 0, 1.0).is_none());
    }
}
