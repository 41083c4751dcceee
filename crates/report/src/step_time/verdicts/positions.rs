//! The claims about positions named in advance: jumps at them, no jumps at them, and jumps
//! smaller than a ratio (the seed's "why not double"). One standard decides presence and
//! absence (docs/ARCHITECTURE.md, "Verdicts"): at each named position the step is read at the
//! one gap the registry says the position means ([`Gap`]), with its one-sided 95% bounds; a
//! step is there when its lower bound reaches the claim's margin, absent when its upper bound
//! stays below it, and undecided otherwise. A claim is refuted only by steps bounded on the
//! wrong side of its margin, never by a test that merely failed to find them.

use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::tests_of_claims::{named_position_z, named_rank_p};

use super::{list, RANK_RESAMPLES, SEEDS};
use crate::jumps::{relative_se, Gap, Jump};
use crate::step_time::analysis::Analysis;

/// What the one-sided bounds of a named step say about it against a margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Its lower bound reaches the margin and it is no spike: a jump.
    Jump,
    /// Its upper bound stays below the margin, or the step it measures lies on a neighbouring
    /// gap (whose statistic is larger: a local fit leaks part of a step into the gaps beside
    /// it): no jump of the claimed size at this gap.
    NoJump,
    /// Neither: the noise leaves it open.
    Open,
}

/// One named position as the rules read it: its gap, the step's one-sided 95% bounds (as a
/// fraction of the step time) and what they say.
pub(crate) struct NamedJump<'a> {
    pub index: usize,
    pub gap: &'a Jump,
    pub spike: bool,
    /// The neighbouring gap the step lies on, if its statistic is the larger.
    pub elsewhere: Option<&'a Jump>,
    pub low: f64,
    pub high: f64,
    pub reading: Reading,
}

/// z of a one-sided 95% bound: every rule here is an intersection (or union) of one-sided tests
/// at the named gaps, which needs no correction for their number.
fn z_one_sided() -> f64 {
    named_position_z(1)
}

/// Whether the rise at gap `i` is a spike rather than a step: the next gap falls back by at
/// least half of it, itself clearly (one slow batch size, not a change of level).
fn is_spike(a: &Analysis, i: usize) -> bool {
    let (rise, next) = (&a.gaps[i], a.gaps.get(i + 1));
    next.is_some_and(|n| {
        n.previous_batch_size == rise.batch_size
            && n.z <= -z_one_sided()
            && -n.height_ms >= rise.height_ms / 2.0
    })
}

/// The gap next to gap `i` whose step statistic is larger than `i`'s, if any: the step `i`
/// shows is then that gap's, read partly through `i`'s local lines.
fn neighbour_with_the_step(a: &Analysis, i: usize) -> Option<&Jump> {
    let here = &a.gaps[i];
    let adjacent = |g: &&Jump| {
        g.batch_size == here.previous_batch_size || g.previous_batch_size == here.batch_size
    };
    [i.checked_sub(1), Some(i + 1)]
        .into_iter()
        .flatten()
        .filter_map(|j| a.gaps.get(j))
        .filter(adjacent)
        .filter(|g| g.z > here.z)
        .max_by(|x, y| x.z.total_cmp(&y.z))
}

