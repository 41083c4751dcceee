//! The three regimes of a steps-to-result curve that Shallue et al. describe (perfect
//! scaling, diminishing returns, maximal data parallelism).
//!
//! Each pair of neighbouring measured batch sizes is a segment, judged by its speed-up per
//! doubling of the batch size, (S_i / S_i+1)^(log 2 / log(B_i+1 / B_i)) (for a doubling just
//! S_i / S_i+1, so a missing batch size in between does not change the scale):
//!
//! - **perfect scaling** when doubling divides the steps by at least 2 (1 - tolerance),
//!   1.7 with the default tolerance 0.15 (a speed-up above 2 is noise, and counts too);
//! - **maximal data parallelism** when doubling saves less than a fraction `saving` of the
//!   steps, 10% by default (a speed-up below 1 / 0.9 = 1.11), including when steps grow;
//! - **diminishing returns** in between.
//!
//! The regimes' batch-size ranges are read from the ends, so that they come in the order
//! the claim states and one noisy segment does not split a regime: perfect scaling runs
//! from the smallest batch size to the end of the leading run of perfect segments, maximal
//! data parallelism from the start of the trailing run of plateau segments to the largest
//! batch size, and diminishing returns covers what lies between. Neighbouring ranges share
//! their boundary batch size. Each segment's own regime is reported too, so a perfect
//! segment in the middle of the curve is still visible.

use super::check_points;
use batchlab_method::TargetError;
use serde::Serialize;

/// The three regimes of a steps-to-result curve, ordered as the claim orders them (perfect
/// scaling first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Regime {
    /// Doubling the batch size (nearly) halves the steps.
    PerfectScaling,
    /// Larger batches still save steps, but less than proportionally.
    DiminishingReturns,
    /// Larger batches save (almost) no steps.
    MaximalDataParallelism,
}

impl Regime {
    /// The regime in words.
    pub fn name(self) -> &'static str {
        match self {
            Regime::PerfectScaling => "perfect scaling",
            Regime::DiminishingReturns => "diminishing returns",
            Regime::MaximalDataParallelism => "maximal data parallelism",
        }
    }
}

/// The rule of [`regimes`]; both thresholds are per doubling of the batch size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegimeOptions {
    /// A segment scales perfectly when doubling divides steps by at least 2 (1 -
    /// `perfect_tolerance`): 0.15, i.e. 1.7. Steps to result are a minimum over a finite
    /// search evaluated at discrete steps, so even a perfectly scaling workload measures a
    /// few percent off 2; 15% allows that without admitting the knee.
    pub perfect_tolerance: f64,
    /// A segment is on the plateau when doubling saves less than this fraction of the
    /// steps: 0.10. Less than 10% fewer steps for twice the examples per step is no longer
    /// worth the hardware.
    pub plateau_saving: f64,
}

impl Default for RegimeOptions {
    fn default() -> Self {
        RegimeOptions {
            perfect_tolerance: 0.15,
            plateau_saving: 0.10,
        }
    }
}

/// Two neighbouring measured batch sizes and what doubling the batch size bought between
/// them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// The smaller batch size.
    pub from: f64,
    /// The larger batch size.
    pub to: f64,
    /// Steps at `from` over steps at `to`, per doubling of the batch size (2: perfect
    /// scaling; 1: no gain; below 1: steps grew).
    pub speedup_per_doubling: f64,
    /// The segment's regime by itself.
    pub regime: Regime,
}

impl Segment {
    /// The fraction of steps one doubling saves: 1 - 1 / speedup (0.5: perfect scaling).
    pub fn saving_per_doubling(&self) -> f64 {
        1.0 - 1.0 / self.speedup_per_doubling
    }
}

/// Where each regime lies on a measured curve (ranges include both ends; neighbouring
/// ranges share their boundary batch size).
#[derive(Debug, Clone, PartialEq)]
pub struct Regimes {
    /// Every segment, in increasing batch size.
    pub segments: Vec<Segment>,
    /// Batch sizes of perfect scaling, from the smallest; `None` when the first segment
    /// does not scale perfectly.
    pub perfect_scaling: Option<(f64, f64)>,
    /// Batch sizes of diminishing returns; `None` when no segment lies between the other
    /// two regimes.
    pub diminishing_returns: Option<(f64, f64)>,
    /// Batch sizes of maximal data parallelism, up to the largest; `None` when the last
    /// segment still saves enough.
    pub maximal_data_parallelism: Option<(f64, f64)>,
}

/// Locates the three regimes on `points` (batch size, steps to result; only batch sizes
/// that have a result, in any order) by the rule of the module documentation. Needs at
/// least 2 points, distinct batch sizes, every value finite and positive, `0 <=
/// perfect_tolerance < 1` and `0 <= plateau_saving < 0.5` (a saving of a half is perfect
/// scaling).
pub fn regimes(points: &[(f64, f64)], options: &RegimeOptions) -> Result<Regimes, TargetError> {
    check_points(points)?;
    if !(0.0..1.0).contains(&options.perfect_tolerance) {
        let value = options.perfect_tolerance;
        return Err(TargetError::argument(
            "perfect_tolerance",
            value,
            "in [0, 1)",
        ));
    }
    if !(0.0..0.5).contains(&options.plateau_saving) {
        let value = options.plateau_saving;
        return Err(TargetError::argument(
            "plateau_saving",
            value,
            "in [0, 0.5)",
        ));
    }
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    if sorted.len() < 2 {
        return Err(TargetError::Data(format!(
            "{} points: regimes need at least 2 batch sizes",
            sorted.len()
        )));
    }
    if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(TargetError::Data(format!(
            "batch size {} appears more than once: give one steps to result per batch size",
            w[0].0
        )));
    }
    let perfect_speedup = 2.0 * (1.0 - options.perfect_tolerance);
    let plateau_speedup = 1.0 / (1.0 - options.plateau_saving);
    let segments: Vec<Segment> = sorted
        .windows(2)
        .map(|w| {
            let ((b0, s0), (b1, s1)) = (w[0], w[1]);
            let speedup = (s0 / s1).powf(2f64.ln() / (b1 / b0).ln());
            let regime = if speedup >= perfect_speedup {
                Regime::PerfectScaling
            } else if speedup < plateau_speedup {
                Regime::MaximalDataParallelism
            } else {
                Regime::DiminishingReturns
            };
            Segment {
                from: b0,
                to: b1,
                speedup_per_doubling: speedup,
                regime,
            }
        })
        .collect();
    let last = sorted.len() - 1;
    // Point indices: perfect scaling covers points 0..=end, the plateau start..=last.
    let end = segments
        .iter()
        .take_while(|s| s.regime == Regime::PerfectScaling)
        .count();
    let start = last
        - segments
            .iter()
            .rev()
            .take_while(|s| s.regime == Regime::MaximalDataParallelism)
            .count();
    let range = |i: usize, j: usize| (i < j).then(|| (sorted[i].0, sorted[j].0));
    Ok(Regimes {
        segments,
        perfect_scaling: range(0, end),
        diminishing_returns: range(end, start),
        maximal_data_parallelism: range(start, last),
    })
}
