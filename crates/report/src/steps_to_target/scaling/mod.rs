//! The shape of a steps-to-result curve: the fit S(B) = S_min (1 + B_crit / B) and the
//! three regimes Shallue et al. describe (perfect scaling, diminishing returns, maximal
//! data parallelism).
//!
//! # The fit
//!
//! McCandlish et al. 2018 (their equation 2.11) derive S(B) = S_min (1 + B_crit / B): S_min
//! is the fewest steps any batch size can take, B_crit the batch size at which training
//! takes twice that (the knee), and S_min B_crit = E_min the fewest examples any batch size
//! can process. [`fit_scaling`] minimises the squared error of log S, so each point's
//! *relative* error counts equally: steps span two to three decades over a sweep, and an
//! absolute least squares would fit the small batch sizes only. For a fixed B_crit the best
//! log S_min is the mean of log S - log(1 + B_crit / B), so the fit is a one-dimensional
//! search over B_crit >= 0: a grid of [`GRID`] values log-spaced from 10^-4 x the smallest
//! to 10^4 x the largest batch size, refined by golden-section search around the best one.
//! When the best B_crit is the top of that range, steps fall like 1/B throughout: B_crit is
//! not identified (only E_min is), and [`ScalingFit::b_crit_identified`] says so.
//!
//! Uncertainty is a residual bootstrap: each resample adds log residuals drawn with
//! replacement (each divided by sqrt(1 - its leverage), so that they have the noise's
//! variance, and centred) to the fitted curve and fits again; the intervals are percentiles of the refits. Residuals rather than
//! points are resampled because the batch sizes are a design, not a sample: with ten batch
//! sizes, resampled points often leave out the whole knee or the whole plateau, and the fit
//! of such a resample says nothing about the curve that was measured. With few points the
//! intervals are somewhat narrow, because the size of the noise is itself estimated from
//! n - 2 degrees of freedom: on synthetic curves of 10 batch sizes with 5% noise, nominal
//! 95% intervals covered the true S_min and B_crit about 90% of the time.
//!
//! The three regimes are in [`regimes`](mod@regimes), point by point, and in
//! [`bands`](mod@bands) judged by positive tests on the slope intervals of
//! [`interval`](mod@interval) (what the report uses whenever the trials are at hand), whose
//! bootstrap reads censored trials as [`censored`](mod@censored) says.
//!
//! B_crit is fitted only from at least [`MIN_FIT_POINTS`] batch sizes: with 3, two
//! parameters leave one degree of freedom, and an interval like "666 [663-669]" says more
//! about the residual bootstrap than about the curve.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use batchlab_method::stats::quantile_sorted;
use batchlab_method::TargetError;

mod bands;
mod censored;
mod interval;
mod regimes;
mod rerun;

pub use bands::{BandRegimes, RegimeBands};
pub use censored::{BestOfN, Draw, Reading, Steps};
pub(crate) use interval::bounded_interval;
pub use interval::{curve_intervals, CellTrials, CurveIntervals, SlopeWindow, WINDOW};
pub use rerun::{
    spreads_below_best, upper_rank, FRESH_COVERAGE, INTERVAL_WORDS, LEVEL, LEVEL_WORDS,
};

/// The fewest batch sizes with a result that B_crit is fitted from.
pub const MIN_FIT_POINTS: usize = 5;
pub use regimes::{regimes, Regime, RegimeOptions, Regimes, Segment};

/// Values of B_crit on the fit's search grid: 401, about 23 per decade over the 8 + decades
/// searched, fine enough that the refinement starts next to the optimum.
pub const GRID: usize = 401;

/// How far below the smallest and above the largest batch size B_crit is searched: 10^4.
/// At 10^4 x the largest batch size, 1 + B_crit / B differs from B_crit / B by less than
/// 10^-4, so a larger B_crit could not be told apart from pure 1/B scaling.
const SEARCH_MARGIN: f64 = 1e4;

