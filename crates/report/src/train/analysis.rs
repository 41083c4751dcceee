//! The analysis of a training study: the latest record and curve of each trial, the
//! per-cell summary, the grid seen and what is missing from it, the best cells.
//!
//! Works on partial results: trials may be missing (the run is still going, was interrupted,
//! or is one shard of several), failed, or have evaluations but no final record. The grid is
//! inferred from what was recorded (every combination of the batch sizes, optimizers,
//! variants, budgets and seeds seen), so a trial that never started is noticed as long as
//! each of its values appears in some other trial.

use std::collections::{BTreeMap, BTreeSet};

use super::summary::{latest_records, series_label};
use super::{summarize, TrainCell};
use batchlab_method::rows::train::{Budget, TrainEval, TrialRecord};

/// What [`super::render_train`] found: headline lines for the terminal and the data behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainFindings {
    /// A few lines for the terminal: the best cell per budget, steps per trial, what is
    /// missing or failed.
    pub lines: Vec<String>,
    /// The per-cell summary (also in `summary.csv`).
    pub cells: Vec<TrainCell>,
    /// Per budget, the cell with the highest mean test accuracy (budgets in report order).
    pub best: Vec<TrainCell>,
    /// Trials of the inferred grid with no row in `trials.csv`, described as `batch 32,
    /// adam/standard, epochs budget, seed 1` (with evaluations recorded: interrupted or
    /// still running).
    pub missing: Vec<String>,
    /// Ids of recorded trials that did not end ok, with their status: `b256-... (oom)`.
    pub failed: Vec<String>,
    /// The claims judged.
    pub claims: Vec<batchlab_method::findings::Finding>,
}

/// Whether a published `series` (an optimizer label, a variant, or `optimizer/variant`)
/// names the line (optimizer, variant).
pub(super) fn matches(series: &str, optimizer: &str, variant: &str) -> bool {
    series == optimizer || series == variant || series == format!("{optimizer}/{variant}")
}

/// One line of the figures: an (optimizer, variant) pair.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct SeriesKey {
    pub optimizer: String,
    pub variant: String,
}

/// Everything the figures and the report are drawn from.
pub(super) struct Analysis {
    /// The latest record of each trial, in file order.
    pub records: Vec<TrialRecord>,
    /// Each trial's evaluations of its latest attempt, in step order.
    pub curves: BTreeMap<String, Vec<TrainEval>>,
    /// The per-cell summary.
    pub cells: Vec<TrainCell>,
    /// Budgets in report order (epochs, then steps).
    pub budgets: Vec<Budget>,
    /// Batch sizes seen, increasing.
    pub batch_sizes: Vec<u32>,
    /// Lines of the figures, sorted.
    pub series: Vec<SeriesKey>,
    /// Seeds seen.
    pub seeds: Vec<u64>,
    /// Whether series labels need the variant (more than one variant seen).
    pub with_variant: bool,
    /// Grid trials without a record, described.
    pub missing: Vec<String>,
    /// How many of `missing` have evaluations (started, not finished).
    pub unfinished: usize,
}

impl Analysis {
    /// The cells as the step-time prediction check reads them (series: the optimizer label).
    pub fn measured_cells(&self) -> Vec<crate::predict::check::MeasuredCell> {
        self.cells
            .iter()
            .map(|c| crate::predict::check::MeasuredCell {
                series: c.optimizer.clone(),
                budget: crate::predict::check::CheckBudget::Trained(c.budget),
                batch_size: c.batch_size,
                seconds: c.train_seconds_median,
                steps: c.steps_median,
            })
            .collect()
    }

    pub fn new(evals: Vec<TrainEval>, records: &[TrialRecord]) -> Analysis {
        let records: Vec<TrialRecord> = latest_records(records).into_iter().cloned().collect();
        let curves = latest_attempts(evals);
        let cells = summarize(&records);
        // The grid's axes: every value recorded in either file.
        let mut budgets = BTreeSet::new();
        let mut batch_sizes = BTreeSet::new();
        let mut series = BTreeSet::new();
        let mut seeds = BTreeSet::new();
        let axes = records
            .iter()
            .map(|r| (&r.budget, r.batch_size, &r.optimizer, &r.variant, r.seed))
            .chain(
                curves
                    .values()
                    .filter_map(|c| c.first())
                    .map(|e| (&e.budget, e.batch_size, &e.optimizer, &e.variant, e.seed)),
            );
        for (budget, batch_size, optimizer, variant, seed) in axes {
            budgets.insert(*budget);
            batch_sizes.insert(batch_size);
            series.insert(SeriesKey {
                optimizer: optimizer.clone(),
                variant: variant.clone(),
            });
            seeds.insert(seed);
        }
        let budgets: Vec<Budget> = budgets.into_iter().collect();
        let with_variant = series
            .iter()
            .map(|s| &s.variant)
            .collect::<BTreeSet<_>>()
            .len()
            > 1;
        let mut analysis = Analysis {
            records,
            curves,
            cells,
            budgets,
            batch_sizes: batch_sizes.into_iter().collect(),
            series: series.into_iter().collect(),
            seeds: seeds.into_iter().collect(),
            with_variant,
            missing: vec![],
            unfinished: 0,
        };
        analysis.find_missing();
        analysis
    }

