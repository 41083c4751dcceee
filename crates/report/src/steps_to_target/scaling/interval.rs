//! How sure a steps-to-result curve is: per batch size an interval of steps to result, and
//! intervals of the log-log slope over windows of neighbouring batch sizes, all from one
//! set of replicates, each a whole curve.
//!
//! # The replicates
//!
//! Steps to result at a batch size is the best of its N trials. A replicate draws, for every
//! batch size, where another search of N trials would find its best, from the law
//! [`rerun`](super::rerun) gives for the cell's trials under a [`Reading`] of its censored
//! trials ([`censored`](super::censored)). Percentiles of [`RESAMPLES`] replicates make the
//! intervals. A draw beyond the last step any of the cell's trials was seen at is only "more
//! than C steps": it counts as C at the low end and as unbounded at the high end, so an
//! interval whose top the data cannot bound says "> C" instead of a number.
//!
//! Slopes are fitted per replicate over windows of at least [`WINDOW`] neighbouring batch
//! sizes (least squares of log S on log B). A value only known to be beyond C bounds the
//! slope on one side: raising it raises the slope where its weight in the fit is positive
//! (the upper batch sizes of the window) and lowers it where negative. The interval is the
//! low percentile of the replicates' lower bounds and the high percentile of their upper
//! bounds: partial identification, never imputation.
//!
//! What it does not capture: a refining trial's box depends on the first stage, so a search
//! whose first stage missed the best region lands higher than any draw from its own trials
//! says (the coverage check of `steps-to-target-coverage-fmnist` counts how often).

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::censored::{BestOfN, Draw, Reading, Steps};
use super::rerun::LEVEL;

/// Replicates drawn: 2000, enough for stable 2.5% and 97.5% percentiles.
pub const RESAMPLES: usize = 2000;

/// Batch sizes in a slope window: 3, the fewest for a slope that is not one noisy ratio.
pub const WINDOW: usize = 3;

/// One batch size's trials as the replicates see them. Failed trials (`error`, `oom`) say
/// nothing about the metaparameters and are left out.
#[derive(Debug, Clone, PartialEq)]
pub struct CellTrials {
    /// The batch size.
    pub batch_size: f64,
    /// Its trials.
    pub trials: Vec<Draw>,
}

/// The log-log slope of steps to result over a window of neighbouring batch sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlopeWindow {
    /// Index of the window's first batch size in [`CurveIntervals::batch_sizes`].
    pub first: usize,
    /// Index of its last batch size.
    pub last: usize,
    /// The slope of the observed values (NaN where a value is beyond its support).
    pub slope: f64,
    /// Its interval at [`LEVEL`] (ends infinite where the data cannot bound them).
    pub interval: (f64, f64),
}

impl SlopeWindow {
    /// Half the width of the interval: what the window could resolve.
    pub fn half_width(&self) -> f64 {
        (self.interval.1 - self.interval.0) / 2.0
    }
}

/// A steps-to-result curve with its replicates (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct CurveIntervals {
    /// How censored trials were read.
    pub reading: Reading,
    /// Batch sizes with at least one trial, increasing.
    pub batch_sizes: Vec<f64>,
    /// Steps to result per batch size (infinite where no trial reached the target under this
    /// reading).
    pub steps: Vec<f64>,
    /// Per batch size, the last step any of its trials was seen at: beyond it the data say
    /// nothing.
    pub support: Vec<f64>,
    /// Interval of steps to result per batch size at [`LEVEL`] (the high end infinite when
    /// more than its tail of replicates lay beyond the support: "> support").
    pub intervals: Vec<(f64, f64)>,
    /// Interval of the log-log slope between each batch size and the next (one fewer than
    /// batch sizes): -1 is perfect scaling, 0 no gain.
    pub slopes: Vec<(f64, f64)>,
    /// Slopes over every run of [`WINDOW`] neighbouring batch sizes.
    pub windows: Vec<SlopeWindow>,
    /// Per batch size, whether any trial reached the target (whatever the reading).
    pub reached: Vec<bool>,
    /// The replicates, one curve each.
    replicates: Vec<Vec<Steps>>,
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

/// The interval of values known to lie within `bounds` per replicate: the low tail of the
/// lower bounds and the high tail of the upper bounds. NaN bounds count as unbounded.
pub(crate) fn bounded_interval(bounds: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    let (mut lows, mut highs): (Vec<f64>, Vec<f64>) = bounds
        .map(|(lo, hi)| {
            (
                if lo.is_nan() { f64::NEG_INFINITY } else { lo },
                if hi.is_nan() { f64::INFINITY } else { hi },
            )
        })
        .unzip();
    lows.sort_by(f64::total_cmp);
    highs.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    (
        rank_percentile(&lows, tail),
        rank_percentile(&highs, 1.0 - tail),
    )
}

/// Least-squares slope weights of log B over `batch`: slope = sum w_i log S_i.
fn slope_weights(batch: &[f64]) -> Vec<f64> {
    let x: Vec<f64> = batch.iter().map(|b| b.ln()).collect();
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let sxx: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    x.iter().map(|v| (v - mean) / sxx).collect()
}

