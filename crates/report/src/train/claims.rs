//! The verdict on each claim a training study's config names ([`TrainClaim`]), by the rule of
//! its [`ClaimRule`] (the tests are `batchlab_method::tests_of_claims`), stated in the
//! finding's `test` with what it could detect; and Raschka's table form (seed 002): each batch
//! size's steps, time and accuracy relative to a reference batch size, beside the published
//! ratios.

use std::collections::BTreeMap;

use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::stats::linear_fit;
use batchlab_method::tests_of_claims::{
    critical, decrease, equivalence, non_inferiority, Arm, Decision, Difference, ALPHA,
};

use super::analysis::{matches, Analysis, SeriesKey};
use super::markdown::reading::num;
use super::{ClaimRule, TrainCell, TrainClaim, TrainContext};
use crate::markdown::table;

/// Every claim of the context, judged.
pub(super) fn judge(ctx: &TrainContext, analysis: &Analysis) -> Vec<Finding> {
    ctx.claims.iter().map(|c| judge_one(c, analysis)).collect()
}

fn rule_name(rule: &ClaimRule) -> &'static str {
    match rule {
        ClaimRule::AccuracyFalls { .. } => "accuracy-falls",
        ClaimRule::AccuracyHolds { .. } => "accuracy-holds",
        ClaimRule::AccuracyDoesNotFall { .. } => "accuracy-does-not-fall",
        ClaimRule::PowersOfTwoFlat { .. } => "powers-of-two-flat",
        ClaimRule::TimeFollowsSteps { .. } => "time-follows-steps",
    }
}

