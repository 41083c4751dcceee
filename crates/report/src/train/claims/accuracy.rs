//! The accuracy rules: a fall, an equivalence, a non-inferiority, a contrast between two lines
//! and a superiority at one batch size, each on a signed combination of cells' test accuracies:
//! paired by seed where every cell has the same seeds (the seeds' own differences), else with
//! Welch's standard error.

use std::collections::BTreeMap;

use batchlab_method::findings::Outcome;
use batchlab_method::tests_of_claims::{
    critical, decrease, equivalence, increase, non_inferiority, Arm, Decision, Difference, ALPHA,
};

use super::{ClaimRule, Judged};
use crate::numbers::fixed;
use crate::train::analysis::Analysis;
use crate::train::TrainCell;

/// The cells of one line, by batch size.
pub(super) type Line<'a> = BTreeMap<u32, &'a TrainCell>;

/// A signed combination of cells' accuracies in points, `sum(w * accuracy)`, tested paired by
/// seed when every cell has the same seeds and else by Welch; the text says which.
fn combine(analysis: &Analysis, terms: &[(f64, &TrainCell)]) -> Option<(Difference, String)> {
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
        let d = Difference::one_sample(Arm::of(&values))?;
        return Some((d, format!("paired by seed, {} seeds", seeds.len())));
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
    Some((
        Difference::combine(&arms)?,
        "Welch: the cells' seeds differ".into(),
    ))
}

/// "81.30% (sd 0.63, 5 seeds) at 16".
fn cell(c: &TrainCell) -> String {
    format!(
        "{}% (sd {}, {} seeds) at {}",
        fixed(100.0 * c.test_accuracy_mean, 2),
        fixed(100.0 * c.test_accuracy_std, 2),
        c.ok,
        c.batch_size
    )
}

/// The difference with its interval and how it was tested.
fn interval_text(d: &Difference, how: &str) -> String {
    let (low, high) = d.interval90();
    format!(
        "{:+.2} points (90% interval {:+.2} to {:+.2}; standard error {}, {:.1} degrees of freedom, {how})",
        d.diff,
        low,
        high,
        fixed(d.se, 2),
        d.df
    )
}

fn quantities(d: &Difference) -> Vec<(&'static str, f64)> {
    let (low, high) = d.interval90();
    vec![
        ("diff_points", d.diff),
        ("se_points", d.se),
        ("df", d.df),
        ("low90_points", low),
        ("high90_points", high),
    ]
}

/// The cells a rule needs, or why it cannot be tested.
fn cells_at<'a>(line: &Line<'a>, sizes: &[u32]) -> Result<Vec<&'a TrainCell>, Judged> {
    sizes
        .iter()
        .map(|b| line.get(b).copied())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            let sizes: Vec<String> = sizes.iter().map(u32::to_string).collect();
            Judged::untested(
                "not measured",
                format!("a batch size of {} was not run", sizes.join(", ")),
            )
        })
}

/// A one-sided test that `d` lies above zero: `shown`, refuted (with what was found instead), or
/// inconclusive with the smallest `what` it could have seen.
fn above_zero(d: &Difference, shown: Outcome, refuted: String, what: &str) -> Outcome {
    match increase(d) {
        Decision::Shown => shown,
        Decision::Refuted => Outcome::does_not_reproduce(refuted),
        Decision::Open => Outcome::inconclusive(format!(
            "{what} of {} points",
            fixed(d.critical() * d.se, 2)
        )),
    }
}

fn too_few() -> Judged {
    Judged::untested(
        "fewer than two ok seeds in a cell",
        "fewer than two ok seeds in a cell: no seed spread",
    )
}

