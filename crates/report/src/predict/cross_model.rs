//! A step time for a model without a sweep, from the sweeps of other models on the same
//! device (the calculator's approach): each sweep is summarised by its least-squares line,
//! step = fixed + per_example x B, and across sweeps
//!
//! - per_example = c_flops x forward FLOPs + c_act x activation elements + c_grouped x the
//!   FLOPs of grouped (depthwise) convolutions (the work and the memory traffic of one example;
//!   depthwise FLOPs run far below dense throughput on a CPU: on the development Xeon the
//!   MobileNets took 20-35x VGG's time per forward FLOP, and without this term the fit
//!   mispredicted every MobileNet by more than half), and
//! - fixed = c_0 + c_params x parameters + c_layers x layers (the optimizer's pass over the
//!   weights, and a few kernel calls per layer whatever the batch size),
//!
//! each fitted by least squares on relative errors (every model counts alike, whatever its
//! size) with coefficients that cannot be negative (a cost cannot fall as the work grows): the
//! best fit over the subsets of terms whose free solution has none negative.
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
    /// The part of `flops` in grouped (depthwise) convolutions.
    pub grouped_flops: f64,
    /// Convolution, BatchNorm and linear layers.
    pub layers: f64,
}

impl ModelFeatures {
    fn per_example_terms(&self) -> [f64; 3] {
        [self.flops, self.activations, self.grouped_flops]
    }