/// Tuning of [`fit_scaling`]'s uncertainty.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalingFitOptions {
    /// Bootstrap refits: 1000, enough for stable 2.5% and 97.5% percentiles. 0 gives NaN
    /// intervals.
    pub resamples: usize,
    /// Confidence level of the intervals: 0.95.
    pub level: f64,
    /// Seed of the bootstrap's `StdRng`: the same inputs always give the same intervals.
    pub seed: u64,
}

impl Default for ScalingFitOptions {
    fn default() -> Self {
        ScalingFitOptions {
            resamples: 1000,
            level: 0.95,
            seed: 0,
        }
    }
}

/// S(B) = S_min (1 + B_crit / B) fitted to a steps-to-result curve.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingFit {
    /// The fewest steps any batch size needs (the curve's plateau).
    pub s_min: f64,
    /// The batch size that needs 2 S_min steps (the knee). 0 when steps do not depend on
    /// batch size over the measured range.
    pub b_crit: f64,
    /// Bootstrap percentile interval of `s_min` at `level`.
    pub s_min_interval: (f64, f64),
    /// Bootstrap percentile interval of `b_crit` at `level`.
    pub b_crit_interval: (f64, f64),
    /// Confidence level of the intervals.
    pub level: f64,
    /// Root mean square of the residuals of log S (natural log: 0.05 is about 5%).
    pub rms_log_residual: f64,
    /// False when the best B_crit is the top of the searched range: steps fall like 1/B
    /// over every measured batch size, so only [`ScalingFit::e_min`] is determined, and
    /// `s_min` and `b_crit` are not.
    pub b_crit_identified: bool,
    /// Points fitted.
    pub points: usize,
}

impl ScalingFit {
    /// Fitted steps at `batch_size`.
    pub fn predict(&self, batch_size: f64) -> f64 {
        self.s_min * (1.0 + self.b_crit / batch_size)
    }

    /// E_min = S_min B_crit: the fewest training examples any batch size needs (McCandlish
    /// et al.'s E_min), the curve's asymptote at small batch sizes divided by B.
    pub fn e_min(&self) -> f64 {
        self.s_min * self.b_crit
    }

    /// The fitted curve at `n` batch sizes log-spaced from `from` to `to` (both included),
    /// for a figure. Empty when `n` is 0; one point at `from` when `n` is 1.
    pub fn curve(&self, from: f64, to: f64, n: usize) -> Vec<(f64, f64)> {
        let step = if n > 1 {
            (to / from).ln() / (n - 1) as f64
        } else {
            0.0
        };
        (0..n)
            .map(|i| {
                let b = from * (step * i as f64).exp();
                (b, self.predict(b))
            })
            .collect()
    }
}

