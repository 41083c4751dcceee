//! Each test of a claim on synthetic seeds where the truth is known: it must accept the true
//! case (power) and reject the false one at no more than its stated error rate (size).

use rand::{rngs::StdRng, Rng, SeedableRng};

use super::*;

/// `n` draws from N(mean, 1), summarised as an arm (Box–Muller: rand alone has no normal).
fn arm(rng: &mut StdRng, mean: f64, n: usize) -> Arm {
    let xs: Vec<f64> = (0..n)
        .map(|_| {
            let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
            mean + (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        })
        .collect();
    Arm::of(&xs)
}

/// How often `decide` returns `want` over `trials` simulated pairs of arms.
fn rate(
    true_diff: f64,
    n: usize,
    trials: usize,
    want: Decision,
    decide: impl Fn(&Difference) -> Decision,
) -> f64 {
    let mut rng = StdRng::seed_from_u64(7);
    let hits = (0..trials)
        .filter(|_| {
            let (a, b) = (arm(&mut rng, 0.0, n), arm(&mut rng, true_diff, n));
            decide(&Difference::welch(a, b).unwrap()) == want
        })
        .count();
    hits as f64 / trials as f64
}

#[test]
fn equivalence_is_shown_when_true_and_rarely_when_the_difference_is_the_margin() {
    let margin = 1.0;
    let power = rate(0.0, 20, 1000, Decision::Shown, |d| equivalence(d, margin));
    assert!(power > 0.8, "power {power}");
    // At the margin itself the claim is false: TOST's size is at most ALPHA.
    let size = rate(margin, 20, 4000, Decision::Shown, |d| {
        equivalence(d, margin)
    });
    assert!(size <= ALPHA + 0.015, "size {size}");
    let refuted = rate(3.0, 20, 1000, Decision::Refuted, |d| equivalence(d, margin));
    assert!(refuted > 0.9, "refuted {refuted}");
}

#[test]
fn more_seeds_make_a_true_equivalence_easier_to_show_not_harder() {
    let few = rate(0.0, 4, 1000, Decision::Shown, |d| equivalence(d, 1.5));
    let many = rate(0.0, 16, 1000, Decision::Shown, |d| equivalence(d, 1.5));
    assert!(many > few + 0.3, "few {few}, many {many}");
}

#[test]
fn three_seeds_use_t_quantiles_not_normal_ones() {
    // With 3 + 3 seeds a normal quantile would shrink the interval and inflate the size.
    let size = rate(1.0, 3, 4000, Decision::Shown, |d| equivalence(d, 1.0));
    assert!(size <= ALPHA + 0.015, "size {size}");
}

#[test]
fn non_inferiority_and_decrease_hold_their_size() {
    // n = 20 a side: the margin is 3.2 standard errors, the power about 0.93.
    let power = rate(0.0, 20, 1000, Decision::Shown, |d| non_inferiority(d, 1.0));
    assert!(power > 0.85, "power {power}");
    let size = rate(-1.0, 10, 4000, Decision::Shown, |d| non_inferiority(d, 1.0));
    assert!(size <= ALPHA + 0.015, "size {size}");
    // n = 6 a side: a fall of 2 sd is 3.5 standard errors, the power about 0.95.
    let fall = rate(-2.0, 6, 1000, Decision::Shown, decrease);
    assert!(fall > 0.9, "power {fall}");
    let none = rate(0.0, 5, 4000, Decision::Shown, decrease);
    assert!(none <= ALPHA + 0.015, "size {none}");
}

/// How often [`local_minimum`] returns `want` when the neighbours' true means lie `below`
/// and `above` the named one's (n draws of N(mean, 1) an arm).
fn local_minimum_rate(below: f64, above: f64, n: usize, trials: usize, want: Decision) -> f64 {
    let mut rng = StdRng::seed_from_u64(11);
    let hits = (0..trials)
        .filter(|_| {
            let at = arm(&mut rng, 0.0, n);
            let sides: Vec<Difference> = [below, above]
                .iter()
                .map(|&m| Difference::welch(at, arm(&mut rng, m, n)).unwrap())
                .collect();
            local_minimum(&sides) == want
        })
        .count();
    hits as f64 / trials as f64
}

#[test]
fn a_local_minimum_needs_both_sides_and_one_side_refutes_it_at_its_level() {
    // n = 10 a side: a neighbour 2 sd slower is 4.5 standard errors, each side's power about
    // 0.99.
    let power = local_minimum_rate(2.0, 2.0, 10, 1000, Decision::Shown);
    assert!(power > 0.95, "power {power}");
    // One side level with the named value: the claim is false, and both sides must hold, so
    // the size is that of the one test, at most ALPHA.
    let size = local_minimum_rate(0.0, 5.0, 10, 4000, Decision::Shown);
    assert!(size <= ALPHA + 0.015, "size {size}");
    // Refuting: both sides level, either may come out faster by chance; Bonferroni keeps the
    // rate of a false refutation at most ALPHA over the two.
    let false_refutation = local_minimum_rate(0.0, 0.0, 10, 4000, Decision::Refuted);
    assert!(false_refutation <= ALPHA + 0.015, "size {false_refutation}");
    let refuted = local_minimum_rate(-2.0, 2.0, 10, 1000, Decision::Refuted);
    assert!(refuted > 0.9, "refuted {refuted}");
    assert_eq!(local_minimum(&[]), Decision::Open);
}

/// How often [`differs_by`] returns `want` for pairs whose true differences are `means` (each
/// a Welch difference of two arms of n draws of N(., 1)), against `margin`.
fn differs_rate(means: &[f64], margin: f64, n: usize, trials: usize, want: Decision) -> f64 {
    let mut rng = StdRng::seed_from_u64(13);
    let hits = (0..trials)
        .filter(|_| {
            let pairs: Vec<Difference> = means
                .iter()
                .map(|&m| Difference::welch(arm(&mut rng, 0.0, n), arm(&mut rng, m, n)).unwrap())
                .collect();
            differs_by(&pairs, margin) == want
        })
        .count();
    hits as f64 / trials as f64
}

#[test]
fn a_difference_beyond_a_margin_holds_its_level_over_the_pairs() {
    // n = 10 an arm: a standard error of 0.45. Two pairs at the margin: shown by chance at most
    // ALPHA over the two (Bonferroni).
    let size = differs_rate(&[1.0, -1.0], 1.0, 10, 4000, Decision::Shown);
    assert!(size <= ALPHA + 0.015, "size {size}");
    // One pair 3 past the margin: shown nearly always.
    let power = differs_rate(&[0.0, 4.0], 1.0, 10, 1000, Decision::Shown);
    assert!(power > 0.95, "power {power}");
    // Refuted only when every pair is inside the margin: with one pair at it, at most ALPHA.
    let false_refutation = differs_rate(&[0.0, 1.0], 1.0, 10, 4000, Decision::Refuted);
    assert!(
        false_refutation <= ALPHA + 0.015,
        "false refutation {false_refutation}"
    );
    let refuted = differs_rate(&[0.0, 0.0], 2.0, 10, 1000, Decision::Refuted);
    assert!(refuted > 0.9, "refuted {refuted}");
    assert_eq!(differs_by(&[], 1.0), Decision::Open);
}

#[test]
fn named_positions_are_tested_at_a_level_over_the_named_ones_only() {
    assert!((named_position_z(1) - 1.645).abs() < 1e-3);
    assert!((named_position_z(4) - 2.241).abs() < 1e-3);
}

#[test]
fn the_rank_of_named_positions_tells_planted_maxima_from_chance() {
    let mut values: Vec<f64> = (0..70).map(|i| ((i * 37) % 11) as f64 / 10.0).collect();
    let named = [15, 31, 47, 63];
    let chance = named_rank_p(&values, &named, 2000, 1).unwrap();
    assert!(
        chance > 0.05,
        "chance positions ranked as planted: {chance}"
    );
    for &i in &named {
        values[i] = 5.0;
    }
    let planted = named_rank_p(&values, &named, 2000, 1).unwrap();
    assert!(planted < 0.01, "planted maxima not told apart: {planted}");
    assert_eq!(named_rank_p(&values, &[], 10, 1), None);
    assert_eq!(named_rank_p(&values, &[80], 10, 1), None);
}

#[test]
fn welch_needs_two_seeds_an_arm() {
    let one = Arm {
        mean: 1.0,
        sd: 0.0,
        n: 1,
    };
    let two = Arm {
        mean: 1.0,
        sd: 0.5,
        n: 2,
    };
    assert!(Difference::welch(one, two).is_none());
    let d = Difference::welch(two, two).unwrap();
    assert!((d.df - 2.0).abs() < 1e-9, "{}", d.df);
}

#[test]
fn a_contrast_of_four_arms_tells_an_interaction_from_none() {
    // (b2 - b1) - (a2 - a1): a smaller fall on line b by 2 sd, 8 seeds an arm.
    let mut rng = StdRng::seed_from_u64(11);
    let mut shown = 0;
    let mut shown_when_none = 0;
    for _ in 0..1000 {
        let arms = |gap: f64, rng: &mut StdRng| {
            [
                (1.0, arm(rng, 0.0, 8)),
                (-1.0, arm(rng, -3.0 + gap, 8)),
                (-1.0, arm(rng, 0.0, 8)),
                (1.0, arm(rng, -3.0, 8)),
            ]
        };
        // a1 - a2 - b1 + b2 = (b2 - b1) - (a2 - a1) with the weights above.
        let d = Difference::combine(&arms(2.0, &mut rng)).unwrap();
        shown += usize::from(decrease(&d) == Decision::Shown);
        let d = Difference::combine(&arms(0.0, &mut rng)).unwrap();
        shown_when_none += usize::from(decrease(&d) == Decision::Shown);
    }
    assert!(shown > 800, "power {shown}");
    assert!(shown_when_none <= 65, "size {shown_when_none}");
    let d = Difference::combine(&[(1.0, arm(&mut rng, 0.0, 5))]).unwrap();
    assert!((d.df - 4.0).abs() < 1e-9);
    assert_eq!(
        increase(&Difference {
            diff: 3.0,
            se: 1.0,
            df: 10.0
        }),
        Decision::Shown
    );
}

#[test]
fn chi_square_upper_tail_matches_the_tables() {
    // 3.841 is the 95% point of chi-square with 1 df; 11.07 with 5.
    assert!((chi_square_upper(3.841, 1.0) - 0.05).abs() < 1e-3);
    assert!((chi_square_upper(11.07, 5.0) - 0.05).abs() < 1e-3);
    assert!(chi_square_upper(1.0, 0.0).is_nan());
}
