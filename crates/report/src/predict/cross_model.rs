//! A step time for a model without a sweep, from the sweeps of other models on the same
//! device (the calculator's approach): each sweep is summarised by its least-squares line,
//! step = fixed + per_example x B, and across sweeps
//!
//! - per_example = c_flops x forward FLOPs + c_act x activation elements (the work and the
//!   memory traffic of one example), and
//! - fixed = c_0 + c_params x parameters (launch and optimizer costs, which grow with the
//!   weights),
//!
//! each fitted by least squares on relative errors (every model counts alike, whatever its
//! size) with coefficients that cannot be negative (a cost cannot fall as the work grows): when
//! the free fit gives one a negative value, the best fit without that term is taken.
//! [`leave_one_out`] refits without each model in turn and predicts it, so the error a user
//! should expect for a new model is measured, not assumed.

use super::{CurvePoint, StepCurve, StepEstimate};
use batchlab_method::stats::{linear_fit, median};

/// What a model costs per example and in total, independent of the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelFeatures {
    /// Forward FLOPs per example.
    pub flops: f64,
    /// Activation elements per example (every layer's output).
    pub activations: f64,
    /// Trainable parameters.
    pub params: f64,
}

/// One model's sweep on the device.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The model, e.g. "vgg16 3x32x32".
    pub label: String,
    /// Its features.
    pub features: ModelFeatures,
    /// Its measured step times.
    pub curve: StepCurve,
}

/// The fitted cross-model costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossModel {
    /// Seconds per forward FLOP (per example).
    pub per_flop: f64,
    /// Seconds per activation element (per example).
    pub per_activation: f64,
    /// Fixed seconds per step.
    pub fixed: f64,
    /// Fixed seconds per parameter.
    pub per_param: f64,
}

impl CrossModel {
    /// The predicted step time of a model with `f` at `batch_size`.
    pub fn step_seconds(&self, f: &ModelFeatures, batch_size: u32) -> f64 {
        let per_example = self.per_flop * f.flops + self.per_activation * f.activations;
        self.fixed + self.per_param * f.params + per_example * f64::from(batch_size)
    }

    /// As a [`StepEstimate`] with the relative `error` (e.g. the leave-one-out error) as its
    /// interval.
    pub fn estimate(&self, f: &ModelFeatures, batch_size: u32, error: f64) -> StepEstimate {
        let seconds = self.step_seconds(f, batch_size);
        StepEstimate {
            seconds,
            low: seconds * (1.0 - error).max(0.0),
            high: seconds * (1.0 + error),
            origin: super::Origin::Extrapolated,
        }
    }
}

/// Least squares of y on two columns through the origin, on relative errors (each row divided
/// by its y), with both coefficients >= 0: the free solution if it is, else the better of the
/// two one-column fits. `None` when no row has a positive y.
fn nonnegative_pair(rows: &[(f64, f64, f64)]) -> Option<(f64, f64)> {
    let rows: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.2 > 0.0 && r.2.is_finite())
        .map(|&(a, b, y)| (a / y, b / y))
        .collect();
    if rows.is_empty() {
        return None;
    }
    // Minimise sum (a_i p + b_i q - 1)^2.
    let (saa, sbb, sab) = rows.iter().fold((0.0, 0.0, 0.0), |s, (a, b)| {
        (s.0 + a * a, s.1 + b * b, s.2 + a * b)
    });
    let (sa, sb) = rows.iter().fold((0.0, 0.0), |s, (a, b)| (s.0 + a, s.1 + b));
    let cost = |p: f64, q: f64| {
        rows.iter()
            .map(|(a, b)| (a * p + b * q - 1.0).powi(2))
            .sum::<f64>()
    };
    let det = saa * sbb - sab * sab;
    if det.abs() > 1e-12 * (saa * sbb).max(f64::MIN_POSITIVE) {
        let p = (sa * sbb - sb * sab) / det;
        let q = (sb * saa - sa * sab) / det;
        if p >= 0.0 && q >= 0.0 {
            return Some((p, q));
        }
    }
    let only_a = if saa > 0.0 { (sa / saa).max(0.0) } else { 0.0 };
    let only_b = if sbb > 0.0 { (sb / sbb).max(0.0) } else { 0.0 };
    Some(if cost(only_a, 0.0) <= cost(0.0, only_b) {
        (only_a, 0.0)
    } else {
        (0.0, only_b)
    })
}

