//! The accuracy rules: a fall, an equivalence, a non-inferiority, a contrast between two lines
//! and a superiority at one batch size, each on a signed combination of cells' test accuracies:
//! paired by seed where every cell has the same seeds (the seeds' own differences), else with
//! Welch's standard error.

use serde::Serialize;
use std::collections::BTreeMap;

use batchlab_method::tests_of_claims::{
    critical, decrease, equivalence, increase, non_inferiority, Arm, Decision, Difference, ALPHA,
};

use super::{ClaimRule, Untested};
use crate::train::analysis::Analysis;
use crate::train::TrainCell;

/// The cells of one line, by batch size.
pub(super) type Line<'a> = BTreeMap<u32, &'a TrainCell>;

/// How a combination of cells was tested.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Pairing {
    /// Paired by seed: every cell has these many same seeds.
    BySeed(usize),
    /// Welch's standard error: the cells' seeds differ.
    Welch,
}

/// A signed combination of cells' accuracies in points, with how it was tested.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct Tested {
    pub d: Difference,
    pub pairing: Pairing,
}

/// A signed combination of cells' accuracies in points, `sum(w * accuracy)`, tested paired by
/// seed when every cell has the same seeds and else by Welch.
fn combine(analysis: &Analysis, terms: &[(f64, &TrainCell)]) -> Option<Tested> {
    let per_seed: Vec<BTreeMap<u64, f64>> = terms
        .iter()
        .map(|(_, c)| {
            analysis
                .ok_records(c)
                .filter(|r| r.test_accuracy.is_finite())
                .map(|r| (r.seed, 100.0 * r.test_accuracy))
                .collect()
        })
        .collect();
    let seeds: Vec<u64> = per_seed[0].keys().copied().collect();
    let shared = per_seed
        .iter()
        .all(|m| m.keys().copied().eq(seeds.iter().copied()));
    if shared && seeds.len() >= 2 {
        let values: Vec<f64> = seeds
            .iter()
            .map(|s| {
                terms
                    .iter()
                    .zip(&per_seed)
                    .map(|((w, _), m)| w * m[s])
                    .sum()
            })
            .collect();
        return Some(Tested {
            d: Difference::one_sample(Arm::of(&values))?,
            pairing: Pairing::BySeed(seeds.len()),
        });
    }
    let arms: Vec<(f64, Arm)> = terms
        .iter()
        .map(|(w, c)| {
            (
                *w,
                Arm {
                    mean: 100.0 * c.test_accuracy_mean,
                    sd: 100.0 * c.test_accuracy_std,
                    n: c.ok,
                },
            )
        })
        .collect();
    Some(Tested {
        d: Difference::combine(&arms)?,
        pairing: Pairing::Welch,
    })
}

/// The cells a rule needs, or why it cannot be tested.
fn cells_at<'a>(line: &Line<'a>, sizes: &[u32]) -> Result<Vec<&'a TrainCell>, Untested> {
    sizes
        .iter()
        .map(|b| line.get(b).copied())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Untested::NotRun(sizes.to_vec()))
}

/// A single-line rule decided: the change of the accuracy from `from` (`cells.0`) to `to`,
/// tested, and what the rule's test decided.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct Change<'a> {
    #[serde(serialize_with = "super::as_batch::pair")]
    pub cells: (&'a TrainCell, &'a TrainCell),
    pub tested: Tested,
    pub decided: Decision,
}

/// The single-line rules: the change of the accuracy from `from` to `to`, decided by `rule`'s
/// test.
pub(super) fn accuracy<'a>(
    analysis: &Analysis,
    line: &Line<'a>,
    from: u32,
    to: u32,
    rule: &ClaimRule,
) -> Result<Change<'a>, Untested> {
    let c = cells_at(line, &[from, to])?;
    let (a, b) = (c[0], c[1]);
    let tested = combine(analysis, &[(-1.0, a), (1.0, b)]).ok_or(Untested::TooFewSeeds)?;
    let d = &tested.d;
    let decided = match rule {
        ClaimRule::AccuracyHolds { margin, .. } => equivalence(d, *margin),
        ClaimRule::AccuracyDoesNotFall { margin, .. } => non_inferiority(d, *margin),
        ClaimRule::AccuracyRises { .. } => increase(d),
        // A fall beyond the stated size: (to - from) + margin below zero.
        ClaimRule::AccuracyFalls { margin, .. } if *margin > 0.0 => decrease(&Difference {
            diff: d.diff + margin,
            ..*d
        }),
        _ => decrease(d),
    };
    Ok(Change {
        cells: (a, b),
        tested,
        decided,
    })
}

