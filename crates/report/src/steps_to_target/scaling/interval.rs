//! How sure a steps-to-result curve is: a bootstrap interval on each batch size's steps to
//! result, and the regimes judged with those intervals rather than from point values.
//!
//! # The bootstrap
//!
//! Steps to result at a batch size is the minimum over its trials of each trial's steps to
//! the target (a trial that missed or diverged counts as never reaching it). A resample draws
//! as many trials as the cell has, with replacement, and takes the minimum again; percentiles
//! of [`RESAMPLES`] resamples make the interval. A resample in which no trial reached the
//! target has no steps to result: it counts as infinitely many steps, so when more than the
//! interval's tail of resamples miss, its upper end is unbounded ("none reached"). Every cell
//! is resampled in every replicate, so a replicate is a whole curve and the quantities that
//! compare batch sizes (a ratio, a slope) get intervals of their own from the same replicates.
//!
//! What it does not capture, and which way that errs: a trial stopped because another had
//! already reached the target ("beaten") counts as missed, although it might have reached the
//! target later, so resamples without the best trial run long and the upper ends are too high
//! (the intervals err wide, towards "cannot tell"); and a refining trial's box depends on the
//! first stage, which resampling the cell's trials as if independent ignores.
//!
//! # Regimes with intervals
//!
//! - **Perfect scaling** at batch size B while the interval of S(B) reaches down to the
//!   perfect-scaling line through the smallest batch size B0 drawn at the top of S(B0)'s
//!   interval: low(S(B)) <= high(S(B0)) B0 / B. That is: the data cannot rule out that doubling
//!   the batch size has halved the steps all the way from B0. The range runs from B0 to the
//!   last batch size of the leading run that passes.
//! - **Maximal data parallelism** on a segment between neighbouring batch sizes when the
//!   interval of the slope of log S against log B there includes zero (or lies above it): the
//!   data cannot rule out that the larger batch size saves no steps. The range runs from the
//!   start of the trailing run of such segments to the largest batch size.
//! - **Diminishing returns** between the two.
//!
//! A curve too noisy to say anything passes both tests everywhere; the perfect-scaling range
//! is then read first (it takes the leading segments) and the plateau takes only what lies
//! after it, and the report prints the intervals so a reader sees how wide they are.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Resamples of the bootstrap: 2000, enough for stable 2.5% and 97.5% percentiles.
pub const RESAMPLES: usize = 2000;

/// Confidence level of the intervals.
pub const LEVEL: f64 = 0.95;

/// One batch size's trials as the bootstrap sees them: each trial's steps to the target, or
/// `None` for a trial that trained and did not reach it (missed, beaten, diverged). Failed
/// trials (`error`, `oom`) say nothing about the metaparameters and are left out.
#[derive(Debug, Clone, PartialEq)]
pub struct CellTrials {
    /// The batch size.
    pub batch_size: f64,
    /// Per trial, its steps to the target if it reached it.
    pub reached: Vec<Option<u64>>,
}

/// A steps-to-result curve with its bootstrap (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct CurveIntervals {
    /// Batch sizes with at least one trial, increasing.
    pub batch_sizes: Vec<f64>,
    /// Steps to result per batch size (infinite where no trial reached the target).
    pub steps: Vec<f64>,
    /// Interval of steps to result per batch size at [`LEVEL`] (the high end infinite when
    /// too many resamples had no trial reaching the target).
    pub intervals: Vec<(f64, f64)>,
    /// Interval of the log-log slope between each batch size and the next (one fewer than
    /// batch sizes): -1 is perfect scaling, 0 no gain.
    pub slopes: Vec<(f64, f64)>,
}

/// The percentile `q` of `sorted` (ascending, may hold infinities) by the nearest rank, so
/// an infinite neighbour never turns a percentile into NaN.
fn rank_percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn interval(mut xs: Vec<f64>) -> (f64, f64) {
    xs.retain(|x| !x.is_nan());
    xs.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    (rank_percentile(&xs, tail), rank_percentile(&xs, 1.0 - tail))
}

/// The smallest reached step of `trials` as f64 (infinite when none reached).
fn best(trials: impl Iterator<Item = Option<u64>>) -> f64 {
    trials.flatten().min().map_or(f64::INFINITY, |s| s as f64)
}

