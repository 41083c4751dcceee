//! The two figures of a step-time report.

use std::path::Path;

use super::analysis::Analysis;
use super::verdicts::{named_jumps, Reading};
use super::{StepPoint, StepTimeContext, CI_LEVEL};
use crate::figures::{
    render_pair, Chart, LegendPosition, LineStyle, Scale, Series, VLine, GREY, PALETTE,
};
use crate::ReportError;

const FAILED: (u8, u8, u8) = (200, 30, 30);

/// The x axis of a sweep: log2 for a geometric grid (16, 32, ..., 4096, where a linear axis
/// crowds the small sizes into one corner), linear for a dense range such as 1..70.
fn batch_axis(points: &[&StepPoint], chart: &mut Chart) {
    let sizes: Vec<f64> = points.iter().map(|p| f64::from(p.batch_size)).collect();
    let geometric = sizes.len() >= 3
        && sizes.windows(2).all(|w| w[1] >= 1.5 * w[0])
        && sizes[sizes.len() - 1] >= 16.0 * sizes[0];
    if geometric {
        chart.x_scale = Scale::Log2;
        chart.x_label = "batch size (examples per step, log2 scale)".into();
    } else {
        chart.x_label = "batch size (examples per step)".into();
    }
}

/// Vertical red lines at batch sizes that failed, labelled with their status.
fn failure_lines(points: &[StepPoint]) -> Vec<VLine> {
    points
        .iter()
        .filter(|p| !p.is_ok())
        .map(|p| VLine {
            x: f64::from(p.batch_size),
            text: p.status.to_string(),
            legend: "failed batch size (oom / error)".into(),
            color: FAILED,
            dashed: false,
        })
        .collect()
}

fn title(ctx: &StepTimeContext, what: &str) -> String {
    ctx.about.figure_title(what)
}

/// `step_time.svg`: median step time per batch size with its bootstrap interval,
/// the least-squares line, detected jumps, the seed's claimed jumps and failures.
pub(super) fn draw_step_time(
    dir: &Path,
    ctx: &StepTimeContext,
    analysis: &Analysis,
) -> Result<(), ReportError> {
    let findings = &analysis.findings;
    let ok: Vec<&StepPoint> = findings.ok_points().collect();
    let mut chart = Chart::new(
        title(ctx, "step time vs batch size"),
        "",
        "median step time (ms)",
    );
    batch_axis(&ok, &mut chart);
    // A named position the jumps-at rule reads as a jump is drawn where the step is, with its
    // size; one it does not stays a grey line at the position the seed names.
    let r = &ctx.rules;
    let named = named_jumps(analysis, &ctx.claimed_jumps, r.gap, r.jump_margin);
    let mut marked = vec![];
    for (c, n) in named {
        let line = match n.filter(|n| n.reading == Reading::Jump) {
            Some(n) => {
                marked.push(n.gap.batch_size);
                VLine {
                    x: (f64::from(n.gap.previous_batch_size) + f64::from(n.gap.batch_size)) / 2.0,
                    text: format!("{} ({:+.0}%)", n.gap.batch_size, 100.0 * n.gap.relative),
                    legend: "jump the seed names, found here (bounded above the margin)".into(),
                    color: PALETTE[3],
                    dashed: true,
                }
            }
            None => VLine {
                x: f64::from(c),
                text: String::new(),
                legend: "jump the seed names, not found here".into(),
                color: GREY,
                dashed: true,
            },
        };
        chart.vlines.push(line);
    }
    for j in findings
        .jumps
        .iter()
        .filter(|j| !marked.contains(&j.batch_size))
    {
        chart.vlines.push(VLine {
            // Between the two batch sizes the step separates.
            x: (f64::from(j.previous_batch_size) + f64::from(j.batch_size)) / 2.0,
            text: format!("{} ({:+.0}%)", j.batch_size, 100.0 * j.relative),
            legend: "detected jump (first batch size after it)".into(),
            color: PALETTE[3],
            dashed: true,
        });
    }
    chart.vlines.extend(failure_lines(&findings.points));
    let medians = ok
        .iter()
        .map(|p| (f64::from(p.batch_size), p.median_ms))
        .collect();
    let bars = ok.iter().map(|p| (p.ci_low_ms, p.ci_high_ms)).collect();
    let label = format!(
        "median step time, bars: {:.0}% bootstrap CI",
        100.0 * CI_LEVEL
    );
    chart
        .series
        .push(Series::new(label, medians, PALETTE[0]).with_error_bars(bars));
    if let (Some(fit), Some(first), Some(last)) = (findings.fit, ok.first(), ok.last()) {
        // At every measured size: on a log2 axis the line is a curve.
        let ends: Vec<(f64, f64)> = if chart.x_scale == Scale::Log2 {
            ok.iter()
                .map(|p| f64::from(p.batch_size))
                .map(|b| (b, fit.predict(b)))
                .collect()
        } else {
            [first.batch_size, last.batch_size]
                .map(|b| (f64::from(b), fit.predict(f64::from(b))))
                .to_vec()
        };
        let label = format!(
            "least squares: {:.3} + {:.3} ms × batch (R² {:.3})",
            fit.intercept, fit.slope, fit.r_squared
        );
        chart.series.push(
            Series::new(label, ends, PALETTE[1])
                .with_line(LineStyle::Dashed)
                .with_markers(false),
        );
    }
    chart.legend = LegendPosition::Auto;
    render_pair(&chart, dir, "step_time").map(|_| ())
}

/// `throughput.svg`: examples per second per batch size, the best one marked and
/// a line at 95% of the best to show how flat the optimum is.
pub(super) fn draw_throughput(
    dir: &Path,
    ctx: &StepTimeContext,
    analysis: &Analysis,
) -> Result<(), ReportError> {
    let findings = &analysis.findings;
    let ok: Vec<&StepPoint> = findings.ok_points().collect();
    let mut chart = Chart::new(
        title(ctx, "throughput vs batch size"),
        "",
        "throughput (examples / s)",
    );
    batch_axis(&ok, &mut chart);
    chart.y_includes_zero = true;
    chart.legend = LegendPosition::Auto;
    let best = ok
        .iter()
        .find(|p| Some(p.batch_size) == findings.best_batch_size);
    if let Some(best) = best {
        chart.vlines.push(VLine {
            x: f64::from(best.batch_size),
            text: format!("best: {}", best.batch_size),
            legend: "highest throughput".into(),
            color: PALETTE[2],
            dashed: false,
        });
    }
    chart.vlines.extend(failure_lines(&findings.points));
    let throughput = ok
        .iter()
        .map(|p| (f64::from(p.batch_size), p.examples_per_s))
        .collect();
    // A slower step (upper end of the time interval) means fewer examples per second.
    let bars = ok
        .iter()
        .map(|p| {
            let b = f64::from(p.batch_size);
            (1000.0 * b / p.ci_high_ms, 1000.0 * b / p.ci_low_ms)
        })
        .collect();
    let label = format!(
        "examples / s at the median step time, bars: {:.0}% CI",
        100.0 * CI_LEVEL
    );
    chart
        .series
        .push(Series::new(label, throughput, PALETTE[0]).with_error_bars(bars));
    if let (Some(best), Some(first), Some(last)) = (best, ok.first(), ok.last()) {
        let level = 0.95 * best.examples_per_s;
        let line = vec![
            (f64::from(first.batch_size), level),
            (f64::from(last.batch_size), level),
        ];
        chart.series.push(
            Series::new("95% of the best", line, GREY)
                .with_line(LineStyle::Dashed)
                .with_markers(false),
        );
    }
    render_pair(&chart, dir, "throughput").map(|_| ())
}
