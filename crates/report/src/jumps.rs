//! Discontinuities ("jumps") in a step-time-versus-batch-size curve.
//!
//! The claim under test (the step-time studies' source) is that step time grows linearly with
//! batch size but jumps at 16, 32, 48 and 64. A jump is a change of *level* between two
//! neighbouring batch sizes that the trend on either side does not explain; a change of
//! *slope* (a kink) or one slow point (an outlier) is not a jump.
//!
//! # Method: a two-sided local-regression step test
//!
//! For every gap between neighbouring measured batch sizes b[i-1] < b[i]:
//!
//! 1. Fit a least-squares line to the medians of up to `window` points on the left
//!    (ending at b[i-1]) and another to up to `window` points on the right (starting at
//!    b[i]); both sides need at least `min_side` points, so the first and last
//!    `min_side - 1` gaps are not tested.
//! 2. The height is the right line minus the left line, both evaluated at the middle of the
//!    gap, (b[i-1] + b[i]) / 2: a pure change of slope gives about zero there, a step gives
//!    its height.
//! 3. The noise of one median is estimated robustly, as the largest of (a) the scaled
//!    median absolute pseudo-residual within `noise_window` points each side of the gap
//!    (each median minus the straight line through its two neighbours, normalised to the
//!    noise's scale: Gasser, Sroka and Jennen-Steinmetz 1986), which a few jumps cannot
//!    inflate; (b) the same over the whole curve relative to the step time, times the step
//!    time at the gap (precise when noise is proportional to the step time); and (c) the
//!    median near the gap of each point's own standard error of the median from its
//!    samples (1.2533 x 1.4826 x MAD / sqrt(n)). `z` is the height divided by its standard
//!    error: that noise times the square root of the two lines' leverages at the gap.
//! 4. A gap is a jump when |z| >= `z_threshold`, |height| / (the left line at b[i-1]) >=
//!    `min_relative`, and the step is persistent: at least a fraction `agreement` of the
//!    right-hand points lie beyond the left line by more than half the height, and as many
//!    left-hand points lie short of the right line by more than half the height (one
//!    outlying point moves a line's end but is not followed by its neighbours).
//! 5. Among jumps closer than `suppress_radius` points, only the largest |z| is kept: a
//!    step also raises the statistic of the gaps next to it.
//!
//! Both directions are reported; a negative height is a drop in step time.
//! [`method_description`] is the same method in one paragraph for `report.md`.

use batchlab_method::stats::{linear_fit, mad, median, LinearFit, MAD_TO_SD};
use serde::Serialize;

/// One detected discontinuity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Jump {
    /// The first batch size on the far side of the step: the step lies between
    /// `previous_batch_size` and this one.
    pub batch_size: u32,
    /// The measured batch size just before the step.
    pub previous_batch_size: u32,
    /// Right line minus left line at the middle of the gap, in milliseconds (negative: a
    /// drop).
    pub height_ms: f64,
    /// `height_ms` divided by the step time just before the step (the left line at
    /// `previous_batch_size`).
    pub relative: f64,
    /// `height_ms` in units of its standard error (the local noise of a median).
    pub z: f64,
}

/// Tuning of [`detect_jumps`]. The defaults were chosen on synthetic curves of 70 batch
/// sizes (`jumps::tests::calibration`): on noise-only curves (Gaussian 1-5% per sample,
/// Student-t with 3 degrees of freedom, constant 2 ms; 5-15 samples per batch size) the
/// largest |z| over 1,000 curves stayed below 4.9 and the full detector reported 3 jumps in
/// 25,000 curves; steps of 5-10% with 1% noise per sample and 15 samples (a median's noise
/// about 0.3% of the step time) had z >= 7.1 and were all found at their batch size.
#[derive(Debug, Clone, PartialEq)]
pub struct JumpOptions {
    /// Points in each one-sided local fit: 8, half the spacing of the claimed jumps (16,
    /// 32, 48, 64), so a window never reaches over the neighbouring claimed jump.
    pub window: usize,
    /// Fewest points a side may have: 3, the fewest from which a line has a residual.
    pub min_side: usize,
    /// Smallest |z| reported: 5. A curve of 70 batch sizes tests ~65 gaps, the noise is
    /// itself estimated, and the tails of timing noise are heavier than normal: on
    /// noise-only curves the 99th percentile of the largest |z| was 3.7-4.0.
    pub z_threshold: f64,
    /// Smallest |height| relative to the step time before the jump: 0.02. Below 2% a step
    /// does not change which batch size to choose, even when it is statistically clear.
    pub min_relative: f64,
    /// Fraction of the points on each side that must agree with the step: 2/3.
    pub agreement: f64,
    /// Jumps within this many points of a larger one are dropped: 4, half a window.
    pub suppress_radius: usize,
    /// Points each side of a gap from which its noise is estimated: 12 (about 24
    /// pseudo-residuals, enough for a median absolute value to be within ~25%).
    pub noise_window: usize,
}

