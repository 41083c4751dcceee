//! `report.md` of a batch-size finder, and the verdicts on the seed's claims.

use super::analysis::{Analysis, Verdict, UTILIZATION_STEP, Z95};
use super::FindBatchContext;
use crate::markdown::{table, Header};

/// The claims of seed 003 (and the Ohio State thesis it cites), each judged by a stated rule.
pub(super) fn verdicts(a: &Analysis, ctx: &FindBatchContext) -> Vec<Verdict> {
    vec![
        memory_grows(a),
        utilization_saturates(a, ctx),
        largest_is_not_right(a),
    ]
}

fn memory_grows(a: &Analysis) -> Verdict {
    let claim = "\"Memory grows with batch size\" (seed 003, the Ohio State thesis' memory table)"
        .to_string();
    let test = format!(
        "Least squares over the curve's {} probes; reproduces if the 95% interval of the per-example cost lies above zero, else does not. With at least three probes and two batch sizes it can be tested",
        a.model_points
    );
    match a.model {
        Some(fit) if a.model_points >= 3 && fit.slope_se.is_finite() => {
            let low = fit.slope - Z95 * fit.slope_se;
            Verdict {
                claim,
                measured: format!(
                    "{:.3} MiB per example (95% interval {:.3} .. {:.3}), R² {:.3}",
                    fit.slope,
                    low,
                    fit.slope + Z95 * fit.slope_se,
                    fit.r_squared
                ),
                verdict: if low > 0.0 {
                    "reproduces"
                } else {
                    "does not reproduce"
                }
                .into(),
                test: format!(
                    "{test}; at this noise the test detects growth above {:.3} MiB per example",
                    Z95 * fit.slope_se
                ),
            }
        }
        _ => Verdict {
            claim,
            measured: "too few fitting curve probes for a line with an interval".into(),
            verdict: "cannot be tested here (too few curve probes fitted the budget)".into(),
            test,
        },
    }
}

fn utilization_saturates(a: &Analysis, ctx: &FindBatchContext) -> Verdict {
    let claim = "\"Utilization rises with batch size, then saturates\" (seed 003: the batch size that uses the device fully)".to_string();
    let test = format!(
        "Median utilization (CPU time of the process / (wall time x threads)) at the smallest and largest curve batch sizes: rises if it grows by more than {:.0} points; saturates if its change over the curve's last step is under {:.0} points. Reproduces if both, partly if it rises without saturating, does not reproduce if it does not rise",
        100.0 * UTILIZATION_STEP,
        100.0 * UTILIZATION_STEP
    );
    let curve: Vec<_> = a
        .points
        .iter()
        .filter(|p| p.in_curve && p.ok > 0 && p.utilization.is_finite())
        .collect();
    if !ctx.utilization_measured {
        return Verdict {
            claim,
            measured: "not measured".into(),
            verdict: "cannot be tested here: the host's CPU time says nothing about a GPU, and the runtime offers no kernel time (only synchronised wall time)".into(),
            test,
        };
    }
    let (Some(first), Some(last)) = (curve.first(), curve.last()) else {
        return Verdict {
            claim,
            measured: "no curve probe with a CPU time".into(),
            verdict: "cannot be tested here (no utilization was read)".into(),
            test,
        };
    };
    let before_last = curve.get(curve.len().saturating_sub(2)).unwrap_or(first);
    let rises = last.utilization - first.utilization > UTILIZATION_STEP;
    let saturates = (last.utilization - before_last.utilization).abs() < UTILIZATION_STEP;
    Verdict {
        claim,
        measured: format!(
            "{:.0}% at batch {}, {:.0}% at {}, {:.0}% at {}",
            100.0 * first.utilization,
            first.batch_size,
            100.0 * before_last.utilization,
            before_last.batch_size,
            100.0 * last.utilization,
            last.batch_size
        ),
        verdict: match (rises, saturates) {
            (true, true) => "reproduces",
            (true, false) => "partly (rises, not yet saturated at the largest curve batch size)",
            (false, _) => "does not reproduce (utilization does not rise)",
        }
        .into(),
        test,
    }
}

