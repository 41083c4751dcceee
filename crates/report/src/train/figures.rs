//! The three figures of a training report, each one image (SVG and PNG):
//!
//! - `accuracy_vs_batch`: test accuracy against batch size, one panel per budget side by side
//!   on a shared y axis, so the epoch-matched and steps-matched setups compare at a glance;
//! - `learning_curves`: validation accuracy against optimizer steps (left) and against
//!   training examples seen (right), for the first budget;
//! - `train_time`: training seconds against batch size, one panel per budget.
//!
//! Batch sizes sit on a log2 axis, or in slots of their own when the grid holds neighbours
//! (127, 128, 129). Lines of different series are shifted sideways a little ("dodged") so that
//! their bars and seed dots do not hide each other; a point's batch size is the nearest tick.

use std::path::Path;

use super::analysis::{Analysis, SeriesKey};
use super::{TrainCell, TrainContext};
use crate::figures::{
    distinct_look, render_row_pair, Chart, LegendPosition, LineStyle, Scale, Series, GREY,
};
use crate::ReportError;
use batchlab_method::rows::train::{Budget, TrainEval, TrialRecord};
use batchlab_method::stats::mean;

/// How batch sizes sit on the x axis: on a log2 scale, or, when the grid holds neighbours
/// such as 127, 128 and 129 (which a log axis draws on top of each other, hiding the very
/// comparison such a grid exists for), in evenly spaced slots of their own.
enum BatchAxis {
    Log2,
    Slots(Vec<u32>),
}

impl BatchAxis {
    /// Slots when two batch sizes of the grid are within 10% of each other.
    fn of(batch_sizes: &[u32]) -> Self {
        let close = batch_sizes
            .windows(2)
            .any(|w| f64::from(w[1]) < 1.1 * f64::from(w[0]));
        if close {
            BatchAxis::Slots(batch_sizes.to_vec())
        } else {
            BatchAxis::Log2
        }
    }

    /// The x of batch size `b` for series `k` of `n`, shifted sideways a little ("dodged") so
    /// that the series do not hide each other.
    fn x(&self, b: u32, k: usize, n: usize) -> f64 {
        let offset = k as f64 - (n as f64 - 1.0) / 2.0;
        match self {
            BatchAxis::Log2 => f64::from(b) * 2f64.powf(0.03 * offset),
            BatchAxis::Slots(sizes) => {
                sizes.iter().position(|&s| s == b).unwrap_or(0) as f64 + 0.08 * offset
            }
        }
    }

    /// Sets the chart's x axis.
    fn apply(&self, chart: &mut Chart) {
        match self {
            BatchAxis::Log2 => {
                chart.x_scale = Scale::Log2;
                chart.x_label = "batch size (examples per step, log2 scale)".into();
            }
            BatchAxis::Slots(sizes) => {
                chart.x_scale = Scale::Linear;
                chart.x_label =
                    "batch size (examples per step; one slot each, not to scale)".into();
                chart.x_ticks = sizes
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (i as f64, b.to_string()))
                    .collect();
                chart.x_range = Some((-0.5, sizes.len() as f64 - 0.5));
            }
        }
    }
}

/// A y range covering `values` with a margin, shared by the panels of one figure.
fn shared_range(values: impl Iterator<Item = f64>, include_zero: bool) -> Option<(f64, f64)> {
    let (mut lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return None;
    }
    if include_zero {
        lo = lo.min(0.0);
    }
    let pad = if hi > lo { 0.08 * (hi - lo) } else { 1.0 };
    let low = if include_zero && lo >= 0.0 {
        0.0
    } else {
        lo - pad
    };
    Some((low, hi + pad))
}

fn title(ctx: &TrainContext, what: &str) -> String {
    format!("{}: {what}", ctx.about.experiment)
}

/// One value per cell: the line of means (or medians) with min..max bars, plus every seed.
struct PerCell<'a> {
    /// Axis label.
    y_label: &'a str,
    /// What the line shows, for the legend: "mean" or "median".
    centre: &'a str,
    /// The cell's centre, min and max.
    summary: fn(&Analysis, &TrainCell) -> (f64, f64, f64),
    /// One trial's value.
    value: fn(&TrialRecord) -> f64,
}

