use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

/// Batch sizes 16, 32, ..., 8192.
fn batch_sizes() -> Vec<f64> {
    (4..=13).map(|k| 2f64.powi(k)).collect()
}

fn curve(s_min: f64, b_crit: f64) -> Vec<(f64, f64)> {
    batch_sizes()
        .into_iter()
        .map(|b| (b, s_min * (1.0 + b_crit / b)))
        .collect()
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut StdRng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// S(B) = 1000 (1 + 256 / B) times log-normal noise of 5%.
fn noisy_curve(seed: u64) -> Vec<(f64, f64)> {
    let mut rng = StdRng::seed_from_u64(seed);
    curve(1000.0, 256.0)
        .into_iter()
        .map(|(b, s)| (b, s * (0.05 * normal(&mut rng)).exp()))
        .collect()
}

fn relative(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

#[test]
fn an_exact_curve_is_fitted_exactly() {
    let fit = fit_scaling(&curve(1000.0, 256.0), &ScalingFitOptions::default()).unwrap();
    assert!(relative(fit.s_min, 1000.0) < 1e-6, "{fit:?}");
    assert!(relative(fit.b_crit, 256.0) < 1e-6, "{fit:?}");
    assert!(relative(fit.e_min(), 256_000.0) < 1e-6);
    assert!(fit.rms_log_residual < 1e-9);
    assert!(fit.b_crit_identified);
    assert_eq!(fit.points, 10);
    assert!(relative(fit.predict(256.0), 2000.0) < 1e-6);
    let line = fit.curve(16.0, 8192.0, 10);
    assert_eq!(line.len(), 10);
    for ((b, s), (b_true, s_true)) in line.iter().zip(curve(1000.0, 256.0)) {
        assert!(relative(*b, b_true) < 1e-12 && relative(*s, s_true) < 1e-6);
    }
    assert!(fit.curve(1.0, 2.0, 0).is_empty());
    assert_eq!(fit.curve(4.0, 8.0, 1), vec![(4.0, fit.predict(4.0))]);
}

#[test]
fn a_noisy_curve_gives_back_s_min_and_b_crit() {
    // With ten points and 5% noise the standard errors are about 2.7% (S_min) and 4.7%
    // (B_crit), from the fit's Fisher information.
    let fit = fit_scaling(&noisy_curve(1), &ScalingFitOptions::default()).unwrap();
    assert!(relative(fit.s_min, 1000.0) < 0.05, "{fit:?}");
    assert!(relative(fit.b_crit, 256.0) < 0.08, "{fit:?}");
    assert!((0.02..0.08).contains(&fit.rms_log_residual), "{fit:?}");
    let (lo, hi) = fit.s_min_interval;
    assert!(lo < 1000.0 && 1000.0 < hi && lo < fit.s_min && fit.s_min < hi);
    let (lo, hi) = fit.b_crit_interval;
    assert!(lo < 256.0 && 256.0 < hi && lo < fit.b_crit && fit.b_crit < hi);
    // Reproducible: the same seed gives the same intervals.
    assert_eq!(
        fit,
        fit_scaling(&noisy_curve(1), &ScalingFitOptions::default()).unwrap()
    );
}

#[test]
fn over_many_noisy_curves_the_fit_is_unbiased_and_the_intervals_cover() {
    let options = ScalingFitOptions {
        resamples: 400,
        ..ScalingFitOptions::default()
    };
    let fits: Vec<ScalingFit> = (0..40)
        .map(|seed| fit_scaling(&noisy_curve(100 + seed), &options).unwrap())
        .collect();
    let mean_log = |f: fn(&ScalingFit) -> f64| {
        (fits.iter().map(|x| f(x).ln()).sum::<f64>() / fits.len() as f64).exp()
    };
    // Within 2% on average: 40 curves cut the standard errors by sqrt(40).
    assert!(relative(mean_log(|f| f.s_min), 1000.0) < 0.02);
    assert!(relative(mean_log(|f| f.b_crit), 256.0) < 0.03);
    let s_covered = fits
        .iter()
        .filter(|f| f.s_min_interval.0 <= 1000.0 && 1000.0 <= f.s_min_interval.1)
        .count();
    let b_covered = fits
        .iter()
        .filter(|f| f.b_crit_interval.0 <= 256.0 && 256.0 <= f.b_crit_interval.1)
        .count();
    // Nominal 95%; percentile intervals from a residual bootstrap of 10 points ignore that
    // the noise's size is itself estimated from 8 degrees of freedom, and cover less: over
    // 400 such curves, 91% (S_min) and 90% (B_crit). 32 of 40 allows for the draw.
    assert!(
        s_covered >= 32,
        "S_min: {s_covered} of 40 intervals cover 1000"
    );
    assert!(
        b_covered >= 32,
        "B_crit: {b_covered} of 40 intervals cover 256"
    );
}

#[test]
fn flat_and_perfectly_scaling_curves_are_told_apart() {
    let flat: Vec<(f64, f64)> = batch_sizes().into_iter().map(|b| (b, 500.0)).collect();
    let fit = fit_scaling(&flat, &ScalingFitOptions::default()).unwrap();
    assert_eq!(fit.b_crit, 0.0);
    assert!(relative(fit.s_min, 500.0) < 1e-12 && fit.b_crit_identified);

    let linear: Vec<(f64, f64)> = batch_sizes().into_iter().map(|b| (b, 1e6 / b)).collect();
    let fit = fit_scaling(&linear, &ScalingFitOptions::default()).unwrap();
    assert!(!fit.b_crit_identified, "{fit:?}");
    // Only E_min = S_min B_crit is determined: the 1e6 examples every batch size needs.
    assert!(relative(fit.e_min(), 1e6) < 1e-3, "{}", fit.e_min());
}

#[test]
fn bad_input_to_the_fit_is_an_error() {
    let options = ScalingFitOptions::default();
    assert!(fit_scaling(&[(16.0, 10.0), (32.0, 5.0)], &options).is_err());
    assert!(fit_scaling(&[(16.0, 10.0), (16.0, 11.0), (16.0, 9.0)], &options).is_err());
    assert!(fit_scaling(&[(16.0, 10.0), (32.0, 0.0), (64.0, 3.0)], &options).is_err());
    assert!(fit_scaling(&[(16.0, 10.0), (32.0, f64::NAN), (64.0, 3.0)], &options).is_err());
    assert!(fit_scaling(&[(-16.0, 10.0), (32.0, 5.0), (64.0, 3.0)], &options).is_err());
    let bad_level = ScalingFitOptions {
        level: 1.0,
        ..options
    };
    assert!(fit_scaling(&curve(1000.0, 256.0), &bad_level).is_err());
    let none = ScalingFitOptions {
        resamples: 0,
        ..options
    };
    let fit = fit_scaling(&curve(1000.0, 256.0), &none).unwrap();
    assert!(fit.b_crit_interval.0.is_nan() && fit.s_min_interval.1.is_nan());
}

#[test]
fn the_perfect_scaling_line_goes_through_the_smallest_batch_size() {
    let points = [(64.0, 300.0), (16.0, 1000.0), (32.0, 600.0)];
    let line = perfect_scaling_line(&points).unwrap();
    assert_eq!(line, vec![(16.0, 1000.0), (32.0, 500.0), (64.0, 250.0)]);
    assert!(perfect_scaling_line(&[]).unwrap().is_empty());
    assert!(perfect_scaling_line(&[(0.0, 1.0)]).is_err());
}

/// On S(B) = S_min (1 + c / B), doubling from B gives the speed-up (B + c) / (B + c / 2):
/// at least 1.7 (perfect) exactly when B <= 0.15 c / 0.7, and a saving (c / 2) / (B + c)
/// below 10% (plateau) exactly when B > 4 c.
#[test]
fn regime_boundaries_on_noiseless_curves_sit_where_the_rule_says() {
    let b = batch_sizes();
    for c in [100.0, 300.0, 1000.0, 3000.0] {
        let r = regimes(&curve(1000.0, c), &RegimeOptions::default()).unwrap();
        assert_eq!(r.segments.len(), 9);
        for s in &r.segments {
            let expected = if s.from <= 0.15 * c / 0.7 {
                Regime::PerfectScaling
            } else if s.from > 4.0 * c {
                Regime::MaximalDataParallelism
            } else {
                Regime::DiminishingReturns
            };
            assert_eq!(s.regime, expected, "c = {c}, {s:?}");
            assert!(relative(s.speedup_per_doubling, (s.from + c) / (s.from + c / 2.0)) < 1e-12);
        }
        // Last batch size whose doubling is perfect, first one on the plateau.
        let perfect_end = b.iter().copied().find(|&x| x > 0.15 * c / 0.7).unwrap();
        let plateau_start = b.iter().copied().find(|&x| x > 4.0 * c);
        assert_eq!(r.perfect_scaling.map(|p| p.1), Some(perfect_end), "c = {c}");
        assert_eq!(r.perfect_scaling.map(|p| p.0), Some(16.0));
        assert_eq!(
            r.maximal_data_parallelism,
            plateau_start.map(|s| (s, 8192.0)),
            "c = {c}"
        );
        assert_eq!(
            r.diminishing_returns,
            Some((perfect_end, plateau_start.unwrap_or(8192.0)))
        );
    }
    // By hand for c = 300: 16 -> 128 perfect (64 -> 128: 364 / 214 = 1.70), 128 -> 2048
    // diminishing (1024 -> 2048 saves 150 / 1324 = 11%), 2048 -> 8192 the plateau.
    let r = regimes(&curve(1000.0, 300.0), &RegimeOptions::default()).unwrap();
    assert_eq!(r.perfect_scaling, Some((16.0, 128.0)));
    assert_eq!(r.diminishing_returns, Some((128.0, 2048.0)));
    assert_eq!(r.maximal_data_parallelism, Some((2048.0, 8192.0)));
}

#[test]
fn regimes_read_from_the_ends_and_normalise_gaps() {
    // Perfect, plateau-like dip, perfect again, then a rise in steps at the end.
    let points = [
        (16.0, 1600.0),
        (32.0, 800.0),
        (64.0, 780.0),
        (128.0, 390.0),
        (256.0, 300.0),
        (512.0, 310.0),
    ];
    let r = regimes(&points, &RegimeOptions::default()).unwrap();
    let kinds: Vec<Regime> = r.segments.iter().map(|s| s.regime).collect();
    use Regime::*;
    assert_eq!(
        kinds,
        [
            PerfectScaling,
            MaximalDataParallelism,
            PerfectScaling,
            DiminishingReturns,
            MaximalDataParallelism
        ]
    );
    assert_eq!(r.perfect_scaling, Some((16.0, 32.0)));
    assert_eq!(r.diminishing_returns, Some((32.0, 256.0)));
    assert_eq!(r.maximal_data_parallelism, Some((256.0, 512.0)));
    assert!(r.segments[4].saving_per_doubling() < 0.0);

    // A missing batch size: 16 -> 64 dividing steps by 4 is perfect scaling (2 per doubling).
    let r = regimes(&[(64.0, 250.0), (16.0, 1000.0)], &RegimeOptions::default()).unwrap();
    assert!(relative(r.segments[0].speedup_per_doubling, 2.0) < 1e-12);
    assert_eq!(r.perfect_scaling, Some((16.0, 64.0)));
    assert_eq!(r.diminishing_returns, None);
    assert_eq!(r.maximal_data_parallelism, None);
}

#[test]
fn bad_input_to_the_regimes_is_an_error() {
    let options = RegimeOptions::default();
    assert!(regimes(&[(16.0, 10.0)], &options).is_err());
    assert!(regimes(&[(16.0, 10.0), (16.0, 8.0)], &options).is_err());
    assert!(regimes(&[(16.0, 10.0), (32.0, -1.0)], &options).is_err());
    for (t, s) in [(1.0, 0.1), (-0.1, 0.1), (0.15, 0.5), (0.15, f64::NAN)] {
        let o = RegimeOptions {
            perfect_tolerance: t,
            plateau_saving: s,
        };
        assert!(regimes(&curve(1000.0, 256.0), &o).is_err(), "{o:?}");
    }
}