/// What a rule found: outcome, measured, quantities.
struct Judged {
    outcome: Outcome,
    measured: String,
    quantities: Vec<(&'static str, f64)>,
}

impl Judged {
    fn untested(measured: impl Into<String>, why: impl Into<String>) -> Self {
        Judged {
            outcome: Outcome::cannot_test(why),
            measured: measured.into(),
            quantities: vec![],
        }
    }
}

fn judge_one(claim: &TrainClaim, analysis: &Analysis) -> Finding {
    let text = ClaimText::new(claim.claim.clone(), claim.source.clone())
        .with_id(claim.id.clone())
        .scoped(format!("{} line, {} budget", claim.series, claim.budget));
    let judged = match line_cells(claim, analysis) {
        Err(why) => Judged::untested("not measured", why),
        Ok(cells) => match &claim.rule {
            ClaimRule::AccuracyFalls { from, to }
            | ClaimRule::AccuracyHolds { from, to, .. }
            | ClaimRule::AccuracyDoesNotFall { from, to, .. } => {
                accuracy(&cells, *from, *to, &claim.rule)
            }
            ClaimRule::PowersOfTwoFlat { tolerance } => powers_of_two(&cells, analysis, *tolerance),
            ClaimRule::TimeFollowsSteps {
                reference,
                tolerance,
            } => time_follows_steps(&cells, analysis, *reference, *tolerance),
        },
    };
    Finding::new(
        text,
        rule_name(&claim.rule),
        judged.outcome,
        judged.measured,
        rule_words(&claim.rule),
    )
    .with_quantities(judged.quantities)
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

/// A cell's test accuracy in points, as one arm of a difference.
fn accuracy_arm(c: &TrainCell) -> Arm {
    Arm {
        mean: 100.0 * c.test_accuracy_mean,
        sd: 100.0 * c.test_accuracy_std,
        n: c.ok,
    }
}

fn accuracy(cells: &BTreeMap<u32, &TrainCell>, from: u32, to: u32, rule: &ClaimRule) -> Judged {
    let (Some(a), Some(b)) = (cells.get(&from), cells.get(&to)) else {
        return Judged::untested("not measured", format!("batch {from} or {to} was not run"));
    };
    let Some(d) = Difference::welch(accuracy_arm(a), accuracy_arm(b)) else {
        return Judged::untested(
            format!("{} ok seeds at {from}, {} at {to}", a.ok, b.ok),
            "fewer than two ok seeds in a cell: no seed spread",
        );
    };
    let cell = |c: &TrainCell| {
        format!(
            "{}% (sd {}, {} seeds) at {}",
            num(100.0 * c.test_accuracy_mean, 2),
            num(100.0 * c.test_accuracy_std, 2),
            c.ok,
            c.batch_size
        )
    };
    let (low, high) = d.interval90();
    let measured = format!(
        "{} → {}: {:+.2} points (90% interval {:+.2} to {:+.2}; standard error {}, {:.1} degrees of freedom)",
        cell(a),
        cell(b),
        d.diff,
        low,
        high,
        num(d.se, 2),
        d.df
    );
    let half = d.critical() * d.se;
    let outcome = match rule {
        ClaimRule::AccuracyHolds { margin, .. } => match equivalence(&d, *margin) {
            Decision::Shown => {
                Outcome::reproduces_with(format!("within ±{} points", num(*margin, 2)))
            }
            Decision::Refuted if d.diff < 0.0 => Outcome::does_not_reproduce(format!(
                "it falls by {:.2} points, more than the margin of {}",
                -d.diff,
                num(*margin, 2)
            )),
            Decision::Refuted => Outcome::does_not_reproduce(format!(
                "it rises by {:.2} points, more than the margin of {}",
                d.diff,
                num(*margin, 2)
            )),
            Decision::Open => Outcome::inconclusive(format!(
                "the 90% interval is ±{} points wide against a margin of ±{}",
                num(half, 2),
                num(*margin, 2)
            )),
        },
        ClaimRule::AccuracyDoesNotFall { margin, .. } => match non_inferiority(&d, *margin) {
            Decision::Shown => {
                Outcome::reproduces_with(format!("no fall of {} points or more", num(*margin, 2)))
            }
            Decision::Refuted => Outcome::does_not_reproduce(format!(
                "it falls by {:.2} points, more than the margin of {}",
                -d.diff,
                num(*margin, 2)
            )),
            Decision::Open => Outcome::inconclusive(format!(
                "a fall is bounded only to {} points against a margin of {}",
                num(-low, 2),
                num(*margin, 2)
            )),
        },
        _ => match decrease(&d) {
            Decision::Shown => Outcome::reproduces(),
            Decision::Refuted => Outcome::does_not_reproduce("it rises"),
            Decision::Open => Outcome::inconclusive(format!("a fall of {} points", num(half, 2))),
        },
    };
    Judged {
        outcome,
        measured,
        quantities: vec![
            ("diff_points", d.diff),
            ("se_points", d.se),
            ("df", d.df),
            ("low90_points", low),
            ("high90_points", high),
        ],
    }
}

/// The log training times of a cell's ok seeds, as one arm (a ratio of times is then a
/// difference).
fn log_time_arm(analysis: &Analysis, c: &TrainCell, per_step: bool) -> Arm {
    let xs: Vec<f64> = analysis
        .ok_records(c)
        .map(|r| {
            let steps = if per_step { r.steps.max(1) as f64 } else { 1.0 };
            (r.train_seconds / steps).ln()
        })
        .filter(|x| x.is_finite())
        .collect();
    Arm {
        mean: batchlab_method::stats::mean(&xs),
        sd: batchlab_method::stats::sample_std(&xs),
        n: xs.len(),
    }
}

/// Counts of pairs shown equal, shown apart and open, over the comparisons of a rule.
#[derive(Default)]
struct Tally {
    shown: usize,
    refuted: usize,
    compared: usize,
}

impl Tally {
    fn add(&mut self, decision: Decision) {
        self.compared += 1;
        match decision {
            Decision::Shown => self.shown += 1,
            Decision::Refuted => self.refuted += 1,
            Decision::Open => {}
        }
    }

    /// All shown: reproduces; all refuted: does not; some refuted: partly; else inconclusive.
    fn outcome(&self, what: &str, detectable: String) -> Outcome {
        match (self.refuted, self.shown) {
            (0, s) if s == self.compared => Outcome::reproduces(),
            (r, _) if r == self.compared => {
                Outcome::does_not_reproduce(format!("{what} in all {r} comparisons"))
            }
            (0, _) => Outcome::inconclusive(detectable),
            (r, _) => Outcome::partly(format!("{what} in {r} of {} comparisons", self.compared)),
        }
    }
}

fn powers_of_two(cells: &BTreeMap<u32, &TrainCell>, analysis: &Analysis, tolerance: f64) -> Judged {
    let margin = (1.0 + tolerance).ln();
    let mut parts = vec![];
    let mut tally = Tally::default();
    let mut widest: f64 = 0.0;
    for (cell, neighbours) in Analysis::powers_of_two_with_neighbours(cells.values().copied()) {
        let sides: Vec<String> = neighbours
            .iter()
            .map(|n| {
                let d = Difference::welch(
                    log_time_arm(analysis, n, false),
                    log_time_arm(analysis, cell, false),
                );
                let decision = d.map_or(Decision::Open, |d| equivalence(&d, margin));
                tally.add(decision);
                let (text, half) = d.map_or(("no seed spread".to_string(), f64::INFINITY), |d| {
                    let (lo, hi) = d.interval90();
                    (
                        format!(
                            "{:+.1}% vs {} (90% interval {:+.1}% to {:+.1}%)",
                            100.0 * d.diff.exp_m1(),
                            n.batch_size,
                            100.0 * lo.exp_m1(),
                            100.0 * hi.exp_m1()
                        ),
                        d.critical() * d.se,
                    )
                });
                widest = widest.max(half);
                text
            })
            .collect();
        parts.push(format!(
            "{} ({} s): {}",
            cell.batch_size,
            num(cell.train_seconds_median, 2),
            sides.join(", ")
        ));
    }
    if tally.compared == 0 {
        return Judged::untested(
            "no power of two with a neighbour one below or above it",
            "the grid has no power of two beside its neighbours",
        );
    }
    Judged {
        outcome: tally.outcome(
            "a noticeable difference",
            format!(
                "a difference of ±{:.1}% (the widest 90% interval's half-width) against a margin of ±{:.0}%",
                100.0 * widest.exp_m1(),
                100.0 * tolerance
            ),
        ),
        measured: parts.join("; "),
        quantities: vec![("tolerance", tolerance), ("pairs", tally.compared as f64)],
    }
}

fn time_follows_steps(
    cells: &BTreeMap<u32, &TrainCell>,
    analysis: &Analysis,
    reference: u32,
    tolerance: f64,
) -> Judged {
    if !cells.contains_key(&reference) {
        return Judged::untested("not measured", format!("batch {reference} was not run"));
    }
    // Every ok seed of the line: training time against the steps it took.
    let (mut steps, mut seconds) = (vec![], vec![]);
    for cell in cells.values() {
        for r in analysis
            .ok_records(cell)
            .filter(|r| r.train_seconds.is_finite())
        {
            steps.push(r.steps as f64);
            seconds.push(r.train_seconds);
        }
    }
    let Some(fit) = linear_fit(&steps, &seconds).filter(|f| f.slope_se.is_finite()) else {
        return Judged::untested(
            "fewer than three seeds or one number of steps",
            "no line of time on steps",
        );
    };
    let df = (steps.len() - 2) as f64;
    let t = critical(ALPHA, df);
    let (low, high) = (fit.slope - t * fit.slope_se, fit.slope + t * fit.slope_se);
    // How far each batch size's mean time lies off the line, relative to the line: the part
    // of its time the number of steps does not explain.
    let margin = (1.0 + tolerance).ln();
    let mut tally = Tally::default();
    let mut parts = vec![];
    let mut widest: f64 = 0.0;
    for (&b, cell) in cells {
        let off: Vec<f64> = analysis
            .ok_records(cell)
            .filter(|r| r.train_seconds.is_finite())
            .map(|r| (r.train_seconds / fit.predict(r.steps as f64)).ln())
            .collect();
        let arm = Arm {
            mean: batchlab_method::stats::mean(&off),
            sd: batchlab_method::stats::sample_std(&off),
            n: off.len(),
        };
        let d = Difference::one_sample(arm);
        tally.add(d.map_or(Decision::Open, |d| equivalence(&d, margin)));
        if let Some(d) = d {
            widest = widest.max(d.critical() * d.se);
        }
        parts.push(format!(
            "{b}: {} steps, {} s ({:+.1}% off the line)",
            num(cell.steps_median, 0),
            num(cell.train_seconds_median, 2),
            100.0 * arm.mean.exp_m1()
        ));
    }
    let measured = format!(
        "time = {} s + {} ms per step (95% one-sided bounds {} to {} ms); {}",
        num(fit.intercept, 2),
        num(1000.0 * fit.slope, 3),
        num(1000.0 * low, 3),
        num(1000.0 * high, 3),
        parts.join("; ")
    );
    let outcome = if high <= 0.0 {
        Outcome::does_not_reproduce(
            "more steps do not take more time: the time per step's overhead is not above zero",
        )
    } else if low <= 0.0 {
        Outcome::inconclusive(format!(
            "a per-step overhead of {} ms",
            num(1000.0 * t * fit.slope_se, 3)
        ))
    } else {
        match tally.outcome(
            "the time lies off the steps line",
            format!(
                "a departure from the steps line of ±{:.1}% against a margin of ±{:.0}%",
                100.0 * widest.exp_m1(),
                100.0 * tolerance
            ),
        ) {
            Outcome::DoesNotReproduce { why } => Outcome::partly(format!(
                "more steps take more time, but {why}: the steps explain only part of it"
            )),
            other => other,
        }
    };
    Judged {
        outcome,
        measured: format!("relative to the line through every seed: {measured}"),
        quantities: vec![
            ("seconds_per_step", fit.slope),
            ("seconds_per_step_low95", low),
            ("seconds_per_step_high95", high),
            ("tolerance", tolerance),
        ],
    }
}

/// The rule of a claim in words, as the verdict table states it.
fn rule_words(rule: &ClaimRule) -> String {
    let welch = "the difference of the mean test accuracies over the seeds, with Welch's standard error and degrees of freedom (paired seeds are not used)";
    match rule {
        ClaimRule::AccuracyFalls { from, to } => format!(
            "A directional claim: {welch}; reproduces when the one-sided 95% upper bound of (accuracy at {to} - accuracy at {from}) lies below zero, does not reproduce when the lower bound lies above zero, inconclusive otherwise."
        ),
        ClaimRule::AccuracyHolds { from, to, margin } => format!(
            "An equivalence claim: {welch}; two one-sided tests at 5%: reproduces when the 90% interval of (accuracy at {to} - accuracy at {from}) lies inside ±{} points, does not reproduce when it lies wholly outside, inconclusive otherwise (more seeds narrow the interval).",
            num(*margin, 2)
        ),
        ClaimRule::AccuracyDoesNotFall { from, to, margin } => format!(
            "A non-inferiority claim: {welch}; reproduces when the one-sided 95% lower bound of (accuracy at {to} - accuracy at {from}) lies above -{} points, does not reproduce when the upper bound lies below it, inconclusive otherwise.",
            num(*margin, 2)
        ),
        ClaimRule::PowersOfTwoFlat { tolerance } => format!(
            "An equivalence claim on each power of two against each neighbour one below or above it: two one-sided tests at 5% on the log training times of the seeds (Welch); the pair counts as not noticeably different when the 90% interval of the time ratio lies within ±{:.0}%, as noticeably different when it lies wholly outside. Reproduces if every pair is shown not different, partly if some are shown different, does not reproduce if all are, inconclusive otherwise.",
            100.0 * tolerance
        ),
        ClaimRule::TimeFollowsSteps { reference, tolerance } => format!(
            "A mechanism claim: training time differs between batch sizes because they take different numbers of steps (batch {reference} is the seed's reference). A line of training time on steps through every seed of the line: the mechanism needs a per-step overhead above zero (one-sided 95% lower bound of the slope) and every batch size's mean time on the line within ±{:.0}% (two one-sided tests on the seeds' log ratios to the line). Reproduces if both, partly if the overhead is there but some batch size lies off the line (the steps explain only part of the time), does not reproduce if the slope's upper bound is not above zero, inconclusive otherwise.",
            100.0 * tolerance
        ),
    }
}

/// Raschka's table form for every [`ClaimRule::TimeFollowsSteps`] claim: per batch size, the
/// steps, median training time and mean test accuracy relative to the reference batch size,
/// beside the published training-time ratio where the config gives published minutes.
pub(super) fn relative_tables(ctx: &TrainContext, analysis: &Analysis) -> String {
    let mut md = String::new();
    for claim in &ctx.claims {
        let ClaimRule::TimeFollowsSteps { reference, .. } = claim.rule else {
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
