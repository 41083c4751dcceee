//! Per-cell summary of a training study (`summary.csv`): one row per (batch size,
//! optimizer, variant, budget), over its seeds.
//!
//! Accuracy is summarised by mean, sample standard deviation, min and max over the ok trials
//! (the seeds are few, and the spread is the point); times by medians (docs/ARCHITECTURE.md,
//! "Measurement rules"). Failed trials (diverged, oom, error) count in `trials` but not in any
//! statistic: their accuracy is undefined and their times cover only part of a run.

use std::collections::BTreeMap;
use std::path::Path;

use polars_core::prelude::*;

use crate::ReportError;
use batchlab_method::rows::train::{Budget, TrialRecord};
use batchlab_method::stats::{mean, median, sample_std};

/// The summary of one grid cell over its seeds. Statistics are NaN when the cell has no ok
/// trial (and the standard deviation when it has fewer than two).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainCell {
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// The optimizer's label.
    pub optimizer: String,
    /// The data variant.
    pub variant: String,
    /// How long its trials trained.
    pub budget: Budget,
    /// Trials recorded in `trials.csv`, failed ones included.
    pub trials: usize,
    /// Trials with status `ok`.
    pub ok: usize,
    /// The other trials by status, e.g. `diverged 1, oom 1`; empty when none failed.
    pub failures: String,
    /// Mean test accuracy in [0, 1].
    pub test_accuracy_mean: f64,
    /// Sample standard deviation of the test accuracy (divisor n - 1).
    pub test_accuracy_std: f64,
    /// Lowest test accuracy.
    pub test_accuracy_min: f64,
    /// Highest test accuracy.
    pub test_accuracy_max: f64,
    /// Median training seconds (evaluations excluded).
    pub train_seconds_median: f64,
    /// Median inference seconds over the test split.
    pub test_seconds_median: f64,
    /// Median optimizer steps per trial.
    pub steps_median: f64,
    /// Median share of training time spent waiting for data, in percent.
    pub data_share_median: f64,
}

impl TrainCell {
    /// The cell's line in figures and tables: `optimizer/variant`, or the optimizer alone
    /// when the study has one variant (`with_variant` false).
    pub fn series(&self, with_variant: bool) -> String {
        series_label(&self.optimizer, &self.variant, with_variant)
    }
}

/// `optimizer/variant`, or `optimizer` alone when `with_variant` is false.
pub(crate) fn series_label(optimizer: &str, variant: &str, with_variant: bool) -> String {
    if with_variant {
        format!("{optimizer}/{variant}")
    } else {
        optimizer.to_string()
    }
}

/// The last record of each trial id, in file order of those last records: a trial recorded
/// twice (rerun by hand after deleting nothing) counts once, with its latest result.
pub(crate) fn latest_records(records: &[TrialRecord]) -> Vec<&TrialRecord> {
    let last: BTreeMap<&str, usize> = records
        .iter()
        .enumerate()
        .map(|(i, r)| (r.trial.as_str(), i))
        .collect();
    records
        .iter()
        .enumerate()
        .filter(|(i, r)| last.get(r.trial.as_str()) == Some(i))
        .map(|(_, r)| r)
        .collect()
}

/// Summarises `records` per cell, ordered by budget (epochs, then steps), optimizer,
/// variant, then batch size. A trial id recorded more than once counts once, by its last row.
pub fn summarize(records: &[TrialRecord]) -> Vec<TrainCell> {
    type Key<'a> = (Budget, &'a str, &'a str, u32);
    let mut groups: BTreeMap<Key, Vec<&TrialRecord>> = BTreeMap::new();
    for r in latest_records(records) {
        let key = (
            r.budget,
            r.optimizer.as_str(),
            r.variant.as_str(),
            r.batch_size,
        );
        groups.entry(key).or_default().push(r);
    }
    groups.into_values().map(|rows| cell(&rows)).collect()
}

