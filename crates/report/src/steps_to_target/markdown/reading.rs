//! The findings of a steps-to-target report: sentences generated from the measurements,
//! never canned. Each states numbers and what they mean for the questions of Shallue et
//! al.: where the three regimes lie, where the knee B_crit is, how the best learning rate
//! scales, and which batch size is worth running.

use super::time::time_sentence;
use crate::numbers::{and_list, batch, capitalised, sig, signed, with_interval};
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::scaling::INTERVAL_WORDS;
use crate::steps_to_target::{LearningRateScaling, NoResult, RateRule, TargetContext};
use crate::steps_to_target::{Regime, RegimeOptions, Regimes, SlopeWindow};

/// The one-line count of what was recorded.
pub(crate) fn recorded_line(study: &Study) -> String {
    let c = &study.counts;
    let mut s = format!(
        "{} trials recorded over {} workload(s) and {} batch size(s): {} reached the target, {} missed it, {} diverged, {} failed",
        c.recorded,
        study.workloads.len(),
        study.batch_sizes.len(),
        c.reached,
        c.missed,
        c.infeasible,
        c.failed
    );
    if c.unevaluated > 0 {
        s.push_str(&format!(", {} not evaluated", c.unevaluated));
    }
    s
}

/// "4:16500 8:8500 … 4096:none": the curve in one line.
pub(crate) fn compact_curve(w: &Workload) -> String {
    let parts: Vec<String> = w
        .cells
        .iter()
        .map(|c| match c.steps_to_result {
            Some(s) => format!("{}:{s}", c.batch_size),
            None => format!("{}:none", c.batch_size),
        })
        .collect();
    parts.join(" ")
}

/// "B_crit 127 (95% interval 110–150)", or why there is none.
pub(crate) fn b_crit_text(w: &Workload) -> String {
    match &w.fit {
        Ok(f) if !f.b_crit_identified => {
            "B_crit not identified (steps fall like 1/B throughout)".into()
        }
        Ok(f) if f.b_crit == 0.0 => "B_crit 0 (no batch size dependence)".into(),
        Ok(f) => format!(
            "B_crit {}",
            with_interval(f.b_crit, f.b_crit_interval, f.level)
        ),
        Err(_) => format!(
            "B_crit not fitted ({} batch size(s) with a result)",
            w.points.len()
        ),
    }
}

/// The lines [`super::TargetFindings::lines`] holds.
pub(crate) fn headlines(ctx: &TargetContext, study: &Study) -> Vec<String> {
    let mut lines = vec![format!(
        "Target validation error <= {}: {}.",
        sig(ctx.target_error),
        recorded_line(study)
    )];
    for w in &study.workloads {
        lines.push(format!(
            "{}: steps to result by batch size {}; {}",
            w.label,
            compact_curve(w),
            b_crit_text(w)
        ));
        if let Some(t) = &w.time {
            let p = &t.soonest;
            lines.push(format!(
                "{}: soonest to the target at batch {} ({} steps, {} s; {}–{} s)",
                w.label,
                p.batch_size,
                p.steps,
                sig(p.seconds),
                sig(p.low),
                sig(p.high)
            ));
        }
    }
    if !study.notes.is_empty() {
        lines.push(format!(
            "{} note(s) on missing or partial data in report.md",
            study.notes.len()
        ));
    }
    lines
}

/// The "In short" paragraph.
pub(crate) fn in_short(study: &Study) -> String {
    let mut parts = vec![recorded_line(study)];
    for w in &study.workloads {
        let results: Vec<(u32, u64)> = w
            .cells
            .iter()
            .filter_map(|c| Some((c.batch_size, c.steps_to_result?)))
            .collect();
        match (results.first(), results.last()) {
            (Some(&(b0, s0)), Some(&(b1, s1))) if b0 != b1 => parts.push(format!(
                "{}: {s0} steps at batch {b0} down to {s1} at batch {b1} ({}x fewer), {}",
                w.label,
                sig(s0 as f64 / s1 as f64),
                b_crit_text(w)
            )),
            (Some(&(b0, s0)), _) => parts.push(format!(
                "{}: a result at batch {b0} only ({s0} steps)",
                w.label
            )),
            _ => parts.push(format!("{}: no batch size reached the target", w.label)),
        }
    }
    format!("{}.", capitalised(&parts.join("; ")))
}

