//! `report.md` of a step-time sweep: what was run, the findings with the seed's claim
//! beside them, the figures, the full table and the method.

use batchlab_method::rows::Status;
use std::fmt::Write as _;

use super::analysis::{
    check_claim, is_claimed, Analysis, ClaimCheck, NegativeIntercept, NEAR_BEST,
};
use super::{StepTimeContext, CI_LEVEL};
use crate::about::Header;
use crate::jumps::{method_description, Gap, Jump};
use crate::markdown::table;
use crate::numbers::{capitalised, two_digits};
use crate::verdict::{tally, verdict_table, Finding};
use batchlab_method::rows::step_time::StepSample;

/// The sections a run's extra raw tables add (each empty without its table).
pub(super) struct Sections {
    /// The steps taken apart (`stages.csv`).
    pub anatomy: String,
    /// The warm-up of each visit (`warmup.csv`).
    pub warmup: String,
    /// The same go's PyTorch references (`pytorch*.csv`).
    pub references: String,
}

pub(super) fn report_markdown(
    ctx: &StepTimeContext,
    analysis: &Analysis,
    samples: &[StepSample],
    verdicts: &[Finding],
    sections: &Sections,
) -> String {
    let anatomy = sections.anatomy.as_str();
    let f = &analysis.findings;
    let ok: Vec<_> = f.ok_points().collect();
    let failed: Vec<_> = f.points.iter().filter(|p| !p.is_ok()).collect();
    let mut md = ctx.about.header(&Header {
        subject: "step time versus batch size",
        verdicts: tally(verdicts),
        in_short: &in_short(analysis),
    });

    md.push_str("## What was run\n\n");
    let timed = samples
        .iter()
        .filter(|s| s.status == Status::Ok && s.step_ms.is_some())
        .count();
    md.push_str(&ctx.about.run_table(
        vec![["model".into(), ctx.model.clone()]],
        vec![
            ["batch sizes".into(), format!("{} measured ({}), {} ok, {} failed", f.points.len(), ranges(&f.points.iter().map(|p| p.batch_size).collect::<Vec<_>>()), ok.len(), failed.len())],
            ["timed steps".into(), format!("{timed} kept in results.csv")],
            ["peak memory".into(), ctx.memory_kind.clone()],
            ["statistics".into(), format!("median per batch size; IQR = quartiles of the samples; CI = {:.0}% percentile bootstrap of the median ({} resamples, seed {})", 100.0 * CI_LEVEL, ctx.bootstrap_resamples, ctx.seed)],
        ],
    ));

    md.push_str("\n## Findings\n\n### Linear trend\n\n");
    match f.fit {
        Some(fit) => {
            let _ = writeln!(
                md,
                "Least-squares line through the medians of the {} ok batch sizes: step time = {} ms (SE {}) + {} ms (SE {}) per example, R² = {:.4}. The intercept is the fixed cost of a step; the slope, the cost of one more example. Jumps, if any, bias both: the line summarises the trend, it is not a model of the steps.",
                ok.len(), ms(fit.intercept), two_digits(fit.intercept_se), ms(fit.slope), two_digits(fit.slope_se), fit.r_squared
            );
            if let Some(why) = analysis.negative_intercept() {
                let why = match why {
                    NegativeIntercept::CostlierPerExample { first, last } => format!(
                        "a larger batch costs more per example on this device ({} ms per example at batch {} against {} ms at {}), so the step time grows faster than the batch size",
                        ms(last.1), last.0, ms(first.1), first.0
                    ),
                    NegativeIntercept::BendsUpwards => "the curve bends upwards over the larger sizes".to_string(),
                };
                let _ = writeln!(
                    md,
                    "\nThe intercept is negative: no step takes negative time, so the line is no cost model here: {why}, and the line, tilted by the largest sizes, meets the axis below zero. Read the medians per batch size instead."
                );
            }
        }
        None => md.push_str("Fewer than two ok batch sizes: no line fitted.\n"),
    }

    md.push_str("\n### Jumps\n\n");
    if f.jumps.is_empty() {
        let _ = writeln!(
            md,
            "No jump detected (method below). {} of the {} gaps between neighbouring ok batch sizes could be tested (a step needs {} measured sizes on each side){}.",
            analysis.gaps.len(),
            ok.len().saturating_sub(1),
            crate::jumps::JumpOptions::default().min_side.max(2),
            if analysis.gaps.len() < 10 {
                ": with so few, \"no jump\" says little"
            } else {
                ""
            }
        );
    } else {
        let _ = writeln!(md, "{} jump(s) detected; a jump at b lies between the previous measured batch size and b.\n", f.jumps.len());
        md.push_str(&jump_table(&f.jumps, &ctx.claimed_jumps, ctx.rules.gap));
    }

    md.push_str("\n### Throughput\n\n");
    match analysis.near_best() {
        Some((best, near)) => {
            let _ = writeln!(
                md,
                "Highest throughput at batch size **{}**: {:.1} examples/s ({} ms per example). Batch sizes within {:.0}% of it: {} ({} of {} ok batch sizes).",
                best.batch_size, best.examples_per_s, ms(best.ms_per_example), 100.0 * (1.0 - NEAR_BEST), ranges(&near), near.len(), ok.len()
            );
        }
        None => md.push_str("No ok batch size.\n"),
    }

    md.push_str(&claim_section(ctx, analysis, verdicts));
    md.push_str(&sections.references);
    md.push_str(&failure_section(analysis, samples));
    md.push_str(anatomy);
    md.push_str(&sections.warmup);

    md.push_str("\n## Figures\n\n");
    md.push_str("![Median step time versus batch size](step_time.svg)\n\n");
    md.push_str("![Throughput versus batch size](throughput.svg)\n");

    md.push_str("\n## Per batch size\n\n");
    let rows: Vec<Vec<String>> = f
        .points
        .iter()
        .map(|p| {
            vec![
                p.batch_size.to_string(),
                p.status.to_string(),
                p.samples.to_string(),
                ms(p.median_ms),
                format!("{} – {}", ms(p.q1_ms), ms(p.q3_ms)),
                format!("{} – {}", ms(p.ci_low_ms), ms(p.ci_high_ms)),
                ms(p.ms_per_example),
                if p.examples_per_s.is_finite() {
                    format!("{:.1}", p.examples_per_s)
                } else {
                    "–".into()
                },
                p.peak_mem_mb.map_or("–".into(), |m| format!("{m:.0}")),
            ]
        })
        .collect();
    let ci = format!("{:.0}% CI (ms)", 100.0 * CI_LEVEL);
    md.push_str(&table(
        &[
            "batch",
            "status",
            "n",
            "median (ms)",
            "IQR (ms)",
            &ci,
            "ms / example",
            "examples / s",
            "peak mem (MB)",
        ],
        &rows,
    ));

    md.push_str("\n## Method\n\n");
    md.push_str(method_description());
    md.push_str("\n\n## Files\n\n- `results.csv`: every timed step and every failed visit (raw).\n- `summary.csv`: the table above, the figures' data.\n- `step_time.svg`, `throughput.svg`: the figures.\n");
    if !anatomy.is_empty() {
        md.push_str("- `stages.csv`: every part of every dissected step (raw); `anatomy.svg`: its figure.\n");
    }
    if !sections.warmup.is_empty() {
        md.push_str("- `warmup.csv`: every visit's dropped warm-up steps (raw).\n");
    }
    if !sections.references.is_empty() {
        md.push_str("- `pytorch*.csv`: the PyTorch references' timed steps (raw, the columns of `results.csv`).\n");
    }
    md.push('\n');
    md.push_str(&crate::markdown::storage_note());
    md
}

