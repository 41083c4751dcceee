use super::*;

/// A chart using every feature: error bars, a dashed fit, markers-only series, vertical
/// markers with staggered text.
fn sample_chart() -> Chart {
    let points: Vec<(f64, f64)> = (1..=40)
        .map(|b| {
            (
                f64::from(b),
                20.0 + 3.0 * f64::from(b) + if b >= 16 { 8.0 } else { 0.0 },
            )
        })
        .collect();
    let bars = points.iter().map(|p| (p.1 - 1.5, p.1 + 1.5)).collect();
    let mut chart = Chart::new(
        "Step time versus batch size (test)",
        "batch size (examples)",
        "step time (ms)",
    );
    chart
        .series
        .push(Series::new("median, 95% CI", points, PALETTE[0]).with_error_bars(bars));
    let fit = vec![(1.0, 23.0), (40.0, 140.0)];
    chart.series.push(
        Series::new("linear fit", fit, PALETTE[1])
            .with_line(LineStyle::Dashed)
            .with_markers(false),
    );
    chart.series.push(
        Series::new("markers only", vec![(30.0, 60.0)], PALETTE[2]).with_line(LineStyle::None),
    );
    for (x, text) in [(16.0, "16"), (17.0, "17"), (18.0, "18")] {
        chart.vlines.push(VLine {
            x,
            text: text.into(),
            legend: "detected jump".into(),
            color: PALETTE[3],
            dashed: true,
        });
    }
    chart.vlines.push(VLine {
        x: 38.0,
        text: "oom".into(),
        legend: "failed".into(),
        color: (200, 0, 0),
        dashed: false,
    });
    chart
}

/// Where to draw: a temporary directory, or `BATCHLAB_FIGURE_DIR` to keep the files and
/// look at them.
fn out_dir() -> (Option<tempfile::TempDir>, std::path::PathBuf) {
    match std::env::var_os("BATCHLAB_FIGURE_DIR") {
        Some(dir) => (None, dir.into()),
        None => {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().to_path_buf();
            (Some(tmp), path)
        }
    }
}

#[test]
fn renders_svg_and_png() {
    let (_keep, dir) = out_dir();
    let (svg, png) = with_png(|| render_pair(&sample_chart(), &dir, "figure_test")).unwrap();
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg_text.starts_with("<svg") && svg_text.contains("Step time versus batch size (test)")
    );
    assert!(svg_text.contains("batch size (examples)") && svg_text.contains("linear fit"));
    let png_bytes = std::fs::read(&png).unwrap();
    assert_eq!(&png_bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png_bytes.len() > 10_000,
        "a blank PNG would be much smaller"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".figure_test.tmp")
        })
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn renders_log_axes_and_empty_charts() {
    let (_keep, dir) = out_dir();
    let mut chart = Chart::new(
        "Steps to target (test)",
        "batch size (log scale)",
        "steps (log scale)",
    );
    chart.x_scale = Scale::Log2;
    chart.y_scale = Scale::Log;
    chart.legend = LegendPosition::UpperRight;
    let points = (0..10)
        .map(|k| (2f64.powi(k), 1e5 / 2f64.powi(k).min(64.0)))
        .collect();
    chart
        .series
        .push(Series::new("best trial", points, PALETTE[0]));
    render_pair(&chart, &dir, "figure_log_test").unwrap();
    render_pair(
        &Chart::new("Nothing measured", "x (unit)", "y (unit)"),
        &dir,
        "figure_empty_test",
    )
    .unwrap();
}

#[test]
fn errors_name_the_figure() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    let err = render_pair(&sample_chart(), &missing, "f")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no/such/dir"), "{err}");
}

