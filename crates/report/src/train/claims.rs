//! The verdict on each claim a training study's config names ([`TrainClaim`]), by the rule of
//! its [`ClaimRule`], stated in the verdict's `test` column with what it could detect; and
//! Raschka's table form (seed 002): each batch size's steps, time and accuracy relative to a
//! reference batch size, beside the published ratios.

use std::collections::BTreeMap;

use super::analysis::{matches, Analysis, SeriesKey};
use super::markdown::reading::num;
use super::{ClaimRule, TrainCell, TrainClaim, TrainContext};
use crate::markdown::table;
use crate::verdict::Verdict;

/// A difference of means counts when it exceeds this many standard errors (about a 95% test
/// for normally distributed seed noise).
const Z: f64 = 2.0;

/// Every claim of the context, judged.
pub(super) fn judge(ctx: &TrainContext, analysis: &Analysis) -> Vec<Verdict> {
    ctx.claims.iter().map(|c| judge_one(c, analysis)).collect()
}

fn judge_one(claim: &TrainClaim, analysis: &Analysis) -> Verdict {
    let quoted = format!("\"{}\" ({})", claim.claim, claim.source);
    let (measured, verdict, test) = match line_cells(claim, analysis) {
        Err(why) => (
            "not measured".to_string(),
            format!("cannot be tested here ({why})"),
            rule_words(&claim.rule),
        ),
        Ok(cells) => match &claim.rule {
            ClaimRule::AccuracyFalls { from, to } => accuracy(&cells, *from, *to, Expect::Falls),
            ClaimRule::AccuracyHolds { from, to } => accuracy(&cells, *from, *to, Expect::Holds),
            ClaimRule::AccuracyDoesNotFall { from, to } => {
                accuracy(&cells, *from, *to, Expect::DoesNotFall)
            }
            ClaimRule::PowersOfTwoFlat { tolerance } => powers_of_two(&cells, analysis, *tolerance),
            ClaimRule::TimeFollowsSteps { reference } => {
                time_follows_steps(&cells, analysis, *reference)
            }
        },
    };
    Verdict {
        claim: format!("{quoted}; {} line, {} budget", claim.series, claim.budget),
        measured,
        verdict,
        test,
    }
}

/// The cells of the one line (optimizer, variant) the claim's series names under its budget,
/// by batch size.
fn line_cells<'a>(
    claim: &'a TrainClaim,
    analysis: &'a Analysis,
) -> Result<BTreeMap<u32, &'a TrainCell>, String> {
    let lines: Vec<&SeriesKey> = analysis
        .series
        .iter()
        .filter(|s| matches(&claim.series, &s.optimizer, &s.variant))
        .collect();
    let line = match lines.as_slice() {
        [one] => *one,
        [] => return Err(format!("no line {} was recorded", claim.series)),
        many => {
            return Err(format!(
                "{} names {} lines; name one as optimizer/variant",
                claim.series,
                many.len()
            ))
        }
    };
    let cells: BTreeMap<u32, &TrainCell> = analysis
        .cells_of(&claim.budget, line)
        .map(|c| (c.batch_size, c))
        .collect();
    if cells.is_empty() {
        return Err(format!("no trial under the {} budget", claim.budget));
    }
    Ok(cells)
}

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Falls,
    Holds,
    DoesNotFall,
}

/// What a rule found: (measured, verdict, test).
type Parts = (String, String, String);

