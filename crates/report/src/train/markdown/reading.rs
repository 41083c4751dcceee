//! "Reading the result", the accuracy half: sentences generated from the measurements, never
//! canned. Each states a number and what it means for the question the study asks (does
//! accuracy fall with batch size, and is that the batch size or the number of steps?). The
//! time half is in `timing.rs`.
//!
//! Differences are judged against the seed spread: the pooled within-cell standard deviation
//! s of the test accuracy, over the cells with at least two ok seeds. Two cell means with n1
//! and n2 seeds differ "beyond the seed spread" when the difference exceeds
//! 2 s sqrt(1/n1 + 1/n2) (about a 95% two-sided test under normal noise); with one seed per
//! cell there is no spread to judge by, and the report says so.

use std::collections::BTreeMap;

use crate::numbers::{fixed, pct};
use crate::train::analysis::{Analysis, SeriesKey};
use crate::train::{TrainCell, TrainContext};
use batchlab_method::rows::train::Budget;
use batchlab_method::stats::median;

/// The pooled within-cell standard deviation of the test accuracy in [0, 1] (NaN when no
/// cell has two ok seeds).
pub(crate) fn pooled_std(cells: &[TrainCell]) -> f64 {
    let (ss, df) = cells
        .iter()
        .filter(|c| c.ok >= 2 && c.test_accuracy_std.is_finite())
        .fold((0.0, 0.0), |(ss, df), c| {
            let d = (c.ok - 1) as f64;
            (ss + d * c.test_accuracy_std.powi(2), df + d)
        });
    if df > 0.0 {
        (ss / df).sqrt()
    } else {
        f64::NAN
    }
}

/// The smallest difference of two cell means that exceeds the seed spread (NaN when the
/// spread is unknown).
fn threshold(pooled: f64, a: &TrainCell, b: &TrainCell) -> f64 {
    2.0 * pooled * (1.0 / a.ok as f64 + 1.0 / b.ok as f64).sqrt()
}

/// How accuracy moves from the smallest to the largest batch size of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trend {
    /// Lower at the largest batch size, beyond the seed spread.
    Falls,
    /// Higher at the largest batch size, beyond the seed spread.
    Rises,
    /// Within the seed spread.
    Flat,
    /// One seed per cell: cannot be judged.
    Unknown,
}

/// The trend of one line of one budget, with its end cells; `None` with fewer than two
/// batch sizes with an ok trial.
pub(crate) fn trend<'a>(
    analysis: &'a Analysis,
    budget: Budget,
    s: &'a SeriesKey,
    pooled: f64,
) -> Option<(Trend, &'a TrainCell, &'a TrainCell)> {
    let cells: Vec<&TrainCell> = analysis
        .cells_of(budget, s)
        .filter(|c| c.test_accuracy_mean.is_finite())
        .collect();
    let (first, last) = (*cells.first()?, *cells.last()?);
    if cells.len() < 2 {
        return None;
    }
    let change = last.test_accuracy_mean - first.test_accuracy_mean;
    let limit = threshold(pooled, first, last);
    let t = if !limit.is_finite() {
        Trend::Unknown
    } else if change < -limit {
        Trend::Falls
    } else if change > limit {
        Trend::Rises
    } else {
        Trend::Flat
    };
    Some((t, first, last))
}

/// Median steps per ok trial of `budget`, per variant and batch size.
fn steps_by_variant(analysis: &Analysis, budget: Budget) -> BTreeMap<String, Vec<(u32, f64)>> {
    let mut steps: BTreeMap<(String, u32), Vec<f64>> = BTreeMap::new();
    for r in analysis
        .records
        .iter()
        .filter(|r| r.is_ok() && r.budget == budget)
    {
        steps
            .entry((r.variant.clone(), r.batch_size))
            .or_default()
            .push(r.steps as f64);
    }
    let mut out: BTreeMap<String, Vec<(u32, f64)>> = BTreeMap::new();
    for ((variant, b), s) in steps {
        out.entry(variant).or_default().push((b, median(&s)));
    }
    out
}

