//! Where another search's best of N would land, given this search's N trials: the
//! distribution that the steps-to-result intervals are percentiles of.
//!
//! # Why not the plain bootstrap of the minimum
//!
//! Resampling a cell's trials with replacement never draws a best below the observed one, so
//! the low end of every interval was the observed best by construction. Three replicate
//! searches of the MLP with plain SGD (`steps-to-target-coverage-fmnist`) showed what that
//! costs: their intervals held each other's values in 29 of 54 checks, 22 of the 25 misses
//! from below. A search's best is one draw from the low tail of its trials, and the next
//! search's best is as likely to fall below it as above.
//!
//! # The distribution
//!
//! Let X(1) <= X(2) <= ... be this search's N trials' steps to the target and Y another
//! search's best of N, all 2N trials exchangeable.
//!
//! - **At and above the observed best** the law is exact and needs no model: Y > X(j) exactly
//!   when the j smallest of the 2N trials are all this search's, so P(Y <= X(j)) = 1 - C(N, j)
//!   / C(2N, j) ([`beaten_by_rank`]); P(Y <= X(1)) = 1/2. With trials censored (stopped before
//!   the target) the rank j becomes N x the Kaplan-Meier probability of having reached by
//!   X(j), a fractional rank between whole ones.
//! - **Below the observed best** the data hold no trial, so it takes a model of the low tail:
//!   the density of one trial's steps is taken as constant near its lowest value (the first
//!   term of any smooth density there; a density that rises away from the lowest value makes
//!   the rule conservative). Then the spacings of the lowest values are exponential, and
//!   with D = X(k) - X(1), P(Y < X(1) - t D) = (1/2) (1 + t)^-(k-1) exactly ([`below_best_quantile`]).
//!   k is the rank that bounds the top ([`upper_rank`]: 6 for N = 32), so both ends rest on
//!   the same k smallest trials; a cell with fewer reaching trials uses those it has, and one
//!   with a single reaching trial has no low end but one step.
//!
//! The 2.5% and 97.5% points of this law make a 95% prediction interval for a rerun's best.
//! On the three replicates of `steps-to-target-coverage-fmnist` (6 ordered pairs x 9 batch
//! sizes) they held 48 of 54 values (89%, Wilson 95% interval 78-95%), against 29 of 54 for the
//! plain bootstrap. Four of the six misses are two cells whose first stage missed the best
//! region (their refining box sat elsewhere), which no law drawn from one search's trials can
//! see; the other two miss by under 2%.

/// Level of the intervals: 95%, a prediction interval for a rerun's best.
pub const LEVEL: f64 = 0.95;

/// How often the intervals held a fresh replicate's value: in
/// `steps-to-target-coverage-fresh-fmnist`, three searches with new points made after the rank
/// k and the low-tail model were chosen on `steps-to-target-coverage-fmnist`'s replicates, the
/// intervals held 45 of their 54 checks (83%, Wilson 95% interval 71-91%). They achieve about
/// 83%, not their nominal 95%, and [`INTERVAL_WORDS`] says so wherever they are named
/// (`crates/cli/tests/coverage_level.rs` renders that run and fails when its count differs).
/// Widening them to reach 95% on the same fresh replicates would choose the method on its check
/// again; a wider rule waits for replicates it has not seen.
pub const FRESH_COVERAGE: (usize, usize) = (45, 54);

/// The intervals' level in a few words, for table headers and captions ([`FRESH_COVERAGE`]).
pub const LEVEL_WORDS: &str = "nominally 95%, measured 83%";

/// What the steps-to-result intervals are, in words, worded once for every sentence, table
/// and caption that names them: their nominal level and the level a fresh check measured
/// ([`FRESH_COVERAGE`]).
pub const INTERVAL_WORDS: &str = "prediction interval of where another search of as many trials would find its best, nominally 95%, measured 83% (45 of 54 fresh replicate values held: steps-to-target-coverage-fresh-fmnist; above the observed best by the trials' ranks, below it by the spacing of the lowest ones; trials stopped before reaching the target read as right-censored by Kaplan-Meier)";

