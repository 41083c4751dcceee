use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

/// The squared L2-star discrepancy of `points` in [0, 1)^d, by Warnock's formula: the mean
/// squared difference, over all boxes [0, t), between the fraction of points in the box and
/// its volume. Pseudo-random points have expectation (2^-d - 3^-d) / n.
fn l2_star_squared(points: &[Vec<f64>]) -> f64 {
    let n = points.len() as f64;
    let d = points[0].len() as i32;
    let single: f64 = points
        .iter()
        .map(|p| p.iter().map(|x| 1.0 - x * x).product::<f64>())
        .sum();
    let mut pairs = 0.0;
    for p in points {
        for q in points {
            pairs += p
                .iter()
                .zip(q)
                .map(|(x, y)| 1.0 - x.max(*y))
                .product::<f64>();
        }
    }
    3f64.powi(-d) - 2f64.powi(1 - d) / n * single + pairs / (n * n)
}

fn pseudo_random(n: usize, dims: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| (0..dims).map(|_| rng.random::<f64>()).collect())
        .collect()
}

fn project(points: &[Vec<f64>], a: usize, b: usize) -> Vec<Vec<f64>> {
    points.iter().map(|p| vec![p[a], p[b]]).collect()
}

#[test]
fn dims_must_be_one_to_eight() {
    assert!(QuasiRandom::new(0, 1).is_err());
    assert!(QuasiRandom::new(MAX_DIMS + 1, 1).is_err());
    let q = QuasiRandom::new(MAX_DIMS, 1).unwrap();
    assert_eq!(q.dims(), MAX_DIMS);
    assert_eq!(q.seed(), 1);
    assert_eq!(q.point(5).len(), MAX_DIMS);
}

#[test]
fn a_seed_reproduces_its_points_and_another_seed_does_not() {
    let a = QuasiRandom::new(8, 42).unwrap().points(256);
    let b = QuasiRandom::new(8, 42).unwrap().points(256);
    assert_eq!(a, b);
    let c = QuasiRandom::new(8, 43).unwrap().points(256);
    let same = a
        .iter()
        .flatten()
        .zip(c.iter().flatten())
        .filter(|(x, y)| x == y)
        .count();
    assert_eq!(same, 0, "{same} of {} coordinates equal", 256 * 8);
    // Any index on its own gives the same point as in the prefix.
    let q = QuasiRandom::new(8, 42).unwrap();
    assert_eq!(q.point(200), a[200]);
}

#[test]
fn every_coordinate_is_in_the_unit_interval() {
    for seed in 0..4 {
        let q = QuasiRandom::new(8, seed).unwrap();
        let far = [1u64 << 40, (1u64 << 53) - 1, u64::MAX];
        for p in q.points(4096).iter().chain(far.map(|i| q.point(i)).iter()) {
            for &x in p {
                assert!((0.0..1.0).contains(&x), "{x} out of [0, 1)");
            }
        }
    }
}

#[test]
fn scrambling_keeps_the_stratification_of_each_coordinate() {
    // The first b^m points of the base-b coordinate put exactly one point in each interval
    // [k / b^m, (k + 1) / b^m): the property that makes Halton low-discrepancy.
    let q = QuasiRandom::new(3, 9).unwrap();
    for (dim, base, m) in [(0, 2u32, 8u32), (1, 3, 5), (2, 5, 3)] {
        let n = base.pow(m) as usize;
        let mut seen = vec![0; n];
        for p in q.points(n) {
            seen[(p[dim] * n as f64) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c == 1), "base {base}: {seen:?}");
    }
}

#[test]
fn point_zero_is_not_the_corner() {
    let corners = (0..20)
        .filter(|&s| {
            QuasiRandom::new(2, s)
                .unwrap()
                .point(0)
                .iter()
                .all(|&x| x == 0.0)
        })
        .count();
    assert_eq!(corners, 0);
}

#[test]
fn two_dimensional_discrepancy_is_well_below_random() {
    let n = 256;
    let random: f64 = (0..8)
        .map(|s| l2_star_squared(&pseudo_random(n, 2, 100 + s)).sqrt())
        .sum::<f64>()
        / 8.0;
    // The expectation (1/4 - 1/9) / n, as a check of the formula.
    let expected = ((0.25 - 1.0 / 9.0) / n as f64).sqrt();
    assert!(
        (random / expected - 1.0).abs() < 0.35,
        "{random} vs {expected}"
    );
    for seed in 0..4 {
        let halton = l2_star_squared(&QuasiRandom::new(2, seed).unwrap().points(n)).sqrt();
        assert!(
            halton < 0.35 * random,
            "seed {seed}: scrambled Halton {halton:.5}, pseudo-random {random:.5}"
        );
    }
}

#[test]
fn every_pair_of_eight_dimensions_is_below_random() {
    // Large bases are Halton's weak spot (unscrambled, bases 17 and 19 put their first 17
    // points on a line): every 2-D projection must still beat pseudo-random points.
    let n = 256;
    let random: f64 = (0..8)
        .map(|s| l2_star_squared(&pseudo_random(n, 2, 200 + s)).sqrt())
        .sum::<f64>()
        / 8.0;
    let points = QuasiRandom::new(8, 5).unwrap().points(n);
    for a in 0..8 {
        for b in a + 1..8 {
            let halton = l2_star_squared(&project(&points, a, b)).sqrt();
            assert!(
                halton < 0.7 * random,
                "dims {a},{b}: {halton:.5} vs pseudo-random {random:.5}"
            );
        }
    }
}

#[test]
fn log_uniform_spans_its_range_geometrically() {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
    assert_eq!(log_uniform(0.0, 1e-4, 1.0).unwrap(), 1e-4);
    assert_eq!(log_uniform(1.0, 1e-4, 1.0).unwrap(), 1.0);
    assert!(close(log_uniform(0.5, 1e-4, 1.0).unwrap(), 1e-2));
    assert!(close(log_uniform(0.25, 1e-4, 1.0).unwrap(), 1e-3));
    assert_eq!(log_uniform(0.3, 2.0, 2.0).unwrap(), 2.0);
    for (u, min, max) in [
        (-0.1, 1.0, 2.0),
        (1.1, 1.0, 2.0),
        (f64::NAN, 1.0, 2.0),
        (0.5, 0.0, 2.0),
        (0.5, -1.0, 2.0),
        (0.5, 2.0, 1.0),
        (0.5, 1.0, f64::INFINITY),
    ] {
        assert!(log_uniform(u, min, max).is_err(), "{u} {min} {max}");
    }
}

#[test]
fn reverse_log_uniform_draws_one_minus_momentum_log_uniformly() {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12;
    assert!(close(reverse_log_uniform(0.0, 1e-3, 1e-1).unwrap(), 0.999));
    assert!(close(reverse_log_uniform(0.5, 1e-3, 1e-1).unwrap(), 0.99));
    assert!(close(reverse_log_uniform(1.0, 1e-3, 1e-1).unwrap(), 0.9));
    assert!(close(reverse_log_uniform(1.0, 1e-3, 1.0).unwrap(), 0.0));
    assert!(reverse_log_uniform(0.5, 1e-3, 2.0).is_err());
    assert!(reverse_log_uniform(0.5, 0.0, 0.1).is_err());
}