/// Fits S(B) = S_min (1 + B_crit / B) to `points`, each (batch size, steps to result), by
/// least squares on log S, with bootstrap intervals (see the module documentation). Needs
/// at least 3 points, at least 2 distinct batch sizes, every value finite and positive,
/// and `level` in (0, 1).
pub fn fit_scaling(
    points: &[(f64, f64)],
    options: &ScalingFitOptions,
) -> Result<ScalingFit, TargetError> {
    check_points(points)?;
    if points.len() < 3 {
        return Err(TargetError::Data(format!(
            "{} points: fitting S_min and B_crit with a residual needs at least 3",
            points.len()
        )));
    }
    let batch: Vec<f64> = points.iter().map(|p| p.0).collect();
    let (lo, hi) = batch.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &b| {
        (lo.min(b), hi.max(b))
    });
    if lo == hi {
        return Err(TargetError::Data(format!(
            "every point has batch size {lo}: the fit needs at least 2 distinct batch sizes"
        )));
    }
    if !(options.level > 0.0 && options.level < 1.0) {
        return Err(TargetError::argument("level", options.level, "in (0, 1)"));
    }
    let log_steps: Vec<f64> = points.iter().map(|p| p.1.ln()).collect();
    let problem = Problem {
        batch: &batch,
        log_lo: (lo / SEARCH_MARGIN).ln(),
        log_hi: (hi * SEARCH_MARGIN).ln(),
    };
    let best = problem.fit(&log_steps);
    let n = points.len();
    let fitted: Vec<f64> = batch.iter().map(|&b| best.log_predict(b)).collect();
    let residuals: Vec<f64> = log_steps.iter().zip(&fitted).map(|(y, f)| y - f).collect();
    let rms_log_residual = (residuals.iter().map(|r| r * r).sum::<f64>() / n as f64).sqrt();
    let (s_min_interval, b_crit_interval) = if options.resamples == 0 {
        ((f64::NAN, f64::NAN), (f64::NAN, f64::NAN))
    } else {
        let modified = modified_residuals(&residuals, &leverages(&batch, best.b_crit));
        let mut rng = StdRng::seed_from_u64(options.seed);
        let mut resample = vec![0.0; n];
        let (mut s_mins, mut b_crits): (Vec<f64>, Vec<f64>) = (0..options.resamples)
            .map(|_| {
                for (slot, f) in resample.iter_mut().zip(&fitted) {
                    *slot = f + modified[rng.random_range(0..n)];
                }
                let refit = problem.fit(&resample);
                (refit.log_s_min.exp(), refit.b_crit)
            })
            .unzip();
        s_mins.sort_by(f64::total_cmp);
        b_crits.sort_by(f64::total_cmp);
        let tail = (1.0 - options.level) / 2.0;
        let interval = |xs: &[f64]| (quantile_sorted(xs, tail), quantile_sorted(xs, 1.0 - tail));
        (interval(&s_mins), interval(&b_crits))
    };
    Ok(ScalingFit {
        s_min: best.log_s_min.exp(),
        b_crit: best.b_crit,
        s_min_interval,
        b_crit_interval,
        level: options.level,
        rms_log_residual,
        b_crit_identified: !best.at_upper_bound,
        points: n,
    })
}

/// The leverage of each point in the fit linearised at `b_crit`: the model log S =
/// log S_min + log(1 + B_crit / B) has derivatives 1 and x = B_crit / (B + B_crit) with
/// respect to log S_min and log B_crit, so h_i = 1 / n + (x_i - mean x)^2 / sum (x - mean
/// x)^2, the hat values of a straight line in x (1 / n each when B_crit = 0).
fn leverages(batch: &[f64], b_crit: f64) -> Vec<f64> {
    let n = batch.len() as f64;
    let x: Vec<f64> = batch.iter().map(|b| b_crit / (b + b_crit)).collect();
    let mean = x.iter().sum::<f64>() / n;
    let sxx: f64 = x.iter().map(|xi| (xi - mean).powi(2)).sum();
    x.iter()
        .map(|xi| {
            if sxx > 0.0 {
                1.0 / n + (xi - mean).powi(2) / sxx
            } else {
                1.0 / n
            }
        })
        .collect()
}

/// Residuals rescaled to the noise's size and centred (Davison and Hinkley 1997, "Bootstrap
/// Methods and their Application", section 6.2.3): a fitted residual e_i has variance
/// (1 - h_i) sigma^2, smallest at the points that pull the fit hardest (the ends of the
/// curve), so e_i / sqrt(1 - h_i) has the noise's variance at every point. Without it the
/// intervals come out too narrow. A point with h_i = 1 is fitted exactly whatever its noise,
/// and its residual says nothing: it contributes 0.
fn modified_residuals(residuals: &[f64], leverages: &[f64]) -> Vec<f64> {
    let scaled: Vec<f64> = residuals
        .iter()
        .zip(leverages)
        .map(|(e, h)| {
            if 1.0 - h > 1e-9 {
                e / (1.0 - h).sqrt()
            } else {
                0.0
            }
        })
        .collect();
    let mean = scaled.iter().sum::<f64>() / scaled.len() as f64;
    scaled.iter().map(|r| r - mean).collect()
}