fn per_cell_panel(analysis: &Analysis, budget: Option<Budget>, spec: &PerCell, chart: &mut Chart) {
    let Some(budget) = budget else {
        return;
    };
    let n = analysis.series.len();
    let axis = BatchAxis::of(&analysis.batch_sizes);
    axis.apply(chart);
    for (k, s) in analysis.series.iter().enumerate() {
        let cells: Vec<&TrainCell> = analysis.cells_of(budget, s).filter(|c| c.ok > 0).collect();
        if cells.is_empty() {
            continue;
        }
        let x = |c: &TrainCell| axis.x(c.batch_size, k, n);
        let (colour, shape) = distinct_look(k);
        let summaries: Vec<(f64, f64, f64)> =
            cells.iter().map(|c| (spec.summary)(analysis, c)).collect();
        let points = cells
            .iter()
            .zip(&summaries)
            .map(|(c, s)| (x(c), s.0))
            .collect();
        let bars = summaries.iter().map(|s| (s.1, s.2)).collect();
        let label = format!(
            "{}: {}, bars min–max",
            analysis.label(&s.optimizer, &s.variant),
            spec.centre
        );
        chart.series.push(
            Series::new(label, points, colour)
                .with_shape(shape)
                .with_error_bars(bars)
                .with_marker_size(4),
        );
        let seeds = cells
            .iter()
            .flat_map(|c| analysis.ok_records(c).map(|r| (x(c), (spec.value)(r))))
            .collect();
        chart.series.push(
            Series::new("", seeds, colour)
                .with_shape(shape)
                .with_line(LineStyle::None)
                .with_marker_size(2),
        );
    }
    chart.series.push(
        Series::new("single seeds (small dots)", vec![], GREY)
            .with_line(LineStyle::None)
            .with_marker_size(2),
    );
}

/// Each budget, or one panel saying "no budget" where no trial was recorded.
fn budgets_or_none(analysis: &Analysis) -> Vec<Option<Budget>> {
    if analysis.budgets.is_empty() {
        vec![None]
    } else {
        analysis.budgets.iter().copied().map(Some).collect()
    }
}

/// A budget's word in a title: "no" where there is none.
fn budget_word(budget: Option<Budget>) -> &'static str {
    budget.map_or("no", |b| b.as_str())
}

/// `accuracy_vs_batch.svg`: mean test accuracy (%) per cell, bars min..max over the ok
/// seeds, every seed as a small dot; one panel
/// per budget.
pub(super) fn draw_accuracy(
    dir: &Path,
    ctx: &TrainContext,
    analysis: &Analysis,
) -> Result<(), ReportError> {
    let spec = PerCell {
        y_label: "test accuracy (%)",
        centre: "mean",
        summary: |_, c| {
            (
                100.0 * c.test_accuracy_mean,
                100.0 * c.test_accuracy_min,
                100.0 * c.test_accuracy_max,
            )
        },
        value: |r| 100.0 * r.test_accuracy,
    };
    let mut charts = vec![];
    for budget in budgets_or_none(analysis) {
        let mut chart = Chart::new(
            title(
                ctx,
                &format!(
                    "test accuracy vs batch size, {} budget",
                    budget_word(budget)
                ),
            ),
            "",
            spec.y_label,
        );
        per_cell_panel(analysis, budget, &spec, &mut chart);
        chart.legend = LegendPosition::Auto;
        charts.push(chart);
    }
    let all = charts.iter().flat_map(|c| c.series.iter()).flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.1)
            .chain(s.error_bars.iter().flat_map(|b| [b.0, b.1]))
    });
    let range = shared_range(all.collect::<Vec<_>>().into_iter(), false);
    for chart in &mut charts {
        chart.y_range = range;
    }
    render_row_pair(&charts, dir, "accuracy_vs_batch").map(|_| ())
}

/// `train_time.svg`: median training seconds per cell (evaluations excluded), bars
/// min..max over the ok seeds, every seed as a small dot; one panel per budget.
pub(super) fn draw_train_time(
    dir: &Path,
    ctx: &TrainContext,
    analysis: &Analysis,
) -> Result<(), ReportError> {
    let spec = PerCell {
        y_label: "training time per trial (s, evaluations excluded)",
        centre: "median",
        summary: |analysis, c| {
            let times: Vec<f64> = analysis
                .ok_records(c)
                .map(|r| r.train_seconds)
                .filter(|t| t.is_finite())
                .collect();
            let lo = times.iter().copied().reduce(f64::min).unwrap_or(f64::NAN);
            let hi = times.iter().copied().reduce(f64::max).unwrap_or(f64::NAN);
            (c.train_seconds_median, lo, hi)
        },
        value: |r| r.train_seconds,
    };
    let mut charts = vec![];
    for budget in budgets_or_none(analysis) {
        let mut chart = Chart::new(
            title(
                ctx,
                &format!(
                    "training time vs batch size, {} budget",
                    budget_word(budget)
                ),
            ),
            "",
            spec.y_label,
        );
        chart.y_includes_zero = true;
        per_cell_panel(analysis, budget, &spec, &mut chart);
        chart.legend = LegendPosition::Auto;
        charts.push(chart);
    }
    let all: Vec<f64> = charts
        .iter()
        .flat_map(|c| c.series.iter())
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.error_bars.iter().flat_map(|b| [b.0, b.1]))
        })
        .collect();
    let range = shared_range(all.into_iter(), true);
    for chart in &mut charts {
        chart.y_range = range;
    }
    render_row_pair(&charts, dir, "train_time").map(|_| ())
}

