//! The time rules: a larger batch training faster (a one-sided test on the seeds' log training
//! times), powers of two against their neighbours (an equivalence on them) and training time
//! following the steps (its mechanism: a per-step overhead, every batch size on the line of
//! time on steps).

use batchlab_method::stats::{linear_fit, LinearFit};
use batchlab_method::tests_of_claims::{
    critical, decrease, equivalence, local_minimum as minimum, refutes_minimum, Arm, Decision,
    Difference, ALPHA,
};
use serde::Serialize;

use super::{accuracy::Line, Untested};
use crate::predict::check::PredictionCheck;
use crate::train::analysis::Analysis;
use crate::train::TrainCell;

/// The log training times of a cell's ok seeds, as one arm (a ratio of times is then a
/// difference).
fn log_time_arm(analysis: &Analysis, c: &TrainCell) -> Arm {
    log_clock_arm(analysis, c, Clock::Training)
}

/// Which of a trial's clocks a time rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Clock {
    /// Training seconds of the whole budget.
    Training,
    /// Seconds of the test pass at the end (inference over the test split).
    Test,
}

fn log_clock_arm(analysis: &Analysis, c: &TrainCell, clock: Clock) -> Arm {
    let xs: Vec<f64> = analysis
        .ok_records(c)
        .map(|r| match clock {
            Clock::Training => r.train_seconds,
            Clock::Test => r.test_seconds,
        })
        .map(f64::ln)
        .filter(|x| x.is_finite())
        .collect();
    Arm::of(&xs)
}

/// Counts of pairs shown equal, shown apart and open, over the comparisons of a rule.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub(super) struct Tally {
    pub shown: usize,
    pub refuted: usize,
    pub compared: usize,
    /// Comparisons without a seed spread: no interval, so no test.
    pub untestable: usize,
}

/// A claim of sameness at every comparison, decided from its [`Tally`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Sameness {
    /// Every comparison shown within the margin.
    Shown,
    /// No comparison testable: no seed spread anywhere.
    Untestable,
    /// None bounded beyond the margin, not all within it.
    Open,
    /// This many comparisons bounded beyond the margin, of `compared`.
    Refuted { refuted: usize, compared: usize },
}

impl Tally {
    fn add(&mut self, decision: Option<Decision>) {
        self.compared += 1;
        match decision {
            Some(Decision::Shown) => self.shown += 1,
            Some(Decision::Refuted) => self.refuted += 1,
            Some(Decision::Open) => {}
            None => self.untestable += 1,
        }
    }

    /// On one standard with `no-jumps-at`: one comparison bounded beyond the margin refutes
    /// sameness; all shown within it: shown; none testable: untestable; else open.
    pub fn decided(&self) -> Sameness {
        match (self.refuted, self.shown) {
            (0, s) if s == self.compared => Sameness::Shown,
            (0, _) if self.untestable == self.compared => Sameness::Untestable,
            (0, _) => Sameness::Open,
            (refuted, _) => Sameness::Refuted {
                refuted,
                compared: self.compared,
            },
        }
    }
}

/// A larger batch training faster, decided: both cells, the Welch difference of their log
/// training times (to − from) and whether it lies below zero.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct TimeFalls<'a> {
    #[serde(serialize_with = "super::as_batch::pair")]
    pub cells: (&'a TrainCell, &'a TrainCell),
    pub d: Difference,
    pub decided: Decision,
}

/// A directional claim: training (the whole budget) is faster at `to` than at `from`.
pub(super) fn time_falls<'a>(
    cells: &Line<'a>,
    analysis: &Analysis,
    from: u32,
    to: u32,
) -> Result<TimeFalls<'a>, Untested> {
    let (Some(&a), Some(&b)) = (cells.get(&from), cells.get(&to)) else {
        return Err(Untested::EitherNotRun(from, to));
    };
    let d = Difference::welch(log_time_arm(analysis, a), log_time_arm(analysis, b))
        .ok_or(Untested::TooFewSeeds)?;
    Ok(TimeFalls {
        cells: (a, b),
        d,
        decided: decrease(&d),
    })
}

/// A local minimum, decided: the named cell, each neighbour's cell with the Welch difference
/// of its log training times against the named one's (neighbour − named), the decision, and
/// the neighbours shown faster (those that refute it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct LocalMinimum<'a> {
    #[serde(serialize_with = "super::as_batch::one")]
    pub at: &'a TrainCell,
    #[serde(serialize_with = "super::as_batch::keyed")]
    pub sides: Vec<(&'a TrainCell, Difference)>,
    pub decided: Decision,
    #[serde(serialize_with = "super::as_batch::many")]
    pub faster: Vec<&'a TrainCell>,
}