/// "at batch 16 a trial takes 375 steps, at 32 185, ... and at 256 only 20".
fn steps_list(points: &[(u32, f64)]) -> String {
    let parts: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, &(b, s))| match i {
            0 => format!("at batch {b} a trial takes {s:.0} steps"),
            _ if i + 1 == points.len() && s < points[0].1 => format!("at {b} only {s:.0}"),
            _ => format!("at {b} {s:.0}"),
        })
        .collect();
    let mut out = match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => parts.join(""),
    };
    if let (Some(&(b0, s0)), Some(&(_, s1))) = (points.first(), points.last()) {
        if s1 > 0.0 && s1 < s0 {
            out.push_str(&format!(
                " ({:.1}x fewer updates than at batch {b0})",
                s0 / s1
            ));
        }
    }
    out
}

/// Steps per trial per batch size under the source's budget, and what the steps budget gives
/// instead. `None` when no trial finished ok.
pub(crate) fn steps_sentence(analysis: &Analysis) -> Option<String> {
    let budget = analysis.seed_budget()?;
    let by_variant = steps_by_variant(analysis, budget);
    let lists: Vec<(&String, &Vec<(u32, f64)>)> = by_variant.iter().collect();
    let first = lists.first()?;
    let mut out = format!("Under the {budget} budget, ");
    if lists.iter().all(|(_, l)| *l == first.1) {
        out.push_str(&steps_list(first.1));
    } else {
        let per: Vec<String> = lists
            .iter()
            .map(|(v, l)| format!("with the {v} data {}", steps_list(l)))
            .collect();
        out.push_str(&per.join("; "));
    }
    out.push('.');
    if analysis.budgets.contains(&Budget::Steps) {
        let all: Vec<f64> = steps_by_variant(analysis, Budget::Steps)
            .values()
            .flatten()
            .map(|p| p.1)
            .collect();
        let (lo, hi) = all
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        match (analysis.batch_sizes.first(), analysis.batch_sizes.last()) {
            (Some(&b0), Some(&b1)) if lo.is_finite() && lo == hi && b1 > b0 => {
                out.push_str(&format!(
                    " Under the steps budget every trial takes {lo:.0} steps, so batch {b1} sees {:.0}x as many examples as batch {b0}.",
                    f64::from(b1) / f64::from(b0)
                ));
            }
            _ if lo.is_finite() => out.push_str(&format!(
                " Under the steps budget trials take {lo:.0} to {hi:.0} steps."
            )),
            _ => {}
        }
    }
    Some(out)
}

/// Per budget, how accuracy moves with batch size for each line, then the comparison of the
/// two budgets when both are present.
pub(crate) fn trend_sentences(analysis: &Analysis) -> Vec<String> {
    let pooled = pooled_std(&analysis.cells);
    let mut out = vec![];
    for budget in &analysis.budgets {
        let mut parts = vec![];
        for s in &analysis.series {
            let Some((t, first, last)) = trend(analysis, *budget, s, pooled) else {
                continue;
            };
            let verb = match t {
                Trend::Falls => "falls",
                Trend::Rises => "rises",
                Trend::Flat => "stays within the seed spread",
                Trend::Unknown => "moves (one seed per cell: no spread to judge by)",
            };
            parts.push(format!(
                "{} {verb} (from {} at batch {} to {} at {}, {:+.1} points)",
                analysis.label(&s.optimizer, &s.variant),
                pct(first.test_accuracy_mean),
                first.batch_size,
                pct(last.test_accuracy_mean),
                last.batch_size,
                100.0 * (last.test_accuracy_mean - first.test_accuracy_mean)
            ));
        }
        if !parts.is_empty() {
            out.push(format!(
                "Under the {budget} budget, test accuracy from the smallest to the largest batch size: {}.",
                parts.join("; ")
            ));
        }
    }
    if let Some(c) = comparison(analysis, &trends(analysis)) {
        out.push(c.to_string());
    }
    out
}