fn accuracy(cells: &BTreeMap<u32, &TrainCell>, from: u32, to: u32, expect: Expect) -> Parts {
    let test = rule_words(&match expect {
        Expect::Falls => ClaimRule::AccuracyFalls { from, to },
        Expect::Holds => ClaimRule::AccuracyHolds { from, to },
        Expect::DoesNotFall => ClaimRule::AccuracyDoesNotFall { from, to },
    });
    let (Some(a), Some(b)) = (cells.get(&from), cells.get(&to)) else {
        return (
            "not measured".into(),
            format!("cannot be tested here (batch {from} or {to} was not run)"),
            test,
        );
    };
    if a.ok < 2 || b.ok < 2 {
        return (
            format!("{} ok seeds at {from}, {} at {to}", a.ok, b.ok),
            "cannot be tested here (fewer than two ok seeds in a cell: no seed spread)".into(),
            test,
        );
    }
    let diff = 100.0 * (b.test_accuracy_mean - a.test_accuracy_mean);
    let se = 100.0
        * (a.test_accuracy_std.powi(2) / a.ok as f64 + b.test_accuracy_std.powi(2) / b.ok as f64)
            .sqrt();
    let cell = |c: &TrainCell| {
        format!(
            "{}% (sd {}, {} seeds) at {}",
            num(100.0 * c.test_accuracy_mean, 2),
            num(100.0 * c.test_accuracy_std, 2),
            c.ok,
            c.batch_size
        )
    };
    let measured = format!(
        "{} → {}: {:+.2} points (standard error {})",
        cell(a),
        cell(b),
        diff,
        num(se, 2)
    );
    let bound = Z * se;
    let verdict = match expect {
        Expect::Falls if diff < -bound => "reproduces".to_string(),
        Expect::Falls if diff > bound => "does not reproduce (it rises)".to_string(),
        Expect::Falls => format!(
            "does not reproduce (no fall this test can see; a fall above {} points would have been seen)",
            num(bound, 2)
        ),
        Expect::Holds if diff.abs() <= bound => format!(
            "reproduces (within {} points, the smallest change this test could see)",
            num(bound, 2)
        ),
        Expect::Holds if diff < 0.0 => format!("does not reproduce (it falls by {:.2} points)", -diff),
        Expect::Holds => format!("does not reproduce (it rises by {diff:.2} points)"),
        Expect::DoesNotFall if diff < -bound => {
            format!("does not reproduce (it falls by {:.2} points)", -diff)
        }
        Expect::DoesNotFall if diff > bound => format!("reproduces (it rises by {diff:.2} points)"),
        Expect::DoesNotFall => format!(
            "reproduces (no fall above {} points, the smallest this test could see)",
            num(bound, 2)
        ),
    };
    (measured, verdict, test)
}

/// The widest seed range of the cells' training times, relative to their medians.
fn widest_time_spread(analysis: &Analysis, cells: &[&TrainCell]) -> f64 {
    cells
        .iter()
        .map(|c| {
            let (lo, hi) = analysis.time_range(c);
            (hi - lo) / c.train_seconds_median
        })
        .filter(|s| s.is_finite())
        .fold(0.0, f64::max)
}

fn powers_of_two(cells: &BTreeMap<u32, &TrainCell>, analysis: &Analysis, tolerance: f64) -> Parts {
    let test = rule_words(&ClaimRule::PowersOfTwoFlat { tolerance });
    let mut parts = vec![];
    let (mut noticeable, mut powers) = (0, 0);
    let mut involved = vec![];
    for (cell, neighbours) in Analysis::powers_of_two_with_neighbours(cells.values().copied()) {
        let p = cell.batch_size;
        powers += 1;
        involved.push(cell);
        let mut any = false;
        let sides: Vec<String> = neighbours
            .iter()
            .map(|n| {
                involved.push(n);
                let relative = cell.train_seconds_median / n.train_seconds_median - 1.0;
                let apart = analysis.times_apart(cell, n);
                let counts = relative.abs() > tolerance && apart;
                any |= counts;
                format!(
                    "{:+.1}% vs {} (seed ranges {}){}",
                    100.0 * relative,
                    n.batch_size,
                    if apart { "apart" } else { "overlap" },
                    if counts { ", noticeable" } else { "" }
                )
            })
            .collect();
        noticeable += usize::from(any);
        parts.push(format!(
            "{p} ({} s): {}",
            num(cell.train_seconds_median, 2),
            sides.join(", ")
        ));
    }
    if powers == 0 {
        return (
            "no power of two with a neighbour one below or above it".into(),
            "cannot be tested here (the grid has no power of two beside its neighbours)".into(),
            test,
        );
    }
    let verdict = if noticeable == 0 {
        "reproduces".to_string()
    } else if noticeable == powers {
        format!("does not reproduce (every power of two tested, {powers}, differs noticeably)")
    } else {
        format!("partly ({noticeable} of {powers} powers of two differ noticeably)")
    };
    let spread = widest_time_spread(analysis, &involved);
    let test = format!(
        "{test} The seeds' training times here spread by up to {:.1}% of a cell's median: a difference smaller than that cannot be told from the seeds.",
        100.0 * spread
    );
    (parts.join("; "), verdict, test)
}