/// The findings about one workload, one sentence (or short paragraph) each.
pub(crate) fn workload_sentences(ctx: &TargetContext, w: &Workload) -> Vec<String> {
    let mut out = vec![curve_sentence(w)];
    out.push(regimes_sentence(w));
    out.push(fit_sentence(w));
    out.extend(
        w.learning_rate
            .as_ref()
            .map(|s| rate_sentence("learning rate", s)),
    );
    out.extend(
        w.effective
            .as_ref()
            .map(|s| rate_sentence("effective learning rate lr / (1 - momentum)", s)),
    );
    if w.learning_rate.is_none() {
        out.push("The best learning rate's scaling is not fitted: fewer than two batch sizes have both a result and a known learning rate.".into());
    }
    out.extend(no_result_sentence(ctx, w));
    out.extend(w.time.as_ref().map(|t| time_sentence(&w.label, t)));
    out
}

fn curve_sentence(w: &Workload) -> String {
    let parts: Vec<String> = w
        .cells
        .iter()
        .map(|c| match c.steps_to_result {
            Some(s) => format!("{s} at batch {}", c.batch_size),
            None => format!("none at batch {}", c.batch_size),
        })
        .collect();
    format!("Steps to result: {}.", and_list(&parts))
}

/// The thresholds of the default regime rule, in words.
fn rule() -> String {
    let o = RegimeOptions::default();
    format!(
        "a doubling of the batch size that divides the steps by at least {} is perfect scaling, one that saves less than {:.0}% of them is maximal data parallelism",
        sig(2.0 * (1.0 - o.perfect_tolerance)),
        100.0 * o.plateau_saving
    )
}

/// The rule of the band-judged regimes (`scaling::bands`), in words.
fn interval_rule(w: &Workload) -> String {
    format!(
        "judged by positive tests: the log-log slope of steps to result over every 3 neighbouring batch sizes, with a nominally 95% interval (its level not checked out of sample) from curves drawn per batch size from the {} (How steps to result is measured); a window is in a regime only when its whole interval lies inside the regime's band ({}), else it is open; each regime runs from the first window that shows it to the last",
        INTERVAL_WORDS,
        w.bands.bands.describe()
    )
}

pub(crate) fn regimes_sentence(w: &Workload) -> String {
    let r = match &w.regimes {
        Ok(r) => r,
        Err(e) => return format!("The regimes cannot be located: {e}."),
    };
    let (Some(first), Some(last)) = (r.segments.first(), r.segments.last()) else {
        return "The regimes cannot be located: no segment between two batch sizes.".into();
    };
    let range = |(a, b): (f64, f64)| format!("from batch {} to {}", batch(a), batch(b));
    // With slope windows, an absent regime is one no window showed: say what the window at
    // that end found rather than read a single doubling.
    let window_at = |end: Option<&(SlopeWindow, Option<Regime>)>| {
        end.filter(|_| w.regimes_with_intervals())
            .map(|(win, shown)| {
                format!(
                    "the window {} to {} has a slope interval from {} to {}{}",
                    batch(w.intervals.batch_sizes[win.first]),
                    batch(w.intervals.batch_sizes[win.last]),
                    signed(win.interval.0),
                    signed(win.interval.1),
                    shown.map_or(" (in no band)".to_string(), |r| format!(" ({})", r.name()))
                )
            })
    };
    let mut parts = vec![];
    let first_window = window_at(w.bands.windows.first());
    let last_window = window_at(w.bands.windows.last());
    match (r.perfect_scaling, first_window) {
        (Some(p), _) => parts.push(format!("perfect scaling {}", range(p))),
        (None, Some(at)) => parts.push(format!("no window shows perfect scaling ({at})")),
        (None, None) => parts.push(format!(
            "no perfect scaling at the smallest batch sizes (the first doubling, {} to {}, divides the steps by only {})",
            batch(first.from),
            batch(first.to),
            sig(first.speedup_per_doubling)
        )),
    }
    if let Some(d) = r.diminishing_returns {
        parts.push(format!("diminishing returns {}", range(d)));
    }
    let last_slope = w
        .intervals
        .slopes
        .last()
        .filter(|_| w.regimes_with_intervals())
        .map_or(String::new(), |(lo, hi)| {
            format!(
                " (log-log slope between {} and {}, 95%)",
                signed(*lo),
                signed(*hi)
            )
        });
    match (r.maximal_data_parallelism, last_window) {
        (Some(m), _) => parts.push(format!("maximal data parallelism {}", range(m))),
        (None, Some(at)) => parts.push(format!(
            "no window shows maximal data parallelism up to batch {} ({at})",
            batch(last.to)
        )),
        (None, None) => parts.push(format!(
            "no plateau yet: the last doubling ({} to {}) still divides the steps by {}{last_slope}, so maximal data parallelism, if any, lies beyond batch {}",
            batch(last.from),
            batch(last.to),
            sig(last.speedup_per_doubling),
            batch(last.to)
        )),
    }
    let rule = if w.regimes_with_intervals() {
        interval_rule(w)
    } else if w
        .intervals
        .intervals
        .first()
        .is_some_and(|i| i.1.is_infinite())
    {
        format!(
            "{}; not judged with bootstrap intervals because the smallest batch size's interval has no upper end (too few of its trials reached the target), which would make every batch size pass as perfect scaling",
            rule()
        )
    } else {
        rule()
    };
    let mut s = format!("Regimes ({rule}): {}.", parts.join("; "));
    s.push_str(&odd_segments(r));
    s
}

