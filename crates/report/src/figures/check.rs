//! Checks that a figure hides nothing, read from the SVG this module's renderer writes (so they
//! judge what a reader sees, whichever code built the chart): the legend box covers no data
//! point, line vertex or label drawn before it; no two tick labels of an axis overprint; and,
//! on the chart itself ([`indistinct_series`]), no two legend entries look alike.
//!
//! Text extents are estimated (0.6 of the font size per character, the font size high): the
//! renderer embeds DejaVu Sans, whose average advance is about that.

use super::{svg::attributes, Chart, Series};

/// One element of the SVG, with the attributes the checks read.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Element {
    pub(super) tag: String,
    pub(super) attributes: Vec<(String, String)>,
    pub(super) text: String,
}

impl Element {
    fn get(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn number(&self, name: &str) -> Option<f64> {
        self.get(name)?.parse().ok()
    }
}

/// An axis-aligned box in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Box2 {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

impl Box2 {
    fn contains(&self, (x, y): (f64, f64)) -> bool {
        x > self.left && x < self.right && y > self.top && y < self.bottom
    }

    fn overlaps(&self, other: &Box2) -> bool {
        self.left < other.right
            && other.left < self.right
            && self.top < other.bottom
            && other.top < self.bottom
    }
}

/// The elements of an SVG document, in drawing order, each with the attributes it inherits
/// from the groups around it (`svg::compact` moves shared paint and fonts onto groups).
pub(super) fn elements(svg: &str) -> Vec<Element> {
    let mut out = Vec::new();
    let mut groups: Vec<Vec<(String, String)>> = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        let Some(end) = rest.find('>') else { break };
        let tag_text = &rest[..end];
        rest = &rest[end + 1..];
        if tag_text == "/g" {
            groups.pop();
        }
        if tag_text.starts_with('/') || tag_text.starts_with('?') || tag_text.starts_with('!') {
            continue;
        }
        let tag: String = tag_text
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let mut attributes = attributes(&tag_text[tag.len()..]);
        if tag == "g" {
            if !tag_text.ends_with('/') {
                groups.push(attributes);
            }
            continue;
        }
        for (k, v) in groups.iter().rev().flatten() {
            if !attributes.iter().any(|(name, _)| name == k) {
                attributes.push((k.clone(), v.clone()));
            }
        }
        let text = if tag == "text" && !tag_text.ends_with('/') {
            let close = rest.find("</text>").unwrap_or(rest.len());
            rest[..close].trim().to_string()
        } else {
            String::new()
        };
        out.push(Element {
            attributes,
            tag,
            text,
        });
    }
    out
}

/// The box a text element covers, from its anchor, font size and length.
fn text_box(e: &Element) -> Option<Box2> {
    let (x, y, size) = (e.number("x")?, e.number("y")?, e.number("font-size")?);
    let width = 0.6 * size * e.text.chars().count() as f64;
    let left = match e.get("text-anchor") {
        Some("middle") => x - width / 2.0,
        Some("end") => x - width,
        _ => x,
    };
    // dy 0.76em: y is the top; 0.5ex: y is the middle; -0.5ex: y is the bottom.
    let top = match e.get("dy") {
        Some("0.76em") => y,
        Some("0.5ex") => y - size / 2.0,
        Some("-0.5ex") => y - size,
        _ => y - 0.8 * size,
    };
    Some(Box2 {
        left,
        top,
        right: left + width,
        bottom: top + size,
    })
}

/// The legend boxes: the framed rectangles (plotters draws the legend's border with a grey
/// stroke and no fill).
fn is_legend_frame(e: &Element) -> bool {
    e.tag == "rect" && e.get("fill") == Some("none") && e.get("stroke") == Some("#787878")
}

/// The data points an element draws: a marker's centre, or the vertices of a line in a colour
/// (grid lines and axes are grey or black, and draw none).
fn data_points(e: &Element) -> Vec<(f64, f64)> {
    match e.tag.as_str() {
        "circle" => match (e.number("cx"), e.number("cy")) {
            (Some(x), Some(y)) => vec![(x, y)],
            _ => vec![],
        },
        "polyline" | "polygon" => {
            let stroke = e.get("stroke").or(e.get("fill")).unwrap_or("");
            if is_grey(stroke) {
                return vec![];
            }
            e.get("points")
                .unwrap_or("")
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect()
        }
        _ => vec![],
    }
}