/// The mean validation curve of one (batch size, series) over its seeds: per evaluation
/// index, the mean step, examples and accuracy (%) of the seeds that reached it.
pub(super) fn mean_curve(
    analysis: &Analysis,
    budget: Option<Budget>,
    batch_size: u32,
    s: &SeriesKey,
) -> Vec<(f64, f64, f64)> {
    let curves: Vec<&Vec<TrainEval>> = analysis
        .curves
        .values()
        .filter(|c| {
            c.first().is_some_and(|e| {
                Some(e.budget) == budget
                    && e.batch_size == batch_size
                    && e.optimizer == s.optimizer
                    && e.variant == s.variant
            })
        })
        .collect();
    let longest = curves.iter().map(|c| c.len()).max().unwrap_or(0);
    (0..longest)
        .filter_map(|i| {
            let at: Vec<&TrainEval> = curves
                .iter()
                .filter_map(|c| c.get(i))
                .filter(|e| e.val_accuracy.is_finite())
                .collect();
            if at.is_empty() {
                return None;
            }
            let m = |f: fn(&TrainEval) -> f64| mean(&at.iter().map(|e| f(e)).collect::<Vec<_>>());
            Some((
                m(|e| e.step as f64),
                m(|e| e.examples as f64),
                100.0 * m(|e| e.val_accuracy),
            ))
        })
        .collect()
}

/// `learning_curves.svg`: mean validation accuracy over the seeds against optimizer
/// steps (log2) and against training examples seen, one line per (batch size, series), for
/// the first budget. Colour = batch size; line style = series (solid, dashed, dots only).
pub(super) fn draw_learning_curves(
    dir: &Path,
    ctx: &TrainContext,
    analysis: &Analysis,
) -> Result<(), ReportError> {
    let budget = analysis.seed_budget();
    // The budget and the averaging go to the y axis: two long titles side by side overprint.
    let y_label = format!(
        "validation accuracy (%), {} budget, mean over seeds",
        budget_word(budget)
    );
    let mut by_step = Chart::new(
        title(ctx, "validation accuracy vs steps"),
        "optimizer steps (log2 scale)",
        &y_label,
    );
    by_step.x_scale = Scale::Log2;
    let mut by_examples = Chart::new(
        title(ctx, "validation accuracy vs examples"),
        "training examples seen",
        &y_label,
    );
    for (k, s) in analysis.series.iter().enumerate() {
        let line = match k {
            0 => LineStyle::Solid,
            1 => LineStyle::Dashed,
            _ => LineStyle::None,
        };
        for (j, &b) in analysis.batch_sizes.iter().enumerate() {
            let curve = mean_curve(analysis, budget, b, s);
            if curve.is_empty() {
                continue;
            }
            let label = if analysis.series.len() > 1 {
                format!("batch {b}, {}", analysis.label(&s.optimizer, &s.variant))
            } else {
                format!("batch {b}")
            };
            let steps = curve.iter().map(|p| (p.0, p.2)).collect();
            let examples = curve.iter().map(|p| (p.1, p.2)).collect();
            let (colour, shape) = distinct_look(j);
            by_step.series.push(
                Series::new(label.clone(), steps, colour)
                    .with_line(line)
                    .with_shape(shape),
            );
            by_examples.series.push(
                Series::new(label, examples, colour)
                    .with_line(line)
                    .with_shape(shape),
            );
        }
    }
    let range = shared_range(
        by_step
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .collect::<Vec<_>>()
            .into_iter(),
        false,
    );
    for chart in [&mut by_step, &mut by_examples] {
        chart.y_range = range;
        chart.legend = LegendPosition::Auto;
    }
    render_row_pair(&[by_step, by_examples], dir, "learning_curves").map(|_| ())
}