    /// Every grid combination without a record; those with evaluations count as unfinished.
    fn find_missing(&mut self) {
        type Combination<'a> = (&'a str, u32, &'a str, &'a str, u64);
        let recorded: BTreeSet<Combination> = self
            .records
            .iter()
            .map(|r| {
                (
                    r.budget.as_str(),
                    r.batch_size,
                    r.optimizer.as_str(),
                    r.variant.as_str(),
                    r.seed,
                )
            })
            .collect();
        let started: BTreeSet<Combination> = self
            .curves
            .values()
            .filter_map(|c| c.first())
            .map(|e| {
                (
                    e.budget.as_str(),
                    e.batch_size,
                    e.optimizer.as_str(),
                    e.variant.as_str(),
                    e.seed,
                )
            })
            .collect();
        let mut missing = vec![];
        let mut unfinished = 0;
        for budget in &self.budgets {
            for s in &self.series {
                for &b in &self.batch_sizes {
                    for &seed in &self.seeds {
                        let key = (
                            budget.as_str(),
                            b,
                            s.optimizer.as_str(),
                            s.variant.as_str(),
                            seed,
                        );
                        if recorded.contains(&key) {
                            continue;
                        }
                        let mut line = format!(
                            "batch {b}, {}, {budget} budget, seed {seed}",
                            self.label(&s.optimizer, &s.variant)
                        );
                        if started.contains(&key) {
                            unfinished += 1;
                            line.push_str(" (evaluations recorded, no final record)");
                        }
                        missing.push(line);
                    }
                }
            }
        }
        self.missing = missing;
        self.unfinished = unfinished;
    }

    /// The label of an (optimizer, variant) line.
    pub fn label(&self, optimizer: &str, variant: &str) -> String {
        series_label(optimizer, variant, self.with_variant)
    }

    /// The summary cells of one budget and series, in increasing batch size.
    pub fn cells_of<'a>(
        &'a self,
        budget: Budget,
        s: &'a SeriesKey,
    ) -> impl Iterator<Item = &'a TrainCell> + 'a {
        self.cells.iter().filter(move |c| {
            c.budget == budget && c.optimizer == s.optimizer && c.variant == s.variant
        })
    }

    /// The ok records of one cell.
    pub fn ok_records<'a>(
        &'a self,
        cell: &'a TrainCell,
    ) -> impl Iterator<Item = &'a TrialRecord> + 'a {
        self.records.iter().filter(move |r| {
            r.is_ok()
                && r.batch_size == cell.batch_size
                && r.budget == cell.budget
                && r.optimizer == cell.optimizer
                && r.variant == cell.variant
        })
    }

    /// The seeds' lowest and highest training seconds of a cell.
    pub fn time_range(&self, cell: &TrainCell) -> (f64, f64) {
        self.ok_records(cell)
            .map(|r| r.train_seconds)
            .filter(|t| t.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
                (lo.min(t), hi.max(t))
            })
    }

    /// Whether two cells' training times are apart: their seeds' min..max ranges do not
    /// overlap (overlapping, the seeds alone could explain the gap).
    pub fn times_apart(&self, a: &TrainCell, b: &TrainCell) -> bool {
        let (a_lo, a_hi) = self.time_range(a);
        let (b_lo, b_hi) = self.time_range(b);
        a_hi < b_lo || b_hi < a_lo
    }

    /// Each power-of-two batch size (above 2) of `cells` with a neighbour one below or above
    /// it, and those neighbours; only cells with a finite median training time.
    pub fn powers_of_two_with_neighbours<'a>(
        cells: impl Iterator<Item = &'a TrainCell>,
    ) -> Vec<(&'a TrainCell, Vec<&'a TrainCell>)> {
        let timed: BTreeMap<u32, &TrainCell> = cells
            .filter(|c| c.train_seconds_median.is_finite())
            .map(|c| (c.batch_size, c))
            .collect();
        timed
            .iter()
            .filter(|(b, _)| b.is_power_of_two() && **b > 2)
            .filter_map(|(&p, &cell)| {
                let neighbours: Vec<&TrainCell> = [p - 1, p + 1]
                    .iter()
                    .filter_map(|b| timed.get(b).copied())
                    .collect();
                (!neighbours.is_empty()).then_some((cell, neighbours))
            })
            .collect()
    }

    /// The budget of the source's own setup: `epochs` when present, else the first.
    pub fn seed_budget(&self) -> Option<Budget> {
        self.budgets.first().copied()
    }

    /// The recorded trials that did not end ok: `id (status)`.
    pub fn failed(&self) -> Vec<String> {
        self.records
            .iter()
            .filter(|r| !r.is_ok())
            .map(|r| format!("{} ({})", r.trial, r.status))
            .collect()
    }

    /// Per budget, the cell with the highest mean test accuracy.
    pub fn best(&self) -> Vec<TrainCell> {
        self.budgets
            .iter()
            .filter_map(|b| {
                self.cells
                    .iter()
                    .filter(|c| c.budget == *b && c.test_accuracy_mean.is_finite())
                    .max_by(|x, y| x.test_accuracy_mean.total_cmp(&y.test_accuracy_mean))
                    .cloned()
            })
            .collect()
    }

    /// The findings, with `lines` for the terminal.
    pub fn findings(&self, lines: Vec<String>) -> TrainFindings {
        TrainFindings {
            lines,
            cells: self.cells.clone(),
            best: self.best(),
            missing: self.missing.clone(),
            failed: self.failed(),
            claims: Vec::new(),
        }
    }
}