/// Every line's trend under every budget.
pub(crate) fn trends(analysis: &Analysis) -> BTreeMap<(Budget, &SeriesKey), Trend> {
    let pooled = pooled_std(&analysis.cells);
    let mut out = BTreeMap::new();
    for budget in &analysis.budgets {
        for s in &analysis.series {
            if let Some((t, _, _)) = trend(analysis, *budget, s, pooled) {
                out.insert((*budget, s), t);
            }
        }
    }
    out
}

/// The comparison of the two budgets, where the run has both.
pub(crate) fn comparison(
    analysis: &Analysis,
    verdicts: &BTreeMap<(Budget, &SeriesKey), Trend>,
) -> Option<BudgetComparison> {
    let has = |b: Budget| analysis.budgets.contains(&b);
    (has(Budget::Epochs) && has(Budget::Steps)).then(|| budget_comparison(analysis, verdicts))
}

/// Which lines fall with batch size under which budget: the comparison of the two budgets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BudgetComparison {
    /// These lines fall under the epoch budget and not under the steps budget: the loss
    /// comes from taking fewer steps.
    OnlyUnderEpochs(Vec<String>),
    /// These lines fall under both budgets.
    UnderBoth(Vec<String>),
    /// These lines fall only under the steps budget.
    OnlyUnderSteps(Vec<String>),
    /// One seed per cell somewhere: a fall cannot be told from noise.
    Unknown,
    /// No line falls beyond the seed spread under either budget.
    NoFall,
}

fn budget_comparison(
    analysis: &Analysis,
    verdicts: &BTreeMap<(Budget, &SeriesKey), Trend>,
) -> BudgetComparison {
    let falls = |budget: Budget| -> Vec<String> {
        analysis
            .series
            .iter()
            .filter(|s| verdicts.get(&(budget, *s)) == Some(&Trend::Falls))
            .map(|s| analysis.label(&s.optimizer, &s.variant))
            .collect()
    };
    let (epochs, steps) = (falls(Budget::Epochs), falls(Budget::Steps));
    let only_epochs: Vec<String> = epochs
        .iter()
        .filter(|s| !steps.contains(s))
        .cloned()
        .collect();
    if !only_epochs.is_empty() {
        BudgetComparison::OnlyUnderEpochs(only_epochs)
    } else if !epochs.is_empty() {
        BudgetComparison::UnderBoth(epochs)
    } else if !steps.is_empty() {
        BudgetComparison::OnlyUnderSteps(steps)
    } else if verdicts.values().any(|t| *t == Trend::Unknown) {
        BudgetComparison::Unknown
    } else {
        BudgetComparison::NoFall
    }
}

impl std::fmt::Display for BudgetComparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BudgetComparison::OnlyUnderEpochs(lines) => write!(
                f,
                "Accuracy falls with batch size under the epoch budget but not under the steps budget for {}: given as many optimizer steps, the larger batches keep their accuracy, so the loss under the epoch budget comes from taking fewer steps, not from the batch size itself.",
                lines.join(", ")
            ),
            BudgetComparison::UnderBoth(lines) => write!(
                f,
                "Accuracy falls with batch size under both budgets for {}: even with as many optimizer steps, the larger batches lose accuracy.",
                lines.join(", ")
            ),
            BudgetComparison::OnlyUnderSteps(lines) => write!(
                f,
                "Accuracy falls with batch size only under the steps budget, for {}.",
                lines.join(", ")
            ),
            BudgetComparison::Unknown => f.write_str("With one seed per cell, whether accuracy falls with batch size under either budget cannot be told from noise."),
            BudgetComparison::NoFall => f.write_str("Accuracy does not fall with batch size beyond the seed spread under either budget."),
        }
    }
}

