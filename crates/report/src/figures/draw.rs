//! The plotters side of [`super::render`]: one generic drawing routine for any backend and
//! any pair of axis scales.

use std::collections::BTreeSet;
use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::axes::{range, tick, usable_range, x_values, y_values};
use super::legend::{self, LegendSample};
use super::marks;
use super::shapes::rgb;
use super::{Chart, LegendPosition, LineStyle, Scale, FONT};

pub(super) fn to_svg(charts: &[Chart], out: &mut String) -> Result<(), String> {
    let root = SVGBackend::with_string(out, row_size(charts)).into_drawing_area();
    draw_row(&root, charts)?;
    root.present().map_err(|e| e.to_string())
}

pub(super) fn to_png(charts: &[Chart], path: &Path) -> Result<(), String> {
    let root = BitMapBackend::new(path, row_size(charts)).into_drawing_area();
    draw_row(&root, charts)?;
    root.present().map_err(|e| e.to_string())
}

pub(super) fn grid_to_svg(rows: &[Vec<Chart>], out: &mut String) -> Result<(), String> {
    let root = SVGBackend::with_string(out, grid_size(rows)).into_drawing_area();
    draw_grid(&root, rows)?;
    root.present().map_err(|e| e.to_string())
}

pub(super) fn grid_to_png(rows: &[Vec<Chart>], path: &Path) -> Result<(), String> {
    let root = BitMapBackend::new(path, grid_size(rows)).into_drawing_area();
    draw_grid(&root, rows)?;
    root.present().map_err(|e| e.to_string())
}

/// The size of an image holding `rows` of charts, one below the other.
fn grid_size(rows: &[Vec<Chart>]) -> (u32, u32) {
    let width = rows.iter().map(|r| row_size(r).0).max().unwrap_or(1).max(1);
    let height = rows
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| row_size(r).1)
        .sum::<u32>()
        .max(1);
    (width, height)
}

/// Each row in a strip as high as its highest chart, top to bottom; each chart in an area
/// of exactly its own size, so that a short row leaves white space rather than stretching
/// its last chart.
fn draw_grid<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rows: &[Vec<Chart>],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut panels = vec![];
    let mut below = root.clone();
    for row in rows.iter().filter(|r| !r.is_empty()) {
        let (strip, rest) = below.split_vertically(row_size(row).1);
        let mut right = strip;
        for chart in row {
            let (panel, rest) = right.split_horizontally(chart.size.0);
            panels.push((panel, chart));
            right = rest;
        }
        below = rest;
    }
    draw_panels(&panels)
}

/// The size of an image holding `charts` side by side.
fn row_size(charts: &[Chart]) -> (u32, u32) {
    let width = charts.iter().map(|c| c.size.0).sum::<u32>().max(1);
    let height = charts.iter().map(|c| c.size.1).max().unwrap_or(1);
    (width, height)
}

/// Each chart in its own area, as wide as the chart asks, left to right.
fn draw_row<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    charts: &[Chart],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut panels = vec![];
    let mut rest = root.clone();
    for (i, chart) in charts.iter().enumerate() {
        if i + 1 == charts.len() {
            panels.push((rest.clone(), chart));
            break;
        }
        let (panel, right) = rest.split_horizontally(chart.size.0);
        panels.push((panel, chart));
        rest = right;
    }
    draw_panels(&panels)
}

/// An axis range, (low, high).
type Span = (f64, f64);

/// Draws each chart in its panel. Panels given one y range (to compare heights) still share
/// one after each has made room for its legend: the union of their ranges.
fn draw_panels<DB: DrawingBackend>(
    panels: &[(DrawingArea<DB, Shift>, &Chart)],
) -> Result<(), String> {
    let mut ranges = panels
        .iter()
        .map(|(panel, chart)| axis_ranges(panel, chart))
        .collect::<Result<Vec<_>, String>>()?;
    let made = ranges.clone();
    for (i, (_, chart)) in panels.iter().enumerate() {
        let Some(given) = chart.y_range else { continue };
        let sharing = panels
            .iter()
            .zip(&made)
            .filter(|((_, other), _)| other.y_range == Some(given))
            .map(|(_, r)| r.1);
        ranges[i].1 = sharing.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
            (lo.min(r.0), hi.max(r.1))
        });
    }
    for ((panel, chart), (x, y)) in panels.iter().zip(ranges) {
        panel.fill(&WHITE).map_err(|e| e.to_string())?;
        dispatch(panel, chart, x, y, false)?;
    }
    Ok(())
}