/// The bounds of the slope sum w_i log S_i when each S_i is only known within its bounds.
fn slope_bounds(weights: &[f64], values: &[Steps]) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0, 0.0);
    for (&w, v) in weights.iter().zip(values) {
        let (a, b) = (w * v.low().ln(), w * v.high().ln());
        if w >= 0.0 {
            lo += a;
            hi += b;
        } else {
            lo += b;
            hi += a;
        }
    }
    (lo, hi)
}

/// Bootstraps `cells` (any order; cells without trials are left out) under `reading` with a
/// seeded generator, so the same rows always give the same intervals.
pub fn curve_intervals(cells: &[CellTrials], reading: Reading, seed: u64) -> CurveIntervals {
    let mut cells: Vec<&CellTrials> = cells.iter().filter(|c| !c.trials.is_empty()).collect();
    cells.sort_by(|a, b| a.batch_size.total_cmp(&b.batch_size));
    let best: Vec<BestOfN> = cells
        .iter()
        .map(|c| BestOfN::new(&c.trials, reading))
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let replicates: Vec<Vec<Steps>> = (0..RESAMPLES)
        .map(|_| best.iter().map(|b| b.sample(&mut rng)).collect())
        .collect();
    let batch_sizes: Vec<f64> = cells.iter().map(|c| c.batch_size).collect();
    let n = batch_sizes.len();
    let slope_over = |first: usize, last: usize| {
        let weights = slope_weights(&batch_sizes[first..=last]);
        bounded_interval(
            replicates
                .iter()
                .map(|r| slope_bounds(&weights, &r[first..=last])),
        )
    };
    let observed: Vec<Steps> = best.iter().map(BestOfN::observed).collect();
    let windows = (0..n.saturating_sub(WINDOW - 1))
        .map(|first| {
            let last = first + WINDOW - 1;
            let weights = slope_weights(&batch_sizes[first..=last]);
            let (lo, hi) = slope_bounds(&weights, &observed[first..=last]);
            SlopeWindow {
                first,
                last,
                slope: if lo == hi { lo } else { f64::NAN },
                interval: slope_over(first, last),
            }
        })
        .collect();
    CurveIntervals {
        reading,
        steps: observed.iter().map(|s| s.high()).collect(),
        support: best.iter().map(BestOfN::support).collect(),
        intervals: (0..n)
            .map(|k| bounded_interval(replicates.iter().map(|r| (r[k].low(), r[k].high()))))
            .collect(),
        slopes: (1..n).map(|k| slope_over(k - 1, k)).collect(),
        windows,
        reached: cells
            .iter()
            .map(|c| c.trials.iter().any(|d| matches!(d, Draw::Reached(_))))
            .collect(),
        batch_sizes,
        replicates,
    }
}

impl CurveIntervals {
    /// Replicate `r`'s batch sizes whose steps it drew exactly, as (batch size, steps), among
    /// those where some trial reached the target: a batch size where none did is "more than
    /// its cap" in every reading, a bound the S(B) fit cannot take, so it is left out of every
    /// replicate's fit alike (as out of the fit of the observed curve).
    pub fn replicate_points(&self, r: usize) -> Vec<(f64, f64)> {
        self.replicates[r]
            .iter()
            .zip(&self.batch_sizes)
            .zip(&self.reached)
            .filter_map(|((s, &b), &reached)| match s {
                Steps::Exact(v) if reached => Some((b, *v)),
                _ => None,
            })
            .collect()
    }

    /// Batch size `k`'s steps in replicate `r`, as bounds (low, high): exact, or from the
    /// last step its trials were seen at up to unbounded.
    pub fn replicate_steps(&self, r: usize, k: usize) -> (f64, f64) {
        let s = self.replicates[r][k];
        (s.low(), s.high())
    }