fn largest_is_not_right(a: &Analysis) -> Verdict {
    let claim =
        "\"The largest batch size that fits is not automatically the right one\" (seed 003)"
            .to_string();
    let test = "Compares the largest batch size that fits (with headroom) with the smallest curve batch size that reaches full throughput; reproduces if the second is smaller and a larger curve batch size confirms the plateau, for then the extra memory buys no speed. Accuracy is the other half of the seed's point: see the accuracy studies (sgd-vs-adam, augmentation)".to_string();
    match (a.largest_with_headroom, a.fastest_smallest) {
        (Some(largest), Some(fast)) if Some(fast) == a.largest_curve && fast < largest => Verdict {
            claim,
            measured: format!("throughput still rises at the curve's largest batch size, {fast}; largest with headroom {largest}"),
            verdict: "cannot be tested here (the curve stops before throughput levels off; extend curve.batch_sizes)".into(),
            test,
        },
        (Some(largest), Some(fast)) => Verdict {
            claim,
            measured: format!("largest with headroom {largest}; full throughput from {fast}"),
            verdict: if fast < largest {
                "reproduces"
            } else {
                "does not reproduce (throughput still rises up to the largest batch that fits)"
            }
            .into(),
            test,
        },
        _ => Verdict {
            claim,
            measured: "no largest batch or no throughput".into(),
            verdict: "cannot be tested here (the search did not end with a size that fits)".into(),
            test,
        },
    }
}

fn mib(v: f64) -> String {
    number(v, 0)
}

/// `v` with `decimals`, or `-` where nothing was measured.
fn number(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "-".into()
    }
}

/// `± se`, or a note where the fit has no residual degrees of freedom.
fn plus_minus(se: f64, decimals: usize) -> String {
    if se.is_finite() {
        format!("± {se:.decimals$}")
    } else {
        "(no interval from two probes)".into()
    }
}

pub(super) fn report(ctx: &FindBatchContext, a: &Analysis) -> String {
    let in_short = in_short(ctx, a);
    let mut md = Header {
        experiment: &ctx.experiment,
        subject: "the largest batch size that fits, and the right one",
        description: &ctx.description,
        reproduces: ctx.reproduces.as_deref(),
        claim: ctx.claim.as_deref(),
        in_short: &in_short,
    }
    .markdown();
    md.push_str(&format!(
        "- Model: {}\n- Backend: {} on {}\n- Budget: {}, enforced by **{}** ({})\n- Protocol: {}\n\n",
        ctx.model,
        ctx.backend,
        ctx.device,
        ctx.budget,
        a.limit,
        limit_words(&a.limit),
        ctx.protocol
    ));
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
                        format!(", {}", p.failed.join(", "))
                    }
                ),
                mib(p.limited_peak_mb),
                mib(p.peak_rss_mb),
                number(p.step_ms, 1),
                number(p.examples_per_s, 1),
                if p.utilization.is_finite() {
                    format!("{:.0}%", 100.0 * p.utilization)
                } else {
                    "-".into()
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
                p.status.clone(),
                mib(p.limited_peak_mb.unwrap_or(f64::NAN)),
                mib(p.peak_rss_mb.unwrap_or(f64::NAN)),
                if p.step_ms.is_empty() {
                    "-".into()
                } else {
                    format!("{:.1}", p.median_ms())
                },
                p.message.clone(),
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
    let verdict_rows: Vec<Vec<String>> = a
        .verdicts
        .iter()
        .map(|v| {
            vec![
                v.claim.clone(),
                v.measured.clone(),
                format!("**{}**", v.verdict),
                v.test.clone(),
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "claim",
            "measured",
            "verdict",
            "test and what it could detect",
        ],
        &verdict_rows,
    ));
    md.push_str("\nFiles: `probes.csv` (every timed step of every probe, and every failure), `summary.csv` (per batch size), `memory.svg`, `utilization.svg`, `probes.svg` (and PNGs).\n");
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
            "The memory model, fitted to the curve alone, predicted **{p}** (95% range {low} .. {}): {:+.1}% against the {found} found.",
            if high == u32::MAX { "unbounded".into() } else { high.to_string() },
            100.0 * (f64::from(p) - f64::from(found)) / f64::from(found)
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
        s.push_str(&format!(" Full throughput from batch {f}."));
    }
    s
}
