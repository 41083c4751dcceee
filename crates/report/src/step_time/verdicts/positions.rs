//! The claims about positions named in advance: jumps at them (a one-sided test at each, beside
//! the named gaps' rank among all gaps), no jumps at them (absence within a margin), and jumps
//! smaller than a ratio (the seed's "why not double").

use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::tests_of_claims::{named_position_z, named_rank_p};

use super::{list, RANK_RESAMPLES, SEEDS};
use crate::jumps::{detectable_relative, relative_se, Jump, JumpOptions};
use crate::step_time::analysis::Analysis;

/// The gap that tests a named position: of the tested gaps touching it, the one with the
/// larger z (a jump "at 16" may be 15 -> 16 or 16 -> 17), and its index among all gaps.
fn gap_at(a: &Analysis, b: u32) -> Option<(usize, &Jump)> {
    a.gaps
        .iter()
        .enumerate()
        .filter(|(_, g)| g.previous_batch_size <= b && b <= g.batch_size)
        .max_by(|x, y| x.1.z.total_cmp(&y.1.z))
}

/// The step at a named position ([`gap_at`]) as a fraction of the step time, with its bounds
/// at `z` standard errors (its standard error from its own z).
fn bounds_at(a: &Analysis, b: u32, z: f64) -> Option<(&Jump, f64, f64)> {
    let (_, g) = gap_at(a, b)?;
    let se = relative_se(g);
    Some((g, g.relative - z * se, g.relative + z * se))
}

/// Whether the rise at gap `i` is a spike rather than a step: the next gap falls back by at
/// least half of it, itself clearly (one slow batch size, not a change of level).
fn is_spike(a: &Analysis, i: usize, z_needed: f64) -> bool {
    let (rise, next) = (&a.gaps[i], a.gaps.get(i + 1));
    next.is_some_and(|n| {
        n.previous_batch_size == rise.batch_size
            && n.z <= -z_needed
            && -n.height_ms >= rise.height_ms / 2.0
    })
}

/// One named position as the jumps-at test reads it: the gap that tests it, its index among
/// all gaps, and whether it passes (a clear step, not a spike).
pub(crate) struct NamedJump<'a> {
    pub index: usize,
    pub gap: &'a Jump,
    pub spike: bool,
    pub passes: bool,
}

/// The z a named gap must reach with `claimed` positions named (each looked at through up to
/// two gaps: the family is all of them).
fn z_needed(claimed: &[u32]) -> f64 {
    named_position_z(2 * claimed.len())
}

/// Every named position with a gap that tests it (those outside the ok batch sizes or at an
/// end have none), decided once for the verdict and the figure.
pub(crate) fn named_jumps<'a>(
    a: &'a Analysis,
    claimed: &[u32],
    opts: &JumpOptions,
) -> Vec<(u32, Option<NamedJump<'a>>)> {
    let z = z_needed(claimed);
    claimed
        .iter()
        .map(|&b| {
            let named = gap_at(a, b).map(|(index, gap)| {
                let spike = is_spike(a, index, z);
                NamedJump {
                    index,
                    gap,
                    spike,
                    passes: gap.z >= z && gap.relative >= opts.min_relative && !spike,
                }
            });
            (b, named)
        })
        .collect()
}