/// The chance that another search's best of `n` is above this search's trial of (possibly
/// fractional) rank `rank`: C(n, rank) / C(2n, rank), the ratio of falling factorials,
/// interpolated geometrically between whole ranks.
pub fn beaten_by_rank(n: usize, rank: f64) -> f64 {
    let n = n as f64;
    let whole = rank.floor().clamp(0.0, n);
    let mut p = 1.0;
    let mut i = 0.0;
    while i < whole {
        p *= (n - i) / (2.0 * n - i);
        i += 1.0;
    }
    if whole < n {
        p *= ((n - whole) / (2.0 * n - whole)).powf(rank - whole);
    }
    p
}

/// The smallest rank whose trial lies above another search's best with probability at most
/// `tail`: the rank of the interval's top at that tail (6 for 32 trials at 2.5%, 5 for 16).
pub fn upper_rank(n: usize, tail: f64) -> usize {
    (1..=n)
        .find(|&j| beaten_by_rank(n, j as f64) <= tail)
        .unwrap_or(n + 1)
}

/// The value below which another search's best falls with probability `p` (< 1/2), from the
/// low tail P(Y < best - t x spread) = (1/2) (1 + t)^-(k-1) with `spread` = X(k) - X(1) over
/// `k` reaching trials (see the module documentation); at least `floor`, the least value the
/// quantity takes (one step; no error), and `floor` where `k` < 2 (no spacing to scale the
/// tail by).
pub fn below_best_quantile(p: f64, best: f64, spread: f64, k: usize, floor: f64) -> f64 {
    match spreads_below_best(p, k) {
        Some(t) => (best - t * spread).max(floor),
        None => floor,
    }
}

/// How many spreads X(k) − X(1) below the best another search's best falls with probability
/// `p` (< 1/2): t in P(Y < best − t × spread) = (1/2) (1 + t)^−(k−1); `None` where `k` < 2.
/// The law holds for any quantity a search minimises (steps to result, a best error).
pub fn spreads_below_best(p: f64, k: usize) -> Option<f64> {
    (k >= 2).then(|| (2.0 * p).powf(-1.0 / (k - 1) as f64) - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rank_law_is_the_exchangeable_count() {
        // Another search beats the observed best half the time.
        assert!((beaten_by_rank(32, 1.0) - 0.5).abs() < 1e-12);
        // 2 of 4 against 4: P(the two smallest of 8 are both ours) = (4/8)(3/7).
        assert!((beaten_by_rank(4, 2.0) - 4.0 / 8.0 * 3.0 / 7.0).abs() < 1e-12);
        // Fractional ranks lie between their whole neighbours.
        let (a, b, c) = (
            beaten_by_rank(16, 2.0),
            beaten_by_rank(16, 2.5),
            beaten_by_rank(16, 3.0),
        );
        assert!(a > b && b > c, "{a} {b} {c}");
        assert_eq!(upper_rank(32, 0.025), 6);
        assert_eq!(upper_rank(16, 0.025), 5);
    }

    #[test]
    fn the_low_tail_matches_a_simulated_uniform_tail() {
        // Trials uniform on [1000, 2000]: another search's best of 32 falls below the 2.5%
        // point of the rule about 2.5% of the time, averaged over many searches.
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(7);
        let (n, k, searches) = (32, 6, 20_000);
        let draw = |rng: &mut StdRng| {
            let mut v: Vec<f64> = (0..n)
                .map(|_| 1000.0 + 1000.0 * rng.random::<f64>())
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let below = (0..searches)
            .filter(|_| {
                let ours = draw(&mut rng);
                let theirs = draw(&mut rng)[0];
                let lo = below_best_quantile(0.025, ours[0], ours[k - 1] - ours[0], k, 1.0);
                theirs < lo
            })
            .count() as f64
            / searches as f64;
        assert!((0.018..0.032).contains(&below), "{below}");
        assert_eq!(below_best_quantile(0.025, 100.0, 50.0, 1, 1.0), 1.0);
    }
}
