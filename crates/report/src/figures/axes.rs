//! Axis ranges and tick labels.

use super::{Chart, Scale};

/// The axis range covering `values`, widened by `pad_low` / `pad_high` of its span (in log
/// space on a log axis, where non-positive values are left out). With `include_zero` on a
/// linear axis the range reaches 0 and is not padded past it.
pub(super) fn range(
    values: Vec<f64>,
    scale: Scale,
    include_zero: bool,
    pad_low: f64,
    pad_high: f64,
) -> (f64, f64) {
    let log = scale != Scale::Linear;
    let usable = values
        .into_iter()
        .filter(|v| v.is_finite() && (!log || *v > 0.0));
    let mapped = usable.map(|v| if log { v.log10() } else { v });
    let (mut lo, mut hi) = mapped.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let zero_floor = include_zero && !log && lo >= 0.0;
    if include_zero && !log {
        (lo, hi) = (lo.min(0.0), hi.max(0.0));
    }
    if hi <= lo {
        let d = lo.abs().max(1.0) * 0.1;
        (lo, hi) = (lo - d, hi + d);
    }
    let span = hi - lo;
    let lo = if zero_floor {
        lo.max(0.0)
    } else {
        lo - pad_low * span
    };
    let hi = hi + pad_high * span;
    if log {
        (10f64.powf(lo), 10f64.powf(hi))
    } else {
        (lo, hi)
    }
}

/// A tick label without float noise: "16", "0.25", "1.5k"-free plain numbers, at most
/// three significant decimals.
pub(super) fn tick(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else {
        trim(format!("{v:.3}"))
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Whether a fixed axis range can be used as is: finite, increasing, and positive on a log
/// axis (where 0 and below have no place).
pub(super) fn usable_range((lo, hi): (f64, f64), scale: Scale) -> bool {
    lo.is_finite() && hi.is_finite() && lo < hi && (scale == Scale::Linear || lo > 0.0)
}

pub(super) fn x_values(chart: &Chart) -> Vec<f64> {
    let series = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0));
    series.chain(chart.vlines.iter().map(|v| v.x)).collect()
}

pub(super) fn y_values(chart: &Chart) -> Vec<f64> {
    let points: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .collect();
    // Error bars widen the axis by at most the points' own span on each side: a few outlier
    // intervals must not flatten the data (the tch VGG16 sweep's bars reached 2,500 ms over
    // medians below 800). Longer bars stop at the edge with an arrow head (`draw`).
    let (lo, hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let reach = if chart.y_scale == Scale::Linear && hi > lo {
        hi - lo
    } else {
        f64::INFINITY
    };
    let bars = chart
        .series
        .iter()
        .flat_map(|s| s.error_bars.iter().flat_map(|b| [b.0, b.1]))
        .map(|v| v.clamp(lo - reach, hi + reach));
    let bars: Vec<f64> = if lo.is_finite() {
        bars.collect()
    } else {
        chart
            .series
            .iter()
            .flat_map(|s| s.error_bars.iter().flat_map(|b| [b.0, b.1]))
            .collect()
    };
    points.into_iter().chain(bars).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_plain_numbers() {
        assert_eq!(tick(16.0), "16");
        assert_eq!(tick(2.50), "2.5");
        assert_eq!(tick(0.125), "0.125");
        assert_eq!(tick(1234.56), "1235");
        assert_eq!(tick(-3.0), "-3");
    }

    #[test]
    fn error_bars_widen_the_axis_by_at_most_the_points_span() {
        let mut chart = Chart::new("t", "x", "y");
        chart.series.push(
            super::super::Series::new(
                "s",
                vec![(1.0, 100.0), (2.0, 200.0)],
                super::super::PALETTE[0],
            )
            .with_error_bars(vec![(90.0, 110.0), (150.0, 5000.0)]),
        );
        let v = y_values(&chart);
        let max = v.iter().copied().fold(f64::MIN, f64::max);
        let min = v.iter().copied().fold(f64::MAX, f64::min);
        assert_eq!(
            (min, max),
            (90.0, 300.0),
            "the 5,000 bar stops at 200 + 100"
        );
    }

    #[test]
    fn ranges_pad_and_handle_degenerate_data() {
        let (lo, hi) = range(vec![10.0, 20.0], Scale::Linear, false, 0.1, 0.1);
        assert!((lo - 9.0).abs() < 1e-9 && (hi - 21.0).abs() < 1e-9);
        let (lo, hi) = range(vec![5.0], Scale::Linear, false, 0.1, 0.1);
        assert!(lo < 5.0 && hi > 5.0);
        let (lo, hi) = range(vec![], Scale::Linear, false, 0.0, 0.0);
        assert!(lo < hi);
        let (lo, hi) = range(vec![1.0, 100.0, -1.0], Scale::Log, false, 0.0, 0.0);
        assert!((lo - 1.0).abs() < 1e-9 && (hi - 100.0).abs() < 1e-6);
        let (lo, _) = range(vec![10.0, 20.0], Scale::Linear, true, 0.05, 0.05);
        assert_eq!(lo, 0.0);
    }
}