/// The fitting problem: batch sizes and the searched range of log B_crit.
struct Problem<'a> {
    batch: &'a [f64],
    log_lo: f64,
    log_hi: f64,
}

/// One least-squares solution.
struct Solution {
    log_s_min: f64,
    b_crit: f64,
    at_upper_bound: bool,
}

impl Solution {
    fn log_predict(&self, batch_size: f64) -> f64 {
        self.log_s_min + (self.b_crit / batch_size).ln_1p()
    }
}

impl Problem<'_> {
    /// The best log S_min for `b_crit`, and the sum of squared residuals there.
    fn profile(&self, log_steps: &[f64], b_crit: f64) -> (f64, f64) {
        let shifted = || {
            self.batch
                .iter()
                .zip(log_steps)
                .map(move |(&b, &y)| y - (b_crit / b).ln_1p())
        };
        let mean = shifted().sum::<f64>() / log_steps.len() as f64;
        (mean, shifted().map(|r| (r - mean).powi(2)).sum())
    }

    fn fit(&self, log_steps: &[f64]) -> Solution {
        let cost = |t: f64| self.profile(log_steps, t.exp()).1;
        let width = (self.log_hi - self.log_lo) / (GRID - 1) as f64;
        let at = |i: usize| self.log_lo + width * i as f64;
        let best = (0..GRID)
            .map(|i| (i, cost(at(i))))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(0, |(i, _)| i);
        let b_crit = if best == 0 {
            // The bottom of the range is 10^-4 of the smallest batch size: steps do not
            // depend on batch size, and B_crit = 0 says so exactly.
            0.0
        } else {
            golden_section(cost, at(best - 1), at((best + 1).min(GRID - 1))).exp()
        };
        Solution {
            log_s_min: self.profile(log_steps, b_crit).0,
            b_crit,
            at_upper_bound: best == GRID - 1,
        }
    }
}

/// The minimum of `f` on [a, b] by golden-section search, assuming one minimum there.
fn golden_section(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - ratio * (b - a);
    let mut d = a + ratio * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    // 80 iterations shrink the bracket by 0.618^80, about 1e-17: below an f64's resolution.
    for _ in 0..80 {
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - ratio * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + ratio * (b - a);
            fd = f(d);
        }
    }
    (a + b) / 2.0
}

/// Fails unless every point is finite and positive, naming the first that is not.
fn check_points(points: &[(f64, f64)]) -> Result<(), TargetError> {
    match points
        .iter()
        .find(|(b, s)| !(b.is_finite() && *b > 0.0 && s.is_finite() && *s > 0.0))
    {
        Some(p) => Err(TargetError::Data(format!(
            "point (batch size {}, steps {}): both must be finite and positive",
            p.0, p.1
        ))),
        None => Ok(()),
    }
}

/// The straight line of perfect scaling through the point with the smallest batch size,
/// steps = S_0 B_0 / B, at every batch size of `points` (batch size, steps), in increasing
/// batch size: the dashed reference of Shallue et al.'s figures. Empty when `points` is.
pub fn perfect_scaling_line(points: &[(f64, f64)]) -> Result<Vec<(f64, f64)>, TargetError> {
    check_points(points)?;
    let Some(&(b0, s0)) = points.iter().min_by(|a, b| a.0.total_cmp(&b.0)) else {
        return Ok(vec![]);
    };
    let mut line: Vec<(f64, f64)> = points.iter().map(|&(b, _)| (b, s0 * b0 / b)).collect();
    line.sort_by(|a, b| a.0.total_cmp(&b.0));
    line.dedup_by(|a, b| a.0 == b.0);
    Ok(line)
}

#[cfg(test)]
mod tests;
