//! A seeded, reproducible low-discrepancy sequence for metaparameter search, and the scales
//! metaparameters are drawn on.
//!
//! Shallue et al. tune every (workload, batch size) by quasi-random search, following
//! Bousquet et al. 2017 ("Critical Hyper-Parameters: No Random, No Cry", arXiv 1706.03200),
//! who recommend a scrambled Halton sequence: it covers the search box more evenly than
//! pseudo-random points (no clumps, no holes), yet like random search every prefix is a
//! usable design, so the number of trials need not be fixed in advance, and no coordinate
//! repeats values the way a grid does.
//!
//! # The sequence: Halton with random digit permutations
//!
//! Coordinate j of point i is the radical inverse of i in the j-th prime base b (2, 3, 5,
//! 7, 11, 13, 17, 19): write i = sum_k a_k b^k and take x = sum_k pi_jk(a_k) b^-(k+1), where
//! each pi_jk is a permutation of the digits 0..b drawn at random, one per dimension j and
//! digit position k ("random digit scrambling"; Owen's nested scrambling would make each
//! permutation depend on the higher digits too, at much greater cost for no gain at the few
//! hundred points a search uses). Why scramble:
//!
//! - Plain Halton coordinates in the larger bases are strongly correlated over the first
//!   few hundred points (in bases 17 and 19 the first 17 points lie on a line); random
//!   permutations break those lines while keeping the stratification that makes the
//!   sequence low-discrepancy (a permutation maps the b^m blocks of an interval onto
//!   themselves).
//! - Every point is marginally uniform: for a fixed i the permuted digits are independent
//!   and uniform, so the search is an unbiased randomised design and different seeds give
//!   independent replicate searches.
//! - Permuting the zero digits too (infinitely many above i's highest digit) means point 0
//!   is not the corner (0, ..., 0), so no trial sits on the edge of the box.
//!
//! Sobol with Owen scrambling would serve as well; Halton needs no table of direction
//! numbers, and d <= 8 keeps its bases small enough ([`MAX_DIMS`]).
//!
//! Digits are kept to K positions per base, the most with b^K <= 2^53, and x is computed as
//! the integer N = sum_k pi_jk(a_k) b^(K-1-k) divided by b^K: both are exact in an f64 and
//! N < b^K, so x < 1 always (a float sum of the digit terms could round up to 1.0).
//! Indices beyond 19^12 (about 2.2e15) lose digits in base 19, far past any search.
//!
//! Reproducibility: the permutations come from a `rand::rngs::StdRng` seeded with `seed`,
//! so a seed gives the same points on every machine with this crate's `rand` version
//! (pinned in Cargo.lock; StdRng's stream may change between `rand` releases). Runners also
//! record each trial's metaparameters, so a finished study never depends on regenerating
//! them.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::TargetError;

/// The most dimensions [`QuasiRandom`] offers: 8, one per prime base up to 19. Beyond that
/// the bases grow and so do the correlations between their first few hundred points.
pub const MAX_DIMS: usize = 8;

const PRIMES: [u64; MAX_DIMS] = [2, 3, 5, 7, 11, 13, 17, 19];

/// One coordinate: a prime base and one random digit permutation per digit position.
#[derive(Debug, Clone, PartialEq)]
struct Coordinate {
    base: u64,
    /// `permutations[k][a]`: the digit that digit `a` at position `k` becomes.
    permutations: Vec<Vec<u64>>,
}

impl Coordinate {
    fn new(base: u64, rng: &mut StdRng) -> Self {
        let mut digits = 0;
        let mut scale: u64 = 1;
        while scale <= (1u64 << 53) / base {
            scale *= base;
            digits += 1;
        }
        let permutations = (0..digits)
            .map(|_| {
                let mut p: Vec<u64> = (0..base).collect();
                p.shuffle(rng);
                p
            })
            .collect();
        Coordinate { base, permutations }
    }