fn cell(rows: &[&TrialRecord]) -> TrainCell {
    let first = rows[0];
    let ok: Vec<&&TrialRecord> = rows.iter().filter(|r| r.is_ok()).collect();
    let finite = |f: fn(&TrialRecord) -> f64| -> Vec<f64> {
        ok.iter().map(|r| f(r)).filter(|v| v.is_finite()).collect()
    };
    let accuracy = finite(|r| r.test_accuracy);
    let shares = finite(|r| {
        if r.train_seconds > 0.0 {
            100.0 * r.data_seconds / r.train_seconds
        } else {
            f64::NAN
        }
    });
    let mut failures: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.is_ok()) {
        *failures.entry(r.status.as_str()).or_default() += 1;
    }
    TrainCell {
        batch_size: first.batch_size,
        optimizer: first.optimizer.clone(),
        variant: first.variant.clone(),
        budget: first.budget,
        trials: rows.len(),
        ok: ok.len(),
        failures: failures
            .iter()
            .map(|(status, n)| format!("{status} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        test_accuracy_mean: mean(&accuracy),
        test_accuracy_std: sample_std(&accuracy),
        test_accuracy_min: accuracy
            .iter()
            .copied()
            .reduce(f64::min)
            .unwrap_or(f64::NAN),
        test_accuracy_max: accuracy
            .iter()
            .copied()
            .reduce(f64::max)
            .unwrap_or(f64::NAN),
        train_seconds_median: median(&finite(|r| r.train_seconds)),
        test_seconds_median: median(&finite(|r| r.test_seconds)),
        steps_median: median(&finite(|r| r.steps as f64)),
        data_share_median: median(&shares),
    }
}

/// Writes `cells` to `path` as CSV with polars, columns named as the fields (NaN is written
/// as an empty field), atomically.
pub fn write_summary(path: &Path, cells: &[TrainCell]) -> Result<(), ReportError> {
    crate::io::write_csv(path, summary_frame(cells))
}

fn summary_frame(cells: &[TrainCell]) -> PolarsResult<DataFrame> {
    let finite = |f: fn(&TrainCell) -> f64| -> Vec<Option<f64>> {
        cells
            .iter()
            .map(|c| Some(f(c)).filter(|v| v.is_finite()))
            .collect()
    };
    let strs = |f: fn(&TrainCell) -> &str| cells.iter().map(f).collect::<Vec<&str>>();
    let counts =
        |f: fn(&TrainCell) -> usize| cells.iter().map(|c| f(c) as u32).collect::<Vec<u32>>();
    let columns = vec![
        Column::new(
            "batch_size".into(),
            cells.iter().map(|c| c.batch_size).collect::<Vec<u32>>(),
        ),
        Column::new("optimizer".into(), strs(|c| &c.optimizer)),
        Column::new("variant".into(), strs(|c| &c.variant)),
        Column::new("budget".into(), strs(|c| c.budget.as_str())),
        Column::new("trials".into(), counts(|c| c.trials)),
        Column::new("ok".into(), counts(|c| c.ok)),
        Column::new("failures".into(), strs(|c| &c.failures)),
        Column::new(
            "test_accuracy_mean".into(),
            finite(|c| c.test_accuracy_mean),
        ),
        Column::new("test_accuracy_std".into(), finite(|c| c.test_accuracy_std)),
        Column::new("test_accuracy_min".into(), finite(|c| c.test_accuracy_min)),
        Column::new("test_accuracy_max".into(), finite(|c| c.test_accuracy_max)),
        Column::new(
            "train_seconds_median".into(),
            finite(|c| c.train_seconds_median),
        ),
        Column::new(
            "test_seconds_median".into(),
            finite(|c| c.test_seconds_median),
        ),
        Column::new("steps_median".into(), finite(|c| c.steps_median)),
        Column::new("data_share_median".into(), finite(|c| c.data_share_median)),
    ];
    DataFrame::new(cells.len(), columns)
}

#[cfg(test)]
mod tests {
    use super::super::rows::tests::{failed, record};
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Batch 32: three ok seeds (0.60, 0.65, 0.73; 10, 14, 11 s) and an oom; batch 64: one
    /// ok seed and one diverged; a steps-budget cell listed first in the file.
    fn fixture() -> Vec<TrialRecord> {
        let key = (32, "adam", "standard", "epochs");
        let mut seed2 = record(key, 2, 0.73, 11.0, 180);
        seed2.data_seconds = 5.5; // 50%
        vec![
            record((32, "adam", "standard", "steps"), 0, 0.7, 20.0, 375),
            record(key, 0, 0.60, 10.0, 180),
            record(key, 1, 0.65, 14.0, 190),
            seed2,
            failed(record(key, 3, 0.0, 0.0, 0), "oom", "out of memory"),
            record((64, "adam", "standard", "epochs"), 0, 0.5, 6.0, 90),
            failed(
                record((64, "adam", "standard", "epochs"), 1, 0.0, 0.0, 0),
                "diverged",
                "",
            ),
        ]
    }

    #[test]
    fn summarizes_cells_by_hand() {
        let cells = summarize(&fixture());
        let keys: Vec<(u32, &str)> = cells
            .iter()
            .map(|c| (c.batch_size, c.budget.as_str()))
            .collect();
        assert_eq!(keys, [(32, "epochs"), (64, "epochs"), (32, "steps")]);
        let c = &cells[0];
        assert_eq!((c.trials, c.ok, c.failures.as_str()), (4, 3, "oom 1"));
        // Mean 1.98 / 3 = 0.66; deviations -0.06, -0.01, 0.07: squares sum 0.0086, / 2.
        assert!(
            close(c.test_accuracy_mean, 0.66),
            "{}",
            c.test_accuracy_mean
        );
        assert!(
            close(c.test_accuracy_std, 0.0043f64.sqrt()),
            "{}",
            c.test_accuracy_std
        );
        assert_eq!((c.test_accuracy_min, c.test_accuracy_max), (0.60, 0.73));
        assert_eq!(c.train_seconds_median, 11.0);
        assert_eq!(c.test_seconds_median, 0.5);
        assert_eq!(c.steps_median, 180.0);
        // Shares 10%, 10%, 50%: median 10%.
        assert!(close(c.data_share_median, 10.0));
        assert_eq!(c.series(true), "adam/standard");
        assert_eq!(c.series(false), "adam");

        let one = &cells[1];
        assert_eq!(
            (one.trials, one.ok, one.failures.as_str()),
            (2, 1, "diverged 1")
        );
        assert_eq!(one.test_accuracy_mean, 0.5);
        assert!(one.test_accuracy_std.is_nan(), "one seed has no spread");
    }

    #[test]
    fn a_trial_recorded_twice_counts_once_by_its_last_row() {
        let key = (16, "sgd", "standard", "epochs");
        let rows = vec![
            failed(record(key, 0, 0.0, 0.0, 0), "error", "killed"),
            record(key, 0, 0.55, 3.0, 375),
        ];
        let cells = summarize(&rows);
        assert_eq!((cells[0].trials, cells[0].ok), (1, 1));
        assert_eq!(cells[0].test_accuracy_mean, 0.55);
    }

    #[test]
    fn a_cell_with_no_ok_trial_has_nan_statistics() {
        let key = (512, "adam", "standard", "epochs");
        let cells = summarize(&[failed(record(key, 0, 0.0, 0.0, 0), "oom", "")]);
        let c = &cells[0];
        assert_eq!((c.trials, c.ok), (1, 0));
        assert!(c.test_accuracy_mean.is_nan() && c.train_seconds_median.is_nan());
        assert!(c.steps_median.is_nan() && c.data_share_median.is_nan());
    }

    #[test]
    fn writes_summary_csv() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.csv");
        write_summary(&path, &summarize(&fixture())).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "batch_size,optimizer,variant,budget,trials,ok,failures,test_accuracy_mean,test_accuracy_std,test_accuracy_min,test_accuracy_max,train_seconds_median,test_seconds_median,steps_median,data_share_median"
        );
        let first = lines.next().unwrap();
        assert!(
            first.starts_with("32,adam,standard,epochs,4,3,oom 1,0.66"),
            "{first}"
        );
        let second = lines.next().unwrap();
        assert!(
            second.starts_with("64,adam,standard,epochs,2,1,diverged 1,0.5,,0.5,0.5,"),
            "{second}"
        );
    }
}