/// Black, white, greys and "none": the colours of axes, grid and frames, never of data.
fn is_grey(colour: &str) -> bool {
    let hex = colour.trim_start_matches('#');
    if hex.len() != 6 {
        return true;
    }
    hex[0..2] == hex[2..4] && hex[2..4] == hex[4..6]
}

/// Everything in `svg` that hides something: a legend box over a data point, a line vertex or
/// a text drawn before it, and tick labels that overprint. Empty when the figure is clean.
pub fn svg_problems(svg: &str) -> Vec<String> {
    let all = elements(svg);
    let mut problems = Vec::new();
    for (i, frame) in all.iter().enumerate().filter(|(_, e)| is_legend_frame(e)) {
        let (Some(x), Some(y), Some(w), Some(h)) = (
            frame.number("x"),
            frame.number("y"),
            frame.number("width"),
            frame.number("height"),
        ) else {
            continue;
        };
        let legend = Box2 {
            left: x,
            top: y,
            right: x + w,
            bottom: y + h,
        };
        // What the legend was drawn over: everything before its own background, which
        // plotters draws just before the frame.
        let before = &all[..i.saturating_sub(1)];
        if let Some(p) = before
            .iter()
            .flat_map(data_points)
            .find(|&p| legend.contains(p))
        {
            problems.push(format!(
                "the legend box at ({x}, {y}, {w} x {h}) covers data at ({}, {})",
                p.0, p.1
            ));
        }
        if let Some(t) = before
            .iter()
            .filter(|e| e.tag == "text")
            .find(|e| text_box(e).is_some_and(|b| b.overlaps(&legend)))
        {
            problems.push(format!("the legend box covers the text \"{}\"", t.text));
        }
    }
    problems.extend(overprinted_ticks(&all));
    problems
}

/// Tick labels: the small texts in a row (same y, the x axis) or a column (same x and anchor,
/// the y axis) of at least three; two whose boxes overlap overprint.
fn overprinted_ticks(all: &[Element]) -> Vec<String> {
    let ticks: Vec<(&Element, Box2)> = all
        .iter()
        .filter(|e| e.tag == "text" && e.get("transform").is_none())
        .filter_map(|e| Some((e, text_box(e)?)))
        .collect();
    let mut problems = Vec::new();
    for (i, (a, box_a)) in ticks.iter().enumerate() {
        for (b, box_b) in &ticks[i + 1..] {
            let same_row = a.get("y") == b.get("y") && a.get("dy") == b.get("dy");
            let same_column =
                a.get("x") == b.get("x") && a.get("text-anchor") == b.get("text-anchor");
            let same_size = a.get("font-size") == b.get("font-size");
            if same_size && (same_row || same_column) && box_a.overlaps(box_b) && a.text != b.text {
                problems.push(format!(
                    "tick labels \"{}\" and \"{}\" overprint",
                    a.text, b.text
                ));
            }
        }
    }
    problems
}

/// Legend entries of `chart` that a reader cannot tell apart: two labelled series with the
/// same colour, line style, marker shape and markers. Empty when every entry is distinct.
pub fn indistinct_series(chart: &Chart) -> Vec<String> {
    let look = |s: &Series| (s.color, s.line, s.shape, s.markers);
    let labelled: Vec<&Series> = chart
        .series
        .iter()
        .filter(|s| !s.label.is_empty())
        .collect();
    let mut problems = Vec::new();
    for (i, a) in labelled.iter().enumerate() {
        if let Some(b) = labelled[i + 1..]
            .iter()
            .find(|b| b.label != a.label && look(b) == look(a))
        {
            problems.push(format!(
                "\"{}\": \"{}\" and \"{}\" look alike (same colour, line and marker)",
                chart.title, a.label, b.label
            ));
        }
    }
    problems
}
