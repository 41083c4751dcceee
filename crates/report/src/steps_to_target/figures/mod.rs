//! Two figures of a steps-to-target report, each one image (SVG and PNG):
//!
//! - `steps_to_result`: steps to result against batch size on log2-log2 axes, one line per
//!   workload on one plot (the paper compares optimizers this way), each with a dashed
//!   perfect-scaling line through its smallest batch size and the thin fitted curve
//!   S(B) = S_min (1 + B_crit / B); dashed vertical lines mark batch sizes where a workload
//!   had trials but none reached the target.
//! - `best_learning_rate`: the best trial's learning rate against batch size (log-log), and
//!   beside it, when a workload searched momentum, the effective rate lr / (1 - momentum),
//!   with linear (dashed) and square-root (dotted) scaling references through each
//!   workload's smallest batch size.
//!
//! - `regimes` (in [`panels`]): a log-log panel per workload with intervals and regimes.
//!
//! A workload keeps its colour in every figure.

use std::path::Path;

pub(super) mod panels;
pub(super) mod search;
pub(super) mod time;

use crate::figures::{
    distinct_look, render_pair, render_row_pair, Chart, LegendPosition, LineStyle, Rgb, Scale,
    Series, VLine, GREY,
};
use crate::numbers::sig;
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::lr_rule;
use crate::steps_to_target::perfect_scaling_line;
use crate::steps_to_target::{TargetCell, TargetContext};
use crate::ReportError;

pub(crate) const BATCH_LABEL: &str = "batch size (examples per step, log2 scale)";

/// Points on a fitted curve: smooth at any width.
pub(crate) const CURVE_POINTS: usize = 64;

/// The colour of workload `k`, the same in every figure.
pub(crate) fn color(k: usize) -> Rgb {
    distinct_look(k).0
}

/// Workload `k`'s labelled series: its colour, and past the palette's colours a marker shape
/// of its own, so that no two workloads look alike.
pub(crate) fn workload_series(
    label: impl Into<String>,
    points: Vec<(f64, f64)>,
    k: usize,
) -> Series {
    let (colour, shape) = distinct_look(k);
    Series::new(label, points, colour).with_shape(shape)
}

pub(crate) fn title(ctx: &TargetContext, what: &str) -> String {
    format!("{}: {what}", ctx.about.experiment)
}

/// A legend entry with no data, in grey: explains a line style used by every workload.
fn style_key(label: &str, line: LineStyle) -> Series {
    Series::new(label, vec![], GREY)
        .with_line(line)
        .with_markers(false)
        .with_line_width(1)
}

/// `steps_to_result.{svg,png}`.
pub(crate) fn draw_steps(
    dir: &Path,
    ctx: &TargetContext,
    study: &Study,
) -> Result<(), ReportError> {
    let mut chart = Chart::new(
        title(ctx, "steps to result vs batch size"),
        BATCH_LABEL,
        format!(
            "steps to validation error <= {} (log2 scale)",
            sig(ctx.target_error)
        ),
    );
    chart.x_scale = Scale::Log2;
    chart.y_scale = Scale::Log2;
    // Steps fall with batch size, so the lower left is empty (and the upper right holds
    // the labels of the no-result lines).
    chart.legend = LegendPosition::Auto;
    for (k, w) in study.workloads.iter().enumerate() {
        if w.points.is_empty() {
            continue;
        }
        let label = match &w.fit {
            Ok(fit) if fit.b_crit_identified && fit.b_crit > 0.0 => {
                format!("{} (B_crit ≈ {})", w.label, sig(fit.b_crit))
            }
            _ => w.label.clone(),
        };
        chart
            .series
            .push(workload_series(label, w.points.clone(), k));
        // Cannot fail: the points are positive steps at positive batch sizes.
        if let Ok(line) = perfect_scaling_line(&w.points) {
            chart.series.push(
                Series::new("", line, color(k))
                    .with_line(LineStyle::Dashed)
                    .with_markers(false)
                    .with_line_width(1),
            );
        }
        if let Ok(fit) = &w.fit {
            let (lo, hi) = span(&w.points);
            chart.series.push(
                Series::new("", fit.curve(lo, hi, CURVE_POINTS), color(k))
                    .with_markers(false)
                    .with_line_width(1),
            );
        }
    }
    chart.series.push(style_key(
        "dashed: perfect scaling through the smallest batch size",
        LineStyle::Dashed,
    ));
    // The key names the thin line only where one is drawn.
    if study.workloads.iter().any(|w| w.fit.is_ok()) {
        chart.series.push(style_key(
            "thin: fitted S(B) = S_min (1 + B_crit / B)",
            LineStyle::Solid,
        ));
    }
    chart.vlines = no_result_lines(study);
    render_pair(&chart, dir, "steps_to_result").map(|_| ())
}

/// The smallest and largest batch size of `points`.
fn span(points: &[(f64, f64)]) -> (f64, f64) {
    points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        })
}

