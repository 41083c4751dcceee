//! The time-to-result figure: steps to result x median step time against batch size.

use std::path::Path;

use super::{color, workload_series};
use crate::figures::{render_pair, Chart, LegendPosition, Scale, VLine};
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::TargetContext;
use crate::ReportError;

/// `time_to_result.svg`: steps to result x median step time against batch size, one
/// line per workload with the step-time spread as bars, and a vertical line at each
/// workload's soonest batch size.
pub(crate) fn draw_time_to_result(
    dir: &Path,
    ctx: &TargetContext,
    study: &Study,
) -> Result<(), ReportError> {
    let mut chart = Chart::new(
        format!(
            "{}: time to result vs batch size (bars: step-time spread)",
            ctx.about.experiment
        ),
        "batch size (examples per step, log2 scale)",
        "time to reach the target (s: steps x median step time, log scale)",
    );
    chart.x_scale = Scale::Log2;
    chart.y_scale = Scale::Log;
    chart.legend = LegendPosition::Auto;
    for (k, w) in study.workloads.iter().enumerate() {
        let Some(t) = &w.time else { continue };
        let points = t
            .points
            .iter()
            .map(|p| (f64::from(p.batch_size), p.seconds))
            .collect();
        let bars = t.points.iter().map(|p| (p.low, p.high)).collect();
        chart
            .series
            .push(workload_series(w.label.clone(), points, k).with_error_bars(bars));
        chart.vlines.push(VLine {
            x: f64::from(t.soonest.batch_size),
            text: format!("soonest {}", t.soonest.batch_size),
            legend: String::new(),
            color: color(k),
            dashed: true,
        });
    }
    render_pair(&chart, dir, "time_to_result").map(|_| ())
}
