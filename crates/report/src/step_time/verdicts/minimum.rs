//! "One below or one above it is slower" at the step level (seed 002's off-by-one, read on a
//! sweep rather than on whole trainings): a named batch size against its two neighbours by the
//! time a step takes per example, paired round by round. A sweep visits every batch size once a
//! round, in a shuffled order, so the rounds are the independent units and a round's drift of
//! the machine falls on all three sizes alike; the samples of one visit follow one another and
//! are not. The decision is `tests_of_claims::local_minimum`'s, the one the training rule of
//! the same name takes. The reading is values; `words` words it.

use batchlab_method::stats::median;
use batchlab_method::tests_of_claims::{local_minimum, refutes_minimum, Arm, Decision, Difference};
use serde::Serialize;

use crate::step_time::analysis::Analysis;

/// One neighbour against the named batch size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Side {
    pub batch_size: u32,
    /// The median over its rounds of the visit's median step time.
    pub median_ms: f64,
    /// Rounds that measured both it and the named size.
    pub rounds: usize,
    /// The mean over those rounds of ln(its ms per example / the named size's), with its
    /// one-sample standard error.
    pub difference: Difference,
}

/// A local minimum at a named batch size, as values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Minimum {
    /// Batch sizes of the three with no ok round in the sweep.
    NotMeasured(Vec<u32>),
    /// A neighbour shares fewer than two rounds with the named size: no spread to test against.
    TooFewRounds { batch_size: u32, rounds: usize },
    /// Both neighbours against the named size, and what the rule decided; `faster` names the
    /// neighbours shown faster per example (those that refute it).
    Measured {
        at: u32,
        at_ms: f64,
        sides: Vec<Side>,
        decided: Decision,
        faster: Vec<u32>,
    },
}

/// Whether `[below, at, above]` is a local minimum of the time per example.
pub(crate) fn local_minimum_at(a: &Analysis, [below, at, above]: [u32; 3]) -> Minimum {
    let visits = |b: u32| a.round_medians.get(&b).filter(|rounds| !rounds.is_empty());
    let missing: Vec<u32> = [below, at, above]
        .into_iter()
        .filter(|&b| visits(b).is_none())
        .collect();
    let (Some(named), true) = (visits(at), missing.is_empty()) else {
        return Minimum::NotMeasured(missing);
    };
    let mut sides = vec![];
    for b in [below, above] {
        let neighbour = visits(b).unwrap_or_else(|| unreachable!("checked above"));
        let per_example = |ms: f64, b: u32| (ms / f64::from(b)).ln();
        let paired: Vec<f64> = neighbour
            .iter()
            .filter_map(|(round, &ms)| {
                let there = *named.get(round)?;
                Some(per_example(ms, b) - per_example(there, at))
            })
            .collect();
        let Some(difference) = Difference::one_sample(Arm::of(&paired)) else {
            return Minimum::TooFewRounds {
                batch_size: b,
                rounds: paired.len(),
            };
        };
        sides.push(Side {
            batch_size: b,
            median_ms: median(&neighbour.values().copied().collect::<Vec<_>>()),
            rounds: paired.len(),
            difference,
        });
    }
    let differences: Vec<Difference> = sides.iter().map(|s| s.difference).collect();
    Minimum::Measured {
        at,
        at_ms: median(&named.values().copied().collect::<Vec<_>>()),
        decided: local_minimum(&differences),
        faster: sides
            .iter()
            .filter(|s| refutes_minimum(&s.difference, sides.len()))
            .map(|s| s.batch_size)
            .collect(),
        sides,
    }
}
