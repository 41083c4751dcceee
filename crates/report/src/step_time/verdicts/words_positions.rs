//! The claims about named positions in words: each reading `positions` decided (jumps at them,
//! no jumps at them, jumps below a ratio), worded as a `Finding`.

use batchlab_method::findings::{ClaimText, Finding, Outcome};

use super::positions::{JumpsAt, JumpsBelow, NamedJump, NoJumpsAt, Reading};
use super::{list, RANK_RESAMPLES, SEEDS};
use crate::jumps::Gap;

/// "16 → 17 +4.1% (one-sided 95% bounds +2.3% to +5.9%)".
fn step_words(n: &NamedJump) -> String {
    format!(
        "{} → {} {:+.1}% (one-sided 95% bounds {:+.1}% to {:+.1}%)",
        n.gap.previous_batch_size,
        n.gap.batch_size,
        100.0 * n.gap.relative,
        100.0 * n.low,
        100.0 * n.high
    )
}

/// "The step time jumps at b1, b2, ...": a jump at every named gap, each bounded above the
/// `margin`, read with one-sided bounds at `z`.
pub(super) fn jumps_at(
    reading: &JumpsAt,
    claimed: &[u32],
    gap: Gap,
    margin: f64,
    z: f64,
) -> Finding {
    let claim = ClaimText::new(
        format!("The step time jumps at {}", list(claimed)),
        format!("{SEEDS}, on GPUs"),
    );
    let mut measured = vec![];
    for (b, named) in &reading.named {
        let Some(n) = named else {
            measured.push(format!(
                "{b}: not tested (outside the ok batch sizes or at an end)"
            ));
            continue;
        };
        measured.push(format!(
            "{b}: {}{}{}",
            step_words(n),
            match (n.reading, n.elsewhere) {
                (Reading::Jump, _) => ", a jump".to_string(),
                (Reading::NoJump, Some(e)) if n.low >= margin => format!(
                    ", the step lies on the neighbouring gap {} → {} (z {:.1} against {:.1})",
                    e.previous_batch_size, e.batch_size, e.z, n.gap.z
                ),
                (Reading::NoJump, _) => ", below the margin".to_string(),
                (Reading::Open, _) => ", open".to_string(),
            },
            if n.spike {
                ", a spike (the next gap falls back)"
            } else {
                ""
            }
        ));
    }
    if let Some((p, named, all)) = reading.rank {
        measured.push(format!(
            "the named gaps' z summed against {RANK_RESAMPLES} random sets of {named} of the {all} gaps: p = {p:.4}"
        ));
    }
    let (jumps, none, open) = (&reading.jumps, &reading.none, &reading.open);
    let tested = jumps.len() + none.len() + open.len();
    let pct = 100.0 * margin;
    let outcome = if tested == 0 {
        Outcome::cannot_test("no claimed position inside the sweep")
    } else if jumps.len() == tested {
        Outcome::reproduces_with(format!(
            "a step of at least {pct:.0}% at each of the {tested} named gaps"
        ))
    } else if none.len() == tested {
        Outcome::does_not_reproduce(format!(
            "every named step is bounded below {pct:.0}% of the step time"
        ))
    } else if !jumps.is_empty() && !none.is_empty() {
        Outcome::partly(format!(
            "a jump at {}; bounded below {pct:.0}% at {}{}",
            list(jumps),
            list(none),
            if open.is_empty() {
                String::new()
            } else {
                format!("; open at {}", list(open))
            }
        ))
    } else {
        Outcome::inconclusive(format!(
            "a step of {:.1}% of the step time, at the named gaps the noise left open ({}){}",
            100.0 * reading.detectable,
            list(open),
            match (jumps.is_empty(), none.is_empty()) {
                (false, _) => format!("; a jump at {}", list(jumps)),
                (true, false) => format!("; bounded below {pct:.0}% at {}", list(none)),
                (true, true) => String::new(),
            }
        ))
    };
    let test = format!(
        "At each named position, the one gap the registry says it means ({}), read by the detector's step statistic (method below) with one-sided 95% bounds (z {z:.2}; each position is its own one-sided test, and the verdict needs every one, so no correction for their number). A jump: the lower bound reaches {pct:.0}% of the step time (the claim's margin, the same as the no-jump claims'), the rise is no spike (the next gap falling back by half of it, clearly) and it lies on this gap (no neighbouring gap has a larger statistic: local lines leak part of a step into the gaps beside it, and a step on the neighbouring gap is not a hit); no jump: the upper bound stays below the margin, or the step lies on a neighbouring gap. Reproduces if every tested position jumps, does not reproduce if every one is bounded below the margin, partly if some of each, inconclusive otherwise, with the smallest step an open position would have shown. Beside it, a permutation test of how the named gaps rank among all gaps. This judges the jumps, not the seed's explanation of them (PCIe lanes)",
        gap.of_position(),
    );
    Finding::new(claim, "jumps-at", outcome, measured.join("; "), test).with_quantities(
        [
            ("margin", margin),
            ("z", z),
            ("jumps", jumps.len() as f64),
            ("no_jumps", none.len() as f64),
            ("open", open.len() as f64),
            ("detectable_relative", reading.detectable),
        ]
        .into_iter()
        .filter(|(name, v)| *name != "detectable_relative" || *v > 0.0)
        .chain(reading.rank.map(|(p, _, _)| ("rank_p", p))),
    )
}

