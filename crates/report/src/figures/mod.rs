//! x/y charts with error bars, extra series and vertical markers, written as SVG (and PNG on
//! demand: [`with_png`]).
//!
//! A [`Chart`] is plain data (no plotters types), so runners can build one without knowing
//! plotters; [`render`] draws it, [`render_row`] draws several side by side in one image
//! (panels that are meant to be compared, e.g. one per training budget), and [`render_grid`]
//! draws rows of panels (small multiples). Every chart has a title, axis labels (put the unit
//! in them) and a legend, so that a figure read on its own says what it shows.
//!
//! plotters is built without system fonts (no fontconfig, so it builds and renders the same
//! everywhere); the DejaVu Sans font in `assets/` is embedded and registered once as
//! `sans-serif` before the first drawing.

mod axes;
mod check;
mod draw;
mod legend;
mod marks;
mod shapes;
mod svg;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::ReportError;

pub use check::{indistinct_series, svg_problems};

/// A colour as (red, green, blue).
pub type Rgb = (u8, u8, u8);

/// The Okabe-Ito palette, distinguishable with the common colour-vision deficiencies:
/// blue, orange, bluish green, vermillion, reddish purple, sky blue, black.
pub const PALETTE: [Rgb; 7] = [
    (0, 114, 178),
    (230, 159, 0),
    (0, 158, 115),
    (213, 94, 0),
    (204, 121, 167),
    (86, 180, 233),
    (0, 0, 0),
];

/// The look of the `k`-th of several series that must be told apart: the palette's colours in
/// turn, then the same colours with the next marker shape once the colours run out (so batch
/// 100 and batch 513, the 1st and 8th of a grid, never look alike).
pub fn distinct_look(k: usize) -> (Rgb, MarkerShape) {
    const SHAPES: [MarkerShape; 4] = [
        MarkerShape::Circle,
        MarkerShape::Triangle,
        MarkerShape::Cross,
        MarkerShape::Star,
    ];
    (
        PALETTE[k % PALETTE.len()],
        SHAPES[(k / PALETTE.len()) % SHAPES.len()],
    )
}

/// Grey, for reference marks that should not compete with the data.
pub const GREY: Rgb = (150, 150, 150);

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced powers of ten, ticks at 1, 10, 100, ...; values must be positive.
    Log,
    /// Evenly spaced powers of two, ticks at 1, 2, 4, ... (batch sizes); values must be
    /// positive.
    Log2,
}

/// How the points of a series are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStyle {
    /// A solid line.
    Solid,
    /// A dashed line (fits, references).
    Dashed,
    /// A dotted line: a second kind of reference beside a dashed one.
    Dotted,
    /// No line: markers only.
    None,
}

/// The shape of a series' markers: shapes tell categories apart where colour alone would
/// not (printed in grey, or read with a colour-vision deficiency).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerShape {
    /// A filled disc.
    Circle,
    /// A filled triangle, point up.
    Triangle,
    /// An x-shaped cross (no fill, so it shows what lies under it).
    Cross,
    /// A filled five-pointed star, for the one point that matters most.
    Star,
}

/// Where the legend box sits inside the plotting area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegendPosition {
    /// Top left corner.
    UpperLeft,
    /// Top right corner.
    UpperRight,
    /// Bottom left corner.
    LowerLeft,
    /// Bottom right corner.
    LowerRight,
    /// The corner where the legend hides the fewest data: chosen when drawing, from where the
    /// series' points and the lines between them fall.
    Auto,
}

/// One data series.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text; an empty label keeps the series out of the legend.
    pub label: String,
    /// (x, y) points; non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
    /// Per point (low, high) of an error bar; empty for none, else as long as `points`.
    pub error_bars: Vec<(f64, f64)>,
    /// How points are joined.
    pub line: LineStyle,
    /// Whether each point gets a dot.
    pub markers: bool,
    /// Radius of the dots in pixels (3 by default); smaller dots tell single measurements
    /// (one seed) apart from the aggregate drawn over them.
    pub marker_size: u32,
    /// Shape of the markers ([`MarkerShape::Circle`] by default).
    pub shape: MarkerShape,
    /// Width of the line in pixels (2 by default); 1 for a thin line that should not compete
    /// with the data, such as a fitted curve.
    pub line_width: u32,
    /// Colour of line, markers and bars.
    pub color: Rgb,
}