/// Segments inside the diminishing-returns range whose own regime is another: the ranges
/// are read from the ends, so these would otherwise go unmentioned.
fn odd_segments(r: &Regimes) -> String {
    let Some((lo, hi)) = r.diminishing_returns else {
        return String::new();
    };
    let odd: Vec<String> = r
        .segments
        .iter()
        .filter(|s| s.from >= lo && s.to <= hi && s.regime != Regime::DiminishingReturns)
        .map(|s| {
            format!(
                "{} to {} ({}, x{} per doubling)",
                batch(s.from),
                batch(s.to),
                s.regime.name(),
                sig(s.speedup_per_doubling)
            )
        })
        .collect();
    if odd.is_empty() {
        String::new()
    } else {
        format!(
            " Inside diminishing returns, segment(s) {} are of another regime on their own: noise in a best of N, or a real wiggle.",
            and_list(&odd)
        )
    }
}

pub(crate) fn fit_sentence(w: &Workload) -> String {
    let f = match &w.fit {
        Ok(f) => f,
        Err(e) => {
            return format!("S(B) = S_min (1 + B_crit / B) is not fitted: {e}.");
        }
    };
    if !f.b_crit_identified {
        return format!(
            "B_crit is not identified: steps fall like 1/B over every measured batch size (the best fit puts the knee beyond 10^4 times the largest batch size), so only E_min = S_min B_crit ≈ {} examples is determined; larger batch sizes are needed to find the knee.",
            sig(f.e_min())
        );
    }
    if f.b_crit == 0.0 {
        return format!(
            "Steps to result do not depend on batch size over the measured range (the best B_crit is 0; S_min = {} steps): every batch size measured is past the knee, and smaller ones are needed to see perfect scaling.",
            sig(f.s_min)
        );
    }
    let mut s = format!(
        "The fit S(B) = S_min (1 + B_crit / B) over {} batch sizes gives B_crit = {} and S_min = {} steps (residual bootstrap; rms log residual {:.1}%): the knee, where a batch size needs twice the fewest steps, is at batch ≈ {}, and E_min = S_min B_crit ≈ {} examples.",
        f.points,
        with_interval(f.b_crit, f.b_crit_interval, f.level),
        with_interval(f.s_min, f.s_min_interval, f.level),
        100.0 * f.rms_log_residual,
        sig(f.b_crit),
        sig(f.e_min())
    );
    let (lo, hi) = w
        .points
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
    if f.b_crit < lo || f.b_crit > hi {
        s.push_str(&format!(
            " B_crit lies outside the measured batch sizes ({} to {}): an extrapolation.",
            batch(lo),
            batch(hi)
        ));
    }
    let (a, b) = f.b_crit_interval;
    if a > 0.0 && b / a > 10.0 {
        s.push_str(
            " The interval spans more than a factor of ten: the curve pins the knee down poorly.",
        );
    }
    if let Some(l) = &w.lack_of_fit {
        let reading = if l.p < 0.05 {
            "the curve departs from S(B) by more than the cells' own noise, so B_crit summarises a shape it does not have; the regimes above are the finding, B_crit a cross-check"
        } else {
            "no departure from S(B) beyond the cells' own noise"
        };
        s.push_str(&format!(
            " Lack of fit: chi-square {:.1} on {} degrees of freedom against each cell's noise read from its interval (p = {}): {reading}.",
            l.chi_square,
            l.df,
            sig(l.p)
        ));
    }
    s
}

