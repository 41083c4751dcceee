//! The claims about positions named in advance: jumps at them, no jumps at them, and jumps
//! smaller than a ratio (the seed's "why not double"). One standard decides presence and
//! absence (docs/ARCHITECTURE.md, "Verdicts"): at each named position the step is read at the
//! one gap the registry says the position means ([`Gap`]), with its one-sided 95% bounds; a
//! step is there when its lower bound reaches the claim's margin, absent when its upper bound
//! stays below it, and undecided otherwise. A claim is refuted only by steps bounded on the
//! wrong side of its margin, never by a test that merely failed to find them. The readings are
//! values; `words` words them.

use batchlab_method::tests_of_claims::{named_position_z, named_rank_p};
use serde::Serialize;

use super::RANK_RESAMPLES;
use crate::jumps::{relative_se, Gap, Jump};
use crate::step_time::analysis::Analysis;

/// What the one-sided bounds of a named step say about it against a margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
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
#[derive(Serialize)]
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
pub(super) fn z_one_sided() -> f64 {
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

/// "The step time jumps at b1, b2, ...", as values: every named position with its reading,
/// the named gaps' permutation rank, and what the positions' readings come to.
#[derive(Serialize)]
pub(super) struct JumpsAt<'a> {
    /// Each claimed position and, where tested, its named gap and reading.
    pub named: Vec<(u32, Option<NamedJump<'a>>)>,
    /// The permutation p of the named gaps' summed z, and the numbers behind it.
    pub rank: Option<(f64, usize, usize)>,
    /// The positions that jump, that are bounded below the margin, and that are open.
    pub jumps: Vec<u32>,
    pub none: Vec<u32>,
    pub open: Vec<u32>,
    /// The smallest step an open position would have shown as a jump (0 where none is open).
    pub detectable: f64,
}

pub(super) fn jumps_at<'a>(
    a: &'a Analysis,
    claimed: &[u32],
    gap: Gap,
    margin: f64,
    seed: u64,
) -> JumpsAt<'a> {
    let named = named_jumps(a, claimed, gap, margin);
    let (mut jumps, mut none, mut open, mut indices) = (vec![], vec![], vec![], vec![]);
    // The smallest step an open position would have shown as a jump: the margin plus its
    // one-sided bound's half-width.
    let mut detectable: f64 = 0.0;
    for (b, n) in named.iter().filter_map(|(b, n)| Some((*b, n.as_ref()?))) {
        indices.push(n.index);
        match n.reading {
            Reading::Jump => jumps.push(b),
            Reading::NoJump => none.push(b),
            Reading::Open => {
                open.push(b);
                detectable = detectable.max(margin + (n.high - n.gap.relative));
            }
        }
    }
    let z_all: Vec<f64> = a.gaps.iter().map(|g| g.z).collect();
    let rank = named_rank_p(&z_all, &indices, RANK_RESAMPLES, seed)
        .map(|p| (p, indices.len(), z_all.len()));
    JumpsAt {
        named,
        rank,
        jumps,
        none,
        open,
        detectable,
    }
}

/// "No jumps at b1, b2, ...", as values: every named position with its reading, and how many
/// were tested, shown within ± the margin, and bounded beyond it.
#[derive(Serialize)]
pub(super) struct NoJumpsAt<'a> {
    pub named: Vec<(u32, Option<NamedJump<'a>>)>,
    pub tested: usize,
    pub shown: usize,
    pub refuted: usize,
    /// The widest one-sided half-interval of a tested step.
    pub widest: f64,
}

pub(super) fn no_jumps_at<'a>(
    a: &'a Analysis,
    positions: &[u32],
    gap: Gap,
    margin: f64,
) -> NoJumpsAt<'a> {
    let named = named_jumps(a, positions, gap, margin);
    let (mut shown, mut refuted, mut tested) = (0, 0, 0);
    let mut widest: f64 = 0.0;
    for n in named.iter().filter_map(|(_, n)| n.as_ref()) {
        tested += 1;
        widest = widest.max(n.high - n.gap.relative);
        if n.high < margin && n.low > -margin {
            shown += 1;
        } else if n.low > margin || n.high < -margin {
            refuted += 1;
        }
    }
    NoJumpsAt {
        named,
        tested,
        shown,
        refuted,
        widest,
    }
}

/// The seed's "why not double", as values: every named position with its reading (only
/// jumps are judged), and how many jumps were judged, bounded below `max_ratio` and bounded
/// at or above it, with the largest upper bound of after over before.
#[derive(Serialize)]
pub(super) struct JumpsBelow<'a> {
    pub named: Vec<(u32, Option<NamedJump<'a>>)>,
    pub judged: usize,
    pub shown: usize,
    pub refuted: usize,
    pub largest: f64,
}

/// The seed's "why do we not see double the training time": at each named position where this
/// run shows a jump, the step time after it over the time before (1 + the step's relative
/// height, with its one-sided 95% bounds) stays below `max_ratio`. A claim about the jumps' size
/// cannot be judged where there is no jump: positions without one are left out, and a run
/// without any cannot judge it.
pub(super) fn jumps_below<'a>(
    a: &'a Analysis,
    positions: &[u32],
    gap: Gap,
    margin: f64,
    max_ratio: f64,
) -> JumpsBelow<'a> {
    let named = named_jumps(a, positions, gap, margin);
    let (mut shown, mut refuted, mut judged) = (0, 0, 0);
    let mut largest: f64 = 0.0;
    for n in named
        .iter()
        .filter_map(|(_, n)| n.as_ref().filter(|n| n.reading == Reading::Jump))
    {
        judged += 1;
        let (low, high) = (1.0 + n.low, 1.0 + n.high);
        largest = largest.max(high);
        shown += usize::from(high < max_ratio);
        refuted += usize::from(low >= max_ratio);
    }
    JumpsBelow {
        named,
        judged,
        shown,
        refuted,
        largest,
    }
}