pub(super) fn in_short(analysis: &Analysis) -> String {
    let f = &analysis.findings;
    let mut parts = vec![];
    if let Some(fit) = f.fit {
        parts.push(format!(
            "step time grows by {} ms per example from {} ms (R² {:.3})",
            ms(fit.slope),
            ms(fit.intercept),
            fit.r_squared
        ));
    }
    parts.push(match f.jumps.len() {
        0 => "no jump detected".to_string(),
        _ => format!(
            "jumps detected at {}",
            f.jumps
                .iter()
                .map(|j| j.batch_size.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
    if let Some(b) = f.best_batch_size {
        parts.push(format!("highest throughput at batch size {b}"));
    }
    let failed = f.points.iter().filter(|p| !p.is_ok()).count();
    if failed > 0 {
        parts.push(format!("{failed} batch size(s) failed"));
    }
    format!("{}.", capitalised(&parts.join("; ")))
}

fn jump_table(jumps: &[Jump], claimed: &[u32], gap: Gap) -> String {
    let rows: Vec<Vec<String>> = jumps
        .iter()
        .map(|j| {
            vec![
                j.batch_size.to_string(),
                format!("{} → {}", j.previous_batch_size, j.batch_size),
                format!("{:+.3}", j.height_ms),
                format!("{:+.1}%", 100.0 * j.relative),
                format!("{:.1}", j.z),
                if is_claimed(j, claimed, gap) {
                    "yes"
                } else {
                    "no"
                }
                .into(),
            ]
        })
        .collect();
    table(
        &[
            "batch size",
            "between",
            "height (ms)",
            "% of the step",
            "z",
            "claimed by the seed",
        ],
        &rows,
    )
}

fn claim_section(ctx: &StepTimeContext, analysis: &Analysis, verdicts: &[Finding]) -> String {
    if ctx.claimed_jumps.is_empty() && verdicts.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n### The seed's claim beside this measurement\n\n");
    let rows: Vec<Vec<String>> = ctx
        .claimed_jumps
        .iter()
        .map(|&c| {
            let (verdict, gap) = match check_claim(analysis, c, ctx.rules.gap) {
                ClaimCheck::Detected(j) => ("detected".to_string(), Some(j)),
                ClaimCheck::NotDetected(g) => ("not detected".to_string(), Some(g)),
                ClaimCheck::NotTested => (
                    "not tested (outside the ok batch sizes or at an end of the sweep)".to_string(),
                    None,
                ),
            };
            let measured = gap.map_or("–".into(), |g| {
                format!(
                    "{} → {}: {:+.3} ms ({:+.1}%), z {:.1}",
                    g.previous_batch_size,
                    g.batch_size,
                    g.height_ms,
                    100.0 * g.relative,
                    g.z
                )
            });
            vec![c.to_string(), verdict, measured]
        })
        .collect();
    if !rows.is_empty() {
        md.push_str(&table(
            &[
                "claimed jump at",
                "here",
                "measured step (the gap the position means)",
            ],
            &rows,
        ));
        let others: Vec<String> = analysis
            .findings
            .jumps
            .iter()
            .filter(|j| !is_claimed(j, &ctx.claimed_jumps, ctx.rules.gap))
            .map(|j| format!("{} ({:+.1}%)", j.batch_size, 100.0 * j.relative))
            .collect();
        let _ = writeln!(
            md,
            "\nJumps detected at batch sizes the seed does not name: {}.",
            if others.is_empty() {
                "none".into()
            } else {
                others.join(", ")
            }
        );
    }
    if !verdicts.is_empty() {
        md.push_str("\n#### Verdicts\n\n");
        md.push_str(&verdict_table(verdicts));
    }
    md
}

fn failure_section(analysis: &Analysis, samples: &[StepSample]) -> String {
    let failed: Vec<_> = analysis
        .findings
        .points
        .iter()
        .filter(|p| !p.is_ok())
        .collect();
    if failed.is_empty() {
        return String::from("\n### Failed batch sizes\n\nNone.\n");
    }
    let rows: Vec<Vec<String>> = failed
        .iter()
        .map(|p| {
            let rows: Vec<&StepSample> = samples
                .iter()
                .filter(|s| s.batch_size == p.batch_size && s.status != Status::Ok)
                .collect();
            let message = rows.first().map_or("", |s| s.message.as_str());
            let short: String = message.chars().take(200).collect();
            let ellipsis = if message.chars().count() > 200 {
                "…"
            } else {
                ""
            };
            vec![
                p.batch_size.to_string(),
                p.status.to_string(),
                rows.len().to_string(),
                format!("{short}{ellipsis}"),
            ]
        })
        .collect();
    let mut md = String::from("\n### Failed batch sizes\n\nExcluded from the fit, the jumps and the throughput optimum.\n\n");
    md.push_str(&table(
        &[
            "batch size",
            "status",
            "failed visits",
            "first error message",
        ],
        &rows,
    ));
    md
}

/// A time in ms with about four significant digits; "–" when not measured.
pub(super) fn ms(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        4
    };
    format!("{v:.decimals$}")
}

/// Sorted batch sizes as compact runs: `1–8, 12, 16–20`. A run is consecutive integers.
fn ranges(values: &[u32]) -> String {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}–{}", sorted[i], sorted[j])
        } else {
            sorted[i].to_string()
        });
        i = j + 1;
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_compact() {
        assert_eq!(ranges(&[4, 1, 2, 3, 8, 10, 11]), "1–4, 8, 10–11");
        assert_eq!(ranges(&[]), "none");
    }

    #[test]
    fn times_keep_four_significant_digits() {
        assert_eq!(ms(1234.56), "1235");
        assert_eq!(ms(123.456), "123.5");
        assert_eq!(ms(1.23456), "1.235");
        assert_eq!(ms(0.012345), "0.0123");
        assert_eq!(ms(f64::NAN), "–");
        assert_eq!(two_digits(0.5913), "0.59");
        assert_eq!(two_digits(0.01472), "0.015");
        assert_eq!(two_digits(12.34), "12");
        assert_eq!(two_digits(f64::NAN), "–");
    }
}