/// The x and y ranges a chart is drawn with: given or fitted to the data, the y range with
/// room for an automatic legend.
fn axis_ranges<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<(Span, Span), String> {
    let x = match chart.x_range {
        Some(r) if usable_range(r, chart.x_scale) => r,
        _ => range(x_values(chart), chart.x_scale, false, 0.03, 0.03),
    };
    let y = data_y(chart);
    if chart.legend == LegendPosition::Auto && labelled(chart) {
        Ok((x, room_for_legend(root, chart, x, y)?))
    } else {
        Ok((x, y))
    }
}

/// The y range given, or fitted to the data: the axis before any room is made for the legend,
/// and where error bars stop with an arrow head even on an axis stretched for the legend, so
/// that the arrows stay below the room made (at the stretched edge the legend would cover them).
fn data_y(chart: &Chart) -> Span {
    // Headroom above the data for the vertical markers' text.
    let top = if chart.vlines.iter().any(|v| !v.text.is_empty()) {
        0.14
    } else {
        0.06
    };
    match chart.y_range {
        Some(r) if usable_range(r, chart.y_scale) => r,
        _ => range(
            y_values(chart),
            chart.y_scale,
            chart.y_includes_zero,
            0.06,
            top,
        ),
    }
}

/// Where error bars stop with an arrow head: the axis, and no further than the range fitted to
/// the data ([`data_y`]).
fn bar_range(chart: &Chart, (ylo, yhi): Span) -> Span {
    let (lo, hi) = data_y(chart);
    (ylo.max(lo), yhi.min(hi))
}

/// The y axis's range of a chart being drawn.
fn axis_y<DB: DrawingBackend, X: Ranged, Y: Ranged<ValueType = f64>>(
    ctx: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
) -> Span {
    (ctx.y_range().start, ctx.y_range().end)
}

/// What a first, undrawn layout of a chart tells: how many data pixels the legend would hide
/// in each of [`legend::POSITIONS`], and the plotting area's height in pixels.
struct Layout {
    hidden: [legend::Hidden; 6],
    plot_height: i32,
}

/// The y range with room for the legend: as given when a corner is free of data (vertical
/// lines aside: see [`legend::Hidden`]); else
/// stretched upwards (or, failing that, downwards) by the legend's height, so that an upper
/// (lower) corner is free and the legend hides nothing.
fn room_for_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    x: (f64, f64),
    (y0, y1): (f64, f64),
) -> Result<(f64, f64), String> {
    let layout = |y| -> Result<Layout, String> {
        let probe = dispatch(root, chart, x, y, true)?;
        probe.ok_or_else(|| "no layout".to_string())
    };
    let first = layout((y0, y1))?;
    if first.hidden.iter().any(|h| h.data == 0) {
        return Ok((y0, y1));
    }
    let share = f64::from(legend::size(chart).1 + 24) / f64::from(first.plot_height.max(1));
    if share >= 0.6 {
        return Ok((y0, y1));
    }
    let log = chart.y_scale != Scale::Linear;
    let to = |v: f64| if log { v.log10() } else { v };
    let from = |t: f64| if log { 10f64.powf(t) } else { t };
    let stretched = (to(y1) - to(y0)) / (1.0 - share);
    let above = (y0, from(to(y0) + stretched));
    let hidden = layout(above)?.hidden;
    if legend::UPPER.iter().any(|&i| hidden[i].data == 0) {
        return Ok(above);
    }
    // Not below zero on an axis that starts there.
    if !(chart.y_includes_zero && !log && y0 >= 0.0) {
        let below = (from(to(y1) - stretched), y1);
        let hidden = layout(below)?.hidden;
        if legend::LOWER.iter().any(|&i| hidden[i].data == 0) {
            return Ok(below);
        }
    }
    Ok((y0, y1))
}

/// Whether the chart has a legend entry at all.
fn labelled(chart: &Chart) -> bool {
    chart.series.iter().any(|s| !s.label.is_empty())
        || chart.vlines.iter().any(|v| !v.legend.is_empty())
        || chart.spans.iter().any(|s| !s.legend.is_empty())
}

