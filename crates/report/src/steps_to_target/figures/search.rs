//! `search_space.svg`: where every trial of the search sat and how it ended, as small
//! multiples.
//!
//! Layout: one panel per (workload, batch size); each workload starts a new row, and its
//! batch sizes run left to right, at most [`COLUMNS`] to a row (so that the image, scaled
//! to a page, keeps panels large enough to read). The panels of one workload share both
//! axes, so a point's position compares across batch sizes.
//!
//! - A workload that searched momentum: learning rate against 1 - momentum, both log scale
//!   (the paper's view: the good region is a diagonal band of constant effective rate).
//! - Plain SGD, whose one searched metaparameter is the learning rate: learning rate
//!   against the steps at which the trial reached the target or stopped (log2), with the
//!   step budget marked; the fastest trials sit at the left.
//!
//! Markers: reached the target (green disc), stopped early because a faster trial had reached
//! it (small sky-blue disc), missed it within its budget (orange triangle), diverged
//! (vermillion cross), failed or not evaluated (small grey disc); the best trial of each
//! panel is a black star. Trials without a `search.csv` row have no coordinates and are
//! not drawn.

use std::path::Path;

use crate::figures::{
    render_grid_pair, Chart, LegendPosition, MarkerShape, Rgb, Scale, Series, VLine, GREY, PALETTE,
};
use crate::steps_to_target::analysis::workload::{TrialPoint, Workload};
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::TargetContext;
use crate::steps_to_target::TrialOutcome;
use crate::ReportError;

/// Panels per row: four 460-pixel panels make an image 1840 pixels wide, which a page
/// shows at about half size, still readable.
pub(crate) const COLUMNS: usize = 4;

const PANEL: (u32, u32) = (460, 360);

/// How a trial ended, as the figure shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Reached,
    Stopped,
    Missed,
    Diverged,
    Other,
}

impl Mark {
    const ALL: [Mark; 5] = [
        Mark::Reached,
        Mark::Stopped,
        Mark::Missed,
        Mark::Diverged,
        Mark::Other,
    ];

    /// How trial `p` ended, given its step `budget`: a trial that missed the target before its
    /// budget ran out was stopped because a faster one had already reached it, which says
    /// nothing about whether it would have.
    fn of(p: &TrialPoint, budget: u64) -> Mark {
        match p.outcome {
            Some(TrialOutcome::Reached(_)) => Mark::Reached,
            Some(TrialOutcome::Missed) if p.stopped_at < budget => Mark::Stopped,
            Some(TrialOutcome::Missed) => Mark::Missed,
            Some(TrialOutcome::Infeasible) => Mark::Diverged,
            Some(TrialOutcome::Failed) | None => Mark::Other,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Mark::Reached => "reached the target",
            Mark::Stopped => "stopped: a faster trial had reached it",
            Mark::Missed => "missed it within the budget",
            Mark::Diverged => "diverged (infeasible)",
            Mark::Other => "failed or not evaluated",
        }
    }

    fn style(self) -> (Rgb, MarkerShape, u32) {
        match self {
            Mark::Reached => (PALETTE[2], MarkerShape::Circle, 3),
            Mark::Stopped => (PALETTE[5], MarkerShape::Circle, 2),
            Mark::Missed => (PALETTE[1], MarkerShape::Triangle, 3),
            Mark::Diverged => (PALETTE[3], MarkerShape::Cross, 3),
            Mark::Other => (GREY, MarkerShape::Circle, 2),
        }
    }

    fn series(self, label: &str, points: Vec<(f64, f64)>) -> Series {
        let (color, shape, size) = self.style();
        Series::new(label, points, color)
            .with_line(crate::figures::LineStyle::None)
            .with_shape(shape)
            .with_marker_size(size)
    }
}

fn best_series(label: &str, points: Vec<(f64, f64)>) -> Series {
    Series::new(label, points, PALETTE[6])
        .with_line(crate::figures::LineStyle::None)
        .with_shape(MarkerShape::Star)
        .with_marker_size(5)
}