    fn fixed_terms(&self) -> [f64; 3] {
        [1.0, self.params, self.layers]
    }
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

/// The fitted cross-model costs: seconds per unit of each term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossModel {
    /// Per example: per forward FLOP, per activation element, per grouped-convolution FLOP.
    pub per_example: [f64; 3],
    /// Per step: fixed, per parameter, per layer.
    pub per_step: [f64; 3],
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl CrossModel {
    /// The predicted step time of a model with `f` at `batch_size`.
    pub fn step_seconds(&self, f: &ModelFeatures, batch_size: u32) -> f64 {
        dot(self.per_step, f.fixed_terms())
            + dot(self.per_example, f.per_example_terms()) * f64::from(batch_size)
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

/// Solves the k x k system `a x = b` by Gaussian elimination with partial pivoting; `None`
/// when it is singular.
fn solve<const K: usize>(mut a: [[f64; K]; K], mut b: [f64; K]) -> Option<[f64; K]> {
    let scale = a.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    for col in 0..K {
        let pivot = (col..K).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col];
        for row in col + 1..K {
            let f = a[row][col] / pivot_row[col];
            for (x, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; K];
    for row in (0..K).rev() {
        let rest: f64 = (row + 1..K).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
}

/// Least squares of y on the three columns of `rows` (terms, y) through the origin, on
/// relative errors (each row divided by its y), with every coefficient >= 0: the best free
/// solution over the subsets of columns whose coefficients all come out non-negative (an
/// exact non-negative least squares for three columns). `None` when no row has a positive y.
fn nonnegative(rows: &[([f64; 3], f64)]) -> Option<[f64; 3]> {
    let rows: Vec<[f64; 3]> = rows
        .iter()
        .filter(|(_, y)| *y > 0.0 && y.is_finite())
        .map(|(x, y)| x.map(|v| v / y))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let cost = |c: [f64; 3]| rows.iter().map(|x| (dot(*x, c) - 1.0).powi(2)).sum::<f64>();
    let mut best: Option<([f64; 3], f64)> = None;
    for subset in 1u8..8 {
        let cols: Vec<usize> = (0..3).filter(|k| subset & (1 << k) != 0).collect();
        let Some(c) = subset_fit(&rows, &cols) else {
            continue;
        };
        if c.iter().any(|v| *v < 0.0 || !v.is_finite()) {
            continue;
        }
        let e = cost(c);
        if best.is_none_or(|(_, b)| e < b) {
            best = Some((c, e));
        }
    }
    Some(best.map_or([0.0; 3], |(c, _)| c))
}

/// The free least-squares coefficients of the columns `cols` (others 0), solving the normal
/// equations of rows x c = 1; a left-out column gets an identity row and column, so its
/// coefficient comes out 0 from the same 3 x 3 system.
fn subset_fit(rows: &[[f64; 3]], cols: &[usize]) -> Option<[f64; 3]> {
    // Each column scaled to unit root mean square first: FLOPs (1e9) and layers (1e2) side
    // by side would square into a system too ill-conditioned for the normal equations.
    let mut scale = [1.0; 3];
    for &k in cols {
        scale[k] = (rows.iter().map(|x| x[k] * x[k]).sum::<f64>() / rows.len() as f64).sqrt();
        if !(scale[k] > 0.0 && scale[k].is_finite()) {
            return None;
        }
    }
    let used = |k: usize| cols.contains(&k);
    let mut gram = [[0.0; 3]; 3];
    let mut rhs = [0.0; 3];
    for i in 0..3 {
        for j in 0..3 {
            gram[i][j] = match (used(i), used(j)) {
                (true, true) => {
                    rows.iter().map(|x| x[i] * x[j]).sum::<f64>() / (scale[i] * scale[j])
                }
                _ => f64::from(u8::from(i == j)),
            };
        }
        if used(i) {
            rhs[i] = rows.iter().map(|x| x[i]).sum::<f64>() / scale[i];
        }
    }
    let solved = solve(gram, rhs)?;
    Some([0, 1, 2].map(|k| solved[k] / scale[k]))
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
    let per_example: Vec<([f64; 3], f64)> = samples
        .iter()
        .zip(&lines)
        .map(|(s, l)| (s.features.per_example_terms(), l.1))
        .collect();
    let per_step: Vec<([f64; 3], f64)> = samples
        .iter()
        .zip(&lines)
        .map(|(s, l)| (s.features.fixed_terms(), l.0))
        .collect();
    Some(CrossModel {
        per_example: nonnegative(&per_example)?,
        per_step: nonnegative(&per_step).unwrap_or([0.0; 3]),
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

    /// A device with 1 ns per FLOP, 10 ns per activation, 20 ns per depthwise FLOP on top,
    /// 2 ms + 1 ns per parameter + 50 us per layer per step.
    const TRUTH: CrossModel = CrossModel {
        per_example: [1e-9, 1e-8, 2e-8],
        per_step: [2e-3, 1e-9, 5e-5],
    };

    fn sample(
        label: &str,
        flops: f64,
        activations: f64,
        params: f64,
        grouped: f64,
        layers: f64,
    ) -> Sample {
        let features = ModelFeatures {
            flops,
            activations,
            params,
            grouped_flops: grouped,
            layers,
        };
        let points = [1, 8, 32, 64]
            .iter()
            .map(|&b| {
                let t = TRUTH.step_seconds(&features, b);
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
            sample("a", 1e9, 1e6, 1e6, 0.0, 16.0),
            sample("b", 3e8, 4e6, 5e7, 1e6, 50.0),
            sample("c", 5e7, 2e5, 3e6, 3e6, 100.0),
            sample("d", 2e9, 8e6, 2e7, 0.0, 40.0),
            sample("e", 1e8, 3e6, 4e6, 2e6, 90.0),
        ];
        let all: Vec<&Sample> = samples.iter().collect();
        let m = fit(&all).unwrap();
        for (got, want) in m
            .per_example
            .iter()
            .chain(&m.per_step)
            .zip(TRUTH.per_example.iter().chain(&TRUTH.per_step))
        {
            assert!((got / want - 1.0).abs() < 1e-6, "{m:?}");
        }
        for left in leave_one_out(&samples) {
            assert!(left.median_abs_error < 1e-6, "{left:?}");
        }
        assert!(fit(&all[..1]).is_none());
    }

    #[test]
    fn a_cost_that_would_come_out_negative_is_dropped() {
        // Per-example time falls with activations here: the free fit would give activations a
        // negative cost; the fit keeps FLOPs alone.
        let rows = [
            ([1.0, 3.0, 0.0], 1.0),
            ([2.0, 1.0, 0.0], 2.0),
            ([4.0, 0.5, 0.0], 4.1),
        ];
        let [p, q, r] = nonnegative(&rows).unwrap();
        assert!(p > 0.9 && p < 1.1 && q == 0.0 && r == 0.0, "{p} {q} {r}");
        assert!(nonnegative(&[([1.0, 1.0, 1.0], 0.0)]).is_none());
    }

    #[test]
    fn the_small_solver_solves_and_refuses_a_singular_system() {
        let x = solve([[2.0, 1.0], [1.0, 3.0]], [3.0, 5.0]).unwrap();
        assert!(
            (x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12,
            "{x:?}"
        );
        assert!(solve([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0]).is_none());
    }
}
