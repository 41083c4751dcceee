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
        let cap = |y| EmptyElement::at((x, y)) + PathElement::new([(-4, 0), (4, 0)], style);
        let arrow = |y, dy: i32| {
            EmptyElement::at((x, y)) + Polygon::new(vec![(-4, dy), (4, dy), (0, 0)], color.filled())
        };
        if lo < ylo {
            ctx.draw_series(std::iter::once(arrow(lo_in, -7)))
                .map_err(err)?;
        } else {
            ctx.draw_series(std::iter::once(cap(lo_in))).map_err(err)?;
        }
        if hi > yhi {
            ctx.draw_series(std::iter::once(arrow(hi_in, 7)))
                .map_err(err)?;
        } else {
            ctx.draw_series(std::iter::once(cap(hi_in))).map_err(err)?;
        }
        let bar = PathElement::new([(x, lo_in), (x, hi_in)], style);
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