impl Default for JumpOptions {
    fn default() -> Self {
        JumpOptions {
            window: 8,
            min_side: 3,
            z_threshold: 5.0,
            min_relative: 0.02,
            agreement: 2.0 / 3.0,
            suppress_radius: 4,
            noise_window: 12,
        }
    }
}

/// The method of [`detect_jumps`] in one paragraph, for a reader of `report.md`.
pub fn method_description() -> &'static str {
    "Jumps are found by a two-sided local-regression step test on the median step time of \
     each batch size. For every gap between neighbouring measured batch sizes, a \
     least-squares line is fitted to up to 8 points on its left and another to up to 8 \
     points on its right (at least 3 per side, so the first and last two gaps are not \
     tested); the jump's height is the right line minus the left line at the middle of the \
     gap, so a change of slope alone is no jump. The noise of one median is estimated \
     robustly, as the largest of three estimates: the scaled median absolute difference \
     between each median and the straight line through its two neighbours, within 12 points \
     of the gap (a few jumps cannot inflate a median); the same over the whole curve, \
     relative to the step time and scaled to the step time at the gap; and the points' own \
     standard errors of the median from their samples. z is the height over its standard \
     error. A gap is reported when |z| >= 5, the height is at least 2% of the step time \
     before it, and the step persists (at least two thirds of the points on each side lie \
     past the other side's line by more than half the height, which rules out one slow \
     point); of reported gaps within 4 points of each other only the largest |z| is kept. A \
     jump listed at batch size b lies between the previous measured batch size and b. On \
     synthetic noise-only curves of 70 batch sizes (Gaussian, Student-t and constant noise) \
     this reports about one false jump per 5,000 curves, and it finds steps of 5-10% at \
     their exact batch size when the noise of a median is about 0.3% of the step time."
}

/// Finds jumps in a curve given as (batch size, median step time in ms, the samples of
/// that batch size) per point. Points are sorted by batch size here; a point whose median
/// is not finite is ignored. The samples may be empty (then only the scatter of the medians
/// measures the noise). Returns the jumps in increasing batch size.
pub fn detect_jumps(points: &[(u32, f64, &[f64])], opts: &JumpOptions) -> Vec<Jump> {
    let (batch_sizes, mut passing) = candidates(points, opts);
    passing.retain(|c| c.passes);
    // Non-maximum suppression: strongest first, then drop anything close to a kept jump.
    passing.sort_by(|a, b| b.z.abs().total_cmp(&a.z.abs()).then(a.index.cmp(&b.index)));
    let mut kept: Vec<Candidate> = Vec::new();
    for c in passing {
        if kept
            .iter()
            .all(|k| k.index.abs_diff(c.index) > opts.suppress_radius)
        {
            kept.push(c);
        }
    }
    kept.sort_by_key(|c| c.index);
    kept.iter().map(|c| c.to_jump(&batch_sizes)).collect()
}

/// The step statistic of every tested gap, whether or not it is a jump, in increasing batch
/// size: lets a report state the measured step at a batch size where a jump was claimed but
/// not found.
pub fn gap_statistics(points: &[(u32, f64, &[f64])], opts: &JumpOptions) -> Vec<Jump> {
    let (batch_sizes, all) = candidates(points, opts);
    all.iter().map(|c| c.to_jump(&batch_sizes)).collect()
}

/// The sorted, cleaned batch sizes and the statistic of every testable gap.
fn candidates(points: &[(u32, f64, &[f64])], opts: &JumpOptions) -> (Vec<u32>, Vec<Candidate>) {
    let (batch_sizes, y, residuals, sample_se) = points::prepared(points);
    let x: Vec<f64> = batch_sizes.iter().map(|&b| f64::from(b)).collect();
    let min_side = opts.min_side.max(2);
    let all = (1..x.len())
        .filter(|&i| i >= min_side && x.len() - i >= min_side)
        .filter_map(|i| {
            let noise = local_noise(i, &y, &residuals, &sample_se, opts.noise_window);
            test_gap(i, &x, &y, noise, opts)
        })
        .collect();
    (batch_sizes, all)
}

/// The step statistic of one gap (between points `index - 1` and `index`).
struct Candidate {
    index: usize,
    height: f64,
    relative: f64,
    z: f64,
    passes: bool,
}

impl Candidate {
    fn to_jump(&self, batch_sizes: &[u32]) -> Jump {
        Jump {
            batch_size: batch_sizes[self.index],
            previous_batch_size: batch_sizes[self.index - 1],
            height_ms: self.height,
            relative: self.relative,
            z: self.z,
        }
    }
}

