//! The three figures of a finder's report: memory against batch size, utilization and
//! throughput against batch size, and the search's probes in order.

use batchlab_method::rows::find_batch::ProbePhase;
use batchlab_method::rows::Status;
use std::path::Path;

use super::analysis::Analysis;
use super::FindBatchContext;
use crate::figures::{
    render_pair, render_row_pair, Chart, LegendPosition, LineStyle, MarkerShape, Scale, Series,
    VLine, GREY, PALETTE,
};
use crate::ReportError;

const FAILED: (u8, u8, u8) = (200, 30, 30);
const X_LABEL: &str = "batch size (examples per step)";

fn title(ctx: &FindBatchContext, what: &str) -> String {
    ctx.about.figure_title(what)
}

/// A horizontal line from `x0` to `x1` at `y`.
fn level(
    label: impl Into<String>,
    y: f64,
    (x0, x1): (f64, f64),
    color: (u8, u8, u8),
    line: LineStyle,
) -> Series {
    Series::new(label, vec![(x0, y), (x1, y)], color)
        .with_line(line)
        .with_markers(false)
        .with_line_width(1)
}

/// `memory.svg`: every probe's peak of what the limit binds, the fitted line, the budget and
/// its headroom, the sizes that ran out of memory and the largest that fits.
pub(super) fn draw_memory(
    dir: &Path,
    ctx: &FindBatchContext,
    a: &Analysis,
) -> Result<(), ReportError> {
    let mut chart = Chart::new(
        title(ctx, "peak memory vs batch size"),
        X_LABEL,
        format!("peak memory, as the limit counts it ({}), MiB", a.limit),
    );
    // A linear axis, on which the memory model is the straight line it is.
    chart.y_includes_zero = true;
    let sizes: Vec<f64> = a.probes.iter().map(|p| f64::from(p.batch_size)).collect();
    let span = (0.0, sizes.iter().copied().fold(1.0, f64::max));
    // The failed probes' lines run the full height right of the largest that fits, so no
    // corner above or below them is free: an empty strip on the right holds the legend,
    // rather than an axis stretched to twice the budget.
    chart.x_range = Some((0.0, 1.6 * span.1));
    chart.legend = LegendPosition::LowerRight;
    let readings = |phase: ProbePhase| -> Vec<(f64, f64)> {
        a.probes
            .iter()
            .filter(|p| p.phase == phase && p.is_ok())
            .filter_map(|p| p.limited_peak_mb.map(|m| (f64::from(p.batch_size), m)))
            .collect()
    };
    chart.series.push(
        Series::new(
            "curve probes (the fit's data)",
            readings(ProbePhase::Curve),
            PALETTE[0],
        )
        .with_line(LineStyle::None),
    );
    chart.series.push(
        Series::new(
            "search probes that fit",
            readings(ProbePhase::Search),
            PALETTE[2],
        )
        .with_line(LineStyle::None)
        .with_shape(MarkerShape::Triangle),
    );
    if let Some(fit) = a.model {
        let xs = [span.0, span.1];
        chart.series.push(
            Series::new(
                format!(
                    "fit: {:.0} MiB + {:.3} MiB × batch",
                    fit.intercept, fit.slope
                ),
                xs.iter().map(|&x| (x, fit.predict(x))).collect(),
                PALETTE[1],
            )
            .with_line(LineStyle::Dashed)
            .with_markers(false)
            .with_line_width(1),
        );
    }
    if let Some(budget) = ctx.budget_mb {
        chart.series.push(level(
            format!("budget ({})", ctx.budget),
            budget,
            span,
            FAILED,
            LineStyle::Dashed,
        ));
        chart.series.push(level(
            format!("budget less {:.0}% headroom", 100.0 * ctx.headroom),
            budget * (1.0 - ctx.headroom),
            span,
            GREY,
            LineStyle::Dotted,
        ));
    }
    for p in a.probes.iter().filter(|p| !p.is_ok()) {
        chart.vlines.push(VLine {
            x: f64::from(p.batch_size),
            text: String::new(),
            legend: format!(
                "{} (no reading)",
                if p.status == Status::Oom {
                    "ran out of memory"
                } else {
                    "failed otherwise"
                }
            ),
            color: FAILED,
            dashed: true,
        });
    }
    if let Some(largest) = a.end.largest() {
        // Named in the legend: a label at the line would overprint the failed probes' lines
        // beside it.
        chart.vlines.push(VLine {
            x: f64::from(largest),
            text: String::new(),
            legend: format!("largest batch size that fits: {largest}"),
            color: PALETTE[3],
            dashed: false,
        });
    }
    render_pair(&chart, dir, "memory").map(|_| ())
}