impl Series {
    /// A solid line with markers.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>, color: Rgb) -> Self {
        Series {
            label: label.into(),
            points,
            error_bars: vec![],
            line: LineStyle::Solid,
            markers: true,
            marker_size: 3,
            shape: MarkerShape::Circle,
            line_width: 2,
            color,
        }
    }

    /// Adds error bars, one (low, high) per point.
    pub fn with_error_bars(mut self, bars: Vec<(f64, f64)>) -> Self {
        self.error_bars = bars;
        self
    }

    /// Sets how points are joined.
    pub fn with_line(mut self, line: LineStyle) -> Self {
        self.line = line;
        self
    }

    /// Sets whether points get dots.
    pub fn with_markers(mut self, markers: bool) -> Self {
        self.markers = markers;
        self
    }

    /// Sets the radius of the dots in pixels.
    pub fn with_marker_size(mut self, radius: u32) -> Self {
        self.marker_size = radius;
        self
    }

    /// Sets the shape of the markers.
    pub fn with_shape(mut self, shape: MarkerShape) -> Self {
        self.shape = shape;
        self
    }

    /// Sets the width of the line in pixels.
    pub fn with_line_width(mut self, width: u32) -> Self {
        self.line_width = width;
        self
    }
}

/// A vertical line across the plot at `x`, e.g. a detected jump or a failed batch size.
#[derive(Debug, Clone, PartialEq)]
pub struct VLine {
    /// Position on the x axis.
    pub x: f64,
    /// Short text printed at the top of the line (e.g. the batch size); may be empty.
    pub text: String,
    /// Legend entry; lines with the same legend text share one entry; empty for none.
    pub legend: String,
    /// Colour of line and text.
    pub color: Rgb,
    /// Dashed rather than solid.
    pub dashed: bool,
}

/// A chart: data plus everything a reader needs to read it alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// x axis label, with unit.
    pub x_label: String,
    /// y axis label, with unit.
    pub y_label: String,
    /// x axis scale.
    pub x_scale: Scale,
    /// y axis scale.
    pub y_scale: Scale,
    /// Data series, drawn in order.
    pub series: Vec<Series>,
    /// Vertical markers, drawn under the series.
    pub vlines: Vec<VLine>,
    /// Legend placement.
    pub legend: LegendPosition,
    /// Image size in pixels (width, height).
    pub size: (u32, u32),
    /// Whether the y axis must include 0 (on a linear axis).
    pub y_includes_zero: bool,
    /// A fixed y range (low, high), used as is instead of one fitted to the data: panels
    /// drawn side by side share one so that their heights compare. `None`: fitted. Ignored
    /// unless low < high, both finite (and positive on a log axis).
    pub y_range: Option<(f64, f64)>,
    /// A fixed x range (low, high), like `y_range`: small multiples share one so that a
    /// position means the same in every panel.
    pub x_range: Option<(f64, f64)>,
    /// Categories on a linear x axis: (position, label); when given, the x axis shows these
    /// labels at these positions and no others (e.g. batch sizes 127, 128, 129 in slots of
    /// their own, which a log axis would draw on top of each other).
    pub x_ticks: Vec<(f64, String)>,
    /// A panel that holds only the legend of its neighbours (no axes, no data): small
    /// multiples too small to hold a legend of their own get one of these.
    pub legend_only: bool,
    /// Shaded ranges of x (regimes of a curve), drawn under everything else.
    pub spans: Vec<Span>,
}

/// A shaded range of x, from the bottom of the plot to its top.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Where it starts and ends, in x's units.
    pub from: f64,
    /// See `from`.
    pub to: f64,
    /// Its tint (drawn at 18% opacity over white).
    pub color: Rgb,
    /// Legend text; empty keeps it out of the legend (a span with the same text as an
    /// earlier one shares its entry).
    pub legend: String,
}

impl Chart {
    /// An empty 900 x 560 linear chart with the legend in the upper left.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series: vec![],
            vlines: vec![],
            legend: LegendPosition::UpperLeft,
            size: (900, 560),
            y_includes_zero: false,
            y_range: None,
            x_range: None,
            x_ticks: vec![],
            legend_only: false,
            spans: vec![],
        }
    }
}

/// Draws `chart` to an SVG file and a PNG file. Each is written under a temporary name and
/// renamed, so an interrupted run never leaves a half-drawn figure under its final name.
pub fn render(chart: &Chart, svg: &Path, png: &Path) -> Result<(), ReportError> {
    render_row(std::slice::from_ref(chart), svg, png)
}

/// [`render`] to `dir/stem.svg` and `dir/stem.png`; returns both paths.
pub fn render_pair(
    chart: &Chart,
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, PathBuf), ReportError> {
    render_row_pair(std::slice::from_ref(chart), dir, stem)
}

/// Draws `charts` side by side, left to right, into one SVG and one PNG image (each chart
/// keeps its own title, axes and legend; the image is as wide as their widths together and
/// as high as the highest). Written like [`render`]. An empty `charts` is an error.
pub fn render_row(charts: &[Chart], svg: &Path, png: &Path) -> Result<(), ReportError> {
    let plot_error = |path: &Path| {
        let path = path.to_path_buf();
        move |message| ReportError::Plot { path, message }
    };
    if charts.is_empty() {
        return Err(plot_error(svg)("no chart to draw".to_string()));
    }
    distinct(charts.iter()).map_err(plot_error(svg))?;
    register_font().map_err(plot_error(svg))?;
    let mut text = String::new();
    draw::to_svg(charts, &mut text).map_err(plot_error(svg))?;
    batchlab_method::files::write_atomic(svg, svg::compact(&text).as_bytes())?;
    if !png_too(png)? {
        return Ok(());
    }
    let tmp = batchlab_method::files::temporary_sibling(png);
    draw::to_png(charts, &tmp).map_err(plot_error(png))?;
    Ok(batchlab_method::files::rename(&tmp, png)?)
}