/// The seed spread beside the differences between cells.
pub(crate) fn spread_sentence(analysis: &Analysis) -> Option<String> {
    let pooled = pooled_std(&analysis.cells);
    let measured: Vec<&TrainCell> = analysis
        .cells
        .iter()
        .filter(|c| c.test_accuracy_mean.is_finite())
        .collect();
    if measured.is_empty() {
        return None;
    }
    if !pooled.is_finite() {
        return Some("Each cell has at most one ok seed: the seed spread is unknown, and any difference between cells may be noise. Run more seeds.".into());
    }
    let ranges: Vec<f64> = measured
        .iter()
        .filter(|c| c.ok >= 2)
        .map(|c| c.test_accuracy_max - c.test_accuracy_min)
        .collect();
    let mut out = format!(
        "Seeds of one cell spread by {} points on average (max − min; pooled standard deviation {} points).",
        fixed(100.0 * batchlab_method::stats::mean(&ranges), 2),
        fixed(100.0 * pooled, 2)
    );
    for budget in &analysis.budgets {
        let of_budget: Vec<&&TrainCell> = measured.iter().filter(|c| c.budget == *budget).collect();
        let (Some(lo), Some(hi)) = (
            of_budget
                .iter()
                .min_by(|a, b| a.test_accuracy_mean.total_cmp(&b.test_accuracy_mean)),
            of_budget
                .iter()
                .max_by(|a, b| a.test_accuracy_mean.total_cmp(&b.test_accuracy_mean)),
        ) else {
            continue;
        };
        let (mut within, mut pairs) = (0, 0);
        for s in &analysis.series {
            let line: Vec<&TrainCell> = analysis
                .cells_of(*budget, s)
                .filter(|c| c.test_accuracy_mean.is_finite())
                .collect();
            for w in line.windows(2) {
                pairs += 1;
                let limit = threshold(pooled, w[0], w[1]);
                if (w[1].test_accuracy_mean - w[0].test_accuracy_mean).abs() <= limit
                    || !limit.is_finite()
                {
                    within += 1;
                }
            }
        }
        out.push_str(&format!(
            " Under the {budget} budget the cell means span {} points ({} at batch {} {} to {} at batch {} {})",
            fixed(100.0 * (hi.test_accuracy_mean - lo.test_accuracy_mean), 1),
            pct(lo.test_accuracy_mean),
            lo.batch_size,
            lo.series(analysis.with_variant),
            pct(hi.test_accuracy_mean),
            hi.batch_size,
            hi.series(analysis.with_variant),
        ));
        if pairs > 0 {
            out.push_str(&format!(
                "; {within} of {pairs} differences between neighbouring batch sizes of a line are within the seed spread{}",
                if within > 0 { ", so those cells cannot be told apart with this many seeds" } else { "" }
            ));
        }
        out.push('.');
    }
    Some(out)
}

/// What one test example is worth in accuracy.
pub(crate) fn resolution_sentence(ctx: &TrainContext, analysis: &Analysis) -> String {
    if ctx.test_examples == 0 {
        return "The size of the test split was not recorded, so the resolution of the accuracies is unknown.".into();
    }
    let step = 100.0 / ctx.test_examples as f64;
    let mut out = format!(
        "The test split has {} examples: one example is {} points of accuracy, so a single trial's accuracy moves in steps of {}%",
        ctx.test_examples,
        trim(step),
        trim(step)
    );
    let pooled = pooled_std(&analysis.cells);
    if pooled.is_finite() {
        out.push_str(&format!(
            "; the seed standard deviation, {} points, is about {:.1} test examples.",
            fixed(100.0 * pooled, 2),
            pooled * ctx.test_examples as f64
        ));
    } else {
        out.push('.');
    }
    out
}

/// A number with up to four decimals, trailing zeros dropped.
fn trim(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
