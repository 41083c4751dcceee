use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

#[test]
fn expected_norms_give_the_exact_noise_scale_at_once() {
    // E|G_B|^2 = |G|^2 + tr(Sigma) / B with |G|^2 = 0.5 and tr(Sigma) = 40: B_simple = 80.
    let (g_sq, trace) = (0.5, 40.0);
    let mut noise = NoiseScale::new(8, 64, 0.99).unwrap();
    assert_eq!(noise.b_simple(), None);
    assert_eq!(noise.g_sq(), None);
    let record = noise
        .update(g_sq + trace / 8.0, g_sq + trace / 64.0)
        .unwrap();
    assert!(close(record.g_sq_estimate, g_sq) && close(record.trace_estimate, trace));
    // Debiased, the first average is the first estimate.
    assert!(close(record.g_sq, g_sq) && close(record.trace, trace));
    assert!(close(record.b_simple.unwrap(), 80.0));
    assert_eq!(record.update, 1);
    assert_eq!(noise.updates(), 1);
    assert_eq!(
        (noise.b_small(), noise.b_big(), noise.decay()),
        (8, 64, 0.99)
    );
}

#[test]
fn the_two_estimates_are_averaged_separately_and_debiased() {
    // b_small = 1, b_big = 2: |G|^2 ~ 2 g_big - g_small, tr(Sigma) ~ 2 (g_small - g_big).
    let mut noise = NoiseScale::new(1, 2, 0.5).unwrap();
    noise.update(3.0, 2.0).unwrap(); // |G|^2 1, trace 2
    let record = noise.update(5.0, 3.0).unwrap(); // |G|^2 1, trace 4
    assert!(close(record.trace_estimate, 4.0) && close(record.g_sq_estimate, 1.0));
    // Weights 0.25 and 0.5 over their sum 0.75.
    let trace = (0.25 * 2.0 + 0.5 * 4.0) / 0.75;
    assert!(close(record.trace, trace) && close(record.g_sq, 1.0));
    assert!(close(noise.b_simple().unwrap(), trace));
    // Decay 0: only the latest update counts.
    let mut latest = NoiseScale::new(1, 2, 0.0).unwrap();
    latest.update(3.0, 2.0).unwrap();
    latest.update(5.0, 3.0).unwrap();
    assert!(close(latest.trace().unwrap(), 4.0));
}

#[test]
fn no_noise_scale_while_the_signal_estimate_is_not_positive() {
    let mut noise = NoiseScale::new(1, 2, 0.9).unwrap();
    // |G|^2 ~ 2 * 1 - 10 = -8: noise swamps the signal.
    let record = noise.update(10.0, 1.0).unwrap();
    assert!(close(record.g_sq, -8.0));
    assert_eq!(record.b_simple, None);
    assert_eq!(noise.b_simple(), None);
    // tr(Sigma) ~ 2 (1 - 3) < 0.
    let mut noise = NoiseScale::new(1, 2, 0.9).unwrap();
    assert_eq!(noise.update(1.0, 3.0).unwrap().b_simple, None);
}

#[test]
fn bad_arguments_are_errors_and_bad_norms_change_nothing() {
    assert!(NoiseScale::new(0, 8, 0.9).is_err());
    assert!(NoiseScale::new(8, 8, 0.9).is_err());
    assert!(NoiseScale::new(8, 4, 0.9).is_err());
    for decay in [1.0, -0.1, f64::NAN] {
        assert!(NoiseScale::new(1, 2, decay).is_err(), "{decay}");
    }
    let mut noise = NoiseScale::new(1, 2, 0.9).unwrap();
    for (small, big) in [(f64::NAN, 1.0), (1.0, f64::INFINITY), (-1.0, 1.0)] {
        let err = noise.update(small, big).unwrap_err();
        assert!(err.to_string().contains("g_"), "{err}");
    }
    assert_eq!(noise.updates(), 0);
    assert_eq!(noise.b_simple(), None);
}

/// Standard normal draws by Box-Muller, both halves used.
struct Normal {
    rng: StdRng,
    spare: Option<f64>,
}

impl Normal {
    fn sample(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let u: f64 = 1.0 - self.rng.random::<f64>();
        let v: f64 = self.rng.random();
        let r = (-2.0 * u.ln()).sqrt();
        let angle = std::f64::consts::TAU * v;
        self.spare = Some(r * angle.sin());
        r * angle.cos()
    }
}

#[test]
fn converges_to_the_noise_scale_of_a_known_gradient_distribution() {
    // Per-example gradients g_i = G + noise, noise ~ N(0, Sigma) in 16 dimensions with
    // Sigma = diag(0.5 + k / 15): tr(Sigma) = 16; G = 0.1 in every coordinate: |G|^2 =
    // 0.16. B_simple = 100, between the two batch sizes as in practice. The small batch is
    // the first 16 examples of the big one.
    let dims = 16;
    let sd: Vec<f64> = (0..dims).map(|k| (0.5 + k as f64 / 15.0).sqrt()).collect();
    let (true_g_sq, true_trace) = (0.16, 16.0);
    let (b_small, b_big) = (16, 256);
    let mut normal = Normal {
        rng: StdRng::seed_from_u64(2018),
        spare: None,
    };
    // Decay 0.999 averages over about 2,000 updates; single estimates are off by about
    // 40% each (the variance of |G_B|^2 is 2 tr(Sigma^2) / B^2 + 4 G' Sigma G / B), so
    // the averages should be within about 1-2%.
    let mut noise = NoiseScale::new(b_small, b_big, 0.999).unwrap();
    let mut record = None;
    for _ in 0..10_000 {
        let mut small = vec![0.0; dims];
        let mut big = vec![0.0; dims];
        for i in 0..b_big {
            for k in 0..dims {
                let g = 0.1 + sd[k] * normal.sample();
                big[k] += g;
                if i < b_small {
                    small[k] += g;
                }
            }
        }
        let sq_norm_of_mean =
            |sum: &[f64], n: u32| sum.iter().map(|s| (s / f64::from(n)).powi(2)).sum::<f64>();
        record = Some(
            noise
                .update(
                    sq_norm_of_mean(&small, b_small),
                    sq_norm_of_mean(&big, b_big),
                )
                .unwrap(),
        );
    }
    let record = record.unwrap();
    let relative = |a: f64, b: f64| (a / b - 1.0).abs();
    assert!(relative(record.g_sq, true_g_sq) < 0.04, "{record:?}");
    assert!(relative(record.trace, true_trace) < 0.04, "{record:?}");
    let b_simple = noise.b_simple().unwrap();
    assert!(relative(b_simple, 100.0) < 0.05, "B_simple {b_simple}");
    assert_eq!(record.b_simple, Some(b_simple));
}
