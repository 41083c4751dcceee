//! `report.md` of a batch-size finder, and the verdicts on the seed's claims.

use super::analysis::Analysis;
use super::FindBatchContext;
use crate::about::Header;
use crate::markdown::table;
use crate::numbers::fixed;
use crate::verdict::{tally, verdict_table, Finding};

fn mib(v: f64) -> String {
    fixed(v, 0)
}

/// `± se`, or a note where the fit has no residual degrees of freedom.
fn plus_minus(se: f64, decimals: usize) -> String {
    if se.is_finite() {
        format!("± {se:.decimals$}")
    } else {
        "(no interval from two probes)".into()
    }
}

pub(super) fn report(ctx: &FindBatchContext, a: &Analysis, verdicts: &[Finding]) -> String {
    let in_short = in_short(ctx, a);
    let mut md = ctx.about.header(&Header {
        subject: "the largest batch size that fits, and the right one",
        verdicts: tally(verdicts),
        in_short: &in_short,
    });
    md.push_str("## What was run\n\n");
    md.push_str(&ctx.about.run_table(
        vec![["model".into(), ctx.model.clone()]],
        vec![[
            "budget".into(),
            format!(
                "{}, enforced by **{}** ({})",
                ctx.budget,
                a.limit,
                limit_words(&a.limit)
            ),
        ]],
    ));
    md.push('\n');
    md.push_str("## Memory, time and utilization per batch size\n\n![memory](memory.svg)\n\n![utilization and throughput](utilization.svg)\n\n");
    let rows: Vec<Vec<String>> = a
        .points
        .iter()
        .map(|p| {
            vec![
                p.batch_size.to_string(),
                if p.in_curve { "curve" } else { "search" }.into(),
                format!(
                    "{} ok{}",
                    p.ok,
                    if p.failed.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ", {}",
                            p.failed
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                ),
                mib(p.limited_peak_mb),
                mib(p.peak_rss_mb),
                fixed(p.step_ms, 1),
                fixed(p.examples_per_s, 1),
                if p.utilization.is_finite() {
                    format!("{:.0}%", 100.0 * p.utilization)
                } else {
                    "–".into()
                },
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "batch",
            "phase",
            "probes",
            "peak, limited (MiB)",
            "peak RSS (MiB)",
            "ms/step",
            "examples/s",
            "utilization",
        ],
        &rows,
    ));
    md.push_str("\n## The memory model\n\n");
    match a.model {
        Some(fit) => md.push_str(&format!(
            "Least squares over {} curve probes: memory = **{:.1} {} MiB + {:.3} {} MiB × batch** (± one standard error, R² {:.4}).\n\n- Fixed part: {:.1} MiB fitted against {:.1} MiB analytic ({}); the fitted part also holds the process itself (code, runtime, allocator).\n- Per example: {:.3} MiB fitted against {:.3} MiB analytic (the layer outputs a backward pass keeps, 4 bytes each: ratio {:.2}; the analytic count leaves out activation functions, pooling and the backend's temporaries).\n\n",
            a.model_points, fit.intercept, plus_minus(fit.intercept_se, 1), fit.slope, plus_minus(fit.slope_se, 3), fit.r_squared,
            fit.intercept, ctx.fixed_estimate_mb, ctx.fixed_estimate,
            fit.slope, ctx.activations_mb_per_example, fit.slope / ctx.activations_mb_per_example,
        )),
        None => md.push_str("No model: fewer than two curve batch sizes fitted the budget.\n\n"),
    }
    md.push_str("## The search\n\n![probes](probes.svg)\n\n");
    md.push_str(&format!("**{}.** ", a.end.sentence()));
    md.push_str(&prediction_sentence(a));
    md.push_str("\n\n");
    let probes: Vec<Vec<String>> = a
        .search_probes()
        .map(|p| {
            vec![
                (p.index + 1).to_string(),
                p.batch_size.to_string(),
                p.status.to_string(),
                mib(p.limited_peak_mb.unwrap_or(f64::NAN)),
                mib(p.peak_rss_mb.unwrap_or(f64::NAN)),
                if p.step_ms.is_empty() {
                    "–".into()
                } else {
                    format!("{:.1}", p.median_ms())
                },
                // Rows written before the worker trimmed it end in "(signal: 9 (SIGKILL)): ".
                p.message.trim_end_matches([':', ' ']).to_string(),
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "probe",
            "batch",
            "status",
            "peak, limited (MiB)",
            "peak RSS (MiB)",
            "ms/step",
            "message",
        ],
        &probes,
    ));
    md.push_str("\n## Recommendation\n\n");
    md.push_str(&recommendation(ctx, a));
    md.push_str("\n## Claims and verdicts\n\n");
    md.push_str(&verdict_table(verdicts));
    md.push_str("\nFiles: `probes.csv` (every timed step of every probe, and every failure), `summary.csv` (per batch size), `memory.svg`, `utilization.svg`, `probes.svg`.\n\n");
    md.push_str(&crate::markdown::storage_note());
    md
}