fn rate_sentence(name: &str, s: &LearningRateScaling) -> String {
    let over = if s.perfect_scaling_range {
        format!(
            "over the perfect-scaling range (batch {} to {}, {} batch sizes)",
            s.from, s.to, s.points
        )
    } else {
        format!(
            "over every batch size with a result (batch {} to {}, {}), the perfect-scaling range having fewer than two",
            s.from, s.to, s.points
        )
    };
    let verdict = match s.rule() {
        RateRule::NoInterval { nearer_linear } => {
            let nearer = if nearer_linear {
                "linear scaling (1)"
            } else {
                "square-root scaling (0.5)"
            };
            return format!(
                "The best {name} scales as B^{} {over}; two points fit a line exactly, so there is no interval: nearer to {nearer}, which says little.",
                sig(s.slope)
            );
        }
        RateRule::Linear => "consistent with linear scaling (slope 1), not with square-root scaling (0.5)",
        RateRule::SquareRoot => "consistent with square-root scaling (slope 0.5), not with linear scaling (1)",
        RateRule::Both => "consistent with both linear (1) and square-root (0.5) scaling: too few or too noisy points to tell them apart",
        RateRule::BelowBoth => "below both rules: the best rate grows more slowly than the square root of the batch size",
        RateRule::AboveLinear => "above linear scaling: the best rate grows faster than the batch size",
        RateRule::Between => "between the two rules and consistent with neither",
    };
    let (lo, hi) = s.interval.unwrap_or((s.slope, s.slope));
    format!(
        "The best {name} scales as B^{} (95% interval {}–{}) {over}: {verdict}.",
        sig(s.slope),
        sig(lo),
        sig(hi)
    )
}

fn no_result_sentence(ctx: &TargetContext, w: &Workload) -> Option<String> {
    let none: Vec<String> = w
        .cells
        .iter()
        .filter(|c| c.steps_to_result.is_none())
        .map(|c| {
            let mut how = vec![];
            for (n, what) in [
                (c.missed, "missed"),
                (c.infeasible, "diverged"),
                (c.failed, "failed"),
                (c.unevaluated, "not evaluated"),
            ] {
                if n > 0 {
                    how.push(format!("{n} {what}"));
                }
            }
            format!(
                "batch {} ({} of {} trials)",
                c.batch_size,
                how.join(", "),
                c.trials
            )
        })
        .collect();
    if none.is_empty() {
        return None;
    }
    let (capped, broken): (Vec<_>, Vec<_>) = w
        .cells
        .iter()
        .filter(|c| c.steps_to_result.is_none())
        .zip(none)
        .partition(|(c, _)| c.no_result() == Some(NoResult::BeyondCap));
    let mut parts = vec![];
    if !capped.is_empty() {
        let names: Vec<String> = capped.into_iter().map(|(_, n)| n).collect();
        parts.push(format!(
            "No trial reached the target within the step budget ({}) at {}: steps to result there are beyond the cap, if the search space holds a setting that gets there at all.",
            ctx.budget.limit_text(),
            and_list(&names)
        ));
    }
    if !broken.is_empty() {
        let names: Vec<String> = broken.into_iter().map(|(_, n)| n).collect();
        parts.push(format!(
            "Every trial diverged or failed at {}: no setting of the search space trains there, so the budget is not what limits it.",
            and_list(&names)
        ));
    }
    parts.push(if w.regimes_with_intervals() {
        "These batch sizes are left out of the fit; the regimes count them as steps that grew (no fewer steps than the batch size before).".into()
    } else {
        "These batch sizes are left out of the fit and the regimes.".into()
    });
    Some(parts.join(" "))
}
