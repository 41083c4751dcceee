//! `report.md` of a steps-to-target study: what was run, how steps to result is measured,
//! the summary table, the findings per workload, the figures, and what is missing.

use std::fmt::Write as _;

use crate::numbers::sig;
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::figures::search::COLUMNS;
use crate::steps_to_target::scaling::{INTERVAL_WORDS, LEVEL_WORDS};
use crate::steps_to_target::TargetContext;
use crate::verdict::{tally, verdict_table, Finding};
use reading::{in_short, recorded_line, workload_sentences};
use study::study_sentences;

mod coverage;
pub(super) mod noise;
pub(super) mod reading;
mod study;
mod time;
use crate::about::Header;
use crate::markdown::table;
use batchlab_method::reaching::TARGET_SLACK;

pub(crate) fn report_markdown(ctx: &TargetContext, study: &Study, verdicts: &[Finding]) -> String {
    let mut md = ctx.about.header(&Header {
        subject: "steps to a target error versus batch size",
        verdicts: tally(verdicts),
        in_short: &in_short(study),
    });

    md.push_str("## What was run\n\n");
    md.push_str(&run_table(ctx, study));
    if !study.notes.is_empty() {
        md.push_str("\n## Missing and partial data\n\n");
        for note in &study.notes {
            let _ = writeln!(md, "- {note}");
        }
    }

    md.push_str("\n## How steps to result is measured\n\n");
    md.push_str(&definition(ctx));

    md.push_str("\n## Steps to result\n\n");
    md.push_str(&cell_table(study));

    md.push_str("\n## Findings\n");
    for w in &study.workloads {
        let _ = writeln!(md, "\n### {}\n", w.label);
        for sentence in workload_sentences(ctx, w) {
            let _ = writeln!(md, "- {sentence}");
        }
    }
    md.push_str("\n### All workloads\n\n");
    for sentence in study_sentences(ctx, study) {
        let _ = writeln!(md, "- {sentence}");
    }

    if let Some(c) = &study.coverage {
        md.push_str(&coverage::coverage_section(c));
    }

    if !verdicts.is_empty() {
        md.push_str("\n## Claims\n\n");
        md.push_str(&verdict_table(verdicts));
    }

    md.push_str("\n## Figures\n\n");
    md.push_str(&figures(study));
    md.push_str(&files(study));
    md
}

fn run_table(ctx: &TargetContext, study: &Study) -> String {
    let what = vec![["data".into(), ctx.dataset.join("; ")]];
    let mut rows: Vec<[String; 2]> = vec![];
    rows.push([
        "target".into(),
        format!(
            "validation error (1 - validation accuracy) <= {}, {}",
            sig(ctx.target_error),
            ctx.budget.describe()
        ),
    ]);
    let spaces: Vec<String> = ctx
        .search_spaces
        .iter()
        .map(|(label, space)| space.words(label))
        .collect();
    rows.push(["search space".into(), spaces.join("; ")]);
    rows.push([
        "trials per batch size".into(),
        format!("best of N, N = {} per workload", ctx.trials_text()),
    ]);
    let workloads: Vec<&str> = study.workloads.iter().map(|w| w.label.as_str()).collect();
    let batches: Vec<String> = study.batch_sizes.iter().map(u32::to_string).collect();
    rows.push([
        "workloads (as recorded)".into(),
        if workloads.is_empty() {
            "none".into()
        } else {
            workloads.join(", ")
        },
    ]);
    rows.push([
        "batch sizes (as recorded)".into(),
        if batches.is_empty() {
            "none".into()
        } else {
            batches.join(", ")
        },
    ]);
    rows.push(["trials".into(), recorded_line(study)]);
    ctx.about.run_table(what, rows)
}

fn definition(ctx: &TargetContext) -> String {
    format!(
        "- **Steps to result** at a batch size is the earliest evaluation step at which any of its trials had a validation error (1 - validation accuracy) at or below the target {target} (within {TARGET_SLACK:e} of it, far below one validation example, so that 1 - accuracy's rounding cannot hide a trial sitting exactly on the target). A trial stops once it gets there.\n\
         - **Evaluation granularity.** Error is {evaluations} (and once more at the end of the budget), so steps to result are rounded up to the next evaluation step: the true first step lies after the evaluation before S.\n\
         - **Diverged trials are infeasible**: they never count as reaching the target, even if an evaluation before the divergence had reached it (a setting on the edge of stability is not one a practitioner could use).\n\
         - **Failed trials** (`error`, `oom`) are set aside, counted but neither reached nor missed; so are `ok` trials without evaluations (`unevaluated`).\n\
         - **Intervals.** Steps to result comes with a {interval}. Slopes and B_crit are fitted to curves drawn from these laws, one draw per batch size; a value the data bound only from below (no trial seen beyond it) enters as a bound, never a number.\n\
         - **The best trial** of a batch size is the one with the fewest steps to result (ties: the first in `trials.csv`); its metaparameters come from `search.csv`.\n\
         - **The fit** S(B) = S_min (1 + B_crit / B) (McCandlish et al. 2018) is least squares on log S over the batch sizes with a result, with 95% residual-bootstrap intervals; B_crit is the batch size needing twice the fewest steps.\n",
        target = sig(ctx.target_error),
        evaluations = ctx.budget.evaluations_text(),
        interval = INTERVAL_WORDS,
    )
}

