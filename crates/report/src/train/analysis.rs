//! From a training run directory to its summary, figures, report and headline findings.
//!
//! Works on partial results: trials may be missing (the run is still going, was interrupted,
//! or is one shard of several), failed, or have evaluations but no final record. The grid is
//! inferred from what was recorded (every combination of the batch sizes, optimizers,
//! variants, budgets and seeds seen), so a trial that never started is noticed as long as
//! each of its values appears in some other trial.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::summary::{budget_order, latest_records, series_label};
use super::{read_evals, read_trials, summarize, write_summary, TrainCell, TrainEval, TrialRecord};
use crate::ReportError;

/// A number published by the study's source, set beside the measured one in `report.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// The batch size it was measured at.
    pub batch_size: u32,
    /// Which line it belongs to: an optimizer label (`adam`), a variant (`augmented`), or
    /// both as `optimizer/variant`.
    pub series: String,
    /// `test_accuracy` (in percent), `train_minutes` or `inference_minutes`.
    pub metric: String,
    /// The published value, in the metric's unit.
    pub value: f64,
    /// Where it was published, e.g. "seed 003 text: 'about 58%'".
    pub source: String,
}

/// What a report says about the run beyond the measurements. The runner fills it from the
/// resolved config, the data it loaded and the device it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainContext {
    /// Experiment name, e.g. `augmentation`.
    pub experiment: String,
    /// The config's one-paragraph description.
    pub description: String,
    /// The figure or table reproduced, if any.
    pub reproduces: Option<String>,
    /// The source's claim in words, if any.
    pub claim: Option<String>,
    /// One line: architecture, input, classes, parameters.
    pub model: String,
    /// Lines about the data: name and location, split sizes per variant, notes such as
    /// skipped corrupt files.
    pub dataset: Vec<String>,
    /// burn backend, e.g. `flex`.
    pub backend: String,
    /// Device name.
    pub device: String,
    /// One line: budgets, schedule, evaluation points, order of trials, divergence rule.
    pub protocol: String,
    /// Examples in the test split (0 if unknown): one example is 1 / this of accuracy.
    pub test_examples: usize,
    /// The source's numbers to compare with.
    pub published: Vec<Published>,
}

/// What [`render_train`] found: headline lines for the terminal and the data behind them.
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
}

/// Reads `dir/results.csv` and `dir/trials.csv` (either may be absent, not both) and writes
/// `results.parquet`, `summary.csv`, the figures `accuracy_vs_batch`, `learning_curves` and
/// `train_time` (`.svg` and `.png` each) and `report.md` (see [`super::OUTPUT_FILES`]).
/// Rerunnable at any time: each file is replaced atomically.
pub fn render_train(dir: &Path, ctx: &TrainContext) -> Result<TrainFindings, ReportError> {
    let results = dir.join("results.csv");
    let trials = dir.join("trials.csv");
    if !results.exists() && !trials.exists() {
        return Err(ReportError::Format {
            path: dir.to_path_buf(),
            message: "neither results.csv nor trials.csv: no training trial recorded here".into(),
        });
    }
    let evals = if results.exists() {
        read_evals(&results)?
    } else {
        vec![]
    };
    let records = if trials.exists() {
        read_trials(&trials)?
    } else {
        vec![]
    };
    let parquet = dir.join("results.parquet");
    let mut frame = super::results::evals_frame(&evals)
        .map_err(ReportError::table("build the table for", &parquet))?;
    crate::io::write_parquet(&parquet, &mut frame)?;
    let analysis = Analysis::new(evals, &records);
    write_summary(&dir.join("summary.csv"), &analysis.cells)?;
    super::figures::draw_accuracy(dir, ctx, &analysis)?;
    super::figures::draw_learning_curves(dir, ctx, &analysis)?;
    super::figures::draw_train_time(dir, ctx, &analysis)?;
    let markdown = super::report::report_markdown(ctx, &analysis);
    crate::io::write_atomic(&dir.join("report.md"), markdown.as_bytes())?;
    Ok(analysis.findings())
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
    /// Budgets in report order (epochs, steps, others).
    pub budgets: Vec<String>,
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
            budgets.insert(budget.clone());
            batch_sizes.insert(batch_size);
            series.insert(SeriesKey {
                optimizer: optimizer.clone(),
                variant: variant.clone(),
            });
            seeds.insert(seed);
        }
        let mut budgets: Vec<String> = budgets.into_iter().collect();
        budgets.sort_by(|a, b| budget_order(a).cmp(&budget_order(b)));
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
        budget: &'a str,
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

    /// The budget of the source's own setup: `epochs` when present, else the first.
    pub fn seed_budget(&self) -> Option<&str> {
        self.budgets.first().map(String::as_str)
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
                    .filter(|c| &c.budget == b && c.test_accuracy_mean.is_finite())
                    .max_by(|x, y| x.test_accuracy_mean.total_cmp(&y.test_accuracy_mean))
                    .cloned()
            })
            .collect()
    }

    fn findings(&self) -> TrainFindings {
        TrainFindings {
            lines: super::reading::headlines(self),
            cells: self.cells.clone(),
            best: self.best(),
            missing: self.missing.clone(),
            failed: self.failed(),
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

#[cfg(test)]
mod tests {
    use super::super::results::tests::{eval, failed, record};
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
        assert_eq!(analysis.budgets, ["epochs", "steps"]);
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
