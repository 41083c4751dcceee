//! Small, dependency-free statistics used by every report.
//!
//! Inputs are assumed free of NaN (results.csv never stores one); an empty input gives NaN
//! rather than an error, so a failed sweep point simply has no statistics.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Scales the median absolute deviation to the standard deviation of a normal distribution
/// (1 / Phi^-1(3/4)).
pub const MAD_TO_SD: f64 = 1.482_602_218_505_602;

/// The arithmetic mean of `xs` (NaN if empty).
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The sample standard deviation of `xs` (divisor n - 1); NaN with fewer than two values,
/// where a spread cannot be estimated.
pub fn sample_std(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

/// The median of `xs` (NaN if empty).
pub fn median(xs: &[f64]) -> f64 {
    quantile(xs, 0.5)
}

/// The `q`-quantile of `xs` by linear interpolation between order statistics (Hyndman and
/// Fan's type 7, the default of R and numpy). NaN if `xs` is empty; `q` is clamped to [0, 1].
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile_sorted(&sorted, q)
}

/// [`quantile`] of an already sorted slice, without copying it.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The median absolute deviation from the median, unscaled (multiply by [`MAD_TO_SD`] for a
/// robust standard deviation). NaN if empty.
pub fn mad(xs: &[f64]) -> f64 {
    let m = median(xs);
    let deviations: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median(&deviations)
}

/// A percentile-bootstrap confidence interval of the median at confidence `level` (e.g.
/// 0.95), from `resamples` resamples drawn with a `StdRng` seeded by `seed`, so the same
/// inputs always give the same interval. Returns (NaN, NaN) for an empty input or zero
/// resamples.
pub fn bootstrap_median_ci(xs: &[f64], resamples: usize, level: f64, seed: u64) -> (f64, f64) {
    if xs.is_empty() || resamples == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let medians = (0..resamples)
        .map(|_| resampled_median(xs, &mut rng))
        .collect();
    percentile_interval(medians, level)
}

/// The median of one resample of `xs` with replacement.
fn resampled_median(xs: &[f64], rng: &mut StdRng) -> f64 {
    let mut resample: Vec<f64> = (0..xs.len())
        .map(|_| xs[rng.random_range(0..xs.len())])
        .collect();
    resample.sort_by(f64::total_cmp);
    quantile_sorted(&resample, 0.5)
}

/// The central `level` percentile interval of bootstrap `values` ((NaN, NaN) when empty).
fn percentile_interval(mut values: Vec<f64>, level: f64) -> (f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    values.sort_by(f64::total_cmp);
    let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    (
        quantile_sorted(&values, tail),
        quantile_sorted(&values, 1.0 - tail),
    )
}

/// A percentile bootstrap interval at `level` of median(`a`) / median(`b`), two independent
/// samples each resampled from its own stream (`seed` for `a`, a stream derived from it for
/// `b`): the interval of a ratio between two estimates must not pair draws that move together.
/// Returns (NaN, NaN) for an empty input, zero resamples or a median of `b` at zero.
pub fn bootstrap_median_ratio_ci(
    a: &[f64],
    b: &[f64],
    resamples: usize,
    level: f64,
    seed: u64,
) -> (f64, f64) {
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return (f64::NAN, f64::NAN);
    }
    let (mut sa, mut sb) = (
        StdRng::seed_from_u64(seed),
        StdRng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15),
    );
    let ratios = (0..resamples)
        .map(|_| resampled_median(a, &mut sa) / resampled_median(b, &mut sb))
        .filter(|r| !r.is_nan())
        .collect();
    percentile_interval(ratios, level)
}

/// An ordinary-least-squares line `y = intercept + slope * x`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LinearFit {
    /// Value of the line at x = 0.
    pub intercept: f64,
    /// Change in y per unit of x.
    pub slope: f64,
    /// Coefficient of determination, 1 - SS_residual / SS_total (1 when y is constant and
    /// fitted exactly).
    pub r_squared: f64,
    /// Standard error of the intercept (NaN with fewer than 3 points: no residual degrees
    /// of freedom).
    pub intercept_se: f64,
    /// Standard error of the slope (NaN with fewer than 3 points).
    pub slope_se: f64,
}

impl LinearFit {
    /// The fitted value at `x`.
    pub fn predict(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }
}