/// The bootstrap interval of a cell's steps to result, "a–b"; "a–(> C)" when more than the
/// tail of replicates lay beyond the last step C any of its trials was seen at (the data
/// bound the top only from below); "–" for a cell without evaluated trials.
fn steps_interval(study: &Study, workload: &str, batch_size: u32) -> String {
    let Some(w) = study.workloads.iter().find(|w| w.label == workload) else {
        return "–".into();
    };
    let intervals = &w.intervals;
    let Some(k) = intervals
        .batch_sizes
        .iter()
        .position(|&b| b == f64::from(batch_size))
    else {
        return "–".into();
    };
    let (lo, hi) = intervals.intervals[k];
    let support = intervals.support[k];
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) => format!("{lo:.0}–{hi:.0}"),
        // The data bound the top only from below: more than the last step a trial was seen at.
        (true, false) => format!("{lo:.0}–(> {support:.0})"),
        _ => format!("> {support:.0}"),
    }
}

fn cell_table(study: &Study) -> String {
    let with_unevaluated = study.counts.unevaluated > 0;
    let opt = |v: Option<f64>| v.map_or_else(|| "–".to_string(), sig);
    let rows: Vec<Vec<String>> = study
        .cells()
        .map(|c| {
            let mut row = vec![
                c.workload.clone(),
                c.batch_size.to_string(),
                c.trials.to_string(),
                c.reached.to_string(),
                c.missed.to_string(),
                c.infeasible.to_string(),
                c.failed.to_string(),
            ];
            if with_unevaluated {
                row.push(c.unevaluated.to_string());
            }
            row.extend([
                c.steps_to_result
                    .map_or_else(|| "none".to_string(), |s| s.to_string()),
                steps_interval(study, &c.workload, c.batch_size),
                c.best_trial.clone().unwrap_or_else(|| "–".into()),
                opt(c.learning_rate),
                opt(c.momentum),
                opt(c.effective_learning_rate),
            ]);
            row
        })
        .collect();
    let interval_header = format!("interval ({LEVEL_WORDS})");
    let mut headers = vec![
        "workload", "batch", "trials", "reached", "missed", "diverged", "failed",
    ];
    if with_unevaluated {
        headers.push("not evaluated");
    }
    headers.extend([
        "steps to result",
        &interval_header,
        "best trial",
        "learning rate",
        "momentum",
        "lr / (1 - momentum)",
    ]);
    if rows.is_empty() {
        return "No trial recorded yet.\n".into();
    }
    table(&headers, &rows)
}

fn figures(study: &Study) -> String {
    let mut md = String::new();
    md.push_str("![Steps to result versus batch size](steps_to_result.svg)\n\nSteps to result against batch size on log2-log2 axes, one line per workload. Dashed: perfect scaling (steps halve when the batch size doubles) through each workload's smallest batch size; thin: the fitted S(B) = S_min (1 + B_crit / B), where it is fitted (from at least 5 batch sizes). Dashed vertical lines mark batch sizes where no trial of a workload reached the target.\n\n");
    md.push_str(&"![Regimes per workload](regimes.svg)\n\nOne log-log panel per workload, as Shallue et al.'s Figure 1: steps to result with its interval as error bars (where another search would find its best; {LEVEL_WORDS}) (an interval the data bound only from below ends at the last step its trials were seen at, marked by a triangle: the top is \"more than that\"; a triangle alone marks a batch size where no trial reached the target), the perfect-scaling line through the smallest batch size (dashed), the fitted S(B) (dotted), and the regimes shaded where the interval rule puts them: green perfect scaling, yellow diminishing returns, red maximal data parallelism.\n\n".replace("{LEVEL_WORDS}", LEVEL_WORDS));
    md.push_str("![Best learning rate versus batch size](best_learning_rate.svg)\n\nThe best trial's learning rate at each batch size with a result (log-log)");
    if study.workloads.iter().any(|w| w.momentum) {
        md.push_str(", and on the right its effective learning rate lr / (1 - momentum) (the same as the learning rate for plain SGD)");
    }
    md.push_str(". Dashed: linear scaling (rate proportional to B); dotted: square-root scaling, both through each workload's smallest batch size. Bars on the effective rates: each batch size's near-best region, the effective learning rates of the trials that reached the target within the upper end of its steps-to-result interval (the settings another search could have found best).\n\n");
    let _ = writeln!(
        md,
        "![Search space per batch size](search_space.svg)\n\nEvery trial of the search: one panel per (workload, batch size), a new row for each workload, at most {COLUMNS} panels to a row; the panels of a workload share their axes. Momentum workloads: learning rate against 1 - momentum. Plain SGD: learning rate against the steps at which the trial reached the target or stopped (grey dashed line: the step budget). Green discs reached the target, orange triangles missed it, vermillion crosses diverged, small grey discs failed or were not evaluated; the black star is the best trial. Trials without a `search.csv` row are not drawn.\n"
    );
    if study.has_step_times() {
        md.push_str("![Time to result versus batch size](time_to_result.svg)\n\nTime to result = steps to result x median step time on this device, with the step-time spread propagated as bars; a dashed vertical line marks each workload's soonest batch size.\n");
    }
    md
}

fn files(study: &Study) -> String {
    let mut md = String::from("\n## Files\n\n- `results.csv`: every validation evaluation of every trial (raw; `variant` is the model).\n- `trials.csv`: one row per finished or failed trial.\n- `search.csv`: each trial's learning rate, momentum and effective learning rate.\n- `summary.csv`: the table above, one row per (workload, batch size); empty fields are unknown.\n- `steps_to_result.svg`, `regimes.svg`, `best_learning_rate.svg`, `search_space.svg`");
    if study.has_step_times() {
        md.push_str(", `time_to_result.svg`");
    }
    md.push_str(": the figures.\n\n");
    md.push_str(&crate::markdown::storage_note());
    md
}