/// Every named position with the gap that tests it (none outside the ok batch sizes or within
/// two points of an end), decided once for the verdicts, the figure and the report's table.
pub(crate) fn named_jumps<'a>(
    a: &'a Analysis,
    positions: &[u32],
    gap: Gap,
    margin: f64,
) -> Vec<(u32, Option<NamedJump<'a>>)> {
    let z = z_one_sided();
    positions
        .iter()
        .map(|&b| {
            let named = a.gaps.iter().position(|g| gap.means(g, b)).map(|index| {
                let g = &a.gaps[index];
                let se = relative_se(g);
                let (low, high) = (g.relative - z * se, g.relative + z * se);
                let spike = is_spike(a, index);
                let elsewhere = neighbour_with_the_step(a, index);
                let reading = if low >= margin && !spike && elsewhere.is_none() {
                    Reading::Jump
                } else if high < margin || (low >= margin && elsewhere.is_some()) {
                    Reading::NoJump
                } else {
                    Reading::Open
                };
                NamedJump {
                    index,
                    gap: g,
                    spike,
                    elsewhere,
                    low,
                    high,
                    reading,
                }
            });
            (b, named)
        })
        .collect()
}

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
/// margin.
pub(super) fn jumps_at(a: &Analysis, claimed: &[u32], gap: Gap, margin: f64, seed: u64) -> Finding {
    let claim = ClaimText::new(
        format!("The step time jumps at {}", list(claimed)),
        format!("{SEEDS}, on GPUs"),
    );
    let z = z_one_sided();
    let mut measured = vec![];
    let (mut jumps, mut none, mut open, mut indices) = (vec![], vec![], vec![], vec![]);
    // The smallest step an open position would have shown as a jump: the margin plus its
    // one-sided bound's half-width.
    let mut detectable: f64 = 0.0;
    for (b, named) in named_jumps(a, claimed, gap, margin) {
        let Some(n) = named else {
            measured.push(format!(
                "{b}: not tested (outside the ok batch sizes or at an end)"
            ));
            continue;
        };
        indices.push(n.index);
        match n.reading {
            Reading::Jump => jumps.push(b),
            Reading::NoJump => none.push(b),
            Reading::Open => {
                open.push(b);
                detectable = detectable.max(margin + (n.high - n.gap.relative));
            }
        }
        measured.push(format!(
            "{b}: {}{}{}",
            step_words(&n),
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
    let z_all: Vec<f64> = a.gaps.iter().map(|g| g.z).collect();
    let rank_p = named_rank_p(&z_all, &indices, RANK_RESAMPLES, seed);
    if let Some(p) = rank_p {
        measured.push(format!(
            "the named gaps' z summed against {RANK_RESAMPLES} random sets of {} of the {} gaps: p = {p:.4}",
            indices.len(),
            z_all.len()
        ));
    }
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
            list(&jumps),
            list(&none),
            if open.is_empty() {
                String::new()
            } else {
                format!("; open at {}", list(&open))
            }
        ))
    } else {
        Outcome::inconclusive(format!(
            "a step of {:.1}% of the step time, at the named gaps the noise left open ({}){}",
            100.0 * detectable,
            list(&open),
            match (jumps.is_empty(), none.is_empty()) {
                (false, _) => format!("; a jump at {}", list(&jumps)),
                (true, false) => format!("; bounded below {pct:.0}% at {}", list(&none)),
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
            ("detectable_relative", detectable),
        ]
        .into_iter()
        .filter(|(name, v)| *name != "detectable_relative" || *v > 0.0)
        .chain(rank_p.map(|p| ("rank_p", p))),
    )
}

/// "No jumps at b1, b2, ...": a claim of absence, each named step within ± the margin.
pub(super) fn no_jumps_at(a: &Analysis, positions: &[u32], gap: Gap, margin: f64) -> Finding {
    let claim = ClaimText::new(
        format!("No jumps at {} (unlike VGG)", list(positions)),
        SEEDS,
    );
    let mut measured = vec![];
    let (mut shown, mut refuted, mut tested) = (0, 0, 0);
    let mut widest: f64 = 0.0;
    for (b, named) in named_jumps(a, positions, gap, margin) {
        let Some(n) = named else {
            measured.push(format!("{b}: not tested"));
            continue;
        };
        tested += 1;
        widest = widest.max(n.high - n.gap.relative);
        if n.high < margin && n.low > -margin {
            shown += 1;
        } else if n.low > margin || n.high < -margin {
            refuted += 1;
        }
        measured.push(format!("{b}: {}", step_words(&n)));
    }
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

/// The seed's "why do we not see double the training time": at each named position where this
/// run shows a jump, the step time after it over the time before (1 + the step's relative
/// height, with its one-sided 95% bounds) stays below `max_ratio`. A claim about the jumps' size
/// cannot be judged where there is no jump: positions without one are left out, and a run
/// without any cannot judge it.
pub(super) fn jumps_below(
    a: &Analysis,
    positions: &[u32],
    gap: Gap,
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
    let (mut shown, mut refuted, mut judged) = (0, 0, 0);
    let mut measured = vec![];
    let mut largest: f64 = 0.0;
    for (b, named) in named_jumps(a, positions, gap, margin) {
        let Some(n) = named.filter(|n| n.reading == Reading::Jump) else {
            measured.push(format!("{b}: no jump here, not judged"));
            continue;
        };
        judged += 1;
        let (low, high) = (1.0 + n.low, 1.0 + n.high);
        largest = largest.max(high);
        shown += usize::from(high < max_ratio);
        refuted += usize::from(low >= max_ratio);
        measured.push(format!(
            "{b}: {} → {} x{:.3} (one-sided 95% bounds x{low:.3} to x{high:.3})",
            n.gap.previous_batch_size,
            n.gap.batch_size,
            1.0 + n.gap.relative
        ));
    }
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