#[test]
fn renders_panels_side_by_side_on_a_shared_axis() {
    let (_keep, dir) = out_dir();
    let mut left = sample_chart();
    let mut right = Chart::new("Second panel", "batch size (log2 scale)", "accuracy (%)");
    right.x_scale = Scale::Log2;
    right.series.push(
        Series::new("seeds", vec![(16.0, 60.0), (32.0, 58.0)], PALETTE[1])
            .with_line(LineStyle::None)
            .with_marker_size(2),
    );
    right.series.push(Series::new("legend only", vec![], GREY));
    left.y_range = Some((0.0, 250.0));
    right.y_range = Some((0.0, 250.0));
    right.size = (700, 600);
    let (svg, png) = with_png(|| render_row_pair(&[left, right], &dir, "figure_row_test")).unwrap();
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("Second panel") && svg_text.contains("Step time versus batch size"));
    let png_bytes = std::fs::read(&png).unwrap();
    // The PNG header's width and height (IHDR): the panels' widths added, the larger height.
    let be = |at: usize| u32::from_be_bytes(png_bytes[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (900 + 700, 600));
    let err = render_row_pair(&[], &dir, "figure_none_test")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("figure_none_test.svg") && err.contains("no chart"),
        "{err}"
    );
}

#[test]
fn renders_marker_shapes_dotted_lines_and_a_grid_of_panels() {
    let (_keep, dir) = out_dir();
    let panel = |title: &str| {
        let mut chart = Chart::new(title, "1 - momentum (log scale)", "learning rate (log)");
        chart.size = (420, 320);
        chart.x_scale = Scale::Log;
        chart.y_scale = Scale::Log;
        // Shared ranges, one of them unusable on a log axis and so ignored.
        chart.x_range = Some((1e-3, 1.0));
        chart.y_range = Some((0.0, 1.0));
        let shapes = [
            MarkerShape::Circle,
            MarkerShape::Triangle,
            MarkerShape::Cross,
            MarkerShape::Star,
        ];
        for (k, shape) in shapes.into_iter().enumerate() {
            let x = 10f64.powi(-(k as i32)) * 0.5;
            chart.series.push(
                Series::new(format!("{shape:?}"), vec![(x, 0.01), (x, 0.1)], PALETTE[k])
                    .with_line(LineStyle::Dotted)
                    .with_line_width(1)
                    .with_shape(shape),
            );
        }
        chart
    };
    let rows = vec![
        vec![panel("a"), panel("b"), panel("c")],
        vec![panel("d")],
        vec![],
    ];
    let (svg, png) = with_png(|| render_grid_pair(&rows, &dir, "figure_grid_test")).unwrap();
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("Triangle") && svg_text.contains("<polygon"));
    let png_bytes = std::fs::read(&png).unwrap();
    let be = |at: usize| u32::from_be_bytes(png_bytes[at..at + 4].try_into().unwrap());
    // Three panels wide, two rows high; the empty row takes no space.
    assert_eq!((be(16), be(20)), (3 * 420, 2 * 320));
    let err = render_grid_pair(&[vec![]], &dir, "figure_no_grid_test")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no chart"), "{err}");
}

#[test]
fn the_automatic_legend_goes_where_the_data_are_not() {
    use super::legend::{emptiest, hidden_per_position, line_samples, Hidden};
    let emptiest_corner = |pixels: &[(i32, i32)], area, size| {
        emptiest(hidden_per_position(pixels, area, size).map(|data| Hidden { data, lines: 0 }))
    };
    use plotters::prelude::SeriesLabelPosition;
    let area = (0..100, 0..100);
    // A line along the top edge, left to right: the lower corners are empty.
    let top = line_samples(&[(0, 5), (99, 5)], true);
    assert!(matches!(
        emptiest_corner(&top, area.clone(), (40, 40)),
        SeriesLabelPosition::LowerRight
    ));
    // Points in every corner but the upper left.
    let points = [(90, 10), (10, 90), (90, 90)];
    assert!(matches!(
        emptiest_corner(&line_samples(&points, false), area.clone(), (28, 28)),
        SeriesLabelPosition::UpperLeft
    ));
    // Joined, the segment from (90, 10) to (10, 90) crosses the middle only: upper left stays empty.
    assert_eq!(line_samples(&points, true).len(), 3 + 2 * 7);
    assert!(matches!(
        emptiest_corner(&[], area, (40, 40)),
        SeriesLabelPosition::UpperRight
    ));
    // Vertical lines through the upper right corner, one data point in each other corner: the
    // legend lies across the lines (they run the plot's height), never across data.
    let across = |data, lines| Hidden { data, lines };
    let busy = across(5, 0);
    assert!(matches!(
        emptiest([
            across(0, 12),
            across(1, 0),
            across(1, 0),
            across(2, 0),
            busy,
            busy
        ]),
        SeriesLabelPosition::UpperRight
    ));
    // With data equal, the corner crossing fewer lines.
    assert!(matches!(
        emptiest([
            across(0, 12),
            across(0, 3),
            across(0, 9),
            across(0, 9),
            busy,
            busy
        ]),
        SeriesLabelPosition::UpperLeft
    ));
    // Two clusters of points, one at each side, with nothing between them: every corner holds
    // data, the middle of the top edge none.
    let sides: Vec<(i32, i32)> = [0, 80]
        .iter()
        .flat_map(|&x0| (0..20).flat_map(move |x| [(x0 + x, 5), (x0 + x, 95)]))
        .collect();
    assert!(matches!(
        emptiest_corner(&sides, (0..100, 0..100), (40, 30)),
        SeriesLabelPosition::UpperMiddle
    ));
}