/// First half of the scale dispatch: each axis's coordinate type is a type parameter. With
/// `probe`, nothing but the axes' layout is computed and returned.
fn dispatch<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    (x0, x1): (f64, f64),
    y: (f64, f64),
    probe: bool,
) -> Result<Option<Layout>, String> {
    match chart.x_scale {
        Scale::Linear => with_x(root, chart, x0..x1, y, probe),
        Scale::Log => with_x(root, chart, (x0..x1).log_scale(), y, probe),
        Scale::Log2 => with_x(root, chart, (x0..x1).log_scale().base(2.0), y, probe),
    }
}

/// Second half of the scale dispatch: each axis's coordinate type is a type parameter.
fn with_x<DB, X>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    x: X,
    (y0, y1): (f64, f64),
    probe: bool,
) -> Result<Option<Layout>, String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    match chart.y_scale {
        Scale::Linear => draw_in(root, chart, x, y0..y1, probe),
        Scale::Log => draw_in(root, chart, x, (y0..y1).log_scale(), probe),
        Scale::Log2 => draw_in(root, chart, x, (y0..y1).log_scale().base(2.0), probe),
    }
}

fn draw_in<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    x_spec: X,
    y_spec: Y,
    probe: bool,
) -> Result<Option<Layout>, String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, (FONT, 22))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x_spec, y_spec)
        .map_err(err)?;
    if probe {
        let (_, py) = ctx.plotting_area().get_pixel_range();
        return Ok(Some(Layout {
            hidden: legend::hidden_in_chart(&ctx, chart, bar_range(chart, axis_y(&ctx))),
            plot_height: py.end - py.start,
        }));
    }
    // Category labels at their positions only; plotters places its ticks at whole numbers
    // when asked for as many as there are categories.
    let categories = |v: &f64| {
        chart
            .x_ticks
            .iter()
            .find(|(at, _)| (at - v).abs() < 1e-6)
            .map_or_else(String::new, |(_, label)| label.clone())
    };
    let numbers = |v: &f64| tick(*v);
    let x_formatter: &dyn Fn(&f64) -> String = if chart.x_ticks.is_empty() {
        &numbers
    } else {
        &categories
    };
    // As many tick labels as the plot has room for: about 70 pixels apart across, 30 up
    // (small panels would otherwise overprint them, most of all on a log axis).
    let (plot_x, plot_y) = ctx.plotting_area().get_pixel_range();
    let room = |pixels: i32, apart: i32| usize::try_from(pixels / apart).unwrap_or(0).clamp(3, 10);
    let x_labels = if chart.x_ticks.is_empty() {
        room(plot_x.end - plot_x.start, 70)
    } else {
        chart.x_ticks.len() + 1
    };
    let y_labels = room(plot_y.end - plot_y.start, 30);
    if !chart.legend_only {
        ctx.configure_mesh()
            .x_desc(&chart.x_label)
            .y_desc(&chart.y_label)
            .axis_desc_style((FONT, 16))
            .label_style((FONT, 13))
            .x_labels(x_labels)
            .y_labels(y_labels)
            .x_label_formatter(x_formatter)
            .y_label_formatter(&|v| tick(*v))
            // One light line between labelled ones: plotters' default of up to ten draws a
            // line every few pixels on a dense axis (a grey wash, and most of an SVG's bytes).
            .max_light_lines(1)
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw()
            .map_err(err)?;
    }

    let (ylo, yhi) = (ctx.y_range().start, ctx.y_range().end);
    let bars = bar_range(chart, (ylo, yhi));
    // Label placement is judged in pixels, which on a log axis are not proportional to
    // value differences.
    let (pixels_x, _) = ctx.plotting_area().get_pixel_range();
    let x_span = f64::from((pixels_x.end - pixels_x.start).max(1));
    let mut legended = BTreeSet::new();
    let mut previous_text_x = f64::NEG_INFINITY;
    let mut row = 0;
    for span in chart
        .spans
        .iter()
        .filter(|s| s.from.is_finite() && s.to.is_finite())
    {
        let tint = rgb(span.color).mix(0.18).filled();
        let anno = ctx
            .draw_series(std::iter::once(Rectangle::new(
                [(span.from, ylo), (span.to, yhi)],
                tint,
            )))
            .map_err(err)?;
        if !span.legend.is_empty() && legended.insert(span.legend.clone()) {
            anno.label(&span.legend)
                .legend(move |(x, y)| Rectangle::new([(x + 2, y - 6), (x + 18, y + 6)], tint));
        }
    }
    let mut vlines: Vec<_> = chart.vlines.iter().filter(|v| v.x.is_finite()).collect();
    vlines.sort_by(|a, b| a.x.total_cmp(&b.x));
    for v in vlines {
        let color = rgb(v.color);
        let px = f64::from(ctx.backend_coord(&(v.x, ylo)).0);
        let ends = [(v.x, ylo), (v.x, yhi)];
        let anno = if v.dashed {
            ctx.draw_series(std::iter::once(DashedPathElement::new(
                ends,
                6,
                4,
                color.stroke_width(2),
            )))
        } else {
            ctx.draw_series(std::iter::once(PathElement::new(
                ends,
                color.stroke_width(2),
            )))
        }
        .map_err(err)?;
        if !v.legend.is_empty() && legended.insert(v.legend.clone()) {
            anno.label(&v.legend).legend(move |(x, y)| {
                PathElement::new([(x + 10, y - 7), (x + 10, y + 7)], color.stroke_width(2))
            });
        }
        if !v.text.is_empty() {
            // Stagger labels of neighbouring lines over three rows so they do not overlap.
            let relative = (px - previous_text_x).abs() / x_span;
            row = if relative.is_finite() && relative < 0.05 {
                (row + 1) % 3
            } else {
                0
            };
            previous_text_x = px;
            // On a white box, right of the line, or left of it near the right edge where
            // the text would be cut off. Width estimated at 7.5 px per character at 13 px.
            let width = (7.5 * v.text.chars().count() as f64) as i32 + 4;
            let near_right = f64::from(pixels_x.end) - px < f64::from(width + 8);
            let left = if near_right { -width - 3 } else { 3 };
            let top = 3 + 15 * row;
            let label = EmptyElement::at((v.x, yhi))
                + Rectangle::new(
                    [(left, top), (left + width, top + 14)],
                    WHITE.mix(0.85).filled(),
                )
                + Text::new(
                    v.text.clone(),
                    (left + 2, top + 1),
                    (FONT, 13).into_font().color(&color),
                );
            ctx.draw_series(std::iter::once(label)).map_err(err)?;
        }
    }

    for s in &chart.series {
        let color = rgb(s.color);
        let points: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        marks::error_bars(&mut ctx, s, bars)?;
        let stroke = color.stroke_width(s.line_width.max(1));
        let anno = match s.line {
            LineStyle::Solid => Some(
                ctx.draw_series(LineSeries::new(points.clone(), stroke))
                    .map_err(err)?,
            ),
            LineStyle::Dashed => Some(
                ctx.draw_series(DashedLineSeries::new(points.clone(), 8, 5, stroke))
                    .map_err(err)?,
            ),
            LineStyle::Dotted => Some(
                ctx.draw_series(DashedLineSeries::new(points.clone(), 2, 4, stroke))
                    .map_err(err)?,
            ),
            LineStyle::None => None,
        };
        let anno = if s.markers {
            Some(marks::markers(&mut ctx, s, &points)?)
        } else {
            anno
        };
        if let Some(anno) = anno.filter(|_| !s.label.is_empty()) {
            let sample = LegendSample::of(s);
            anno.label(&s.label).legend(move |(x, y)| {
                EmptyElement::at((x, y)) + sample.line::<DB>() + sample.marker::<DB>()
            });
        }
    }

    if !labelled(chart) {
        // plotters would draw an empty legend box.
        return Ok(None);
    }
    let position = match chart.legend {
        _ if chart.legend_only => SeriesLabelPosition::UpperLeft,
        LegendPosition::UpperLeft => SeriesLabelPosition::UpperLeft,
        LegendPosition::UpperRight => SeriesLabelPosition::UpperRight,
        LegendPosition::LowerLeft => SeriesLabelPosition::LowerLeft,
        LegendPosition::LowerRight => SeriesLabelPosition::LowerRight,
        LegendPosition::Auto => legend::emptiest(legend::hidden_in_chart(&ctx, chart, bars)),
    };
    ctx.configure_series_labels()
        .position(position)
        .label_font((FONT, 13))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(120, 120, 120))
        .margin(12)
        .draw()
        .map_err(err)?;
    Ok(None)
}