    /// Replicates drawn.
    pub fn replicate_count(&self) -> usize {
        self.replicates.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::bands::{BandRegimes, RegimeBands};
    use super::super::Regime;
    use super::*;

    fn cell(batch_size: f64, trials: &[Draw]) -> CellTrials {
        CellTrials {
            batch_size,
            trials: trials.to_vec(),
        }
    }

    /// Twelve trials whose steps spread above `steps` by up to a factor `1 + 9 / per`, two
    /// missing at a cap far beyond.
    fn spread_by(batch_size: f64, steps: u64, per: u64) -> CellTrials {
        let mut trials: Vec<Draw> = (0..10)
            .map(|i| Draw::Reached(steps + steps * i / per))
            .collect();
        trials.extend([Draw::Censored(steps * 10), Draw::Never]);
        cell(batch_size, &trials)
    }

    /// Spread by up to a factor 1.45.
    fn spread(batch_size: f64, steps: u64) -> CellTrials {
        spread_by(batch_size, steps, 20)
    }

    fn km(cells: &[CellTrials]) -> CurveIntervals {
        curve_intervals(cells, Reading::KaplanMeier, 3)
    }

    #[test]
    fn one_reaching_trial_among_misses_gives_an_open_upper_end_beyond_the_support() {
        let c = km(&[cell(
            16.0,
            &[
                Draw::Reached(100),
                Draw::Never,
                Draw::Never,
                Draw::Never,
                Draw::Never,
                Draw::Never,
            ],
        )]);
        assert_eq!(c.steps, vec![100.0]);
        // Another search's best lies beyond this one trial with P = C(6, 2) / C(12, 2) = 23%
        // (far above the 2.5% tail), and one trial gives no spacing to scale the low tail by.
        assert_eq!(c.intervals[0], (1.0, f64::INFINITY));
        assert_eq!(c.support, vec![100.0]);
        let all = km(&[cell(16.0, &[Draw::Reached(100); 6])]);
        assert_eq!(all.intervals[0], (100.0, 100.0), "no spread, no width");
    }

    #[test]
    fn the_interval_holds_the_value_and_the_same_seed_gives_the_same_interval() {
        let cells = [spread(16.0, 1000), spread(32.0, 500)];
        let a = km(&cells);
        assert_eq!(a, km(&cells));
        for (k, &(lo, hi)) in a.intervals.iter().enumerate() {
            assert!(
                lo <= a.steps[k] && a.steps[k] <= hi,
                "{lo} {} {hi}",
                a.steps[k]
            );
            assert!(hi < 1.5 * a.steps[k]);
        }
        // Another search's best can fall below this one's: by the spacing of the five lowest
        // trials (1000..1200), the low end is 1000 - 1.115 x 200 = 777.
        assert!(
            (a.intervals[0].0 - 777.0).abs() < 10.0,
            "{:?}",
            a.intervals[0]
        );
    }

    #[test]
    fn censored_trials_close_the_interval_only_as_far_as_the_data_allow() {
        // Two reached; ten stopped at 300 when beaten. Read as misses (pessimistic), the best
        // of 12 lies beyond the support in (10/12)^12 = 11% of draws: no upper end. Read
        // optimistically every stopped trial reaches at 300, so the top is 300.
        let mut trials = vec![Draw::Reached(100), Draw::Reached(120)];
        trials.extend([Draw::Censored(300); 10]);
        let cells = [cell(16.0, &trials)];
        let pess = curve_intervals(&cells, Reading::Pessimistic, 1);
        let opt = curve_intervals(&cells, Reading::Optimistic, 1);
        assert_eq!(pess.intervals[0].1, f64::INFINITY);
        assert_eq!(pess.support, vec![300.0]);
        assert!(opt.intervals[0].1 <= 300.0);
        assert_eq!(opt.steps, pess.steps, "the observed best is the same");
    }

    #[test]
    fn a_clean_curve_shows_the_three_regimes_where_they_are() {
        // Halving steps to 128, then saving ~30% per doubling to 512, then flat; trials within
        // 18% of the best, so that another search's best is known to about 10%.
        let curve = [16000, 8000, 4000, 2000, 1400, 1000, 1000, 1000, 1000]
            .iter()
            .zip([
                16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0,
            ])
            .map(|(&s, b)| spread_by(b, s, 50))
            .collect::<Vec<_>>();
        let r = BandRegimes::new(&km(&curve), RegimeBands::default());
        assert_eq!(r.range(Regime::PerfectScaling), Some((0, 3)));
        assert_eq!(r.range(Regime::MaximalDataParallelism), Some((5, 8)));
        assert_eq!(r.range(Regime::DiminishingReturns), Some((3, 5)));
        assert!(!r.out_of_order());
        assert_eq!(
            r.sequence(),
            vec![
                Regime::PerfectScaling,
                Regime::DiminishingReturns,
                Regime::MaximalDataParallelism
            ]
        );
    }

    #[test]
    fn a_cell_beyond_its_support_bounds_the_slope_on_one_side_only() {
        // Nothing reached at 64: its steps are only known to exceed 1500, so the window's
        // slope is at least that of (at most 1450), 500, 1500 and unbounded above: a plateau,
        // shown.
        let curve = [
            spread(16.0, 1000),
            spread(32.0, 500),
            cell(64.0, &[Draw::Censored(1500); 6]),
        ];
        let c = km(&curve);
        assert!(c.steps[2].is_infinite());
        assert_eq!(c.intervals[2].1, f64::INFINITY);
        assert_eq!(c.windows.len(), 1);
        let (lo, hi) = c.windows[0].interval;
        assert!(lo > -0.25 && hi == f64::INFINITY, "{lo} {hi}");
        assert!(c.windows[0].slope.is_nan());
        let r = BandRegimes::new(&c, RegimeBands::default());
        assert_eq!(r.windows[0].1, Some(Regime::MaximalDataParallelism));
        // Beyond a support of 200 instead, the slope could be anything above -1.4: open.
        let low_cap = [
            spread(16.0, 1000),
            spread(32.0, 500),
            cell(64.0, &[Draw::Censored(200); 6]),
        ];
        let r = BandRegimes::new(&km(&low_cap), RegimeBands::default());
        assert_eq!(r.windows[0].1, None);
    }
}
