//! Synthetic curves for the jump detector: seeded, so every failure is reproducible.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How the per-sample noise is drawn.
#[derive(Clone, Copy)]
enum Noise {
    /// Normal, standard deviation `0` x the step time.
    Gaussian(f64),
    /// Normal with a fixed standard deviation of `0` ms, whatever the step time.
    Additive(f64),
    /// Student's t with 3 degrees of freedom, scale `0` x the step time: occasional
    /// samples several times further out than a normal would put them.
    StudentT3(f64),
}

fn standard_normal(rng: &mut StdRng) -> f64 {
    // Box-Muller; 1 - u keeps the logarithm finite.
    let u: f64 = rng.random();
    let v: f64 = rng.random();
    (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn draw(noise: Noise, rng: &mut StdRng) -> f64 {
    match noise {
        Noise::Gaussian(s) => s * standard_normal(rng),
        Noise::Additive(_) => unreachable!("added in `curve`"),
        Noise::StudentT3(s) => {
            let chi2: f64 = (0..3).map(|_| standard_normal(rng).powi(2)).sum();
            s * standard_normal(rng) / (chi2 / 3.0).sqrt()
        }
    }
}

/// A VGG-like trend, 20 ms + 3 ms per example, plus steps: each (b, r) raises every
/// batch size >= b by r times the trend at b. Returns (batch size, median, samples).
fn curve(
    grid: &[u32],
    steps: &[(u32, f64)],
    noise: Noise,
    samples: usize,
    seed: u64,
) -> Vec<(u32, f64, Vec<f64>)> {
    let trend = |b: u32| 20.0 + 3.0 * f64::from(b);
    let mut rng = StdRng::seed_from_u64(seed);
    grid.iter()
        .map(|&b| {
            let level = trend(b)
                + steps
                    .iter()
                    .filter(|s| b >= s.0)
                    .map(|s| s.1 * trend(s.0))
                    .sum::<f64>();
            let xs: Vec<f64> = (0..samples)
                .map(|_| match noise {
                    Noise::Additive(sd) => level + sd * standard_normal(&mut rng),
                    _ => level * (1.0 + draw(noise, &mut rng)),
                })
                .collect();
            (b, median(&xs), xs)
        })
        .collect()
}

fn detect(points: &[(u32, f64, Vec<f64>)]) -> Vec<Jump> {
    let borrowed: Vec<(u32, f64, &[f64])> = points
        .iter()
        .map(|(b, m, s)| (*b, *m, s.as_slice()))
        .collect();
    detect_jumps(&borrowed, &JumpOptions::default())
}

fn contiguous(to: u32) -> Vec<u32> {
    (1..=to).collect()
}

const CLAIMED: [(u32, f64); 4] = [(16, 0.06), (32, 0.08), (48, 0.05), (64, 0.10)];

#[test]
fn no_jumps_in_gaussian_noise_over_200_seeds() {
    for seed in 0..200 {
        for (noise, samples) in [
            (Noise::Gaussian(0.02), 15),
            (Noise::Gaussian(0.05), 5),
            (Noise::Additive(2.0), 10),
        ] {
            let found = detect(&curve(&contiguous(70), &[], noise, samples, seed));
            assert!(found.is_empty(), "seed {seed}: false jumps {found:?}");
        }
    }
}

#[test]
fn no_jumps_in_heavy_tailed_noise_over_200_seeds() {
    for seed in 0..200 {
        for grid in [contiguous(70), (1..=64).map(|b| 2 * b).collect()] {
            let found = detect(&curve(&grid, &[], Noise::StudentT3(0.02), 10, 1000 + seed));
            assert!(found.is_empty(), "seed {seed}: false jumps {found:?}");
        }
    }
}

#[test]
fn one_outlying_point_is_not_a_jump() {
    for seed in 0..50 {
        let mut points = curve(&contiguous(70), &[], Noise::Gaussian(0.01), 15, seed);
        points[30].1 *= 1.3; // one visit disturbed by other load
        assert!(detect(&points).is_empty(), "seed {seed}");
    }
}

#[test]
fn a_change_of_slope_is_not_a_jump() {
    let mut points = curve(&contiguous(70), &[], Noise::Gaussian(0.01), 15, 3);
    for p in points.iter_mut().filter(|p| p.0 > 35) {
        p.1 += 2.0 * f64::from(p.0 - 35); // the slope rises from 3 to 5 ms per example
    }
    assert!(detect(&points).is_empty());
}

#[test]
fn finds_planted_jumps_at_16_32_48_64() {
    for seed in 0..50 {
        let points = curve(&contiguous(70), &CLAIMED, Noise::Gaussian(0.01), 15, seed);
        let found = detect(&points);
        let at: Vec<u32> = found.iter().map(|j| j.batch_size).collect();
        assert_eq!(at, [16, 32, 48, 64], "seed {seed}: {found:?}");
        for (jump, (b, r)) in found.iter().zip(CLAIMED) {
            let planted = r * (20.0 + 3.0 * f64::from(b));
            assert!(
                (jump.height_ms - planted).abs() < 0.3 * planted,
                "seed {seed}: {jump:?} vs {planted}"
            );
            assert_eq!(jump.previous_batch_size, b - 1);
            assert!(jump.z >= 5.0 && jump.relative > 0.03);
        }
    }
}

#[test]
fn finds_a_jump_on_a_sparse_grid() {
    // Even batch sizes only: the step at 64 lies between 62 and 64.
    let grid: Vec<u32> = (1..=64).map(|b| 2 * b).collect();
    for seed in 0..20 {
        let found = detect(&curve(
            &grid,
            &[(64, 0.08)],
            Noise::Gaussian(0.02),
            15,
            seed,
        ));
        assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
        assert_eq!(
            (found[0].previous_batch_size, found[0].batch_size),
            (62, 64)
        );
    }
    // An irregular grid, as a user might list it by hand.
    let grid = [
        1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128,
    ];
    let found = detect(&curve(&grid, &[(48, 0.10)], Noise::Gaussian(0.01), 20, 5));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].previous_batch_size, found[0].batch_size),
        (40, 48)
    );
}