/// The SVG a chart renders to.
fn svg_of(chart: &Chart) -> String {
    let (_keep, dir) = out_dir();
    let stem = format!("check-{}", chart.title.len());
    let (svg, _) = render_pair(chart, &dir, &stem).unwrap();
    std::fs::read_to_string(svg).unwrap()
}

/// Points in all four corners of the plot and a labelled series: no corner is free.
fn crowded(legend: LegendPosition) -> Chart {
    let mut chart = Chart::new("crowded corners", "x", "y");
    let corners = vec![
        (0.0, 0.0),
        (0.0, 10.0),
        (10.0, 0.0),
        (10.0, 10.0),
        (5.0, 5.0),
    ];
    chart
        .series
        .push(Series::new("corners", corners, PALETTE[0]).with_line(LineStyle::None));
    chart.series.push(
        Series::new(
            "a long second legend entry",
            vec![(2.0, 9.5), (8.0, 0.5)],
            PALETTE[1],
        )
        .with_line(LineStyle::None),
    );
    chart.legend = legend;
    chart
}

#[test]
fn a_legend_over_data_is_caught_and_the_automatic_one_makes_room() {
    let fixed = svg_problems(&svg_of(&crowded(LegendPosition::UpperLeft)));
    assert!(
        fixed
            .iter()
            .any(|p| p.contains("legend box") && p.contains("covers data")),
        "{fixed:?}"
    );
    let auto = svg_problems(&svg_of(&crowded(LegendPosition::Auto)));
    assert!(auto.is_empty(), "{auto:?}");
    // The sample chart, with error bars and vertical lines' texts, is clean too.
    let mut sample = sample_chart();
    sample.legend = LegendPosition::Auto;
    assert_eq!(svg_problems(&svg_of(&sample)), Vec::<String>::new());
}

#[test]
fn overprinted_labels_and_look_alike_series_are_caught() {
    let text = |x: u32, label: &str| {
        format!("<text x=\"{x}\" y=\"500\" dy=\"0.76em\" text-anchor=\"middle\" font-size=\"10.5\">\n{label}\n</text>")
    };
    let clean = format!("<svg>{}{}</svg>", text(100, "127"), text(160, "128"));
    assert!(svg_problems(&clean).is_empty());
    let crowded = format!("<svg>{}{}</svg>", text(100, "127"), text(108, "128"));
    let problems = svg_problems(&crowded);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("\"127\" and \"128\" overprint")),
        "{problems:?}"
    );

    let mut chart = crowded_chart_with_twins();
    assert_eq!(indistinct_series(&chart).len(), 1);
    let (_keep, dir) = out_dir();
    let err = render_pair(&chart, &dir, "twins").unwrap_err().to_string();
    assert!(
        err.contains("\"batch 100\" and \"batch 513\" look alike"),
        "{err}"
    );
    chart.series[1].line = LineStyle::Dashed;
    assert!(indistinct_series(&chart).is_empty());
}

fn crowded_chart_with_twins() -> Chart {
    let mut chart = Chart::new("twins", "step", "accuracy (%)");
    for label in ["batch 100", "batch 513"] {
        chart.series.push(Series::new(
            label,
            vec![(1.0, 50.0), (2.0, 60.0)],
            PALETTE[0],
        ));
    }
    chart
}

