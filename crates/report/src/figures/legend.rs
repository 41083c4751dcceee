//! The legend: where its box goes ([`LegendPosition::Auto`](super::LegendPosition::Auto):
//! the place that hides the fewest data) and the sample of each series it shows.

use std::collections::BTreeSet;

use plotters::element::{DashedPathElement, DynElement, IntoDynElement};
use plotters::prelude::*;

use super::shapes::{nothing, rgb, star};
use super::{Chart, LineStyle, MarkerShape, Series};

/// The pixels a legend should not cover: every series' points and 7 points along each of its
/// segments when joined (`series`: pixels, joined), and the text of each vertical line
/// (`texts`: where the line meets the top, text), drawn right of the line or, within its width
/// of the plot's right edge `right`, left of it.
pub(super) fn obstacles<'a>(
    series: impl Iterator<Item = (Vec<(i32, i32)>, bool)>,
    texts: impl Iterator<Item = ((i32, i32), &'a str)>,
    right: i32,
) -> Vec<(i32, i32)> {
    let mut out: Vec<(i32, i32)> = series
        .flat_map(|(pixels, joined)| line_samples(&pixels, joined))
        .collect();
    for ((x, y), text) in texts {
        let width = 7 * text.chars().count() as i32 + 4;
        let start = if right - x < width + 8 {
            x - width - 3
        } else {
            x + 3
        };
        out.extend((0..=width).step_by(8).map(|dx| (start + dx, y + 10)));
    }
    out
}

/// About the pixels of the legend box plotters draws: 13 px text (~6 px a character, measured
/// on DejaVu Sans as the SVG draws it) after a
/// 20 px sample, one ~19 px row per distinct label, 12 px margins.
pub(super) fn size(chart: &Chart) -> (i32, i32) {
    let labels: BTreeSet<&str> = chart
        .series
        .iter()
        .map(|s| s.label.as_str())
        .chain(chart.vlines.iter().map(|v| v.legend.as_str()))
        .filter(|l| !l.is_empty())
        .collect();
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let (widest, rows) = (widest as i32, labels.len() as i32);
    (60 + 6 * widest, 24 + 19 * rows)
}

/// A series' pixels: its points and, when they are joined, 7 points along each segment.
pub(super) fn line_samples(points: &[(i32, i32)], joined: bool) -> Vec<(i32, i32)> {
    let mut out = points.to_vec();
    if joined {
        for pair in points.windows(2) {
            let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
            out.extend((1..8).map(|k| (x0 + (x1 - x0) * k / 8, y0 + (y1 - y0) * k / 8)));
        }
    }
    out
}

/// The places a legend can take, in the order ties are broken: the four corners (upper right,
/// upper left, lower right, lower left), then the middles of the top and the bottom edge, for
/// a chart whose every corner holds data (a sweep of two clusters of batch sizes, each with a
/// jump's line through it, and nothing between them).
pub(super) const POSITIONS: [SeriesLabelPosition; 6] = [
    SeriesLabelPosition::UpperRight,
    SeriesLabelPosition::UpperLeft,
    SeriesLabelPosition::LowerRight,
    SeriesLabelPosition::LowerLeft,
    SeriesLabelPosition::UpperMiddle,
    SeriesLabelPosition::LowerMiddle,
];

/// The indices in [`POSITIONS`] of those along the top edge and those along the bottom one.
pub(super) const UPPER: [usize; 3] = [0, 1, 4];
pub(super) const LOWER: [usize; 3] = [2, 3, 5];

/// How many of `pixels` a legend box of `size` pixels (plus its 12 px margin) would cover in
/// each of [`POSITIONS`] of the plotting area (pixel ranges `x`, `y`).
pub(super) fn hidden_per_position(
    pixels: &[(i32, i32)],
    (x, y): (std::ops::Range<i32>, std::ops::Range<i32>),
    size: (i32, i32),
) -> [usize; 6] {
    let (w, h) = (size.0 + 12, size.1 + 12);
    // Centred as plotters centres a middle legend.
    let middle = x.start + (x.end - x.start - w) / 2;
    let boxes = [
        (x.end - w..x.end, y.start..y.start + h),
        (x.start..x.start + w, y.start..y.start + h),
        (x.end - w..x.end, y.end - h..y.end),
        (x.start..x.start + w, y.end - h..y.end),
        (middle..middle + w, y.start..y.start + h),
        (middle..middle + w, y.end - h..y.end),
    ];
    boxes.map(|(xs, ys)| {
        pixels
            .iter()
            .filter(|(px, py)| xs.contains(px) && ys.contains(py))
            .count()
    })
}

/// What a legend box would hide in one place: data pixels (points, the lines between them,
/// error bars' ends, the vertical lines' texts) first, then pixels of the vertical lines
/// themselves. Those run the plot's whole height, so with several of them no corner may be
/// free: a legend may lie across one, never across data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Hidden {
    /// Data pixels hidden.
    pub data: usize,
    /// Vertical-line pixels hidden.
    pub lines: usize,
}

/// The place where the legend hides the least data, then the fewest vertical-line pixels;
/// ties go in the order of [`POSITIONS`].
pub(super) fn emptiest(hidden: [Hidden; 6]) -> SeriesLabelPosition {
    let best = (0..hidden.len())
        .min_by_key(|&i| (hidden[i], i))
        .unwrap_or(0);
    POSITIONS[best].clone()
}