#[test]
fn finds_a_drop() {
    let found = detect(&curve(
        &contiguous(70),
        &[(40, -0.10)],
        Noise::Gaussian(0.02),
        15,
        9,
    ));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].batch_size, 40);
    assert!(found[0].height_ms < 0.0 && found[0].z < 0.0 && found[0].relative < 0.0);
}

#[test]
fn jumps_near_the_ends() {
    // Three points past the step are enough for a clear step ...
    let found = detect(&curve(
        &contiguous(70),
        &[(68, 0.10)],
        Noise::Gaussian(0.01),
        15,
        1,
    ));
    assert_eq!(found.iter().map(|j| j.batch_size).collect::<Vec<_>>(), [68]);
    let found = detect(&curve(
        &contiguous(70),
        &[(4, 0.15)],
        Noise::Gaussian(0.01),
        15,
        1,
    ));
    assert_eq!(found.iter().map(|j| j.batch_size).collect::<Vec<_>>(), [4]);
    // ... but a last point that alone is high cannot be told from an outlier: not tested.
    assert!(detect(&curve(
        &contiguous(70),
        &[(70, 0.10)],
        Noise::Gaussian(0.01),
        15,
        1
    ))
    .is_empty());
    assert!(detect(&curve(
        &contiguous(70),
        &[(2, 0.30)],
        Noise::Gaussian(0.01),
        15,
        1
    ))
    .is_empty());
}

#[test]
fn degenerate_inputs_give_no_jumps() {
    assert!(detect(&[]).is_empty());
    assert!(detect(&curve(&[1, 2, 3, 4, 5], &[], Noise::Gaussian(0.01), 5, 1)).is_empty());
    // Noise-free: every gap has zero noise, only min_relative decides.
    let exact: Vec<(u32, f64, Vec<f64>)> =
        (1..=40).map(|b| (b, 10.0 + f64::from(b), vec![])).collect();
    assert!(detect(&exact).is_empty());
    let mut stepped = exact.clone();
    stepped
        .iter_mut()
        .filter(|p| p.0 >= 20)
        .for_each(|p| p.1 += 3.0);
    assert_eq!(
        detect(&stepped)
            .iter()
            .map(|j| j.batch_size)
            .collect::<Vec<_>>(),
        [20]
    );
    // Unsorted input with a NaN median is sorted and cleaned.
    let mut shuffled = stepped.clone();
    shuffled.reverse();
    shuffled[5].1 = f64::NAN;
    assert_eq!(
        detect(&shuffled)
            .iter()
            .map(|j| j.batch_size)
            .collect::<Vec<_>>(),
        [20]
    );
}

/// Prints the null distribution of the largest |z| and the planted jumps' z, to choose
/// `z_threshold`: `cargo test --release -p batchlab-report -- --ignored --nocapture`.
#[test]
#[ignore]
fn calibration() {
    let opts = JumpOptions {
        z_threshold: 0.0,
        min_relative: 0.0,
        agreement: 0.0,
        ..JumpOptions::default()
    };
    let max_abs_z = |points: &[(u32, f64, Vec<f64>)]| {
        let b: Vec<(u32, f64, &[f64])> = points
            .iter()
            .map(|(b, m, s)| (*b, *m, s.as_slice()))
            .collect();
        detect_jumps(&b, &opts)
            .iter()
            .map(|j| j.z.abs())
            .fold(0.0, f64::max)
    };
    for (name, noise, samples) in [
        ("gauss 1% x15", Noise::Gaussian(0.01), 15),
        ("gauss 2% x15", Noise::Gaussian(0.02), 15),
        ("gauss 5% x5", Noise::Gaussian(0.05), 5),
        ("t3 2% x10", Noise::StudentT3(0.02), 10),
        ("additive 2 ms x10", Noise::Additive(2.0), 10),
    ] {
        let false_positives: usize = (0..5000)
            .map(|s| detect(&curve(&contiguous(70), &[], noise, samples, 10_000 + s)).len())
            .sum();
        println!("{name}: false jumps in 5000 noise-only curves: {false_positives}");
        let mut zs: Vec<f64> = (0..1000)
            .map(|s| max_abs_z(&curve(&contiguous(70), &[], noise, samples, s)))
            .collect();
        zs.sort_by(f64::total_cmp);
        println!(
            "{name}: null max|z| median {:.2} p99 {:.2} max {:.2}",
            zs[500], zs[990], zs[999]
        );
        let mut planted: Vec<f64> = (0..200)
            .flat_map(|s| {
                let points = curve(&contiguous(70), &CLAIMED, noise, samples, s);
                let b: Vec<(u32, f64, &[f64])> = points
                    .iter()
                    .map(|(b, m, s)| (*b, *m, s.as_slice()))
                    .collect();
                let all = detect_jumps(
                    &b,
                    &JumpOptions {
                        suppress_radius: 0,
                        ..opts.clone()
                    },
                );
                CLAIMED
                    .iter()
                    .map(|c| {
                        all.iter()
                            .find(|j| j.batch_size == c.0)
                            .map_or(0.0, |j| j.z)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        planted.sort_by(f64::total_cmp);
        println!(
            "{name}: planted z min {:.2} p1 {:.2} median {:.2}",
            planted[0], planted[8], planted[400]
        );
    }
}
