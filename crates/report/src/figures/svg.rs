//! The SVG text plotters writes: its attributes read back ([`attributes`], for the checks), and
//! the document made smaller without changing what it draws ([`compact`]).
//!
//! plotters writes every element with its own fill, stroke and font and with `opacity="1"`, so a
//! scatter of a thousand markers repeats one style a thousand times; the committed figures were
//! 7.3 MB of a repository kept under 24 MiB (docs/ARCHITECTURE.md, "A compact repository").
//! [`compact`] drops `opacity="1"` (SVG's default) and gives each run of consecutive elements
//! with the same fill, stroke and font one `<g>` that carries them: these are inherited
//! properties, so every element draws as it did. An opacity other than 1 stays on its element
//! (on a group it would blend the group as one image), as does every other attribute.

/// The inherited presentation attributes a group may carry for the elements inside it.
const INHERITED: [&str; 6] = [
    "fill",
    "stroke",
    "stroke-width",
    "font-family",
    "font-size",
    "text-anchor",
];

/// The elements plotters writes on one line (`<tag .../>`) that a group may gather.
const SHAPES: [&str; 6] = ["polyline", "polygon", "circle", "line", "rect", "path"];

/// `name="value"` pairs of a tag, in order.
pub(super) fn attributes(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq]
            .trim()
            .rsplit(' ')
            .next()
            .unwrap_or("")
            .to_string();
        let after = &rest[eq + 2..];
        let Some(close) = after.find('"') else { break };
        out.push((name, after[..close].to_string()));
        rest = &after[close + 1..];
    }
    out
}

/// One element to gather: its tag, its attributes but the group's, the group's (its paint and
/// font), and what follows its start tag (a text's content and end tag; nothing for a shape).
struct Unit<'a> {
    tag: &'a str,
    own: Vec<(String, String)>,
    paint: Vec<(String, String)>,
    closing: &'a str,
    body: Vec<&'a str>,
}

impl Unit<'_> {
    fn write(&self, out: &mut String, with_paint: bool) {
        out.push('<');
        out.push_str(self.tag);
        let paint = self.paint.iter().filter(|_| with_paint);
        for (k, v) in paint.chain(&self.own) {
            out.push_str(&format!(" {k}=\"{v}\""));
        }
        out.push_str(self.closing);
        out.push('\n');
        for line in &self.body {
            out.push_str(line);
            out.push('\n');
        }
    }
}

/// A start tag's line, read as a unit: the tag, its attributes split, and `/>` or `>`.
fn unit(line: &str) -> Option<Unit<'_>> {
    let inner = line.strip_prefix('<')?;
    let tag_end = inner.find(|c: char| !c.is_ascii_alphanumeric())?;
    let tag = &inner[..tag_end];
    let closing = if SHAPES.contains(&tag) && line.ends_with("/>") {
        "/>"
    } else if tag == "text" && line.ends_with('>') && !line.ends_with("/>") && !line.contains("</")
    {
        ">"
    } else {
        return None;
    };
    let (mut own, mut paint) = (vec![], vec![]);
    for (k, v) in attributes(&inner[tag_end..inner.len() - closing.len()]) {
        if k == "opacity" && v == "1" {
            continue;
        }
        if INHERITED.contains(&k.as_str()) {
            paint.push((k, v));
        } else {
            own.push((k, v));
        }
    }
    Some(Unit {
        tag,
        own,
        paint,
        closing,
        body: vec![],
    })
}

/// `svg` with `opacity="1"` dropped and each run of elements of the same paint and font in one
/// group that carries them (see the module's comment); every element draws as in `svg`.
pub(super) fn compact(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len() / 2);
    let mut run: Vec<Unit> = vec![];
    let flush = |run: &mut Vec<Unit>, out: &mut String| {
        if run.len() > 1 && !run[0].paint.is_empty() {
            out.push_str("<g");
            for (k, v) in &run[0].paint {
                out.push_str(&format!(" {k}=\"{v}\""));
            }
            out.push_str(">\n");
            run.iter().for_each(|u| u.write(out, false));
            out.push_str("</g>\n");
        } else {
            run.iter().for_each(|u| u.write(out, true));
        }
        run.clear();
    };
    let mut lines = svg.lines();
    while let Some(line) = lines.next() {
        let Some(mut u) = unit(line) else {
            flush(&mut run, &mut out);
            out.push_str(line);
            out.push('\n');
            continue;
        };
        if u.tag == "text" {
            // Its content, then `</text>`, each on its own line as plotters writes them.
            for body in lines.by_ref() {
                u.body.push(body);
                if body == "</text>" {
                    break;
                }
            }
        }
        if run.first().is_some_and(|first| first.paint != u.paint) {
            flush(&mut run, &mut out);
        }
        run.push(u);
    }
    flush(&mut run, &mut out);
    if !svg.ends_with('\n') {
        out.pop();
    }
    out
}