/// The legend's sample of a series: 20 pixels of its line with one of its markers in the
/// middle, in coordinates relative to the legend entry.
#[derive(Clone, Copy)]
pub(super) struct LegendSample {
    color: RGBColor,
    line: LineStyle,
    width: u32,
    markers: bool,
    shape: MarkerShape,
    radius: u32,
}

impl LegendSample {
    pub(super) fn of(s: &Series) -> Self {
        LegendSample {
            color: rgb(s.color),
            line: s.line,
            width: s.line_width.clamp(1, 3),
            markers: s.markers,
            shape: s.shape,
            // Large enough to see, small enough for the legend's line height.
            radius: s.marker_size.clamp(2, 5),
        }
    }

    pub(super) fn line<DB: DrawingBackend>(&self) -> DynElement<'static, DB, (i32, i32)> {
        let style = self.color.stroke_width(self.width);
        let ends = [(0, 0), (20, 0)];
        match self.line {
            LineStyle::Solid => PathElement::new(ends, style).into_dyn(),
            LineStyle::Dashed => DashedPathElement::new(ends, 7, 6, style).into_dyn(),
            LineStyle::Dotted => DashedPathElement::new(ends, 2, 4, style).into_dyn(),
            LineStyle::None => nothing(),
        }
    }

    pub(super) fn marker<DB: DrawingBackend>(&self) -> DynElement<'static, DB, (i32, i32)> {
        let (r, at) = (self.radius, (10, 0));
        let fill = self.color.filled();
        match (self.markers, self.shape) {
            (false, _) => nothing(),
            (true, MarkerShape::Circle) => Circle::new(at, r, fill).into_dyn(),
            (true, MarkerShape::Triangle) => TriangleMarker::new(at, r + 1, fill).into_dyn(),
            (true, MarkerShape::Cross) => Cross::new(at, r, self.color.stroke_width(2)).into_dyn(),
            (true, MarkerShape::Star) => Polygon::new(star(r, at), fill).into_dyn(),
        }
    }
}

/// What a legend box would hide ([`Hidden`]) in each of [`POSITIONS`] of the chart's plotting
/// area.
pub(super) fn hidden_in_chart<DB, X, Y>(
    ctx: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    chart: &Chart,
    (bar_lo, bar_hi): (f64, f64),
) -> [Hidden; 6]
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let (px, py) = ctx.plotting_area().get_pixel_range();
    let yhi = ctx.y_range().end;
    let py_lines = py.clone();
    let series = chart.series.iter().map(|s| {
        let pixels = s
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|p| ctx.backend_coord(p))
            .collect();
        (pixels, s.line != LineStyle::None)
    });
    // The ends of the error bars, as points of their own, where they are drawn: a bar beyond
    // `(bar_lo, bar_hi)` ends there with an arrow head (`marks::error_bars`).
    let bars = chart.series.iter().map(|s| {
        let ends = s
            .points
            .iter()
            .zip(&s.error_bars)
            .flat_map(|(&(x, _), &(lo, hi))| {
                // max then min, not clamp: no panic on an empty range.
                let clip = |v: f64| v.max(bar_lo).min(bar_hi);
                [(x, clip(lo)), (x, clip(hi))]
            })
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|p| ctx.backend_coord(&p))
            .collect();
        (ends, false)
    });
    // Where each vertical line's text starts (drawn at the top).
    let texts = chart
        .vlines
        .iter()
        .filter(|v| v.x.is_finite() && !v.text.is_empty())
        .map(|v| (ctx.backend_coord(&(v.x, yhi)), v.text.as_str()));
    // Vertical lines, every 10 pixels from top to bottom.
    let along = |v: &super::VLine| {
        let x = ctx.backend_coord(&(v.x, yhi)).0;
        (py_lines.start..py_lines.end)
            .step_by(10)
            .map(move |y| (x, y))
    };
    // What the SVG draws as the vertices of a coloured path counts as data (see `check`, which
    // passes over greys): both ends of a solid line, and every dash of a dashed one.
    let coloured = |v: &super::VLine| !(v.color.0 == v.color.1 && v.color.1 == v.color.2);
    let dashes = |v: &super::VLine| v.dashed && coloured(v);
    let lines: Vec<(i32, i32)> = chart
        .vlines
        .iter()
        .filter(|v| v.x.is_finite() && !dashes(v))
        .flat_map(along)
        .collect();
    let ends = chart
        .vlines
        .iter()
        .filter(|v| v.x.is_finite() && coloured(v))
        .map(|v| {
            let x = ctx.backend_coord(&(v.x, yhi)).0;
            let pixels = if v.dashed {
                along(v).collect()
            } else {
                vec![(x, py_lines.start), (x, py_lines.end - 1)]
            };
            (pixels, false)
        });
    let area = (px.clone(), py);
    let data = hidden_per_position(
        &obstacles(series.chain(bars).chain(ends), texts, px.end),
        area.clone(),
        size(chart),
    );
    let crossed = hidden_per_position(&lines, area, size(chart));
    std::array::from_fn(|i| Hidden {
        data: data[i],
        lines: crossed[i],
    })
}