/// The least-squares line of a curve's medians: (fixed, per example) seconds; a single point
/// is all per example.
fn line(points: &[CurvePoint]) -> (f64, f64) {
    let x: Vec<f64> = points.iter().map(|p| f64::from(p.batch_size)).collect();
    let y: Vec<f64> = points.iter().map(|p| p.median).collect();
    match linear_fit(&x, &y) {
        Some(f) => (f.intercept.max(0.0), f.slope.max(0.0)),
        None => (0.0, y[0] / x[0]),
    }
}

/// Fits the cross-model costs to `samples`; `None` with fewer than 2.
pub fn fit(samples: &[&Sample]) -> Option<CrossModel> {
    if samples.len() < 2 {
        return None;
    }
    let lines: Vec<(f64, f64)> = samples.iter().map(|s| line(&s.curve.points)).collect();
    let per_example: Vec<(f64, f64, f64)> = samples
        .iter()
        .zip(&lines)
        .map(|(s, l)| (s.features.flops, s.features.activations, l.1))
        .collect();
    let fixed: Vec<(f64, f64, f64)> = samples
        .iter()
        .zip(&lines)
        .map(|(s, l)| (1.0, s.features.params, l.0))
        .collect();
    let (per_flop, per_activation) = nonnegative_pair(&per_example)?;
    let (fixed, per_param) = nonnegative_pair(&fixed).unwrap_or((0.0, 0.0));
    Some(CrossModel {
        per_flop,
        per_activation,
        fixed,
        per_param,
    })
}

/// One model predicted by a fit on the others.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    /// The model.
    pub label: String,
    /// Median of |predicted / measured - 1| over its measured batch sizes.
    pub median_abs_error: f64,
}

/// Each model predicted from a fit on all the others (needs 3 models: 2 to fit).
pub fn leave_one_out(samples: &[Sample]) -> Vec<LeftOut> {
    (0..samples.len())
        .filter_map(|k| {
            let others: Vec<&Sample> = samples
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, s)| s)
                .collect();
            let model = fit(&others)?;
            let s = &samples[k];
            let errors: Vec<f64> = s
                .curve
                .points
                .iter()
                .map(|p| (model.step_seconds(&s.features, p.batch_size) / p.median - 1.0).abs())
                .collect();
            Some(LeftOut {
                label: s.label.clone(),
                median_abs_error: median(&errors),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(label: &str, flops: f64, activations: f64, params: f64) -> Sample {
        // A device with 1 ns per FLOP, 10 ns per activation, 2 ms + 1 ns per parameter fixed.
        let truth = CrossModel {
            per_flop: 1e-9,
            per_activation: 1e-8,
            fixed: 2e-3,
            per_param: 1e-9,
        };
        let features = ModelFeatures {
            flops,
            activations,
            params,
        };
        let points = [1, 8, 32, 64]
            .iter()
            .map(|&b| {
                let t = truth.step_seconds(&features, b);
                CurvePoint {
                    batch_size: b,
                    median: t,
                    low: 0.95 * t,
                    high: 1.05 * t,
                }
            })
            .collect();
        Sample {
            label: label.into(),
            features,
            curve: StepCurve::new(label, points).unwrap(),
        }
    }

    #[test]
    fn costs_that_hold_across_models_are_recovered_and_predict_a_left_out_one() {
        let samples = vec![
            sample("a", 1e9, 1e6, 1e6),
            sample("b", 3e8, 4e6, 5e7),
            sample("c", 5e7, 2e5, 3e6),
            sample("d", 2e9, 8e6, 2e7),
        ];
        let all: Vec<&Sample> = samples.iter().collect();
        let m = fit(&all).unwrap();
        assert!((m.per_flop / 1e-9 - 1.0).abs() < 1e-6, "{m:?}");
        assert!((m.per_activation / 1e-8 - 1.0).abs() < 1e-6, "{m:?}");
        assert!((m.fixed / 2e-3 - 1.0).abs() < 1e-6, "{m:?}");
        for left in leave_one_out(&samples) {
            assert!(left.median_abs_error < 1e-6, "{left:?}");
        }
        assert!(fit(&all[..1]).is_none());
    }

    #[test]
    fn a_cost_that_would_come_out_negative_is_dropped() {
        // Per-example time falls with activations here: the free fit would give activations a
        // negative cost; the fit keeps FLOPs alone.
        let rows = [(1.0, 3.0, 1.0), (2.0, 1.0, 2.0), (4.0, 0.5, 4.1)];
        let (p, q) = nonnegative_pair(&rows).unwrap();
        assert!(p > 0.9 && p < 1.1 && q == 0.0, "{p} {q}");
        assert!(nonnegative_pair(&[(1.0, 1.0, 0.0)]).is_none());
    }
}
