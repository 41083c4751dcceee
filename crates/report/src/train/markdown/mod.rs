//! `report.md` of a training study: what was run, the source's numbers beside the measured
//! ones, the reading of the result, the figures, the full table, and what is missing.

pub(super) mod headlines;
mod published;
pub(super) mod reading;
pub(super) mod timing;

use std::fmt::Write as _;

use crate::about::Header;
use crate::markdown::table;
use crate::numbers::{capitalised, fixed, pct};
use crate::train::analysis::Analysis;
use crate::train::TrainContext;
use crate::verdict::{tally, verdict_table, Finding};

/// Missing trials listed one by one up to this many; the rest are counted.
const LIST_AT_MOST: usize = 30;

/// The claims judged (see `train::claims`), for the report's verdict section.
pub(in crate::train) struct Judged {
    /// One verdict per claim of the config.
    pub verdicts: Vec<Finding>,
    /// Raschka's relative tables (markdown), empty when no claim asks for one.
    pub relative_tables: String,
    /// Each cell's training time against the step-time prediction.
    pub predictions: Vec<crate::predict::check::PredictionCheck>,
}

pub(super) fn report_markdown(ctx: &TrainContext, analysis: &Analysis, judged: &Judged) -> String {
    let mut md = ctx.about.header(&Header {
        subject: "accuracy and training time versus batch size",
        verdicts: tally(&judged.verdicts),
        in_short: &in_short(analysis),
    });

    md.push_str("## What was run\n\n");
    md.push_str(&run_table(ctx, analysis));
    md.push_str(&missing_section(analysis));

    md.push_str("\n## The published shape beside the measured one\n\n");
    md.push_str(&published::published_section(ctx, analysis));

    md.push_str("\n## Reading the result\n\n");
    for sentence in reading_sentences(ctx, analysis) {
        let _ = writeln!(md, "- {sentence}");
    }

    if !judged.verdicts.is_empty() {
        md.push_str("\n## The claims, judged\n\nEach claim's verdict follows from the data by the rule in its last column.\n\n");
        md.push_str(&verdict_table(&judged.verdicts));
        md.push_str(&judged.relative_tables);
    }

    md.push_str(&crate::predict::check::section(
        &ctx.prediction,
        &judged.predictions,
    ));

    md.push_str("\n## Figures\n\n");
    md.push_str("![Test accuracy versus batch size](accuracy_vs_batch.svg)\n\nLine: mean over the ok seeds; bars: their min to max; small dots: single seeds; one panel per budget on a shared axis. Lines are shifted sideways a little so that they do not hide each other.\n\n");
    md.push_str("![Validation accuracy during training](learning_curves.svg)\n\nMean over seeds at each evaluation, against optimizer steps (left) and training examples seen (right).\n\n");
    md.push_str("![Training time versus batch size](train_time.svg)\n\nMedian over the ok seeds, bars min to max; evaluations are not included.\n");

    md.push_str("\n## Per cell\n\n");
    md.push_str(&cell_table(analysis));

    md.push_str("\n## Files\n\n- `results.csv`: every validation evaluation of every trial (raw).\n- `trials.csv`: one row per finished or failed trial, with its test accuracy and times.\n- `summary.csv`: the per-cell table above (accuracies as fractions, times in seconds, data share in %).\n- `accuracy_vs_batch.svg`, `learning_curves.svg`, `train_time.svg`: the figures.\n\n");
    md.push_str(&crate::markdown::storage_note());
    md
}

fn in_short(analysis: &Analysis) -> String {
    let mut parts = vec![headlines::recorded_line(analysis)];
    for best in analysis.best() {
        parts.push(format!(
            "best mean test accuracy under the {} budget {} at batch {} ({})",
            best.budget,
            pct(best.test_accuracy_mean),
            best.batch_size,
            best.series(analysis.with_variant)
        ));
    }
    format!("{}.", capitalised(&parts.join("; ")))
}