/// The single-line rules: the change of the accuracy from `from` to `to`.
pub(super) fn accuracy(
    analysis: &Analysis,
    line: &Line,
    from: u32,
    to: u32,
    rule: &ClaimRule,
) -> Judged {
    let (a, b) = match cells_at(line, &[from, to]) {
        Ok(c) => (c[0], c[1]),
        Err(j) => return j,
    };
    let Some((d, how)) = combine(analysis, &[(-1.0, a), (1.0, b)]) else {
        return too_few();
    };
    let (low, _) = d.interval90();
    let half = d.critical() * d.se;
    let margin_text = |m: f64| fixed(m, 2);
    let outcome = match rule {
        ClaimRule::AccuracyHolds { margin, .. } => match equivalence(&d, *margin) {
            Decision::Shown => {
                Outcome::reproduces_with(format!("within ±{} points", margin_text(*margin)))
            }
            Decision::Refuted => Outcome::does_not_reproduce(format!(
                "it {} by {:.2} points, more than the margin of {}",
                if d.diff < 0.0 { "falls" } else { "rises" },
                d.diff.abs(),
                margin_text(*margin)
            )),
            Decision::Open => Outcome::inconclusive(format!(
                "the 90% interval is ±{} points wide against a margin of ±{}",
                fixed(half, 2),
                margin_text(*margin)
            )),
        },
        ClaimRule::AccuracyDoesNotFall { margin, .. } => match non_inferiority(&d, *margin) {
            Decision::Shown => Outcome::reproduces_with(format!(
                "no fall of {} points or more",
                margin_text(*margin)
            )),
            Decision::Refuted => Outcome::does_not_reproduce(format!(
                "it falls by {:.2} points, more than the margin of {}",
                -d.diff,
                margin_text(*margin)
            )),
            Decision::Open => Outcome::inconclusive(format!(
                "a fall is bounded only to {} points against a margin of {}",
                fixed(-low, 2),
                margin_text(*margin)
            )),
        },
        ClaimRule::AccuracyRises { .. } => match increase(&d) {
            Decision::Shown => Outcome::reproduces(),
            Decision::Refuted => Outcome::does_not_reproduce("it falls"),
            Decision::Open => Outcome::inconclusive(format!("a rise of {} points", fixed(half, 2))),
        },
        ClaimRule::AccuracyFalls { margin, .. } if *margin > 0.0 => {
            // A fall beyond the stated size: (to - from) + margin below zero.
            let beyond = Difference {
                diff: d.diff + margin,
                ..d
            };
            match decrease(&beyond) {
                Decision::Shown => Outcome::reproduces_with(format!(
                    "a fall of more than {} points",
                    margin_text(*margin)
                )),
                Decision::Refuted => Outcome::does_not_reproduce(format!(
                    "the fall is bounded below {} points (at most {} points)",
                    margin_text(*margin),
                    fixed(-low, 2)
                )),
                Decision::Open => Outcome::inconclusive(format!(
                    "a fall of {} points either side of the stated {}",
                    fixed(half, 2),
                    margin_text(*margin)
                )),
            }
        }
        _ => match decrease(&d) {
            Decision::Shown => Outcome::reproduces(),
            Decision::Refuted => Outcome::does_not_reproduce("it rises"),
            Decision::Open => Outcome::inconclusive(format!("a fall of {} points", fixed(half, 2))),
        },
    };
    Judged {
        outcome,
        measured: format!("{} → {}: {}", cell(a), cell(b), interval_text(&d, &how)),
        quantities: quantities(&d),
    }
}

/// A contrast between two lines: the claim's line falls less from `from` to `to` than
/// `versus` does, `(a_to - a_from) - (v_to - v_from) > 0`.
pub(super) fn falls_less_than(
    analysis: &Analysis,
    line: &Line,
    versus: &Line,
    (from, to): (u32, u32),
    versus_name: &str,
) -> Judged {
    let (a, v) = match (cells_at(line, &[from, to]), cells_at(versus, &[from, to])) {
        (Ok(a), Ok(v)) => (a, v),
        (Err(j), _) | (_, Err(j)) => return j,
    };
    let terms = [(-1.0, a[0]), (1.0, a[1]), (1.0, v[0]), (-1.0, v[1])];
    let Some((d, how)) = combine(analysis, &terms) else {
        return too_few();
    };
    let change = |c: &[&TrainCell]| 100.0 * (c[1].test_accuracy_mean - c[0].test_accuracy_mean);
    let outcome = above_zero(
        &d,
        Outcome::reproduces_with(format!(
            "it loses {:.2} points less than {versus_name}",
            d.diff
        )),
        format!("it loses {:.2} points more than {versus_name}", -d.diff),
        "a difference between the two changes",
    );
    Judged {
        outcome,
        measured: format!(
            "from {from} to {to}: {:+.2} points on this line, {:+.2} on {versus_name}; the difference {}",
            change(&a),
            change(&v),
            interval_text(&d, &how)
        ),
        quantities: quantities(&d),
    }
}