/// A trial's position in its panel; `None` when it has no search row or no usable value.
fn position(w: &Workload, p: &TrialPoint) -> Option<(f64, f64)> {
    let row = p.search.as_ref()?;
    let x = if w.momentum {
        1.0 - row.momentum
    } else {
        match p.outcome {
            Some(TrialOutcome::Reached(step)) => step as f64,
            _ => p.stopped_at as f64,
        }
    };
    let y = row.learning_rate;
    (x.is_finite() && x > 0.0 && y.is_finite() && y > 0.0).then_some((x, y))
}

/// The range of `values` widened by 30% on each side (on a log axis).
fn log_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    (lo <= hi).then_some((lo / 1.3, hi * 1.3))
}

/// The panels of one workload, wrapped into rows of at most [`COLUMNS`].
fn workload_rows(ctx: &TargetContext, w: &Workload) -> Vec<Vec<Chart>> {
    let placed: Vec<(&TrialPoint, (f64, f64))> = w
        .trials
        .iter()
        .filter_map(|p| Some((p, position(w, p)?)))
        .collect();
    let x_range = log_range(
        placed.iter().map(|(_, xy)| xy.0).chain(
            w.cells
                .iter()
                .filter(|_| !w.momentum)
                .map(|c| ctx.budget_of(&w.label).steps(c.batch_size) as f64),
        ),
    );
    let y_range = log_range(placed.iter().map(|(_, xy)| xy.1));
    let best = w.best_ids();
    let mut panels = vec![];
    for cell in &w.cells {
        let b = cell.batch_size;
        let here: Vec<&(&TrialPoint, (f64, f64))> =
            placed.iter().filter(|(p, _)| p.batch_size == b).collect();
        let x_label = if w.momentum {
            "1 - momentum (log scale)"
        } else {
            "steps when reached or stopped (log2)"
        };
        let mut chart = Chart::new(
            format!("{}, B = {b}", w.label),
            x_label,
            "learning rate (log scale)",
        );
        chart.size = PANEL;
        chart.x_scale = if w.momentum { Scale::Log } else { Scale::Log2 };
        chart.y_scale = Scale::Log;
        chart.x_range = x_range;
        chart.y_range = y_range;
        chart.legend = LegendPosition::Auto;
        let budget = ctx.budget_of(&w.label).steps(b);
        for mark in Mark::ALL {
            let points = here
                .iter()
                .filter(|(p, _)| Mark::of(p, budget) == mark)
                .map(|(_, xy)| *xy)
                .collect();
            chart.series.push(mark.series("", points));
        }
        let stars = here
            .iter()
            .filter(|(p, _)| best.contains(p.id.as_str()))
            .map(|(_, xy)| *xy)
            .collect();
        chart.series.push(best_series("", stars));
        if !w.momentum {
            chart.vlines.push(VLine {
                x: ctx.budget_of(&w.label).steps(b) as f64,
                text: "budget".into(),
                legend: String::new(),
                color: GREY,
                dashed: true,
            });
        }
        panels.push(chart);
    }
    panels.chunks(COLUMNS).map(<[Chart]>::to_vec).collect()
}

/// `search_space.svg` (see the module documentation for the layout).
pub(crate) fn draw_search_space(
    dir: &Path,
    ctx: &TargetContext,
    study: &Study,
) -> Result<(), ReportError> {
    // The panels are too small for a legend each: one panel above them holds it.
    let mut legend = Chart::new("search_space: what the markers mean", "", "");
    legend.size = (PANEL.0, 230);
    legend.legend_only = true;
    legend.series = std::iter::once(best_series("best trial of the panel", vec![]))
        .chain(
            Mark::ALL
                .iter()
                .map(|mark| mark.series(mark.label(), vec![])),
        )
        .collect();
    let panels: Vec<Vec<Chart>> = study
        .workloads
        .iter()
        .flat_map(|w| workload_rows(ctx, w))
        .collect();
    let rows = if panels.is_empty() {
        // Nothing recorded yet: one empty panel says so rather than no file at all.
        vec![vec![Chart::new(
            format!("{}: no trial recorded yet", ctx.about.experiment),
            "1 - momentum or steps",
            "learning rate",
        )]]
    } else {
        std::iter::once(vec![legend]).chain(panels).collect()
    };
    render_grid_pair(&rows, dir, "search_space").map(|_| ())
}
