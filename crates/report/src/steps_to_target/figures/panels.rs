//! `regimes.svg`: one log-log panel per workload, as Shallue et al.'s Figure 1: steps to
//! result with its 95% bootstrap interval as error bars, the perfect-scaling line through the
//! smallest batch size, the fitted S(B), and the three regimes shaded where the interval rule
//! (`scaling::interval`) puts them. Two panels to a row.

use std::path::Path;

use super::{color, title, workload_series, BATCH_LABEL, CURVE_POINTS};
use crate::figures::{
    render_grid_pair, Chart, LegendPosition, LineStyle, MarkerShape, Rgb, Scale, Series, Span,
};
use crate::numbers::sig;
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::{perfect_scaling_line, TargetContext};
use crate::ReportError;

/// Panels per row.
const PER_ROW: usize = 2;

const PERFECT: Rgb = (44, 160, 44);
const DIMINISHING: Rgb = (255, 187, 0);
const PLATEAU: Rgb = (214, 39, 40);

/// The shaded regimes of `w` (none when they could not be located).
fn regime_spans(w: &Workload) -> Vec<Span> {
    let Ok(r) = &w.regimes else {
        return vec![];
    };
    [
        (r.perfect_scaling, PERFECT, "perfect scaling"),
        (r.diminishing_returns, DIMINISHING, "diminishing returns"),
        (
            r.maximal_data_parallelism,
            PLATEAU,
            "maximal data parallelism",
        ),
    ]
    .into_iter()
    .filter_map(|(range, color, legend)| {
        let (from, to) = range?;
        Some(Span {
            from,
            to,
            color,
            legend: legend.into(),
        })
    })
    .collect()
}

/// One workload's panel; `top` is where an interval without an upper end is drawn to.
fn panel(ctx: &TargetContext, w: &Workload, k: usize) -> Chart {
    let mut chart = Chart::new(
        title(ctx, &w.label),
        BATCH_LABEL,
        format!("steps to error <= {} (log2)", sig(ctx.target_error)),
    );
    chart.size = (640, 460);
    chart.x_scale = Scale::Log2;
    chart.y_scale = Scale::Log2;
    chart.legend = LegendPosition::Auto;
    chart.spans = regime_spans(w);
    let iv = &w.intervals;
    let reached: Vec<usize> = (0..iv.batch_sizes.len())
        .filter(|&k| iv.steps[k].is_finite())
        .collect();
    let points: Vec<(f64, f64)> = reached
        .iter()
        .map(|&k| (iv.batch_sizes[k], iv.steps[k]))
        .collect();
    // An interval the data bound only from below ends at the last step its trials were seen
    // at, marked by a triangle: never a bar to the axis edge.
    let bars: Vec<(f64, f64)> = reached
        .iter()
        .map(|&k| {
            let (lo, hi) = iv.intervals[k];
            (lo, if hi.is_finite() { hi } else { iv.support[k] })
        })
        .collect();
    let open: Vec<(f64, f64)> = (0..iv.batch_sizes.len())
        .filter(|&k| !iv.intervals[k].1.is_finite())
        .map(|k| (iv.batch_sizes[k], iv.support[k]))
        .collect();
    if let Ok(line) = perfect_scaling_line(&points) {
        chart.series.push(
            Series::new(
                "perfect scaling from the smallest batch size",
                line,
                color(k),
            )
            .with_line(LineStyle::Dashed)
            .with_markers(false)
            .with_line_width(1),
        );
    }
    if let (Ok(fit), Some(first), Some(last)) = (&w.fit, points.first(), points.last()) {
        chart.series.push(
            Series::new(
                "fitted S(B) = S_min (1 + B_crit / B)",
                fit.curve(first.0, last.0, CURVE_POINTS),
                color(k),
            )
            .with_line(LineStyle::Dotted)
            .with_markers(false)
            .with_line_width(1),
        );
    }
    chart.series.push(
        workload_series("steps to result, interval (nominal 95%)", points, k)
            .with_error_bars(bars)
            .with_line(LineStyle::Solid),
    );
    if !open.is_empty() {
        chart.series.push(
            Series::new(
                "open above: more than the last step seen (▲)",
                open,
                color(k),
            )
            .with_shape(MarkerShape::Triangle)
            .with_line(LineStyle::None),
        );
    }
    chart
}

/// `regimes.svg`: a panel per workload with a result at some batch size.
pub(crate) fn draw_regimes(
    dir: &Path,
    ctx: &TargetContext,
    study: &Study,
) -> Result<(), ReportError> {
    let panels: Vec<Chart> = study
        .workloads
        .iter()
        .enumerate()
        .filter(|(_, w)| !w.points.is_empty())
        .map(|(k, w)| panel(ctx, w, k))
        .collect();
    let mut rows: Vec<Vec<Chart>> = panels.chunks(PER_ROW).map(<[Chart]>::to_vec).collect();
    if rows.is_empty() {
        let mut empty = Chart::new(
            title(ctx, "no workload reached the target"),
            BATCH_LABEL,
            "steps",
        );
        empty.x_scale = Scale::Log2;
        rows.push(vec![empty]);
    }
    render_grid_pair(&rows, dir, "regimes").map(|_| ())
}
