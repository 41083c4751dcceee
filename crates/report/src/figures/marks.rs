//! What [`super::draw`] puts at a series' points: its error bars and its markers.

use plotters::chart::SeriesAnno;
use plotters::prelude::*;

use super::shapes::{rgb, star};
use super::{MarkerShape, Series};

/// The chart a series is drawn into, whatever its axis scales.
type Ctx<'a, DB, X, Y> = ChartContext<'a, DB, Cartesian2d<X, Y>>;

/// The series' error bars, capped at both ends. A bar beyond the y axis `(ylo, yhi)` (see
/// `axes::y_values`) stops at the edge with an arrow head instead of a cap: it goes on, and the
/// reader is told so.
pub(super) fn error_bars<DB, X, Y>(
    ctx: &mut Ctx<'_, DB, X, Y>,
    s: &Series,
    (ylo, yhi): (f64, f64),
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let color = rgb(s.color);
    let style = color.stroke_width(1);
    for (&(x, _), &(lo, hi)) in s.points.iter().zip(&s.error_bars) {
        if !(x.is_finite() && lo.is_finite() && hi.is_finite()) {
            continue;
        }
        let (lo_in, hi_in) = (lo.max(ylo), hi.min(yhi));
        let arrow = |y, dy: i32| {
            EmptyElement::at((x, y)) + Polygon::new(vec![(-4, dy), (4, dy), (0, 0)], color.filled())
        };
        // The stem and its caps as one polyline from the bottom end (`up` pixels to the top
        // end, negative: pixel rows grow downwards), a cap's half retraced: the picture of
        // three lines in a third of an SVG's bytes.
        let up = ctx.backend_coord(&(x, hi_in)).1 - ctx.backend_coord(&(x, lo_in)).1;
        let mut path = Vec::with_capacity(6);
        if lo < ylo {
            ctx.draw_series(std::iter::once(arrow(lo_in, -7)))
                .map_err(err)?;
        } else {
            path.extend([(-4, 0), (4, 0)]);
        }
        path.extend([(0, 0), (0, up)]);
        if hi > yhi {
            ctx.draw_series(std::iter::once(arrow(hi_in, 7)))
                .map_err(err)?;
        } else {
            path.extend([(-4, up), (4, up)]);
        }
        let bar = EmptyElement::at((x, lo_in)) + PathElement::new(path, style);
        ctx.draw_series(std::iter::once(bar)).map_err(err)?;
    }
    Ok(())
}

/// The series' markers at `points` (its finite points), in its shape.
pub(super) fn markers<'c, 'a, DB, X, Y>(
    ctx: &'c mut Ctx<'a, DB, X, Y>,
    s: &Series,
    points: &[(f64, f64)],
) -> Result<&'c mut SeriesAnno<'a, DB>, String>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let color = rgb(s.color);
    let r = s.marker_size;
    let drawn = match s.shape {
        MarkerShape::Circle => {
            ctx.draw_series(points.iter().map(|&p| Circle::new(p, r, color.filled())))
        }
        // A triangle of the same circumradius looks smaller than the disc.
        MarkerShape::Triangle => ctx.draw_series(
            points
                .iter()
                .map(|&p| TriangleMarker::new(p, r + 1, color.filled())),
        ),
        MarkerShape::Cross => ctx.draw_series(
            points
                .iter()
                .map(|&p| Cross::new(p, r, color.stroke_width(2))),
        ),
        MarkerShape::Star => ctx.draw_series(
            points
                .iter()
                .map(|&p| EmptyElement::at(p) + Polygon::new(star(r, (0, 0)), color.filled())),
        ),
    };
    drawn.map_err(err)
}