/// "No jumps at b1, b2, ...": a claim of absence, each named step within ± the `margin`.
pub(super) fn no_jumps_at(
    reading: &NoJumpsAt,
    positions: &[u32],
    gap: Gap,
    margin: f64,
) -> Finding {
    let claim = ClaimText::new(
        format!("No jumps at {} (unlike VGG)", list(positions)),
        SEEDS,
    );
    let measured: Vec<String> = reading
        .named
        .iter()
        .map(|(b, named)| match named {
            None => format!("{b}: not tested"),
            Some(n) => format!("{b}: {}", step_words(n)),
        })
        .collect();
    let NoJumpsAt {
        tested,
        shown,
        refuted,
        widest,
        ..
    } = *reading;
    let pct = 100.0 * margin;
    let outcome = if tested == 0 {
        Outcome::cannot_test("no named position inside the sweep")
    } else if refuted > 0 {
        Outcome::does_not_reproduce(format!(
            "a step bounded beyond ±{pct:.0}% at {refuted} of {tested} positions"
        ))
    } else if shown == tested {
        Outcome::reproduces_with(format!("every step within ±{pct:.0}%"))
    } else {
        Outcome::inconclusive(format!(
            "a step's one-sided bound lies up to ±{:.1}% from it; the margin is ±{pct:.0}%",
            100.0 * widest,
        ))
    };
    let test = format!(
        "A claim of absence, with a margin: at each named position the step statistic of the one gap the registry says it means ({}; method below), as a fraction of the step time, with one-sided 95% bounds; no jump where both lie inside ±{pct:.0}% (two one-sided tests). Reproduces if every tested position shows no jump, does not reproduce if a step is bounded beyond the margin anywhere (a rise or a drop), inconclusive otherwise",
        gap.of_position(),
    );
    Finding::new(claim, "no-jumps-at", outcome, measured.join("; "), test)
        .with_quantities([("margin", margin), ("widest_half_interval", widest)])
}

/// The seed's "why do we not see double the training time", by `max_ratio`; a jump is a step
/// bounded above `margin`.
pub(super) fn jumps_below(
    reading: &JumpsBelow,
    positions: &[u32],
    margin: f64,
    max_ratio: f64,
) -> Finding {
    let claim = ClaimText::new(
        format!(
            "The jumps at {} stay below {max_ratio} times the step time (\"why do we not see the training time double\")",
            list(positions)
        ),
        SEEDS,
    );
    let measured: Vec<String> = reading
        .named
        .iter()
        .map(
            |(b, named)| match named.as_ref().filter(|n| n.reading == Reading::Jump) {
                None => format!("{b}: no jump here, not judged"),
                Some(n) => format!(
                    "{b}: {} → {} x{:.3} (one-sided 95% bounds x{:.3} to x{:.3})",
                    n.gap.previous_batch_size,
                    n.gap.batch_size,
                    1.0 + n.gap.relative,
                    1.0 + n.low,
                    1.0 + n.high
                ),
            },
        )
        .collect();
    let JumpsBelow {
        judged,
        shown,
        refuted,
        largest,
        ..
    } = *reading;
    let outcome = if judged == 0 {
        Outcome::cannot_test(format!(
            "no named position shows a jump on this run (a step bounded above {:.0}%): the size of the jumps needs jumps",
            100.0 * margin
        ))
    } else if refuted > 0 {
        Outcome::does_not_reproduce(format!(
            "the step time reaches x{max_ratio} at {refuted} of {judged} jumps"
        ))
    } else if shown == judged {
        Outcome::reproduces_with(format!(
            "at most x{largest:.3} at the upper bounds, over {judged} jump{}",
            if judged == 1 { "" } else { "s" }
        ))
    } else {
        Outcome::inconclusive(format!(
            "a bound up to x{largest:.3} against the limit x{max_ratio}"
        ))
    };
    let test = format!(
        "At each named position where this run shows a jump (the jumps-at rule's reading: the lower bound of the step reaches {:.0}% of the step time), the step time after over before, 1 + the step's relative height, with one-sided 95% bounds. Reproduces if every such upper bound lies below x{max_ratio}, does not reproduce if a lower bound reaches it, inconclusive otherwise; positions without a jump are not judged, and a run without any jump at them cannot judge the claim (it would hold trivially)",
        100.0 * margin
    );
    Finding::new(
        claim,
        "jump-below-ratio",
        outcome,
        measured.join("; "),
        test,
    )
    .with_quantities([
        ("max_ratio", max_ratio),
        ("largest_upper_bound", largest),
        ("jumps_judged", judged as f64),
    ])
}
