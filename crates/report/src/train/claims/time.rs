//! The time rules: a larger batch training faster (a one-sided test on the seeds' log training
//! times), powers of two against their neighbours (an equivalence on them) and training time
//! following the steps (its mechanism: a per-step overhead, every batch size on the line of
//! time on steps).

use batchlab_method::findings::Outcome;
use batchlab_method::stats::linear_fit;
use batchlab_method::tests_of_claims::{
    critical, decrease, equivalence, Arm, Decision, Difference, ALPHA,
};

use super::{accuracy::Line, Judged};
use crate::numbers::fixed;
use crate::predict::check::PredictionCheck;
use crate::train::analysis::Analysis;
use crate::train::TrainCell;

/// The log training times of a cell's ok seeds, as one arm (a ratio of times is then a
/// difference).
fn log_time_arm(analysis: &Analysis, c: &TrainCell) -> Arm {
    log_clock_arm(analysis, c, Clock::Training)
}

/// Which of a trial's clocks a time rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Default)]
struct Tally {
    shown: usize,
    refuted: usize,
    compared: usize,
    /// Comparisons without a seed spread: no interval, so no test.
    untestable: usize,
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

    /// A claim of sameness at every comparison, on one standard with `no-jumps-at`: one
    /// comparison bounded beyond the margin refutes it; all shown within it: reproduces; none
    /// testable (no seed spread anywhere): cannot be tested; else inconclusive.
    fn outcome(&self, what: &str, detectable: String) -> Outcome {
        match (self.refuted, self.shown) {
            (0, s) if s == self.compared => Outcome::reproduces(),
            (0, _) if self.untestable == self.compared => Outcome::cannot_test(
                "fewer than two ok seeds in the cells compared: no seed spread, so no interval",
            ),
            (0, _) => Outcome::inconclusive(detectable),
            (r, _) => Outcome::does_not_reproduce(format!(
                "{what} in {r} of {} comparisons",
                self.compared
            )),
        }
    }
}

/// A directional claim: training (the whole budget) is faster at `to` than at `from`.
pub(super) fn time_falls(cells: &Line, analysis: &Analysis, from: u32, to: u32) -> Judged {
    let (Some(a), Some(b)) = (cells.get(&from), cells.get(&to)) else {
        return Judged::untested("not measured", format!("batch {from} or {to} was not run"));
    };
    let Some(d) = Difference::welch(log_time_arm(analysis, a), log_time_arm(analysis, b)) else {
        return Judged::untested(
            "fewer than two ok seeds in a cell",
            "fewer than two ok seeds in a cell: no seed spread",
        );
    };
    let (low, high) = d.interval90();
    let outcome = match decrease(&d) {
        Decision::Shown => {
            Outcome::reproduces_with(format!("{:.1}% faster", -100.0 * d.diff.exp_m1()))
        }
        Decision::Refuted => Outcome::does_not_reproduce(format!(
            "batch {to} trains {:.1}% slower than {from}",
            100.0 * d.diff.exp_m1()
        )),
        Decision::Open => Outcome::inconclusive(format!(
            "a difference of {:.1}% of the training time",
            100.0 * (d.critical() * d.se).exp_m1()
        )),
    };
    Judged {
        outcome,
        measured: format!(
            "{} s at {from}, {} s at {to} (medians over the seeds): {:+.1}% (90% interval {:+.1}% to {:+.1}%, Welch on the log times)",
            fixed(a.train_seconds_median, 2),
            fixed(b.train_seconds_median, 2),
            100.0 * d.diff.exp_m1(),
            100.0 * low.exp_m1(),
            100.0 * high.exp_m1()
        ),
        quantities: vec![("log_ratio", d.diff), ("log_ratio_se", d.se), ("df", d.df)],
    }
}