fn limit_words(limit: &str) -> &'static str {
    match limit {
        "cgroup-v2" | "cgroup-v1" => "a cgroup of each probe's own with a memory limit: it binds the memory the process uses, and the kernel's count of out-of-memory kills tells a limit kill from any other death",
        "rlimit-as" => "an address-space rlimit (`ulimit -v`): it binds virtual memory, which is more than the resident memory, so the limited peak is the peak virtual size; an allocation beyond it fails and the process aborts saying so",
        "device" => "the device's own memory: a probe ends when the allocator runs out",
        _ => "no limit was applied",
    }
}

fn prediction_sentence(a: &Analysis) -> String {
    match (a.predicted_max, a.end.largest()) {
        (Some((p, low, high)), Some(found)) => format!(
            "The memory model, fitted to the curve alone, predicted **{p}** (95% range {low} .. {}): {:+.1}% against the {found} found.{}",
            if high == u32::MAX { "unbounded".into() } else { high.to_string() },
            100.0 * (f64::from(p) - f64::from(found)) / f64::from(found),
            if (low..=high).contains(&found) {
                ""
            } else {
                " The found size lies outside the fit's range: that range covers the fit's noise only, and memory is not exactly linear in the batch size beyond the curve."
            }
        ),
        (Some((p, _, _)), None) => format!("The memory model predicted {p}; the search gives nothing to compare it with."),
        (None, _) => "The memory model makes no prediction (no model, or no budget on this backend).".into(),
    }
}

fn recommendation(ctx: &FindBatchContext, a: &Analysis) -> String {
    let mut text = String::new();
    match a.largest_with_headroom {
        Some(b) => text.push_str(&format!(
            "- **Largest batch size with {:.0}% headroom: {b}** (its memory leaves {:.0}% of the budget free).\n",
            100.0 * ctx.headroom,
            100.0 * ctx.headroom
        )),
        None => text.push_str("- No batch size fits with the headroom.\n"),
    }
    if let (Some(best), Some(fast)) = (a.best_throughput, a.fastest_smallest) {
        text.push_str(&format!(
            "- **Smallest batch size within {:.0}% of the best throughput: {fast}** (the best: {best}; ranked over the curve's batch sizes, whose repeated probes in shuffled order can rank speeds, unlike the search's single probes).\n",
            100.0 * ctx.throughput_tolerance
        ));
        if let Some(largest) = a.largest_with_headroom {
            text.push_str(&if fast < largest {
                format!("- They differ: beyond {fast} a larger batch buys no speed on this device, only fewer updates per epoch, which can cost accuracy (seed 003's point; see the accuracy studies, sgd-vs-adam and augmentation). Take {fast} unless the accuracy studies favour larger batches for this model.\n")
            } else {
                format!("- They agree: throughput still rises up to {largest}, the largest that fits; a larger batch is faster here, but check accuracy (sgd-vs-adam, augmentation) before taking it.\n")
            });
        }
    }
    text
}

fn in_short(ctx: &FindBatchContext, a: &Analysis) -> String {
    let mut s = format!("{}.", a.end.sentence());
    if let Some((p, _, _)) = a.predicted_max {
        s.push_str(&format!(" The memory model predicted {p}."));
    }
    if let Some(b) = a.largest_with_headroom {
        s.push_str(&format!(
            " With {:.0}% headroom: {b}.",
            100.0 * ctx.headroom
        ));
    }
    if let Some(f) = a.fastest_smallest {
        // Not "full": the best measured may still be rising (ResNet-50: +5% from 128 to 256).
        s.push_str(&format!(
            " Within {:.0}% of the best measured throughput from batch {f}{}.",
            100.0 * ctx.throughput_tolerance,
            a.best_throughput
                .filter(|&b| b != f)
                .map(|b| format!(" (the best: {b})"))
                .unwrap_or_default()
        ));
    }
    s
}