/// A dashed line at each batch size where some workload had trials but none reached the
/// target: in that workload's colour, grey when several share it.
fn no_result_lines(study: &Study) -> Vec<VLine> {
    study
        .batch_sizes
        .iter()
        .filter_map(|&b| {
            let lacking: Vec<usize> = study
                .workloads
                .iter()
                .enumerate()
                .filter(|(_, w)| {
                    w.cells
                        .iter()
                        .any(|c| c.batch_size == b && c.steps_to_result.is_none())
                })
                .map(|(k, _)| k)
                .collect();
            let color = match lacking[..] {
                [] => return None,
                [k] => color(k),
                _ => GREY,
            };
            Some(VLine {
                x: f64::from(b),
                text: format!("{b}: none"),
                legend: "batch size where no trial reached the target".into(),
                color,
                dashed: true,
            })
        })
        .collect()
}

/// (batch size, rate) of the batch sizes with a result and a known rate.
fn rates(w: &Workload, rate: fn(&TargetCell) -> Option<f64>) -> Vec<(f64, f64)> {
    w.cells
        .iter()
        .filter(|c| c.steps_to_result.is_some())
        .filter_map(|c| {
            let r = rate(c).filter(|r| r.is_finite() && *r > 0.0)?;
            Some((f64::from(c.batch_size), r))
        })
        .collect()
}

/// Each point's near-best region of effective learning rates as a bar (`lr_rule`), or the point
/// itself where the cell has none.
fn region_bars(w: &Workload, ctx: &TargetContext, points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let space = ctx
        .search_spaces
        .iter()
        .find(|(label, _)| *label == w.label)
        .map(|(_, s)| s);
    let regions = lr_rule::regions(w, space);
    points
        .iter()
        .map(|&(b, r)| {
            regions
                .iter()
                .find(|g| f64::from(g.batch_size) == b)
                .map_or((r, r), |g| (g.low.min(r), g.high.max(r)))
        })
        .collect()
}

/// One panel of best rates with the two scaling references per workload; with `regions`, each
/// best effective rate carries its batch size's near-best region as a bar.
fn rate_panel(
    ctx: &TargetContext,
    study: &Study,
    what: &str,
    y_label: &str,
    rate: fn(&TargetCell) -> Option<f64>,
    regions: bool,
) -> Chart {
    let mut chart = Chart::new(title(ctx, what), BATCH_LABEL, y_label);
    chart.x_scale = Scale::Log2;
    chart.y_scale = Scale::Log;
    // Best rates tend to rise with batch size: the lower right is emptiest.
    chart.legend = LegendPosition::Auto;
    for (k, w) in study.workloads.iter().enumerate() {
        let points = rates(w, rate);
        let Some(&(b0, r0)) = points.first() else {
            continue;
        };
        let reference = |power: f64| -> Vec<(f64, f64)> {
            points
                .iter()
                .map(|&(b, _)| (b, r0 * (b / b0).powf(power)))
                .collect()
        };
        chart.series.push(
            Series::new("", reference(1.0), color(k))
                .with_line(LineStyle::Dashed)
                .with_markers(false)
                .with_line_width(1),
        );
        chart.series.push(
            Series::new("", reference(0.5), color(k))
                .with_line(LineStyle::Dotted)
                .with_markers(false)
                .with_line_width(1),
        );
        let bars = if regions {
            region_bars(w, ctx, &points)
        } else {
            vec![]
        };
        chart
            .series
            .push(workload_series(w.label.clone(), points, k).with_error_bars(bars));
    }
    chart.series.push(style_key(
        "dashed: linear scaling, rate ∝ B, through the smallest batch size",
        LineStyle::Dashed,
    ));
    chart.series.push(style_key(
        "dotted: square-root scaling, rate ∝ √B",
        LineStyle::Dotted,
    ));
    chart
}

/// `best_learning_rate.{svg,png}`: the learning rate panel, and the effective rate panel
/// when some workload searched momentum (for plain SGD the two are the same, so its line
/// is repeated there for comparison).
pub(crate) fn draw_learning_rates(
    dir: &Path,
    ctx: &TargetContext,
    study: &Study,
) -> Result<(), ReportError> {
    // The near-best regions are of the effective rate: on its panel, or on the learning rate's
    // where no workload searched momentum (the two are then the same).
    let momentum = study.workloads.iter().any(|w| w.momentum);
    let mut charts = vec![rate_panel(
        ctx,
        study,
        "best trial's learning rate vs batch size",
        "learning rate of the best trial (log scale)",
        |c| c.learning_rate,
        !momentum,
    )];
    if momentum {
        charts.push(rate_panel(
            ctx,
            study,
            "best trial's effective learning rate",
            "learning rate / (1 - momentum) of the best trial (log scale)",
            |c| c.effective_learning_rate,
            true,
        ));
    }
    render_row_pair(&charts, dir, "best_learning_rate").map(|_| ())
}
