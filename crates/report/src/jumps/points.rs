//! What the jump detector can and cannot see, point by point: a single batch size off the line
//! through its neighbours (an isolated slow point, which the detector's persistence test rules
//! out as a jump), the scatter of the medians (how much a curve fluctuates), and the smallest
//! jump that could have passed the detector at a gap.

use super::{local_noise, median_standard_error, pseudo_residuals, Jump, JumpOptions};
use batchlab_method::stats::{median, MAD_TO_SD};

/// One batch size beside the straight line through its two measured neighbours.
#[derive(Debug, Clone, PartialEq)]
pub struct PointOffset {
    /// The batch size.
    pub batch_size: u32,
    /// Its median minus the line through its neighbours at it, in milliseconds.
    pub excess_ms: f64,
    /// `excess_ms` relative to that line.
    pub relative: f64,
    /// The offset in units of its standard error (the local noise of a median).
    pub z: f64,
}

impl PointOffset {
    /// Whether the point stands out as the detector's jumps must: |z| and |relative| at least
    /// its thresholds.
    pub fn stands_out(&self, opts: &JumpOptions) -> bool {
        self.z.abs() >= opts.z_threshold && self.relative.abs() >= opts.min_relative
    }
}

/// The offset of every interior point of a curve given as for [`super::detect_jumps`].
pub fn point_offsets(points: &[(u32, f64, &[f64])], opts: &JumpOptions) -> Vec<PointOffset> {
    let (batch_sizes, y, residuals, sample_se) = prepared(points);
    let x: Vec<f64> = batch_sizes.iter().map(|&b| f64::from(b)).collect();
    (1..x.len().saturating_sub(1))
        .filter_map(|j| {
            let normalised = residuals[j]?;
            let span = x[j + 1] - x[j - 1];
            let (a, c) = ((x[j + 1] - x[j]) / span, (x[j] - x[j - 1]) / span);
            let line = a * y[j - 1] + c * y[j + 1];
            let noise = local_noise(j, &y, &residuals, &sample_se, opts.noise_window);
            Some(PointOffset {
                batch_size: batch_sizes[j],
                excess_ms: y[j] - line,
                relative: (y[j] - line) / line,
                z: normalised / noise.max(f64::MIN_POSITIVE),
            })
        })
        .collect()
}

/// How much a curve's medians fluctuate: for every interior point, the absolute difference
/// between its median and the line through its neighbours, over the standard deviation of such
/// a difference under pure noise, relative to the step time. The robust scale of these values
/// ([`scatter`]) is the typical noise of one median as a fraction of the step time.
pub fn relative_offsets(points: &[(u32, f64, &[f64])]) -> Vec<f64> {
    let (_, y, residuals, _) = prepared(points);
    residuals
        .iter()
        .zip(&y)
        .filter_map(|(r, level)| r.map(|r| (r / level).abs()))
        .filter(|r| r.is_finite())
        .collect()
}

/// The robust scale (scaled median) of [`relative_offsets`]: NaN for fewer than three.
pub fn scatter(offsets: &[f64]) -> f64 {
    if offsets.len() < 3 {
        return f64::NAN;
    }
    MAD_TO_SD * median(offsets)
}

/// The standard error of `gap`'s relative height (a tested gap from
/// [`super::gap_statistics`]): its height over its z, as a fraction of the step time.
pub fn relative_se(gap: &Jump) -> f64 {
    if gap.z != 0.0 && gap.relative.is_finite() {
        (gap.relative / gap.z).abs()
    } else {
        0.0
    }
}

/// The smallest step, relative to the step time before it, that could reach `z_needed` at the
/// noise of `gap` and the detector's minimum relative height. A real step must also persist on
/// both sides, so this is a lower bound.
pub fn detectable_relative(gap: &Jump, z_needed: f64, opts: &JumpOptions) -> f64 {
    (z_needed * relative_se(gap)).max(opts.min_relative)
}

/// The points sorted by batch size without non-finite medians or repeats, with their
/// pseudo-residuals and sample standard errors (as the detector prepares them).
#[allow(clippy::type_complexity)]
pub(super) fn prepared(
    points: &[(u32, f64, &[f64])],
) -> (Vec<u32>, Vec<f64>, Vec<Option<f64>>, Vec<Option<f64>>) {
    let mut pts: Vec<&(u32, f64, &[f64])> = points.iter().filter(|p| p.1.is_finite()).collect();
    pts.sort_by_key(|p| p.0);
    pts.dedup_by_key(|p| p.0);
    let x: Vec<f64> = pts.iter().map(|p| f64::from(p.0)).collect();
    let y: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let sample_se = pts.iter().map(|p| median_standard_error(p.2)).collect();
    let residuals = pseudo_residuals(&x, &y);
    (pts.iter().map(|p| p.0).collect(), y, residuals, sample_se)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line 100 + 10 b with a deterministic ±0.5% wiggle, and one point made slow.
    fn curve(slow_at: u32, slow_by: f64) -> Vec<(u32, f64, &'static [f64])> {
        (1..=40u32)
            .map(|b| {
                let base = 100.0 + 10.0 * f64::from(b);
                let wiggle = if b % 2 == 0 { 1.005 } else { 0.995 };
                let slow = if b == slow_at { 1.0 + slow_by } else { 1.0 };
                (b, base * wiggle * slow, &[][..])
            })
            .collect()
    }

    #[test]
    fn a_single_slow_point_stands_out_and_its_neighbours_do_not() {
        let opts = JumpOptions::default();
        let offsets = point_offsets(&curve(20, 0.10), &opts);
        let at = |b: u32| offsets.iter().find(|o| o.batch_size == b).unwrap();
        assert!(at(20).stands_out(&opts), "{:?}", at(20));
        assert!((at(20).relative - 0.10).abs() < 0.02, "{:?}", at(20));
        assert!(!at(10).stands_out(&opts), "{:?}", at(10));
        assert!(offsets.iter().filter(|o| o.stands_out(&opts)).count() <= 3);
    }

    #[test]
    fn the_scatter_measures_the_wiggle() {
        // Alternating ±0.5%: each median is about 1% off its neighbours' line, whose standard
        // deviation under noise is sqrt(1.5) noise units.
        let s = scatter(&relative_offsets(&curve(0, 0.0)));
        assert!((0.006..0.014).contains(&s), "{s}");
        assert!(scatter(&[0.1, 0.2]).is_nan());
    }

    #[test]
    fn the_detectable_step_grows_with_the_noise_and_has_a_floor() {
        let opts = JumpOptions::default();
        let gap = |relative: f64, z: f64| Jump {
            batch_size: 2,
            previous_batch_size: 1,
            height_ms: 1.0,
            relative,
            z,
        };
        // 4% at z 2: one standard error is 2%, so 5 of them are 10%.
        let z = opts.z_threshold;
        assert!((detectable_relative(&gap(0.04, 2.0), z, &opts) - 0.10).abs() < 1e-12);
        assert_eq!(detectable_relative(&gap(0.001, 10.0), z, &opts), 0.02);
    }
}