/// Two lines compared: the claim's line's cells and `versus`'s (at `from` and `to`, or at one
/// batch size), the contrast tested, and whether it lies above zero.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Versus<'a> {
    #[serde(serialize_with = "super::as_batch::many")]
    pub line: Vec<&'a TrainCell>,
    #[serde(serialize_with = "super::as_batch::many")]
    pub versus: Vec<&'a TrainCell>,
    pub tested: Tested,
    pub decided: Decision,
}

/// A contrast between two lines: the claim's line falls less from `from` to `to` than
/// `versus` does, `(a_to - a_from) - (v_to - v_from) > 0`.
pub(super) fn falls_less_than<'a>(
    analysis: &Analysis,
    line: &Line<'a>,
    versus: &Line<'a>,
    (from, to): (u32, u32),
) -> Result<Versus<'a>, Untested> {
    let (a, v) = (cells_at(line, &[from, to])?, cells_at(versus, &[from, to])?);
    let terms = [(-1.0, a[0]), (1.0, a[1]), (1.0, v[0]), (-1.0, v[1])];
    let tested = combine(analysis, &terms).ok_or(Untested::TooFewSeeds)?;
    Ok(Versus {
        decided: increase(&tested.d),
        line: a,
        versus: v,
        tested,
    })
}

/// A superiority between two lines at one batch size: the claim's line is more accurate than
/// `versus` at `at`.
pub(super) fn higher_than<'a>(
    analysis: &Analysis,
    line: &Line<'a>,
    versus: &Line<'a>,
    at: u32,
) -> Result<Versus<'a>, Untested> {
    let (a, v) = (cells_at(line, &[at])?, cells_at(versus, &[at])?);
    let tested = combine(analysis, &[(-1.0, v[0]), (1.0, a[0])]).ok_or(Untested::TooFewSeeds)?;
    Ok(Versus {
        decided: increase(&tested.d),
        line: a,
        versus: v,
        tested,
    })
}

/// Which batch sizes could be best, decided: the best observed cell, each other batch size's
/// deficit against it with its one-sided Bonferroni bound, the batch sizes that could be best
/// and the widest bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct BestBatch<'a> {
    #[serde(serialize_with = "super::as_batch::one")]
    pub top: &'a TrainCell,
    /// (batch size, its accuracy minus the best's in points, the bound's half-width).
    pub against: Vec<(u32, f64, f64)>,
    pub possible: Vec<u32>,
    pub widest: f64,
}

impl BestBatch<'_> {
    /// Shown when only `claimed` could be best, refuted when it is left out, else open.
    pub fn decided(&self, claimed: u32) -> Decision {
        if !self.possible.contains(&claimed) {
            Decision::Refuted
        } else if self.possible.len() == 1 {
            Decision::Shown
        } else {
            Decision::Open
        }
    }
}

/// "The best batch size is `claimed`": the batch sizes that could be best, a confidence set
/// (multiple comparisons with the best, Bonferroni): a batch size is left out when the best
/// observed one is more accurate than it at the one-sided level ALPHA / (sizes - 1). Reproduces
/// when the set is `claimed` alone, does not reproduce when `claimed` is left out, inconclusive
/// when the seeds cannot tell it from others.
pub(super) fn best_batch<'a>(
    analysis: &Analysis,
    line: &Line<'a>,
    claimed: u32,
) -> Result<BestBatch<'a>, Untested> {
    let &top = line
        .values()
        .filter(|c| c.test_accuracy_mean.is_finite())
        .max_by(|a, b| a.test_accuracy_mean.total_cmp(&b.test_accuracy_mean))
        .ok_or(Untested::NoAccuracy)?;
    if !line.contains_key(&claimed) {
        return Err(Untested::BatchNotRun(claimed));
    }
    if line.len() < 2 {
        // The one batch size run is the best by construction: a test that cannot fail.
        return Err(Untested::OneBatchSize);
    }
    let others = (line.len() - 1) as f64;
    let alpha = ALPHA / others;
    let mut best = BestBatch {
        top,
        against: vec![],
        possible: vec![],
        widest: 0.0,
    };
    for (&b, &c) in line {
        if b == top.batch_size {
            best.possible.push(b);
            continue;
        }
        let d = combine(analysis, &[(-1.0, c), (1.0, top)])
            .ok_or(Untested::TooFewSeeds)?
            .d;
        let half = critical(alpha, d.df) * d.se;
        best.widest = best.widest.max(half);
        if d.diff - half <= 0.0 {
            best.possible.push(b);
        }
        best.against.push((b, -d.diff, half));
    }
    Ok(best)
}