/// The least-squares line through (x, y). `None` when the lengths differ, there are fewer
/// than two points, or all x are equal (the slope is undefined).
pub fn linear_fit(x: &[f64], y: &[f64]) -> Option<LinearFit> {
    let n = x.len();
    if n != y.len() || n < 2 {
        return None;
    }
    let nf = n as f64;
    let x_mean = x.iter().sum::<f64>() / nf;
    let y_mean = y.iter().sum::<f64>() / nf;
    let sxx: f64 = x.iter().map(|xi| (xi - x_mean).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = x
        .iter()
        .zip(y)
        .map(|(xi, yi)| (xi - x_mean) * (yi - y_mean))
        .sum();
    let slope = sxy / sxx;
    let intercept = y_mean - slope * x_mean;
    let ss_res: f64 = x
        .iter()
        .zip(y)
        .map(|(xi, yi)| (yi - intercept - slope * xi).powi(2))
        .sum();
    let ss_tot: f64 = y.iter().map(|yi| (yi - y_mean).powi(2)).sum();
    let r_squared = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    let (intercept_se, slope_se) = if n > 2 {
        let s2 = ss_res / (nf - 2.0);
        (
            (s2 * (1.0 / nf + x_mean * x_mean / sxx)).sqrt(),
            (s2 / sxx).sqrt(),
        )
    } else {
        (f64::NAN, f64::NAN)
    };
    Some(LinearFit {
        intercept,
        slope,
        r_squared,
        intercept_se,
        slope_se,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn median_and_quantiles_match_hand_values() {
        assert!(close(median(&[3.0, 1.0, 2.0]), 2.0));
        assert!(close(median(&[4.0, 1.0, 3.0, 2.0]), 2.5));
        // numpy.quantile([1, 2, 3, 4], 0.25) == 1.75 (type 7).
        assert!(close(quantile(&[4.0, 1.0, 3.0, 2.0], 0.25), 1.75));
        assert!(close(quantile(&[1.0, 2.0, 3.0, 4.0], 0.75), 3.25));
        assert!(close(quantile(&[1.0, 2.0, 3.0, 4.0], 0.0), 1.0));
        assert!(close(quantile(&[1.0, 2.0, 3.0, 4.0], 1.0), 4.0));
        assert!(close(quantile(&[7.0], 0.3), 7.0));
        assert!(median(&[]).is_nan());
        assert!(quantile(&[], 0.9).is_nan());
    }

    #[test]
    fn mean_and_sample_std_of_hand_values() {
        assert!(close(mean(&[1.0, 2.0, 6.0]), 3.0));
        // Deviations -2, -1, 3: squares 4 + 1 + 9 = 14, / 2 = 7.
        assert!(close(sample_std(&[1.0, 2.0, 6.0]), 7f64.sqrt()));
        assert!(mean(&[]).is_nan());
        assert!(sample_std(&[4.0]).is_nan());
    }

    #[test]
    fn mad_of_hand_values() {
        // Deviations from the median 2: 1, 0, 0, 2, 7 -> median 1.
        assert!(close(mad(&[1.0, 2.0, 2.0, 4.0, 9.0]), 1.0));
    }

    #[test]
    fn bootstrap_is_seeded_and_contains_the_median() {
        let xs: Vec<f64> = (0..41)
            .map(|i| 10.0 + ((i * 37) % 41) as f64 * 0.1)
            .collect();
        let a = bootstrap_median_ci(&xs, 2000, 0.95, 7);
        let b = bootstrap_median_ci(&xs, 2000, 0.95, 7);
        assert_eq!(a, b);
        // Interval ends are order statistics, so two seeds can agree; most must not.
        let differing = (8..28)
            .filter(|&s| bootstrap_median_ci(&xs, 200, 0.95, s) != a)
            .count();
        assert!(differing > 5, "{differing}");
        let m = median(&xs);
        assert!(a.0 <= m && m <= a.1, "{a:?} should contain {m}");
        assert!(a.0 < a.1);
        assert_eq!(bootstrap_median_ci(&[5.0], 100, 0.95, 1), (5.0, 5.0));
        assert!(bootstrap_median_ci(&[], 100, 0.95, 1).0.is_nan());
    }

    #[test]
    fn linear_fit_of_an_exact_line() {
        let fit = linear_fit(&[1.0, 2.0, 3.0, 4.0], &[3.0, 5.0, 7.0, 9.0]).unwrap();
        assert!(close(fit.intercept, 1.0) && close(fit.slope, 2.0));
        assert!(close(fit.r_squared, 1.0));
        assert!(close(fit.slope_se, 0.0) && close(fit.intercept_se, 0.0));
        assert!(close(fit.predict(10.0), 21.0));
    }

    #[test]
    fn linear_fit_standard_errors_by_hand() {
        // x = 0, 1, 2; y = 0, 2, 1: slope 0.5, intercept 0.5, residuals -0.5, 1, -0.5,
        // SS_res 1.5, s^2 = 1.5, Sxx = 2 -> slope_se = sqrt(0.75), intercept_se =
        // sqrt(1.5 * (1/3 + 1/2)) = sqrt(1.25); SS_tot = 2 -> R^2 = 0.25.
        let fit = linear_fit(&[0.0, 1.0, 2.0], &[0.0, 2.0, 1.0]).unwrap();
        assert!(close(fit.slope, 0.5) && close(fit.intercept, 0.5));
        assert!(close(fit.slope_se, 0.75f64.sqrt()));
        assert!(close(fit.intercept_se, 1.25f64.sqrt()));
        assert!(close(fit.r_squared, 0.25));
    }

    #[test]
    fn linear_fit_rejects_degenerate_input() {
        assert!(linear_fit(&[1.0], &[1.0]).is_none());
        assert!(linear_fit(&[2.0, 2.0], &[1.0, 3.0]).is_none());
        assert!(linear_fit(&[1.0, 2.0], &[1.0]).is_none());
        assert!(linear_fit(&[1.0, 2.0], &[1.0, 3.0])
            .unwrap()
            .slope_se
            .is_nan());
    }

    /// A coverage simulation: two samples of one distribution, so the true ratio of their
    /// medians is 1; the 95% interval from independent streams holds it about 95% of the time.
    #[test]
    fn the_ratio_of_two_medians_covers_at_its_level() {
        let mut rng = StdRng::seed_from_u64(11);
        let mut sample =
            |n: usize| -> Vec<f64> { (0..n).map(|_| -(1.0 - rng.random::<f64>()).ln()).collect() };
        let runs = 200;
        let held = (0..runs)
            .filter(|&k| {
                let (a, b) = (sample(31), sample(31));
                let (lo, hi) = bootstrap_median_ratio_ci(&a, &b, 500, 0.95, k);
                lo <= 1.0 && 1.0 <= hi
            })
            .count();
        // Binomial(200, 0.95): 183..=197 holds 99% of its mass.
        assert!((183..=199).contains(&held), "held 1 in {held} of {runs}");
        assert!(bootstrap_median_ratio_ci(&[], &[1.0], 10, 0.95, 0)
            .0
            .is_nan());
    }
}
