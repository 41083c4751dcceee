//! Raschka's table form (seed 002): each batch size's steps, time and accuracy relative to a
//! reference batch size, beside the published ratios.

use super::line_cells;
use crate::markdown::table;
use crate::train::analysis::{matches, Analysis};
use crate::train::{ClaimRule, Metric, TrainContext};

/// Raschka's table form for every [`ClaimRule::TimeFollowsSteps`] claim: per batch size, the
/// steps, median training time and mean test accuracy relative to the reference batch size,
/// beside the published training-time ratio where the config gives published minutes.
pub(in crate::train) fn relative_tables(ctx: &TrainContext, analysis: &Analysis) -> String {
    let mut md = String::new();
    for claim in &ctx.claims {
        let ClaimRule::TimeFollowsSteps { reference, .. } = claim.rule else {
            continue;
        };
        let Ok(cells) = line_cells(&claim.series, claim.budget, analysis) else {
            continue;
        };
        let Some(&base) = cells.get(&reference) else {
            continue;
        };
        let published = |b: u32| {
            ctx.published.iter().find(|p| {
                p.batch_size == b
                    && p.metric == Metric::TrainMinutes
                    && matches(&p.series, &base.optimizer, &base.variant)
            })
        };
        let published_ratio = |b: u32| match (published(b), published(reference)) {
            (Some(p), Some(r)) => format!("{:.2}x", p.value / r.value),
            _ => "–".into(),
        };
        let rows: Vec<Vec<String>> = cells
            .values()
            .map(|c| {
                vec![
                    c.batch_size.to_string(),
                    format!("{:.2}x", c.steps_median / base.steps_median),
                    format!("{:.2}x", c.train_seconds_median / base.train_seconds_median),
                    published_ratio(c.batch_size),
                    format!(
                        "{:+.2}",
                        100.0 * (c.test_accuracy_mean - base.test_accuracy_mean)
                    ),
                ]
            })
            .collect();
        md.push_str(&format!(
            "\nRelative to batch {reference} ({} line, {} budget; Raschka's form):\n\n",
            claim.series, claim.budget
        ));
        md.push_str(&table(
            &[
                "batch",
                "steps per trial",
                "training time",
                "training time, published",
                "test accuracy (points)",
            ],
            &rows,
        ));
    }
    md
}