fn time_follows_steps(
    cells: &BTreeMap<u32, &TrainCell>,
    analysis: &Analysis,
    reference: u32,
) -> Parts {
    let test = rule_words(&ClaimRule::TimeFollowsSteps { reference });
    let Some(&base) = cells.get(&reference) else {
        return (
            "not measured".into(),
            format!("cannot be tested here (batch {reference} was not run)"),
            test,
        );
    };
    let mut parts = vec![];
    let (mut against, mut compared) = (0, 0);
    for (&b, &cell) in cells.iter().filter(|(&b, _)| b != reference) {
        let steps = cell.steps_median / base.steps_median;
        let time = cell.train_seconds_median / base.train_seconds_median;
        if !(steps.is_finite() && time.is_finite()) || steps == 1.0 {
            continue;
        }
        compared += 1;
        let opposite = (steps > 1.0) != (time > 1.0) && analysis.times_apart(cell, base);
        against += usize::from(opposite);
        parts.push(format!(
            "{b}: steps {steps:.2}x, time {time:.2}x{}",
            if opposite { " (opposite)" } else { "" }
        ));
    }
    let verdict = if compared == 0 {
        "cannot be tested here (no other batch size with a different number of steps)".into()
    } else if against == 0 {
        "reproduces".to_string()
    } else if 2 * against < compared {
        format!("partly (the time moves against the steps at {against} of {compared} batch sizes)")
    } else {
        format!(
            "does not reproduce (the time moves against the steps at {against} of {compared} batch sizes)"
        )
    };
    (
        format!("relative to batch {reference}: {}", parts.join("; ")),
        verdict,
        test,
    )
}

/// The rule of a claim in words, as the verdict table states it.
fn rule_words(rule: &ClaimRule) -> String {
    let difference = format!("The difference of the mean test accuracies over the seeds is set against {Z} standard errors of that difference (sqrt(sd₁²/n₁ + sd₂²/n₂), about a 95% test for normal seed noise); a change smaller than that could go unseen.");
    match rule {
        ClaimRule::AccuracyFalls { from, to } => format!(
            "{difference} Reproduces if the accuracy at {to} is lower than at {from} by more than that."
        ),
        ClaimRule::AccuracyHolds { from, to } => format!(
            "{difference} Reproduces if the accuracy at {to} is within that of the accuracy at {from}."
        ),
        ClaimRule::AccuracyDoesNotFall { from, to } => format!(
            "{difference} Reproduces unless the accuracy at {to} is lower than at {from} by more than that."
        ),
        ClaimRule::PowersOfTwoFlat { tolerance } => format!(
            "A power of two differs noticeably from a neighbour one below or above it when their median training times differ by more than {:.0}% and the seeds' min–max ranges do not overlap. Reproduces if no power of two does, partly if some, does not reproduce if every one.",
            100.0 * tolerance
        ),
        ClaimRule::TimeFollowsSteps { reference } => format!(
            "Each batch size against batch {reference}: its median training time should move the way its steps per trial move (fewer steps, less time). A time that moves the other way with the seed ranges apart counts against. Reproduces if none does, partly if fewer than half, does not reproduce at half or more."
        ),
    }
}

/// Raschka's table form for every [`ClaimRule::TimeFollowsSteps`] claim: per batch size, the
/// steps, median training time and mean test accuracy relative to the reference batch size,
/// beside the published training-time ratio where the config gives published minutes.
pub(super) fn relative_tables(ctx: &TrainContext, analysis: &Analysis) -> String {
    let mut md = String::new();
    for claim in &ctx.claims {
        let ClaimRule::TimeFollowsSteps { reference } = claim.rule else {
            continue;
        };
        let Ok(cells) = line_cells(claim, analysis) else {
            continue;
        };
        let Some(&base) = cells.get(&reference) else {
            continue;
        };
        let published = |b: u32| {
            ctx.published.iter().find(|p| {
                p.batch_size == b
                    && p.metric == "train_minutes"
                    && matches(&p.series, &base.optimizer, &base.variant)
            })
        };
        let published_ratio = |b: u32| match (published(b), published(reference)) {
            (Some(p), Some(r)) => format!("{:.2}x", p.value / r.value),
            _ => "–".into(),
        };
        let rows: Vec<Vec<String>> = cells
            .values()
            .map(|c| {
                vec![
                    c.batch_size.to_string(),
                    format!("{:.2}x", c.steps_median / base.steps_median),
                    format!("{:.2}x", c.train_seconds_median / base.train_seconds_median),
                    published_ratio(c.batch_size),
                    format!(
                        "{:+.2}",
                        100.0 * (c.test_accuracy_mean - base.test_accuracy_mean)
                    ),
                ]
            })
            .collect();
        md.push_str(&format!(
            "\nRelative to batch {reference} ({} line, {} budget; Raschka's form):\n\n",
            claim.series, claim.budget
        ));
        md.push_str(&table(
            &[
                "batch",
                "steps per trial",
                "training time",
                "training time, published",
                "test accuracy (points)",
            ],
            &rows,
        ));
    }
    md
}