/// [`render_row`] to `dir/stem.svg` and `dir/stem.png`; returns both paths.
pub fn render_row_pair(
    charts: &[Chart],
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, PathBuf), ReportError> {
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    render_row(charts, &svg, &png)?;
    Ok((svg, png))
}

/// Draws rows of charts into one SVG and one PNG image: `rows[0]` left to right along the
/// top, then `rows[1]` below it, and so on (small multiples). Each chart keeps its own size;
/// the image is as wide as the widest row and as high as the rows' tallest charts together,
/// and a row narrower than the widest leaves white space on its right. Written like
/// [`render`]. No chart at all is an error.
pub fn render_grid(rows: &[Vec<Chart>], svg: &Path, png: &Path) -> Result<(), ReportError> {
    let plot_error = |path: &Path| {
        let path = path.to_path_buf();
        move |message| ReportError::Plot { path, message }
    };
    if rows.iter().all(Vec::is_empty) {
        return Err(plot_error(svg)("no chart to draw".to_string()));
    }
    distinct(rows.iter().flatten()).map_err(plot_error(svg))?;
    register_font().map_err(plot_error(svg))?;
    let mut text = String::new();
    draw::grid_to_svg(rows, &mut text).map_err(plot_error(svg))?;
    batchlab_method::files::write_atomic(svg, svg::compact(&text).as_bytes())?;
    if !png_too(png)? {
        return Ok(());
    }
    let tmp = batchlab_method::files::temporary_sibling(png);
    draw::grid_to_png(rows, &tmp).map_err(plot_error(png))?;
    Ok(batchlab_method::files::rename(&tmp, png)?)
}

/// [`render_grid`] to `dir/stem.svg` and `dir/stem.png`; returns both paths.
pub fn render_grid_pair(
    rows: &[Vec<Chart>],
    dir: &Path,
    stem: &str,
) -> Result<(PathBuf, PathBuf), ReportError> {
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    render_grid(rows, &svg, &png)?;
    Ok((svg, png))
}

thread_local! {
    /// Whether figures drawn on this thread get a PNG beside their SVG ([`with_png`]).
    static PNG: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every figure it draws written as PNG too (`batchlab report DIR --png`).
/// Reports keep one figure format, SVG; a PNG is made on demand. Which formats to draw is the
/// command's choice, made once at its edge: every kind draws through [`render_row`] and
/// [`render_grid`], on the thread that renders, so the choice is scoped to that thread rather
/// than threaded through every kind's rendering.
pub fn with_png<T>(f: impl FnOnce() -> T) -> T {
    let before = PNG.with(|p| p.replace(true));
    let out = f();
    PNG.with(|p| p.set(before));
    out
}

/// Whether to draw `png` now; when not, a PNG left by an earlier `--png` rendering is removed,
/// so that no figure is left older than its SVG.
fn png_too(png: &Path) -> Result<bool, ReportError> {
    if PNG.with(std::cell::Cell::get) {
        return Ok(true);
    }
    match std::fs::remove_file(png) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(ReportError::io("remove the stale figure", png)(e))
        }
        _ => Ok(false),
    }
}

/// Refuses charts whose legend has entries a reader cannot tell apart (a bug of the code
/// building them, caught by every kind's rendering tests).
fn distinct<'a>(charts: impl Iterator<Item = &'a Chart>) -> Result<(), String> {
    let problems: Vec<String> = charts.flat_map(indistinct_series).collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// The font family name charts use.
pub(crate) const FONT: &str = "sans-serif";

fn register_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            // DejaVu Sans cut to the scripts and symbols a chart can print (Latin, Greek,
            // punctuation, arrows, mathematical operators, geometric shapes), without hinting,
            // which ab_glyph does not use: 140 KB of the 760 the whole font took in the tree,
            // every glyph kept with its metrics, so the committed figures re-render byte for
            // byte. Made with fontTools: `pyftsubset DejaVuSans.ttf --no-hinting
            // --layout-features='*' --glyph-names --legacy-kern --unicodes=U+0020-007E,
            // U+00A0-017F,U+0370-03FF,U+2000-206F,U+2070-209F,U+20A0-20CF,U+2100-214F,
            // U+2190-21FF,U+2200-22FF,U+2300-23FF,U+25A0-25FF,U+FFFD`.
            let bytes: &'static [u8] = include_bytes!("../../assets/DejaVuSans.ttf");
            plotters::style::register_font(FONT, plotters::style::FontStyle::Normal, bytes)
                .map_err(|_| "the embedded DejaVu Sans font could not be parsed".to_string())
        })
        .clone()
}

#[cfg(test)]
mod tests;