    fn value(&self, index: u64) -> f64 {
        let mut rest = index;
        let mut numerator: u64 = 0;
        let mut denominator: u64 = 1;
        // Horner's rule from the lowest digit of `index`, which has the highest weight.
        for permutation in &self.permutations {
            let digit = rest % self.base;
            rest /= self.base;
            numerator = numerator * self.base + permutation[digit as usize];
            denominator *= self.base;
        }
        let x = numerator as f64 / denominator as f64;
        debug_assert!((0.0..1.0).contains(&x));
        x
    }
}

/// A scrambled Halton sequence in [0, 1)^dims (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct QuasiRandom {
    coordinates: Vec<Coordinate>,
    seed: u64,
}

impl QuasiRandom {
    /// The sequence in `dims` dimensions (1 to [`MAX_DIMS`]) scrambled by `seed`.
    pub fn new(dims: usize, seed: u64) -> Result<Self, TargetError> {
        if dims == 0 || dims > MAX_DIMS {
            return Err(TargetError::argument("dims", dims, "1 to 8"));
        }
        let mut rng = StdRng::seed_from_u64(seed);
        let coordinates = PRIMES[..dims]
            .iter()
            .map(|&base| Coordinate::new(base, &mut rng))
            .collect();
        Ok(QuasiRandom { coordinates, seed })
    }

    /// The number of dimensions.
    pub fn dims(&self) -> usize {
        self.coordinates.len()
    }

    /// The seed the permutations were drawn with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Point `index` (from 0), each coordinate in [0, 1). Any index may be asked for in any
    /// order: trial `i` of a search is point `i`, whatever ran before it.
    pub fn point(&self, index: u64) -> Vec<f64> {
        self.coordinates.iter().map(|c| c.value(index)).collect()
    }

    /// Points 0 to `n - 1`.
    pub fn points(&self, n: usize) -> Vec<Vec<f64>> {
        (0..n as u64).map(|i| self.point(i)).collect()
    }
}

/// Maps `u` in [0, 1] to [min, max] on a log scale: `min * (max / min)^u`, so each factor of
/// ten in the range gets an equal share of the trials (learning rates). Needs
/// `0 < min <= max`, both finite.
pub fn log_uniform(u: f64, min: f64, max: f64) -> Result<f64, TargetError> {
    if !(0.0..=1.0).contains(&u) {
        return Err(TargetError::argument("u", u, "a number in [0, 1]"));
    }
    if !(min.is_finite() && min > 0.0) {
        return Err(TargetError::argument(
            "min",
            min,
            "a finite positive number",
        ));
    }
    if !(max.is_finite() && max >= min) {
        return Err(TargetError::argument("max", max, "a finite number >= min"));
    }
    // min * (max / min)^u is min exactly at u = 0; the top end is set, since the product
    // can miss max by an ulp, and a clamp keeps rounding from leaving the range.
    if u == 1.0 {
        return Ok(max);
    }
    Ok((min * (max / min).powf(u)).clamp(min, max))
}

/// A momentum on the "reverse log" scale of Shallue et al.: 1 - momentum is log-uniform
/// between `min_one_minus` and `max_one_minus`, so momenta 0.9, 0.99 and 0.999 are equally likely
/// (a uniform momentum would almost never come near 1, where the interesting values are).
/// `u = 0` gives the largest momentum, `1 - min_one_minus`. Needs
/// `0 < min_one_minus <= max_one_minus <= 1`.
pub fn reverse_log_uniform(
    u: f64,
    min_one_minus: f64,
    max_one_minus: f64,
) -> Result<f64, TargetError> {
    if max_one_minus > 1.0 {
        return Err(TargetError::argument(
            "max_one_minus",
            max_one_minus,
            "at most 1 (a momentum of at least 0)",
        ));
    }
    Ok(1.0 - log_uniform(u, min_one_minus, max_one_minus)?)
}

#[cfg(test)]
#[path = "quasi_tests.rs"]
mod tests;
