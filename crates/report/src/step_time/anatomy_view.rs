//! The anatomy of a jump in a step-time report: when the run took steps apart
//! (`stages.csv`), a report.md section per dissected batch size and `anatomy.svg`.
//! The numbers come from [`super::anatomy`]; this module only reads, lays out and draws.

use std::fmt::Write as _;
use std::path::Path;

use batchlab_method::rows::read_rows;
use batchlab_method::rows::step_time::{StagePhase, StageSample};

use super::anatomy::{anatomy, Anatomy, Change, Part};
use super::markdown::ms;
use crate::figures::{render_grid_pair, Chart, LegendPosition, LineStyle, Series, VLine};
use crate::figures::{GREY, PALETTE};
use crate::markdown::table;
use crate::ReportError;

/// Reads `dir/stages.csv` when the run wrote one and dissects every batch size whose two
/// neighbours were dissected too (the run's `anatomy.around`). Empty without the file.
pub(super) fn read(dir: &Path, seed: u64) -> Result<Vec<Anatomy>, ReportError> {
    let path = dir.join("stages.csv");
    if !batchlab_method::rows::stored::exists(&path) {
        return Ok(vec![]);
    }
    let samples: Vec<StageSample> = read_rows(&path)?;
    let mut sizes: Vec<u32> = samples.iter().map(|s| s.batch_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let centres = sizes
        .iter()
        .filter(|&&b| b > 0 && sizes.contains(&(b - 1)) && sizes.contains(&(b + 1)));
    Ok(centres
        .filter_map(|&b| anatomy(&samples, b, seed))
        .collect())
}

fn part_name(p: &Part) -> String {
    match p.phase {
        StagePhase::Forward | StagePhase::Backward => format!("{} {}", p.stage, p.phase),
        StagePhase::Optimizer | StagePhase::Step => p.phase.name().to_string(),
    }
}

fn interval(c: &Change) -> String {
    format!("{:+} [{}, {}]", ms(c.ms), ms(c.low), ms(c.high))
}

fn share(part: &Part, step: &Part) -> String {
    let s = part.standout_ms() / step.standout_ms();
    if s.is_finite() {
        format!("{:.0}%", 100.0 * s)
    } else {
        "–".into()
    }
}

/// The report.md section: for each dissected batch size, whether the whole step stands out of
/// its neighbours, the parts responsible with their share, and every part's table.
pub(super) fn section(anatomies: &[Anatomy]) -> String {
    if anatomies.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n## Anatomy of the step\n\n");
    md.push_str("Each step taken apart (every stage's forward and backward timed on its own input, the device synchronised around each, then the optimizer update) at b - 1, b and b + 1, in shuffled rounds of their own (`stages.csv`). A change is median(b) - median(neighbour) with a 95% bootstrap interval; a part **exceeds its noise** when its changes against both neighbours exclude zero on the same side, as a jump (or dip) at b alone would. A part's share is its change over the whole step's (the smaller of the two changes in size, each).\n");
    for a in anatomies {
        let b = a.centre;
        let step = &a.step;
        let _ = write!(
            md,
            "\n### Batch size {b}\n\nWhole step: {} ms at {}, {} at {b}, {} at {} (change {} ms against {}, {} against {}). ",
            ms(step.medians[0]), b - 1, ms(step.medians[1]), ms(step.medians[2]), b + 1,
            interval(&step.below), b - 1, interval(&step.above), b + 1
        );
        if step.exceeds_noise() {
            let _ = write!(
                md,
                "**Batch {b} stands out of both neighbours** ({:+.1}% of the step at {b}).",
                100.0 * step.standout_ms() / step.medians[1]
            );
        } else {
            md.push_str(
                "The step at b does not stand out of both neighbours here: no jump at b alone.",
            );
        }
        // What this dissection could see: a change inside the step's intervals passes unseen.
        let width = [step.below, step.above]
            .iter()
            .map(|c| (c.high - c.low) / 2.0)
            .fold(0.0, f64::max);
        let _ = writeln!(
            md,
            " At this noise a change of the step smaller than about ±{} ms ({:.1}% of it) could not be told from none.\n",
            ms(width),
            100.0 * width / step.medians[1]
        );
        let responsible = a.responsible();
        if responsible.is_empty() {
            md.push_str("No part's change exceeds its noise on both sides.\n");
        } else {
            md.push_str("Parts whose change exceeds their noise, largest first: ");
            let named: Vec<String> = responsible
                .iter()
                .map(|p| {
                    format!(
                        "**{}** {} ms against {}, {} against {} ({} of the step's change)",
                        part_name(p),
                        interval(&p.below),
                        b - 1,
                        interval(&p.above),
                        b + 1,
                        share(p, step)
                    )
                })
                .collect();
            let _ = writeln!(md, "{}.", named.join("; "));
        }
        let parts_sum: [f64; 3] =
            std::array::from_fn(|k| a.parts.iter().map(|p| p.medians[k]).sum());
        let _ = writeln!(
            md,
            "\nThe parts' medians add up to {:.2}x, {:.2}x and {:.2}x the whole step at {}, {b} and {} (each part is timed apart, with its own synchronisation and without overlapping its neighbours: the distance from 1.00x is what taking the step apart costs or saves).\n",
            parts_sum[0] / step.medians[0], parts_sum[1] / step.medians[1], parts_sum[2] / step.medians[2], b - 1, b + 1
        );
        let rows: Vec<Vec<String>> = a
            .parts
            .iter()
            .chain(std::iter::once(step))
            .enumerate()
            .map(|(k, p)| {
                vec![
                    (k + 1).to_string(),
                    part_name(p),
                    ms(p.medians[0]),
                    ms(p.medians[1]),
                    ms(p.medians[2]),
                    interval(&p.below),
                    interval(&p.above),
                    if p.exceeds_noise() { "yes" } else { "no" }.into(),
                ]
            })
            .collect();
        md.push_str(&table(
            &[
                "#",
                "part",
                &format!("{} (ms)", b - 1),
                &format!("{b} (ms)"),
                &format!("{} (ms)", b + 1),
                &format!("change vs {} (ms, 95%)", b - 1),
                &format!("change vs {} (ms, 95%)", b + 1),
                "exceeds noise",
            ],
            &rows,
        ));
    }
    md.push_str("\n![Per-part time and change around each dissected batch size](anatomy.svg)\n");
    md
}

/// The x ticks of a dissection: the parts numbered as in the report's table (names would
/// overprint: a VGG has over forty parts), then the whole step.
fn ticks(a: &Anatomy) -> Vec<(f64, String)> {
    let n = a.parts.len();
    (1..=n)
        .map(|k| (k as f64, k.to_string()))
        .chain(std::iter::once(((n + 1) as f64, "step".to_string())))
        .collect()
}

/// Left: each part's median time at b - 1, b, b + 1 (the whole step last). Right: the change at b against each neighbour with its interval; the parts
/// that exceed their noise marked.
fn charts(a: &Anatomy, title: &str) -> [Chart; 2] {
    let b = a.centre;
    let parts: Vec<&Part> = a.parts.iter().chain(std::iter::once(&a.step)).collect();
    let x_label = "part of the step (numbered as in report.md's table)";
    let mut times = Chart::new(
        format!("{title}: time per part around {b}"),
        x_label,
        "median time (ms)",
    );
    times.y_includes_zero = true;
    let mut changes = Chart::new(
        format!("{title}: change at {b} per part"),
        x_label,
        "change of the median (ms), bars: 95% interval",
    );
    for chart in [&mut times, &mut changes] {
        chart.x_ticks = ticks(a);
        chart.x_range = Some((0.5, parts.len() as f64 + 0.5));
        chart.size = (1000, 520);
        chart.legend = LegendPosition::Auto;
    }
    // The marks of the parts that exceed their noise run the full height, so no corner above
    // the parts may be free: an empty strip on the right (about 30% of the width) holds the
    // legend.
    changes.x_range = Some((0.5, 1.45 * parts.len() as f64 + 0.5));
    for (k, size) in [b - 1, b, b + 1].into_iter().enumerate() {
        let offset = 0.2 * (k as f64 - 1.0);
        let points = parts
            .iter()
            .enumerate()
            .map(|(i, p)| ((i + 1) as f64 + offset, p.medians[k]))
            .collect();
        times.series.push(
            Series::new(format!("batch {size}"), points, PALETTE[k]).with_line(LineStyle::None),
        );
    }
    for (k, (neighbour, pick)) in [
        (b - 1, (|p: &Part| p.below) as fn(&Part) -> Change),
        (b + 1, |p: &Part| p.above),
    ]
    .into_iter()
    .enumerate()
    {
        let offset = if k == 0 { -0.12 } else { 0.12 };
        let points = parts
            .iter()
            .enumerate()
            .map(|(i, p)| ((i + 1) as f64 + offset, pick(p).ms))
            .collect();
        let bars = parts.iter().map(|p| (pick(p).low, pick(p).high)).collect();
        changes.series.push(
            Series::new(format!("{b} against {neighbour}"), points, PALETTE[k * 2])
                .with_line(LineStyle::None)
                .with_error_bars(bars),
        );
    }
    changes.series.push(
        Series::new(
            "no change",
            vec![(0.5, 0.0), (parts.len() as f64 + 0.5, 0.0)],
            GREY,
        )
        .with_line(LineStyle::Dashed)
        .with_markers(false),
    );
    for (i, p) in parts.iter().enumerate() {
        if p.exceeds_noise() {
            // Named where it matters: the axis can only number the parts (a VGG has over
            // forty), the parts that stand out carry their name.
            changes.vlines.push(VLine {
                x: (i + 1) as f64,
                text: part_name(p),
                legend: "exceeds its noise on both sides".into(),
                color: PALETTE[3],
                dashed: true,
            });
        }
    }
    [times, changes]
}

/// `anatomy.svg`: a row of two charts per dissected batch size.
pub(super) fn draw(dir: &Path, title: &str, anatomies: &[Anatomy]) -> Result<(), ReportError> {
    if anatomies.is_empty() {
        return Ok(());
    }
    let rows: Vec<Vec<Chart>> = anatomies
        .iter()
        .map(|a| charts(a, title).to_vec())
        .collect();
    render_grid_pair(&rows, dir, "anatomy").map(|_| ())
}