pub(super) fn powers_of_two(
    cells: &Line,
    analysis: &Analysis,
    tolerance: f64,
    clock: Clock,
) -> Judged {
    let margin = (1.0 + tolerance).ln();
    let mut parts = vec![];
    let mut tally = Tally::default();
    let mut widest: f64 = 0.0;
    for (cell, neighbours) in Analysis::powers_of_two_with_neighbours(cells.values().copied()) {
        let sides: Vec<String> = neighbours
            .iter()
            .map(|n| {
                let d = Difference::welch(
                    log_clock_arm(analysis, n, clock),
                    log_clock_arm(analysis, cell, clock),
                );
                tally.add(d.map(|d| equivalence(&d, margin)));
                let (text, half) = d.map_or(("no seed spread".to_string(), 0.0), |d| {
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
            fixed(
                match clock {
                    Clock::Training => cell.train_seconds_median,
                    Clock::Test => cell.test_seconds_median,
                },
                2
            ),
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

pub(super) fn time_follows_steps(
    cells: &Line,
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
    // of its time the number of steps does not explain. The line is fitted without the batch
    // size it is compared with (a line through a cell's own seeds absorbs its departure: with
    // two numbers of steps every offset would be zero by construction), and the line's own
    // uncertainty at that number of steps joins the seeds' (a prediction interval).
    let margin = (1.0 + tolerance).ln();
    let mut tally = Tally::default();
    let mut parts = vec![];
    let mut widest: f64 = 0.0;
    let distinct = {
        let mut s: Vec<u64> = steps.iter().map(|x| *x as u64).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    if distinct < 3 {
        return Judged::untested(
            format!("{distinct} numbers of steps"),
            "the line left out of each batch size needs two other numbers of steps: at least three in all",
        );
    }
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
    for (&b, cell) in cells {
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
        tally.add(d.map(|d| equivalence(&d, margin)));
        if let Some(d) = d {
            widest = widest.max(d.critical() * d.se);
        }
        parts.push(format!(
            "{b}: {} steps, {} s ({:+.1}% off the line of the others)",
            fixed(cell.steps_median, 0),
            fixed(cell.train_seconds_median, 2),
            100.0 * arm.mean.exp_m1()
        ));
    }
    let measured = format!(
        "time = {} s + {} ms per step (95% one-sided bounds {} to {} ms); {}",
        fixed(fit.intercept, 2),
        fixed(1000.0 * fit.slope, 3),
        fixed(1000.0 * low, 3),
        fixed(1000.0 * high, 3),
        parts.join("; ")
    );
    let outcome = if high <= 0.0 {
        Outcome::does_not_reproduce(
            "more steps do not take more time: the time per step's overhead is not above zero",
        )
    } else if low <= 0.0 {
        Outcome::inconclusive(format!(
            "a per-step overhead of {} ms",
            fixed(1000.0 * t * fit.slope_se, 3)
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

/// Seed 000's Training Cost Calculator: the training time computed from the step time. The
/// cells' log errors of the prediction (predicted over measured), their mean with a 90% t
/// interval, against ±ln(1 + `tolerance`).
pub(super) fn time_predicted(cells: &[&PredictionCheck], tolerance: f64) -> Judged {
    let errors: Vec<f64> = cells
        .iter()
        .map(|c| (c.predicted.0 / c.measured).ln())
        .filter(|e| e.is_finite())
        .collect();
    // The size of each cell's error: signed errors of +15% and -14% would cancel in a mean
    // and call a prediction that misses every cell "right on average".
    let sizes: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    let (Some(signed), Some(d)) = (
        Difference::one_sample(Arm::of(&errors)),
        Difference::one_sample(Arm::of(&sizes)),
    ) else {
        return Judged::untested(
            format!("{} cells with a prediction", errors.len()),
            "fewer than two cells have a step-time prediction: no sweep of this model on this machine and build was found (the prediction check below says where it looked)",
        );
    };
    let (low, high) = d.interval90();
    let bound = (1.0 + tolerance).ln();
    let pct = |x: f64| format!("{:.1}%", 100.0 * (x.exp() - 1.0));
    let signed_pct = |x: f64| format!("{:+.1}%", 100.0 * (x.exp() - 1.0));
    let largest = sizes.iter().copied().fold(0.0, f64::max);
    let measured = format!(
        "mean size of the error {} (90% interval {} to {}) over {} cells; mean signed error {}; the largest {}",
        pct(d.diff),
        pct(low),
        pct(high),
        errors.len(),
        signed_pct(signed.diff),
        fixed(100.0 * (largest.exp() - 1.0), 1) + "%"
    );
    let within = format!("{:.0}%", 100.0 * tolerance);
    // One-sided bounds of the mean size against the tolerance.
    let against = Difference {
        diff: d.diff - bound,
        ..d
    };
    let outcome = match decrease(&against) {
        Decision::Shown => {
            Outcome::reproduces_with(format!("off by less than {within} on average"))
        }
        Decision::Refuted => Outcome::does_not_reproduce(format!(
            "the prediction is off by more than {within} on average"
        )),
        Decision::Open => Outcome::inconclusive(format!(
            "a mean error of {within} either way lies inside the interval ({} to {})",
            pct(low),
            pct(high)
        )),
    };
    Judged {
        outcome,
        measured,
        quantities: vec![
            ("mean_abs_log_error", d.diff),
            ("abs_log_error_low90", low),
            ("abs_log_error_high90", high),
            ("mean_log_error", signed.diff),
            ("tolerance", tolerance),
            ("cells", errors.len() as f64),
        ],
    }
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