fn test_gap(i: usize, x: &[f64], y: &[f64], noise: f64, opts: &JumpOptions) -> Option<Candidate> {
    let left = i.saturating_sub(opts.window)..i;
    let right = i..(i + opts.window).min(x.len());
    let fit_l = linear_fit(&x[left.clone()], &y[left.clone()])?;
    let fit_r = linear_fit(&x[right.clone()], &y[right.clone()])?;
    let x0 = (x[i - 1] + x[i]) / 2.0;
    let height = fit_r.predict(x0) - fit_l.predict(x0);
    let before = fit_l.predict(x[i - 1]);
    let relative = if before > 0.0 {
        height / before
    } else {
        f64::NAN
    };
    let spread = (leverage(&x[left.clone()], x0) + leverage(&x[right.clone()], x0)).sqrt();
    // A floor of 1e-6 of the level keeps z finite on a noiseless curve; min_relative then
    // decides alone.
    let se = (noise * spread)
        .max(1e-6 * before.abs())
        .max(f64::MIN_POSITIVE);
    let z = height / se;
    let passes = z.abs() >= opts.z_threshold
        && relative.abs() >= opts.min_relative
        && agrees(
            &fit_l,
            &x[right.clone()],
            &y[right],
            height,
            opts.agreement,
            1.0,
        )
        && agrees(
            &fit_r,
            &x[left.clone()],
            &y[left],
            height,
            opts.agreement,
            -1.0,
        );
    Some(Candidate {
        index: i,
        height,
        relative,
        z,
        passes,
    })
}

/// Whether enough of the points (x, y) lie past `other_side`'s line by more than half the
/// height, in the direction of the step as seen from that line (`side` = 1 for points right
/// of the gap, -1 for points left of it).
fn agrees(
    other_side: &LinearFit,
    x: &[f64],
    y: &[f64],
    height: f64,
    fraction: f64,
    side: f64,
) -> bool {
    let direction = height.signum() * side;
    let past = x
        .iter()
        .zip(y)
        .filter(|(xj, yj)| direction * (*yj - other_side.predict(**xj)) > height.abs() / 2.0)
        .count();
    past as f64 >= (fraction * x.len() as f64).ceil()
}

/// The variance of a least-squares line's value at `x0`, in units of the noise variance.
fn leverage(x: &[f64], x0: f64) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let sxx: f64 = x.iter().map(|xi| (xi - mean).powi(2)).sum();
    1.0 / n + (x0 - mean).powi(2) / sxx
}

/// For each interior point, its median minus the line through its two neighbours, divided
/// by that difference's standard deviation in units of the noise, so that under a locally
/// linear trend with independent noise of standard deviation s each value has standard
/// deviation s (Gasser, Sroka and Jennen-Steinmetz 1986, Biometrika 73:625). The two end
/// points have none.
fn pseudo_residuals(x: &[f64], y: &[f64]) -> Vec<Option<f64>> {
    (0..x.len())
        .map(|j| {
            if j == 0 || j + 1 >= x.len() {
                return None;
            }
            let span = x[j + 1] - x[j - 1];
            let a = (x[j + 1] - x[j]) / span;
            let c = (x[j] - x[j - 1]) / span;
            Some((y[j] - a * y[j - 1] - c * y[j + 1]) / (1.0 + a * a + c * c).sqrt())
        })
        .collect()
}

/// The standard error of a median from its samples, assuming roughly normal noise:
/// sqrt(pi / 2) x sd / sqrt(n), with sd estimated by the scaled MAD. None for fewer than
/// three samples.
fn median_standard_error(samples: &[f64]) -> Option<f64> {
    (samples.len() >= 3).then(|| {
        std::f64::consts::FRAC_PI_2.sqrt() * MAD_TO_SD * mad(samples)
            / (samples.len() as f64).sqrt()
    })
}

/// The noise of one median near gap `i`: the largest of (a) the robust scale of the
/// pseudo-residuals within `half_width` points each side, (b) the robust scale of all
/// pseudo-residuals relative to their medians, times the level at the gap (a precise
/// estimate when the noise is proportional to the step time, which a local estimate from
/// ~24 correlated values is not), and (c) the typical sample-based standard error near the
/// gap. Taking the largest errs towards missing a small jump rather than reporting noise.
fn local_noise(
    i: usize,
    y: &[f64],
    residuals: &[Option<f64>],
    sample_se: &[Option<f64>],
    half_width: usize,
) -> f64 {
    let range = i.saturating_sub(half_width)..(i + half_width).min(residuals.len());
    let abs_res: Vec<f64> = residuals[range.clone()]
        .iter()
        .flatten()
        .map(|r| r.abs())
        .collect();
    let local = if abs_res.len() >= 5 {
        MAD_TO_SD * median(&abs_res)
    } else {
        f64::NAN
    };
    let relative: Vec<f64> = residuals
        .iter()
        .zip(y)
        .filter_map(|(r, level)| r.map(|r| (r / level).abs()))
        .filter(|r| r.is_finite())
        .collect();
    let global = MAD_TO_SD * median(&relative) * (y[i - 1] + y[i]) / 2.0;
    let ses: Vec<f64> = sample_se[range].iter().flatten().copied().collect();
    let from_samples = median(&ses);
    [local, global, from_samples]
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

mod gap;
mod points;

pub use gap::Gap;
pub use points::{
    detectable_relative, point_offsets, relative_offsets, relative_se, scatter, PointOffset,
};

#[cfg(test)]
mod tests;