/// `utilization.svg`: utilization and throughput per batch size, side by side.
pub(super) fn draw_utilization(
    dir: &Path,
    ctx: &FindBatchContext,
    a: &Analysis,
) -> Result<(), ReportError> {
    let timed: Vec<_> = a.points.iter().filter(|p| p.ok > 0).collect();
    let mut utilization = Chart::new(
        title(ctx, "utilization"),
        X_LABEL,
        "CPU time / (wall time × threads), %",
    );
    utilization.x_scale = Scale::Log2;
    utilization.y_range = Some((0.0, 105.0));
    utilization.legend = LegendPosition::Auto;
    utilization.size = (700, 500);
    let label = if ctx.utilization_measured {
        "median over the probes' timed steps"
    } else {
        "not measured on this backend"
    };
    for (in_curve, label, color) in [
        (true, label, PALETTE[0]),
        (false, "search probes (one each)", GREY),
    ] {
        utilization.series.push(
            Series::new(
                label,
                timed
                    .iter()
                    .filter(|p| p.in_curve == in_curve && p.utilization.is_finite())
                    .map(|p| (f64::from(p.batch_size), 100.0 * p.utilization))
                    .collect(),
                color,
            )
            .with_line(if in_curve {
                LineStyle::Solid
            } else {
                LineStyle::None
            }),
        );
    }
    let mut throughput = Chart::new(title(ctx, "throughput"), X_LABEL, "examples / s");
    throughput.x_scale = Scale::Log2;
    throughput.y_includes_zero = true;
    throughput.legend = LegendPosition::Auto;
    throughput.size = (700, 500);
    for (in_curve, label, color) in [
        (true, "curve: at the median step time", PALETTE[0]),
        (false, "search probes (one each)", GREY),
    ] {
        throughput.series.push(
            Series::new(
                label,
                timed
                    .iter()
                    .filter(|p| p.in_curve == in_curve)
                    .map(|p| (f64::from(p.batch_size), p.examples_per_s))
                    .collect(),
                color,
            )
            .with_line(if in_curve {
                LineStyle::Solid
            } else {
                LineStyle::None
            }),
        );
    }
    if let Some(fast) = a.fastest_smallest {
        throughput.vlines.push(VLine {
            x: f64::from(fast),
            text: fast.to_string(),
            legend: format!(
                "smallest within {:.0}% of the best",
                100.0 * ctx.throughput_tolerance
            ),
            color: PALETTE[2],
            dashed: false,
        });
    }
    if let Some(largest) = a.largest_with_headroom {
        throughput.vlines.push(VLine {
            x: f64::from(largest),
            text: largest.to_string(),
            legend: format!("largest with {:.0}% headroom", 100.0 * ctx.headroom),
            color: PALETTE[3],
            dashed: true,
        });
    }
    render_row_pair(&[utilization, throughput], dir, "utilization").map(|_| ())
}

/// `probes.svg`: the search's probes in the order made, by outcome.
pub(super) fn draw_probes(
    dir: &Path,
    ctx: &FindBatchContext,
    a: &Analysis,
) -> Result<(), ReportError> {
    let mut chart = Chart::new(
        title(ctx, "the search's probes"),
        "probe (in the order made)",
        X_LABEL,
    );
    chart.y_scale = Scale::Log2;
    chart.legend = LegendPosition::Auto;
    let search: Vec<_> = a.search_probes().collect();
    let at = |p: &super::rows::ProbeRecord| (f64::from(p.index + 1), f64::from(p.batch_size));
    chart.series.push(
        Series::new("", search.iter().map(|p| at(p)).collect(), GREY)
            .with_markers(false)
            .with_line_width(1),
    );
    for (label, status, color, shape) in [
        ("fits", Status::Ok, PALETTE[2], MarkerShape::Circle),
        ("ran out of memory", Status::Oom, FAILED, MarkerShape::Cross),
        (
            "failed otherwise",
            Status::Error,
            PALETTE[4],
            MarkerShape::Triangle,
        ),
    ] {
        let points: Vec<(f64, f64)> = search
            .iter()
            .filter(|p| p.status == status)
            .map(|p| at(p))
            .collect();
        if !points.is_empty() {
            chart.series.push(
                Series::new(label, points, color)
                    .with_line(LineStyle::None)
                    .with_shape(shape)
                    .with_marker_size(5),
            );
        }
    }
    if let Some(largest) = a.end.largest() {
        let span = (1.0, search.len().max(1) as f64);
        chart.series.push(level(
            format!("largest that fits: {largest}"),
            f64::from(largest),
            span,
            PALETTE[3],
            LineStyle::Dashed,
        ));
    }
    render_pair(&chart, dir, "probes").map(|_| ())
}
