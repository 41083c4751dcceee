//! Drawing primitives shared by the plot and its legend: colours, an empty element, a star.

use plotters::element::{DynElement, IntoDynElement};
use plotters::prelude::*;

use super::Rgb;

/// An element that draws nothing (an `EmptyElement` would tie the element's type to the
/// backend's lifetime).
pub(super) fn nothing<DB: DrawingBackend>() -> DynElement<'static, DB, (i32, i32)> {
    PathElement::new(Vec::<(i32, i32)>::new(), TRANSPARENT.stroke_width(0)).into_dyn()
}

/// A five-pointed star around `centre` (pixels), as wide as a disc of radius `1.6 r`: a star
/// of radius r looks smaller than a disc of radius r, and the star marks the point that
/// matters most.
pub(super) fn star(r: u32, centre: (i32, i32)) -> Vec<(i32, i32)> {
    let outer = 1.6 * f64::from(r.max(1));
    // 0.45 of the outer radius: the classic proportion is 0.38; a little fatter survives
    // rasterising at a few pixels.
    let inner = 0.45 * outer;
    (0..10)
        .map(|k| {
            let radius = if k % 2 == 0 { outer } else { inner };
            let angle = -std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * f64::from(k) / 5.0;
            (
                centre.0 + (radius * angle.cos()).round() as i32,
                centre.1 + (radius * angle.sin()).round() as i32,
            )
        })
        .collect()
}

/// A palette colour as plotters' colour.
pub(super) fn rgb((r, g, b): Rgb) -> RGBColor {
    RGBColor(r, g, b)
}
