//! Training time predicted from step-time sweeps (seeds 000/001, the makers of a training cost
//! calculator: once the time of one step is known for a configuration, the time of an epoch and
//! of a run follow, and step time is not linear in batch size, so a prediction that assumes it
//! is goes wrong near the jumps).
//!
//! Two sources, best first:
//!
//! 1. **The same model's sweep** ([`StepCurve::at`]): the measured median at the batch size, or
//!    the straight line between the two measured neighbours (a dense sweep keeps its jumps:
//!    nothing is smoothed over more than one gap), or beyond the sweep the least-squares line of
//!    its last [`TAIL`] points, said so.
//! 2. **Across models** ([`cross_model`]): per-example and fixed cost as functions of forward
//!    FLOPs, activation size and parameters, fitted on every sweep of the device, with its
//!    leave-one-model-out error.
//!
//! An epoch of N examples at batch B is floor(N / B) full steps, plus, unless the last partial
//! batch is dropped, one step of N mod B examples timed at that batch size.

pub mod check;
pub mod cross_model;

use batchlab_method::stats::linear_fit;

/// Beyond the sweep, the line through its last this many points carries the prediction.
pub const TAIL: usize = 8;

/// One measured batch size of a sweep: the median step time and its interval, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// Examples per step.
    pub batch_size: u32,
    /// Median seconds per step.
    pub median: f64,
    /// Low end of the median's interval.
    pub low: f64,
    /// High end of the median's interval.
    pub high: f64,
}

/// A sweep's step times, in increasing batch size.
#[derive(Debug, Clone, PartialEq)]
pub struct StepCurve {
    /// Where it comes from (a report directory), for the reader.
    pub source: String,
    /// The measured batch sizes, increasing, each once.
    pub points: Vec<CurvePoint>,
}

/// How a step time was obtained from a curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Measured at this batch size.
    Measured,
    /// Between the measured neighbours `below` and `above`.
    Interpolated {
        /// The measured batch size below.
        below: u32,
        /// The measured batch size above.
        above: u32,
    },
    /// Outside the sweep, from the line through its nearest points.
    Extrapolated,
}

/// A step time with its interval, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepEstimate {
    /// Seconds per step.
    pub seconds: f64,
    /// Low end.
    pub low: f64,
    /// High end.
    pub high: f64,
    /// How it was obtained.
    pub origin: Origin,
}

impl StepEstimate {
    fn scaled(self, k: f64) -> (f64, f64, f64) {
        (k * self.seconds, k * self.low, k * self.high)
    }
}

impl StepCurve {
    /// Builds a curve from points in any order; `None` when empty or a batch size repeats.
    pub fn new(source: impl Into<String>, mut points: Vec<CurvePoint>) -> Option<Self> {
        points.sort_by_key(|p| p.batch_size);
        if points.is_empty()
            || points
                .windows(2)
                .any(|w| w[0].batch_size == w[1].batch_size)
        {
            return None;
        }
        Some(StepCurve {
            source: source.into(),
            points,
        })
    }

    /// The step time at `batch_size` (see the module documentation). `None` for batch size 0.
    pub fn at(&self, batch_size: u32) -> Option<StepEstimate> {
        if batch_size == 0 {
            return None;
        }
        let p = &self.points;
        let k = p.partition_point(|q| q.batch_size < batch_size);
        if let Some(q) = p.get(k).filter(|q| q.batch_size == batch_size) {
            return Some(StepEstimate {
                seconds: q.median,
                low: q.low,
                high: q.high,
                origin: Origin::Measured,
            });
        }
        if k > 0 && k < p.len() {
            let (a, b) = (p[k - 1], p[k]);
            let t = f64::from(batch_size - a.batch_size) / f64::from(b.batch_size - a.batch_size);
            let mix = |x: f64, y: f64| x + t * (y - x);
            return Some(StepEstimate {
                seconds: mix(a.median, b.median),
                low: mix(a.low, b.low),
                high: mix(a.high, b.high),
                origin: Origin::Interpolated {
                    below: a.batch_size,
                    above: b.batch_size,
                },
            });
        }
        // Outside: the line through the nearest TAIL points, and the intervals' relative
        // widths there carried along.
        let near: Vec<&CurvePoint> = if k == 0 {
            p.iter().take(TAIL).collect()
        } else {
            p.iter().rev().take(TAIL).collect()
        };
        let x: Vec<f64> = near.iter().map(|q| f64::from(q.batch_size)).collect();
        let y: Vec<f64> = near.iter().map(|q| q.median).collect();
        let seconds = match linear_fit(&x, &y) {
            Some(fit) => fit.intercept + fit.slope * f64::from(batch_size),
            // One point: proportional to the batch size from it.
            None => near[0].median * f64::from(batch_size) / f64::from(near[0].batch_size),
        };
        let nearest = near[0];
        Some(StepEstimate {
            seconds,
            low: seconds * nearest.low / nearest.median,
            high: seconds * nearest.high / nearest.median,
            origin: Origin::Extrapolated,
        })
    }
}

/// What is to be trained: `examples` per epoch at `batch_size`, for `epochs` epochs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainingPlan {
    /// Examples per step.
    pub batch_size: u32,
    /// Training examples per epoch.
    pub examples: u64,
    /// Epochs (a fraction trains that share of an epoch's steps).
    pub epochs: f64,
    /// Whether the last partial batch of an epoch is dropped.
    pub drop_last: bool,
}

impl TrainingPlan {
    /// Steps per epoch: floor(N / B) when the partial batch is dropped, else ceil(N / B).
    pub fn steps_per_epoch(&self) -> u64 {
        let b = u64::from(self.batch_size.max(1));
        if self.drop_last {
            self.examples / b
        } else {
            self.examples.div_ceil(b)
        }
    }
}

/// A predicted training time: `(value, low, high)` seconds per step, per epoch and in total.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The step at the plan's batch size.
    pub step: StepEstimate,
    /// Steps per epoch.
    pub steps_per_epoch: u64,
    /// Seconds per epoch (value, low, high).
    pub epoch: (f64, f64, f64),
    /// Seconds in total (value, low, high).
    pub total: (f64, f64, f64),
}

/// The plan's training time from `step_at` (a step time for any batch size): full steps at
/// the batch size, plus the partial last batch at its own size unless dropped. `None` when a
/// step time is missing.
pub fn predict(
    plan: &TrainingPlan,
    step_at: impl Fn(u32) -> Option<StepEstimate>,
) -> Option<Prediction> {
    let step = step_at(plan.batch_size)?;
    let b = u64::from(plan.batch_size);
    let full = plan.examples / b.max(1);
    let rest = plan.examples % b.max(1);
    let (mut value, mut low, mut high) = step.scaled(full as f64);
    if rest > 0 && !plan.drop_last {
        let last = step_at(u32::try_from(rest).ok()?)?;
        value += last.seconds;
        low += last.low;
        high += last.high;
    }
    let total = (value * plan.epochs, low * plan.epochs, high * plan.epochs);
    Some(Prediction {
        step,
        steps_per_epoch: plan.steps_per_epoch(),
        epoch: (value, low, high),
        total,
    })
}

#[cfg(test)]
mod tests;