/// The log-log slope from (b0, s0) to (b1, s1), with the infinities of cells where nothing
/// reached the target read as "steps grew" (+inf) or "steps fell from nothing" (-inf); NaN
/// when neither reached it.
fn slope(b0: f64, s0: f64, b1: f64, s1: f64) -> f64 {
    match (s0.is_finite(), s1.is_finite()) {
        (true, true) => (s1 / s0).ln() / (b1 / b0).ln(),
        (true, false) => f64::INFINITY,
        (false, true) => f64::NEG_INFINITY,
        (false, false) => f64::NAN,
    }
}

/// Bootstraps `cells` (any order; cells without trials are left out) with a seeded
/// generator, so the same rows always give the same intervals.
pub fn curve_intervals(cells: &[CellTrials], seed: u64) -> CurveIntervals {
    let mut cells: Vec<&CellTrials> = cells.iter().filter(|c| !c.reached.is_empty()).collect();
    cells.sort_by(|a, b| a.batch_size.total_cmp(&b.batch_size));
    let mut rng = StdRng::seed_from_u64(seed);
    let replicates: Vec<Vec<f64>> = (0..RESAMPLES)
        .map(|_| {
            cells
                .iter()
                .map(|c| {
                    let n = c.reached.len();
                    best((0..n).map(|_| c.reached[rng.random_range(0..n)]))
                })
                .collect()
        })
        .collect();
    let batch_sizes: Vec<f64> = cells.iter().map(|c| c.batch_size).collect();
    let column = |k: usize| replicates.iter().map(|r| r[k]).collect::<Vec<f64>>();
    let slopes = (1..cells.len())
        .map(|k| {
            let (b0, b1) = (batch_sizes[k - 1], batch_sizes[k]);
            interval(
                replicates
                    .iter()
                    .map(|r| slope(b0, r[k - 1], b1, r[k]))
                    .collect(),
            )
        })
        .collect();
    CurveIntervals {
        steps: cells
            .iter()
            .map(|c| best(c.reached.iter().copied()))
            .collect(),
        intervals: (0..cells.len()).map(|k| interval(column(k))).collect(),
        batch_sizes,
        slopes,
    }
}

/// The three regimes judged with intervals (ranges include both ends, and neighbouring
/// ranges share their boundary batch size).
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRegimes {
    /// From the smallest batch size to the last that the data cannot rule out as perfect
    /// scaling from it; `None` when not even the second batch size passes.
    pub perfect_scaling: Option<(f64, f64)>,
    /// Between the other two; `None` when they meet.
    pub diminishing_returns: Option<(f64, f64)>,
    /// From the start of the trailing run of segments whose slope interval includes zero to
    /// the largest batch size; `None` when the last segment surely still saves steps.
    pub maximal_data_parallelism: Option<(f64, f64)>,
}

impl CurveIntervals {
    /// Whether the data cannot rule out perfect scaling from the smallest batch size to
    /// batch size number `k` (see the module documentation).
    pub fn consistent_with_perfect(&self, k: usize) -> bool {
        let (b0, b) = (self.batch_sizes[0], self.batch_sizes[k]);
        let top_of_first = self.intervals[0].1;
        self.intervals[k].0 <= top_of_first * b0 / b
    }

    /// Whether the slope interval of segment `k` (batch size k to k + 1) includes zero or
    /// lies above it.
    pub fn consistent_with_plateau(&self, k: usize) -> bool {
        self.slopes[k].1 >= 0.0
    }