/// Each trial's evaluations of its latest attempt: a trial rerun after an interruption
/// starts its steps again, so a step that does not increase begins a new attempt and the
/// earlier one is dropped.
fn latest_attempts(evals: Vec<TrainEval>) -> BTreeMap<String, Vec<TrainEval>> {
    let mut curves: BTreeMap<String, Vec<TrainEval>> = BTreeMap::new();
    for e in evals {
        let curve = curves.entry(e.trial.clone()).or_default();
        if curve.last().is_some_and(|last| e.step <= last.step) {
            curve.clear();
        }
        curve.push(e);
    }
    curves
}

impl From<TrainFindings> for crate::verdict::Rendered {
    fn from(findings: TrainFindings) -> Self {
        crate::verdict::Rendered {
            lines: findings.lines,
            claims: findings.claims,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rows::tests::{eval, failed, record};
    use super::*;

    #[test]
    fn a_restarted_trial_keeps_its_latest_attempt() {
        let r = record((16, "adam", "standard", "epochs"), 0, 0.6, 1.0, 30);
        let evals = vec![
            eval(&r, 10, 0.5),
            eval(&r, 20, 0.55),
            eval(&r, 10, 0.52),
            eval(&r, 20, 0.56),
            eval(&r, 30, 0.6),
        ];
        let curves = latest_attempts(evals);
        let steps: Vec<u64> = curves[&r.trial].iter().map(|e| e.step).collect();
        assert_eq!(steps, [10, 20, 30]);
        assert_eq!(curves[&r.trial][0].val_accuracy, 0.52);
    }

    #[test]
    fn missing_trials_are_inferred_from_the_grid_seen() {
        let a = record((16, "adam", "standard", "epochs"), 0, 0.6, 1.0, 30);
        let b = record((32, "adam", "augmented", "steps"), 1, 0.6, 1.0, 30);
        let c = failed(
            record((16, "adam", "augmented", "epochs"), 1, 0.0, 0.0, 0),
            "oom",
            "",
        );
        let started = record((32, "adam", "standard", "epochs"), 0, 0.0, 0.0, 0);
        let analysis = Analysis::new(vec![eval(&started, 5, 0.4)], &[a, b, c]);
        assert_eq!(analysis.budgets, [Budget::Epochs, Budget::Steps]);
        assert!(analysis.with_variant);
        // 2 budgets x 2 series x 2 batch sizes x 2 seeds = 16, 3 recorded.
        assert_eq!(analysis.missing.len(), 13);
        assert_eq!(analysis.unfinished, 1);
        assert!(analysis
            .missing
            .contains(&"batch 32, adam/standard, epochs budget, seed 0 (evaluations recorded, no final record)".to_string()));
        assert_eq!(analysis.failed(), ["b16-adam-augmented-epochs-s1 (oom)"]);
    }
}