/// A claim that the whole budget trains slower at each of `neighbours` than at `at`.
pub(super) fn local_minimum<'a>(
    cells: &Line<'a>,
    analysis: &Analysis,
    at: u32,
    neighbours: [u32; 2],
) -> Result<LocalMinimum<'a>, Untested> {
    let sizes = [neighbours[0], at, neighbours[1]];
    let [Some(&below), Some(&named), Some(&above)] = sizes.map(|b| cells.get(&b)) else {
        return Err(Untested::NotRun(sizes.to_vec()));
    };
    let sides = [below, above]
        .into_iter()
        .map(|n| {
            Difference::welch(log_time_arm(analysis, named), log_time_arm(analysis, n))
                .map(|d| (n, d))
                .ok_or(Untested::TooFewSeeds)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let differences: Vec<Difference> = sides.iter().map(|(_, d)| *d).collect();
    Ok(LocalMinimum {
        at: named,
        decided: minimum(&differences),
        faster: sides
            .iter()
            .filter(|(_, d)| refutes_minimum(d, sides.len()))
            .map(|(c, _)| *c)
            .collect(),
        sides,
    })
}

/// A power of two's cell with each neighbour's batch size and the difference of their log
/// times (none without a seed spread).
pub(super) type Neighbours<'a> = (&'a TrainCell, Vec<(u32, Option<Difference>)>);

/// Powers of two against their neighbours, decided: each power of two with its neighbours, the
/// tally of the equivalences and the widest interval's half-width.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct PowersOfTwo<'a> {
    #[serde(serialize_with = "super::as_batch::keyed")]
    pub pairs: Vec<Neighbours<'a>>,
    pub tally: Tally,
    pub widest: f64,
}

pub(super) fn powers_of_two<'a>(
    cells: &Line<'a>,
    analysis: &Analysis,
    tolerance: f64,
    clock: Clock,
) -> Result<PowersOfTwo<'a>, Untested> {
    let margin = (1.0 + tolerance).ln();
    let mut read = PowersOfTwo {
        pairs: vec![],
        tally: Tally::default(),
        widest: 0.0,
    };
    for (cell, neighbours) in Analysis::powers_of_two_with_neighbours(cells.values().copied()) {
        let sides: Vec<(u32, Option<Difference>)> = neighbours
            .iter()
            .map(|n| {
                let d = Difference::welch(
                    log_clock_arm(analysis, n, clock),
                    log_clock_arm(analysis, cell, clock),
                );
                read.tally.add(d.map(|d| equivalence(&d, margin)));
                read.widest = read.widest.max(d.map_or(0.0, |d| d.critical() * d.se));
                (n.batch_size, d)
            })
            .collect();
        read.pairs.push((cell, sides));
    }
    if read.tally.compared == 0 {
        return Err(Untested::NoPowerOfTwoPair);
    }
    Ok(read)
}

/// Training time following the steps, decided: the line of time on steps through every seed
/// (with its one-sided 95% bounds on the slope), each batch size's departure from the line of
/// the others, their tally and the widest interval's half-width.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct FollowsSteps<'a> {
    pub fit: LinearFit,
    /// One-sided 95% bounds of the slope, and the t critical value they were drawn with.
    pub low: f64,
    pub high: f64,
    pub t: f64,
    /// Each batch size's cell and the mean log offset of its seeds from the others' line.
    #[serde(serialize_with = "super::as_batch::keyed")]
    pub offsets: Vec<(&'a TrainCell, f64)>,
    pub tally: Tally,
    pub widest: f64,
}

/// The mechanism, decided: a per-step overhead above zero, then every batch size on the line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Mechanism {
    /// The slope's upper bound is not above zero.
    NoOverhead,
    /// The slope's lower bound is not above zero.
    OverheadOpen,
    /// An overhead: then the batch sizes' sameness to the line.
    Overhead(Sameness),
}

impl FollowsSteps<'_> {
    pub fn decided(&self) -> Mechanism {
        if self.high <= 0.0 {
            Mechanism::NoOverhead
        } else if self.low <= 0.0 {
            Mechanism::OverheadOpen
        } else {
            Mechanism::Overhead(self.tally.decided())
        }
    }
}