    /// The regimes by the rule of the module documentation; `None` with fewer than 2 batch
    /// sizes, or when the smallest batch size's interval has no upper end (no trial reached
    /// the target there, or too few did: every batch size would then pass the perfect-scaling
    /// test, which could detect nothing).
    pub fn regimes(&self) -> Option<IntervalRegimes> {
        let n = self.batch_sizes.len();
        if n < 2 || !self.intervals[0].1.is_finite() {
            return None;
        }
        let end = (1..n)
            .take_while(|&k| self.steps[k].is_finite() && self.consistent_with_perfect(k))
            .count();
        let plateau_segments = (end..n - 1)
            .rev()
            .take_while(|&k| self.consistent_with_plateau(k))
            .count();
        let start = n - 1 - plateau_segments;
        let range =
            |i: usize, j: usize| (i < j).then(|| (self.batch_sizes[i], self.batch_sizes[j]));
        Some(IntervalRegimes {
            perfect_scaling: range(0, end),
            diminishing_returns: range(end, start),
            maximal_data_parallelism: range(start, n - 1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(batch_size: f64, reached: &[Option<u64>]) -> CellTrials {
        CellTrials {
            batch_size,
            reached: reached.to_vec(),
        }
    }

    /// Twelve trials whose steps spread around `steps` by up to a factor 1.5, two missing.
    fn spread(batch_size: f64, steps: u64) -> CellTrials {
        let mut reached: Vec<Option<u64>> = (0..10).map(|i| Some(steps + steps * i / 20)).collect();
        reached.extend([None, None]);
        cell(batch_size, &reached)
    }

    #[test]
    fn one_reaching_trial_among_misses_gives_an_open_upper_end() {
        let c = curve_intervals(&[cell(16.0, &[Some(100), None, None, None, None, None])], 1);
        assert_eq!(c.steps, vec![100.0]);
        // P(the one trial is left out of 6 draws) = (5/6)^6 = 33%: far above the 2.5% tail.
        assert_eq!(c.intervals[0], (100.0, f64::INFINITY));
        let all = curve_intervals(&[cell(16.0, &[Some(100); 6])], 1);
        assert_eq!(all.intervals[0], (100.0, 100.0), "no spread, no width");
    }

    #[test]
    fn the_interval_holds_the_value_and_the_same_seed_gives_the_same_interval() {
        let cells = [spread(16.0, 1000), spread(32.0, 500)];
        let a = curve_intervals(&cells, 7);
        assert_eq!(a, curve_intervals(&cells, 7));
        for (k, &(lo, hi)) in a.intervals.iter().enumerate() {
            assert!(
                lo <= a.steps[k] && a.steps[k] <= hi,
                "{lo} {} {hi}",
                a.steps[k]
            );
            assert!(hi < 1.5 * a.steps[k]);
        }
        // The minimum is the low end: no resample can go below the best trial.
        assert_eq!(a.intervals[0].0, 1000.0);
    }

    #[test]
    fn a_clean_curve_shows_the_three_regimes_where_they_are() {
        // Halving steps to 64, then saving 30% per doubling to 256, then flat.
        let curve = [
            spread(16.0, 8000),
            spread(32.0, 4000),
            spread(64.0, 2000),
            spread(128.0, 1400),
            spread(256.0, 1000),
            spread(512.0, 1000),
            spread(1024.0, 1000),
        ];
        let r = curve_intervals(&curve, 3).regimes().unwrap();
        assert_eq!(r.perfect_scaling, Some((16.0, 64.0)));
        assert_eq!(r.diminishing_returns, Some((64.0, 256.0)));
        assert_eq!(r.maximal_data_parallelism, Some((256.0, 1024.0)));
    }

    #[test]
    fn a_lone_noisy_point_does_not_end_perfect_scaling_but_a_sure_one_does() {
        // At 32 one trial of six reached, at 500: the interval reaches up to "none", and down
        // to the perfect-scaling line, so perfect scaling goes on.
        let lucky = [
            spread(16.0, 1000),
            cell(32.0, &[Some(500), None, None, None, None, None]),
            spread(64.0, 250),
        ];
        let r = curve_intervals(&lucky, 3).regimes().unwrap();
        assert_eq!(r.perfect_scaling, Some((16.0, 64.0)));
        // Every trial at 32 takes 900 or more: surely not half of 16's 1000-1450.
        let sure = [
            spread(16.0, 1000),
            cell(32.0, &[Some(900); 12]),
            spread(64.0, 800),
        ];
        let r = curve_intervals(&sure, 3).regimes().unwrap();
        assert_eq!(r.perfect_scaling, None);
    }

    #[test]
    fn a_batch_size_where_nothing_reached_the_target_counts_as_a_plateau() {
        let curve = [
            spread(16.0, 1000),
            spread(32.0, 500),
            cell(64.0, &[None; 6]),
        ];
        let c = curve_intervals(&curve, 3);
        assert!(c.steps[2].is_infinite());
        assert_eq!(c.slopes[1], (f64::INFINITY, f64::INFINITY));
        let r = c.regimes().unwrap();
        assert_eq!(r.perfect_scaling, Some((16.0, 32.0)));
        assert_eq!(r.maximal_data_parallelism, Some((32.0, 64.0)));
        assert_eq!(r.diminishing_returns, None);
        assert!(curve_intervals(&[cell(16.0, &[None])], 1)
            .regimes()
            .is_none());
        // One lucky trial at the smallest batch size: its interval has no upper end, and the
        // test would pass every batch size, so it is not made.
        let lone = [
            cell(16.0, &[Some(1000), None, None, None]),
            spread(32.0, 900),
        ];
        assert!(curve_intervals(&lone, 3).regimes().is_none());
    }
}
