//! The source's numbers beside this run's, compared by shape only: each published number
//! relative to the source's own number at a reference batch size (the smallest it published
//! for that line and metric), beside the same change measured here. Absolute levels belong to
//! the source's device, data and precision, so they are shown but never compared.

use std::collections::BTreeMap;

use crate::markdown::table;
use crate::numbers::fixed;
use crate::train::analysis::{matches, Analysis};
use crate::train::{Metric, Published, TrainCell, TrainContext};
use batchlab_method::rows::train::Budget;

pub(super) fn published_section(ctx: &TrainContext, analysis: &Analysis) -> String {
    if ctx.published.is_empty() {
        return "No published numbers are given for this study.\n".into();
    }
    let budget = analysis.seed_budget().unwrap_or(Budget::Epochs);
    let mut groups: BTreeMap<(&str, &str), Vec<&Published>> = BTreeMap::new();
    for p in &ctx.published {
        groups
            .entry((p.series.as_str(), p.metric.name()))
            .or_default()
            .push(p);
    }
    let mut rows = vec![];
    let mut alone = vec![];
    for ((series, metric), mut points) in groups {
        points.sort_by_key(|p| p.batch_size);
        let reference = points[0];
        if points.len() == 1 {
            alone.push(format!(
                "{series} {metric} {} at batch {} ({})",
                value(reference.value, reference.metric),
                reference.batch_size,
                reference.source
            ));
            continue;
        }
        for p in &points[1..] {
            rows.extend(compared_rows(analysis, budget, reference, p));
        }
    }
    let mut md = format!(
        "The source's numbers come from another device and, for the CPU studies, other data: only their shape is compared. Each published number is set relative to the source's number at the smallest batch size it published for that line (the reference), beside the same change measured here in the {budget} budget: a difference in points for accuracy, a ratio for times.\n\n"
    );
    if rows.is_empty() {
        md.push_str("No line has two published numbers: there is no published shape to compare.\n");
    } else {
        md.push_str(&table(
            &[
                "series",
                "metric",
                "batch",
                "reference batch",
                "published (at reference)",
                "published change",
                "measured change",
                "measured cells",
                "source",
            ],
            &rows,
        ));
    }
    if !alone.is_empty() {
        md.push_str(&format!(
            "\nPublished alone (no second number of that line to compare a change with; their level is the source's): {}.\n",
            alone.join("; ")
        ));
    }
    md
}

/// One row per measured line the published series names: the published and measured change
/// from `reference` to `p`.
fn compared_rows(
    analysis: &Analysis,
    budget: Budget,
    reference: &Published,
    p: &Published,
) -> Vec<Vec<String>> {
    let head = |measured: String, cells: String| {
        vec![
            p.series.clone(),
            p.metric.name().to_string(),
            p.batch_size.to_string(),
            reference.batch_size.to_string(),
            format!(
                "{} ({})",
                value(p.value, p.metric),
                value(reference.value, p.metric)
            ),
            change(p.value, reference.value, p.metric),
            measured,
            cells,
            p.source.clone(),
        ]
    };
    let cell_of = |b: u32, optimizer: &str, variant: &str| {
        analysis.cells.iter().find(|c| {
            c.budget == budget
                && c.batch_size == b
                && c.optimizer == optimizer
                && c.variant == variant
        })
    };
    let lines: Vec<_> = analysis
        .series
        .iter()
        .filter(|s| matches(&p.series, &s.optimizer, &s.variant))
        .collect();
    if lines.is_empty() {
        return vec![head("not measured in this run".into(), "–".into())];
    }
    lines
        .into_iter()
        .map(|s| {
            let label = analysis.label(&s.optimizer, &s.variant);
            match (
                cell_of(reference.batch_size, &s.optimizer, &s.variant),
                cell_of(p.batch_size, &s.optimizer, &s.variant),
            ) {
                (Some(r), Some(c)) => match (measured(r, p.metric), measured(c, p.metric)) {
                    (mr, mc) if mr.is_finite() && mc.is_finite() => head(
                        change(mc, mr, p.metric),
                        format!("{label}: {} → {}", value(mr, p.metric), value(mc, p.metric)),
                    ),
                    _ => head("no ok trial".into(), label),
                },
                _ => head(
                    format!(
                        "not measured (batch {} or {} was not run)",
                        reference.batch_size, p.batch_size
                    ),
                    label,
                ),
            }
        })
        .collect()
}

/// The measured value of `metric` in a cell, in the published unit.
fn measured(cell: &TrainCell, metric: Metric) -> f64 {
    match metric {
        Metric::TestAccuracy => 100.0 * cell.test_accuracy_mean,
        Metric::TrainMinutes => cell.train_seconds_median / 60.0,
        Metric::InferenceMinutes => cell.test_seconds_median / 60.0,
    }
}

/// A value with the metric's unit.
fn value(v: f64, metric: Metric) -> String {
    match metric {
        Metric::TestAccuracy => format!("{}%", fixed(v, 2)),
        Metric::TrainMinutes | Metric::InferenceMinutes => format!("{} min", fixed(v, 2)),
    }
}

/// The change from `reference` to `v`: points for accuracy, a ratio for times.
fn change(v: f64, reference: f64, metric: Metric) -> String {
    if metric == Metric::TestAccuracy {
        format!("{:+.2} points", v - reference)
    } else {
        format!("{:.2}x", v / reference)
    }
}