#[test]
fn distinct_looks_never_repeat_within_the_palette_times_the_shapes() {
    let looks: Vec<_> = (0..4 * PALETTE.len()).map(distinct_look).collect();
    for (i, a) in looks.iter().enumerate() {
        assert!(!looks[i + 1..].contains(a), "look {i} repeats: {a:?}");
    }
    // Twelve labelled lines drawn with them render (none is refused as a look-alike).
    let mut chart = Chart::new("twelve lines", "x", "y");
    for k in 0..12 {
        let (colour, shape) = distinct_look(k);
        chart.series.push(
            Series::new(
                format!("line {k}"),
                vec![(1.0, k as f64), (2.0, k as f64)],
                colour,
            )
            .with_shape(shape),
        );
    }
    assert!(indistinct_series(&chart).is_empty());
}

#[test]
fn error_bars_cut_off_at_the_data_stay_clear_of_the_room_made_for_the_legend() {
    // Three close medians, two of them with intervals far above (a profile's three batch sizes):
    // the bars stop with an arrow head at the fitted axis's top, not at the stretched one, where
    // the legend, whichever upper corner it takes, covered them.
    let mut chart = Chart::new("three batch sizes", "batch size", "step time (ms)");
    let points = vec![(31.0, 150.8), (32.0, 158.4), (33.0, 156.1)];
    let bars = vec![(149.1, 219.3), (145.6, 155.3), (152.1, 223.0)];
    chart.series.push(
        Series::new("median step time, IQR of the samples", points, PALETTE[0])
            .with_error_bars(bars),
    );
    chart.series.push(
        Series::new(
            "a second, long legend entry",
            vec![(31.0, 152.0), (33.0, 154.0)],
            PALETTE[1],
        )
        .with_line(LineStyle::None),
    );
    chart.legend = LegendPosition::Auto;
    let svg = svg_of(&chart);
    let problems = svg_problems(&svg);
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn compaction_draws_every_element_as_plotters_wrote_it_in_less_space() {
    register_font().unwrap();
    let mut sample = sample_chart();
    sample.legend = LegendPosition::Auto;
    let mut plain = String::new();
    draw::to_svg(&[sample.clone(), crowded(LegendPosition::Auto)], &mut plain).unwrap();
    let compact = svg::compact(&plain);
    // Each element with what it inherits, `opacity="1"` (SVG's default) aside, in drawing order.
    let drawn = |svg: &str| -> Vec<check::Element> {
        check::elements(svg)
            .into_iter()
            .map(|mut e| {
                e.attributes.retain(|(k, v)| !(k == "opacity" && v == "1"));
                e.attributes.sort();
                e
            })
            .collect()
    };
    assert_eq!(drawn(&plain), drawn(&compact));
    assert!(drawn(&plain).len() > 100);
    assert!(
        compact.len() * 10 < plain.len() * 7,
        "{} bytes from {}",
        compact.len(),
        plain.len()
    );
    assert_eq!(svg_problems(&compact), svg_problems(&plain));
}

#[test]
fn compaction_groups_only_the_same_paint_and_keeps_an_opacity_below_one() {
    let plain = "<svg width=\"9\">\n\
<circle cx=\"1\" cy=\"2\" r=\"3\" opacity=\"0.5\" fill=\"#0072B2\" stroke=\"none\"/>\n\
<circle cx=\"4\" cy=\"5\" r=\"3\" opacity=\"0.5\" fill=\"#0072B2\" stroke=\"none\"/>\n\
<circle cx=\"6\" cy=\"7\" r=\"3\" opacity=\"1\" fill=\"#E69F00\" stroke=\"none\"/>\n\
<text x=\"1\" y=\"2\" opacity=\"1\" fill=\"#000000\" font-size=\"10\">\n\
label\n\
</text>\n\
</svg>\n";
    let expected = "<svg width=\"9\">\n\
<g fill=\"#0072B2\" stroke=\"none\">\n\
<circle cx=\"1\" cy=\"2\" r=\"3\" opacity=\"0.5\"/>\n\
<circle cx=\"4\" cy=\"5\" r=\"3\" opacity=\"0.5\"/>\n\
</g>\n\
<circle fill=\"#E69F00\" stroke=\"none\" cx=\"6\" cy=\"7\" r=\"3\"/>\n\
<text fill=\"#000000\" font-size=\"10\" x=\"1\" y=\"2\">\n\
label\n\
</text>\n\
</svg>\n";
    assert_eq!(svg::compact(plain), expected);
}