pub(super) fn time_follows_steps<'a>(
    cells: &Line<'a>,
    analysis: &Analysis,
    reference: u32,
    tolerance: f64,
) -> Result<FollowsSteps<'a>, Untested> {
    if !cells.contains_key(&reference) {
        return Err(Untested::BatchNotRun(reference));
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
    let fit = linear_fit(&steps, &seconds)
        .filter(|f| f.slope_se.is_finite())
        .ok_or(Untested::NoStepsLine)?;
    let df = (steps.len() - 2) as f64;
    let t = critical(ALPHA, df);
    // How far each batch size's mean time lies off the line, relative to the line: the part
    // of its time the number of steps does not explain. The line is fitted without the batch
    // size it is compared with (a line through a cell's own seeds absorbs its departure: with
    // two numbers of steps every offset would be zero by construction), and the line's own
    // uncertainty at that number of steps joins the seeds' (a prediction interval).
    let margin = (1.0 + tolerance).ln();
    let distinct = {
        let mut s: Vec<u64> = steps.iter().map(|x| *x as u64).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    if distinct < 3 {
        return Err(Untested::FewStepCounts(distinct));
    }
    let mut read = FollowsSteps {
        low: fit.slope - t * fit.slope_se,
        high: fit.slope + t * fit.slope_se,
        t,
        fit,
        offsets: vec![],
        tally: Tally::default(),
        widest: 0.0,
    };
    // Every ok seed as (batch size, (steps, seconds)).
    let seeds: Vec<(u32, (f64, f64))> = cells
        .iter()
        .flat_map(|(&c, cell)| {
            analysis
                .ok_records(cell)
                .filter(|r| r.train_seconds.is_finite())
                .map(move |r| (c, (r.steps as f64, r.train_seconds)))
        })
        .collect();
    for (&b, &cell) in cells {
        let of = |inside: bool| -> Vec<(f64, f64)> {
            seeds
                .iter()
                .filter(|(c, _)| (*c == b) == inside)
                .map(|(_, p)| *p)
                .collect()
        };
        let (mine, others) = (of(true), of(false));
        let line = Prediction::of(&others);
        let off: Vec<f64> = mine
            .iter()
            .filter_map(|&(x, y)| Some((y / line.as_ref()?.at(x)).ln()))
            .filter(|v| v.is_finite())
            .collect();
        let arm = Arm::of(&off);
        let d = Difference::one_sample(arm)
            .zip(line.as_ref())
            .map(|(d, line)| {
                let x = mine.iter().map(|p| p.0).sum::<f64>() / mine.len().max(1) as f64;
                let relative = line.se_at(x) / line.at(x);
                Difference {
                    se: (d.se * d.se + relative * relative).sqrt(),
                    df: d.df.min(line.df),
                    ..d
                }
            });
        read.tally.add(d.map(|d| equivalence(&d, margin)));
        if let Some(d) = d {
            read.widest = read.widest.max(d.critical() * d.se);
        }
        read.offsets.push((cell, arm.mean));
    }
    Ok(read)
}

/// Seed 000's Training Cost Calculator, decided: the mean signed log error of the prediction
/// (predicted over measured), the mean size of the errors tested against ln(1 + tolerance),
/// the largest and how many cells.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct Predicted {
    pub signed: Difference,
    pub size: Difference,
    pub largest: f64,
    pub cells: usize,
    pub decided: Decision,
}

/// Seed 000's Training Cost Calculator: the training time computed from the step time. The
/// cells' log errors of the prediction (predicted over measured), their mean with a 90% t
/// interval, against ±ln(1 + `tolerance`).
pub(super) fn time_predicted(
    cells: &[&PredictionCheck],
    tolerance: f64,
) -> Result<Predicted, Untested> {
    let errors: Vec<f64> = cells
        .iter()
        .map(|c| (c.predicted.0 / c.measured).ln())
        .filter(|e| e.is_finite())
        .collect();
    // The size of each cell's error: signed errors of +15% and -14% would cancel in a mean
    // and call a prediction that misses every cell "right on average".
    let sizes: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    let (Some(signed), Some(size)) = (
        Difference::one_sample(Arm::of(&errors)),
        Difference::one_sample(Arm::of(&sizes)),
    ) else {
        return Err(Untested::FewPredictions(errors.len()));
    };
    // One-sided bounds of the mean size against the tolerance.
    let against = Difference {
        diff: size.diff - (1.0 + tolerance).ln(),
        ..size
    };
    Ok(Predicted {
        signed,
        size,
        largest: sizes.iter().copied().fold(0.0, f64::max),
        cells: errors.len(),
        decided: decrease(&against),
    })
}

/// The least-squares line through (steps, seconds) points ([`linear_fit`]) and the standard
/// error of its value at a number of steps: what a left-out batch size is compared with.
struct Prediction {
    fit: batchlab_method::stats::LinearFit,
    mean_x: f64,
    /// Residual degrees of freedom.
    df: f64,
}

impl Prediction {
    /// The line through `points`; `None` with fewer than three points or one number of steps.
    fn of(points: &[(f64, f64)]) -> Option<Prediction> {
        let (x, y): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
        let fit = linear_fit(&x, &y).filter(|f| f.slope_se.is_finite())?;
        Some(Prediction {
            fit,
            mean_x: x.iter().sum::<f64>() / x.len() as f64,
            df: (x.len() - 2) as f64,
        })
    }

    fn at(&self, x: f64) -> f64 {
        self.fit.predict(x)
    }

    /// The standard error of the line's mean value at `x`: s²/n + (x - x̄)² se(slope)², with
    /// s²/n = se(intercept)² - x̄² se(slope)².
    fn se_at(&self, x: f64) -> f64 {
        let (a, b) = (self.fit.intercept_se, self.fit.slope_se);
        (a * a + b * b * ((x - self.mean_x).powi(2) - self.mean_x.powi(2)))
            .max(0.0)
            .sqrt()
    }
}

#[cfg(test)]
#[path = "time_tests.rs"]
mod tests;