fn list<T: ToString>(values: &[T]) -> String {
    let v: Vec<String> = values.iter().map(ToString::to_string).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn run_table(ctx: &TrainContext, analysis: &Analysis) -> String {
    let what = vec![
        ["model".into(), ctx.model.clone()],
        ["data".into(), ctx.dataset.join("; ")],
    ];
    let mut rows: Vec<[String; 2]> = vec![];
    let optimizers: Vec<&str> = {
        let mut o: Vec<&str> = analysis
            .series
            .iter()
            .map(|s| s.optimizer.as_str())
            .collect();
        o.dedup();
        o
    };
    let mut variants: Vec<&str> = analysis.series.iter().map(|s| s.variant.as_str()).collect();
    variants.sort_unstable();
    variants.dedup();
    rows.push([
        "grid (as recorded)".into(),
        format!(
            "batch sizes {}; optimizers {}; variants {}; budgets {}; seeds {}",
            list(&analysis.batch_sizes),
            list(&optimizers),
            list(&variants),
            list(&analysis.budgets),
            list(&analysis.seeds)
        ),
    ]);
    rows.push(["trials".into(), headlines::recorded_line(analysis)]);
    rows.push([
        "test split".into(),
        if ctx.test_examples > 0 {
            format!(
                "{} examples (one example = {} accuracy points)",
                ctx.test_examples,
                fixed(100.0 / ctx.test_examples as f64, 3)
            )
        } else {
            "size not recorded".into()
        },
    ]);
    ctx.about.run_table(what, rows)
}

fn missing_section(analysis: &Analysis) -> String {
    let failed: Vec<_> = analysis.records.iter().filter(|r| !r.is_ok()).collect();
    if analysis.missing.is_empty() && failed.is_empty() {
        return "\nEvery trial of the grid is recorded and none failed.\n".into();
    }
    let mut md = String::from("\n## Missing and failed trials\n");
    if !analysis.missing.is_empty() {
        let _ = writeln!(
            md,
            "\n**Partial results: {} trial(s) missing.** The grid implied by the values recorded has {} trials; these have no row in `trials.csv` ({} of them started: evaluations recorded, no final record, i.e. interrupted or still running). Everything in this report covers the recorded trials only; `--resume` runs the rest.\n",
            analysis.missing.len(),
            analysis.records.len() + analysis.missing.len(),
            analysis.unfinished
        );
        for line in analysis.missing.iter().take(LIST_AT_MOST) {
            let _ = writeln!(md, "- {line}");
        }
        if analysis.missing.len() > LIST_AT_MOST {
            let _ = writeln!(md, "- … and {} more", analysis.missing.len() - LIST_AT_MOST);
        }
    }
    if !failed.is_empty() {
        let _ = writeln!(
            md,
            "\n{} trial(s) failed: counted in the cells' trials, excluded from every statistic.\n",
            failed.len()
        );
        let rows: Vec<Vec<String>> = failed
            .iter()
            .map(|r| {
                let short: String = r.message.chars().take(200).collect();
                let ellipsis = if r.message.chars().count() > 200 {
                    "…"
                } else {
                    ""
                };
                vec![
                    r.trial.clone(),
                    r.status.to_string(),
                    format!("{short}{ellipsis}"),
                ]
            })
            .collect();
        md.push_str(&table(&["trial", "status", "message"], &rows));
    }
    md
}

fn reading_sentences(ctx: &TrainContext, analysis: &Analysis) -> Vec<String> {
    if analysis.cells.is_empty() {
        return vec!["No trial has finished yet: nothing to read.".into()];
    }
    let mut out = vec![];
    out.extend(reading::steps_sentence(analysis));
    out.extend(reading::trend_sentences(analysis));
    out.extend(reading::spread_sentence(analysis));
    out.push(reading::resolution_sentence(ctx, analysis));
    out.extend(timing::time_sentence(analysis));
    out.extend(timing::powers_of_two_sentence(analysis));
    out.push(timing::data_sentence(analysis));
    if !analysis.missing.is_empty() {
        out.push(format!(
            "{} trial(s) of the grid are missing (see above): cells with fewer seeds than the others are less certain.",
            analysis.missing.len()
        ));
    }
    out
}

fn cell_table(analysis: &Analysis) -> String {
    let rows: Vec<Vec<String>> = analysis
        .cells
        .iter()
        .map(|c| {
            vec![
                c.budget.to_string(),
                c.batch_size.to_string(),
                c.series(analysis.with_variant),
                format!("{} / {}", c.ok, c.trials),
                format!(
                    "{} ± {}",
                    pct(c.test_accuracy_mean),
                    fixed(100.0 * c.test_accuracy_std, 1)
                ),
                format!(
                    "{} – {}",
                    pct(c.test_accuracy_min),
                    pct(c.test_accuracy_max)
                ),
                fixed(c.steps_median, 0),
                fixed(c.train_seconds_median, 2),
                fixed(c.test_seconds_median, 2),
                fixed(c.data_share_median, 1),
                c.failures.clone(),
            ]
        })
        .collect();
    table(
        &[
            "budget",
            "batch",
            "series",
            "ok / trials",
            "test accuracy (mean ± sd)",
            "min – max",
            "steps",
            "train s (median)",
            "test s (median)",
            "data wait (% of train)",
            "failures",
        ],
        &rows,
    )
}