pub(super) fn jumps_at(a: &Analysis, claimed: &[u32], opts: &JumpOptions, seed: u64) -> Finding {
    let claim = ClaimText::new(
        format!("The step time jumps at {}", list(claimed)),
        format!("{SEEDS}, on GPUs"),
    );
    let z_needed = z_needed(claimed);
    let mut measured = vec![];
    let (mut passed, mut tested, mut indices) = (vec![], vec![], vec![]);
    let mut detectable: f64 = 0.0;
    for (b, named) in named_jumps(a, claimed, opts) {
        let Some(n) = named else {
            measured.push(format!(
                "{b}: not tested (outside the ok batch sizes or at an end)"
            ));
            continue;
        };
        let g = n.gap;
        tested.push(b);
        indices.push(n.index);
        detectable = detectable.max(detectable_relative(g, z_needed, opts));
        if n.passes {
            passed.push(b);
        }
        measured.push(format!(
            "{b}: {} → {} {:+.1}% (z {:.1}){}{}",
            g.previous_batch_size,
            g.batch_size,
            100.0 * g.relative,
            g.z,
            if n.passes { ", a jump" } else { "" },
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
    let outcome = if tested.is_empty() {
        Outcome::cannot_test("no claimed position inside the sweep")
    } else if passed.len() == tested.len() {
        Outcome::reproduces_with(format!(
            "a jump at each of the {} named positions",
            tested.len()
        ))
    } else if passed.is_empty() {
        Outcome::does_not_reproduce(format!(
            "no jump at any named position; jumps above {:.1}% would have been seen",
            100.0 * detectable
        ))
    } else {
        Outcome::partly(format!(
            "a jump at {} of {} named positions",
            passed.len(),
            tested.len()
        ))
    };
    let test = format!(
        "A one-sided test at each position named in advance: of the gaps touching it, the one with the larger z (the detector's step statistic, method below) must reach z >= {z_needed:.2} (5% over the {} gaps looked at, Bonferroni; not the search-wide 5 meant for every gap) and at least {:.0}% of the step time (the detector's size floor), and not be a spike (the next gap falling back by half of it, clearly). Reproduces if every tested position passes, partly if some, does not reproduce if none. At this noise steps above {:.1}% could pass. Beside it, a permutation test of how the named gaps rank among all gaps. This judges the jumps, not the seed's explanation of them (PCIe lanes)",
        2 * claimed.len(),
        100.0 * opts.min_relative,
        100.0 * detectable
    );
    Finding::new(claim, "jumps-at", outcome, measured.join("; "), test).with_quantities(
        [("z_needed", z_needed), ("detectable_relative", detectable)]
            .into_iter()
            .chain(rank_p.map(|p| ("rank_p", p))),
    )
}

pub(super) fn no_jumps_at(a: &Analysis, positions: &[u32], margin: f64) -> Finding {
    let claim = ClaimText::new(
        format!("No jumps at {} (unlike VGG)", list(positions)),
        SEEDS,
    );
    // Absence at every position is an intersection of one-sided tests: no correction needed.
    let z = named_position_z(1);
    let mut measured = vec![];
    let (mut shown, mut refuted, mut tested) = (0, 0, 0);
    let mut widest: f64 = 0.0;
    for &b in positions {
        let Some((g, lo, hi)) = bounds_at(a, b, z) else {
            measured.push(format!("{b}: not tested"));
            continue;
        };
        tested += 1;
        widest = widest.max(hi - g.relative);
        if hi < margin && lo > -margin {
            shown += 1;
        } else if lo > margin {
            refuted += 1;
        }
        measured.push(format!(
            "{b}: {} → {} {:+.1}% (90% interval {:+.1}% to {:+.1}%)",
            g.previous_batch_size,
            g.batch_size,
            100.0 * g.relative,
            100.0 * lo,
            100.0 * hi
        ));
    }
    let outcome = if tested == 0 {
        Outcome::cannot_test("no named position inside the sweep")
    } else if refuted > 0 {
        Outcome::does_not_reproduce(format!(
            "a step above {:.0}% at {refuted} of {tested} positions",
            100.0 * margin
        ))
    } else if shown == tested {
        Outcome::reproduces_with(format!("every step within ±{:.0}%", 100.0 * margin))
    } else {
        Outcome::inconclusive(format!(
            "a step's 90% interval is ±{:.1}% of the step time; the margin is ±{:.0}%",
            100.0 * widest,
            100.0 * margin
        ))
    };
    let test = format!(
        "A claim of absence, with a margin: at each named position the step statistic of the gap touching it with the larger z (method below), as a fraction of the step time; no jump where its 90% interval lies inside ±{:.0}% (two one-sided tests). Reproduces if every tested position shows no jump, does not reproduce if a step's interval lies wholly above the margin anywhere, inconclusive otherwise",
        100.0 * margin
    );
    Finding::new(claim, "no-jumps-at", outcome, measured.join("; "), test)
        .with_quantities([("margin", margin), ("widest_half_interval", widest)])
}

/// The seed's "why do we not see double the training time": at each named position, the step
/// time after the jump over the time before it (1 + the step's relative height, with its
/// one-sided 95% bounds) stays below `max_ratio`. Every position must show it (an intersection
/// of one-sided tests, so no correction for their number).
pub(super) fn jumps_below(a: &Analysis, positions: &[u32], max_ratio: f64) -> Finding {
    let claim = ClaimText::new(
        format!(
            "The jumps at {} stay below {max_ratio} times the step time (\"why do we not see the training time double\")",
            list(positions)
        ),
        SEEDS,
    );
    let z = named_position_z(1);
    let (mut shown, mut refuted, mut tested) = (0, 0, 0);
    let mut measured = vec![];
    let mut largest: f64 = 0.0;
    for &b in positions {
        let Some((g, lo, hi)) = bounds_at(a, b, z) else {
            measured.push(format!("{b}: not tested"));
            continue;
        };
        tested += 1;
        let (low, high) = (1.0 + lo, 1.0 + hi);
        largest = largest.max(high);
        shown += usize::from(high < max_ratio);
        refuted += usize::from(low >= max_ratio);
        measured.push(format!(
            "{b}: {} → {} x{:.3} (one-sided 95% bounds x{low:.3} to x{high:.3})",
            g.previous_batch_size,
            g.batch_size,
            1.0 + g.relative
        ));
    }
    let outcome = if tested == 0 {
        Outcome::cannot_test("no named position inside the sweep")
    } else if refuted > 0 {
        Outcome::does_not_reproduce(format!(
            "the step time reaches x{max_ratio} at {refuted} of {tested} positions"
        ))
    } else if shown == tested {
        Outcome::reproduces_with(format!("at most x{largest:.3} at the upper bounds"))
    } else {
        Outcome::inconclusive(format!(
            "a bound up to x{largest:.3} against the limit x{max_ratio}"
        ))
    };
    let test = format!(
        "At each named position, the gap touching it with the larger z (the step statistic, method below): the step time after over before, 1 + its relative height, with one-sided 95% bounds from its z. Reproduces if every upper bound lies below x{max_ratio}, does not reproduce if a lower bound reaches it, inconclusive otherwise. It holds trivially where there is no jump at all: it says the steps are not doublings, not that they exist (the jumps claim does)"
    );
    Finding::new(
        claim,
        "jump-below-ratio",
        outcome,
        measured.join("; "),
        test,
    )
    .with_quantities([("max_ratio", max_ratio), ("largest_upper_bound", largest)])
}