/// A superiority between two lines at one batch size: the claim's line is more accurate than
/// `versus` at `at`.
pub(super) fn higher_than(
    analysis: &Analysis,
    line: &Line,
    versus: &Line,
    at: u32,
    versus_name: &str,
) -> Judged {
    let (a, v) = match (cells_at(line, &[at]), cells_at(versus, &[at])) {
        (Ok(a), Ok(v)) => (a[0], v[0]),
        (Err(j), _) | (_, Err(j)) => return j,
    };
    let Some((d, how)) = combine(analysis, &[(-1.0, v), (1.0, a)]) else {
        return too_few();
    };
    let outcome = above_zero(
        &d,
        Outcome::reproduces(),
        format!("{versus_name} is more accurate at {at}"),
        "a difference",
    );
    Judged {
        outcome,
        measured: format!(
            "{} against {versus_name}'s {}: {}",
            cell(a),
            cell(v),
            interval_text(&d, &how)
        ),
        quantities: quantities(&d),
    }
}

/// "The best batch size is `claimed`": the batch sizes that could be best, a confidence set
/// (multiple comparisons with the best, Bonferroni): a batch size is left out when the best
/// observed one is more accurate than it at the one-sided level ALPHA / (sizes - 1). Reproduces
/// when the set is `claimed` alone, does not reproduce when `claimed` is left out, inconclusive
/// when the seeds cannot tell it from others.
pub(super) fn best_batch(analysis: &Analysis, line: &Line, claimed: u32) -> Judged {
    let Some(&top) = line
        .values()
        .filter(|c| c.test_accuracy_mean.is_finite())
        .max_by(|a, b| a.test_accuracy_mean.total_cmp(&b.test_accuracy_mean))
    else {
        return Judged::untested("no cell with an accuracy", "no cell with an accuracy");
    };
    if !line.contains_key(&claimed) {
        return Judged::untested("not measured", format!("batch {claimed} was not run"));
    }
    if line.len() < 2 {
        // The one batch size run is the best by construction: a test that cannot fail.
        return Judged::untested(
            "one batch size",
            "one batch size was run: it is the best by construction, nothing to compare it with",
        );
    }
    let others = (line.len() - 1) as f64;
    let alpha = ALPHA / others;
    let (mut possible, mut widest, mut parts) = (vec![], 0.0f64, vec![]);
    for (&b, &c) in line {
        if b == top.batch_size {
            possible.push(b);
            continue;
        }
        let Some((d, _)) = combine(analysis, &[(-1.0, c), (1.0, top)]) else {
            return too_few();
        };
        let half = critical(alpha, d.df) * d.se;
        widest = widest.max(half);
        if d.diff - half <= 0.0 {
            possible.push(b);
        }
        parts.push(format!(
            "{b}: {:+.2} points (bound {:+.2})",
            -d.diff,
            half - d.diff
        ));
    }
    let sizes: Vec<String> = possible.iter().map(u32::to_string).collect();
    let outcome = if !possible.contains(&claimed) {
        Outcome::does_not_reproduce(format!(
            "{} is best here; {claimed} is below it beyond the seeds' spread",
            top.batch_size
        ))
    } else if possible.len() == 1 {
        Outcome::reproduces()
    } else {
        Outcome::inconclusive(format!(
            "a difference of {} points from the best; could be best: {}",
            fixed(widest, 2),
            sizes.join(", ")
        ))
    };
    Judged {
        outcome,
        measured: format!(
            "best observed {} at {}; against it: {}; could be best: {}",
            fixed(100.0 * top.test_accuracy_mean, 2),
            top.batch_size,
            parts.join(", "),
            sizes.join(", ")
        ),
        quantities: vec![
            ("best_observed", f64::from(top.batch_size)),
            ("could_be_best", possible.len() as f64),
        ],
    }
}
