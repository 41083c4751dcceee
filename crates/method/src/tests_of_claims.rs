//! The statistical tests behind the claim rules (docs/ARCHITECTURE.md, "Verdicts"), each
//! answering the question its kind of claim asks:
//!
//! - an equivalence claim ("stays", "no difference") by two one-sided tests: equivalence is
//!   shown when the 90% interval of the difference lies inside the margin, refuted when it
//!   lies wholly outside, and open otherwise, so that more seeds make a true claim *easier* to
//!   confirm, not harder;
//! - a non-inferiority claim ("does not fall") by one one-sided test against the margin;
//! - a directional claim ("falls") by a one-sided test of the difference;
//! - a claim about positions named in advance by a one-sided test at each position, at a
//!   family-wise level over the named positions only (no search-wide threshold), and by the
//!   rank of the named positions among all positions (a permutation test).
//!
//! Differences of seed means use Welch's standard error and its Welch–Satterthwaite degrees of
//! freedom, so three seeds are not treated as a normal sample.

use rand::{rngs::StdRng, seq::index::sample, SeedableRng};
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal, StudentsT};

/// The level every one-sided test here runs at (a two-sided 90% interval for equivalence, a
/// one-sided 95% bound otherwise).
pub const ALPHA: f64 = 0.05;

/// A difference of two means (second minus first) with its standard error and degrees of
/// freedom.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Difference {
    /// Mean of the second arm minus mean of the first.
    pub diff: f64,
    /// Standard error of the difference.
    pub se: f64,
    /// Degrees of freedom of its t distribution (infinite for a normal one).
    pub df: f64,
}

/// One arm's summary: mean, sample standard deviation and sample size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arm {
    /// Sample mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub sd: f64,
    /// Sample size.
    pub n: usize,
}

impl Arm {
    /// The summary of a sample.
    pub fn of(xs: &[f64]) -> Arm {
        Arm {
            mean: crate::stats::mean(xs),
            sd: crate::stats::sample_std(xs),
            n: xs.len(),
        }
    }
}

impl Difference {
    /// Welch's difference `b - a`; `None` with fewer than two observations in an arm (no
    /// spread to test against).
    pub fn welch(a: Arm, b: Arm) -> Option<Difference> {
        Difference::combine(&[(-1.0, a), (1.0, b)])
    }

    /// A signed combination of independent arms' means, `sum(w * mean)` (a contrast such as
    /// (b2 - b1) - (a2 - a1)), with Welch's standard error and the Welch–Satterthwaite degrees
    /// of freedom; `None` when an arm has fewer than two observations.
    pub fn combine(arms: &[(f64, Arm)]) -> Option<Difference> {
        if arms.is_empty() || arms.iter().any(|(_, a)| a.n < 2) {
            return None;
        }
        let v: Vec<f64> = arms
            .iter()
            .map(|(w, a)| w * w * a.sd.powi(2) / a.n as f64)
            .collect();
        let total: f64 = v.iter().sum();
        let df = if total > 0.0 {
            total.powi(2)
                / v.iter()
                    .zip(arms)
                    .map(|(vi, (_, a))| vi.powi(2) / (a.n - 1) as f64)
                    .sum::<f64>()
        } else {
            f64::INFINITY
        };
        Some(Difference {
            diff: arms.iter().map(|(w, a)| w * a.mean).sum(),
            se: total.sqrt(),
            df,
        })
    }

    /// One arm's mean against zero (a one-sample t); `None` with fewer than two observations.
    pub fn one_sample(a: Arm) -> Option<Difference> {
        (a.n >= 2).then(|| Difference {
            diff: a.mean,
            se: a.sd / (a.n as f64).sqrt(),
            df: (a.n - 1) as f64,
        })
    }

    /// The one-sided critical value at [`ALPHA`] for these degrees of freedom.
    pub fn critical(&self) -> f64 {
        critical(ALPHA, self.df)
    }

    /// The two-sided 90% interval (the one two one-sided tests at 5% read).
    pub fn interval90(&self) -> (f64, f64) {
        let half = self.critical() * self.se;
        (self.diff - half, self.diff + half)
    }
}

/// The upper `alpha` quantile of Student's t with `df` degrees of freedom (the normal one when
/// `df` is infinite or huge).
pub fn critical(alpha: f64, df: f64) -> f64 {
    if !df.is_finite() || df > 1e6 {
        return Normal::standard().inverse_cdf(1.0 - alpha);
    }
    match StudentsT::new(0.0, 1.0, df.max(1.0)) {
        Ok(t) => t.inverse_cdf(1.0 - alpha),
        Err(_) => f64::INFINITY,
    }
}

/// What a test decided: the claim shown, refuted, or neither at this noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// The data show the claim.
    Shown,
    /// The data show the opposite.
    Refuted,
    /// Neither: the interval reaches both sides of the line the claim draws.
    Open,
}

impl Decision {
    /// The verdict a claim decided this way gets: shown reproduces, refuted does not, open is
    /// inconclusive.
    pub fn verdict(self) -> crate::findings::Verdict {
        use crate::findings::Verdict;
        match self {
            Decision::Shown => Verdict::Reproduces,
            Decision::Refuted => Verdict::DoesNotReproduce,
            Decision::Open => Verdict::Inconclusive,
        }
    }
}

/// Two one-sided tests of `|diff| < margin`: shown when the 90% interval lies inside
/// (-margin, margin), refuted when it lies wholly beyond one end, open otherwise.
pub fn equivalence(d: &Difference, margin: f64) -> Decision {
    let (low, high) = d.interval90();
    if low > -margin && high < margin {
        Decision::Shown
    } else if high < -margin || low > margin {
        Decision::Refuted
    } else {
        Decision::Open
    }
}

/// One one-sided test of `diff > -margin` (the second arm is not worse by the margin or more):
/// shown when the lower 95% bound lies above -margin, refuted when the upper one lies below it.
pub fn non_inferiority(d: &Difference, margin: f64) -> Decision {
    let (low, high) = d.interval90();
    if low > -margin {
        Decision::Shown
    } else if high < -margin {
        Decision::Refuted
    } else {
        Decision::Open
    }
}

/// One one-sided test of `diff > 0` (the second arm is higher): shown when the lower 95% bound
/// lies above zero, refuted when the upper one lies below zero.
pub fn increase(d: &Difference) -> Decision {
    let (low, high) = d.interval90();
    if low > 0.0 {
        Decision::Shown
    } else if high < 0.0 {
        Decision::Refuted
    } else {
        Decision::Open
    }
}

/// One one-sided test of `diff < 0` (the second arm is lower): shown when the upper 95% bound
/// lies below zero, refuted when the lower one lies above zero.
pub fn decrease(d: &Difference) -> Decision {
    let (low, high) = d.interval90();
    if high < 0.0 {
        Decision::Shown
    } else if low > 0.0 {
        Decision::Refuted
    } else {
        Decision::Open
    }
}

/// A named value below every one of its neighbours (a local minimum: "one below or one above
/// it is slower"), from each side's difference `neighbour - named`: shown when every side's
/// one-sided 95% lower bound lies above zero (all sides must hold, so each test runs at
/// [`ALPHA`]: an intersection-union test, no correction), refuted when some side's upper bound
/// at [`ALPHA`] divided by the number of sides lies below zero (any one side refutes, so the
/// level is shared among them: Bonferroni), open otherwise; open with no side.
pub fn local_minimum(sides: &[Difference]) -> Decision {
    if sides.is_empty() {
        Decision::Open
    } else if sides.iter().all(|d| d.diff - d.critical() * d.se > 0.0) {
        Decision::Shown
    } else if sides.iter().any(|d| refutes_minimum(d, sides.len())) {
        Decision::Refuted
    } else {
        Decision::Open
    }
}

/// Whether one of `sides` sides of a local minimum ([`local_minimum`]) refutes it: its upper
/// bound at [`ALPHA`] / `sides` lies below zero (the neighbour is shown faster).
pub fn refutes_minimum(d: &Difference, sides: usize) -> bool {
    d.diff + critical(ALPHA / sides.max(1) as f64, d.df) * d.se < 0.0
}

/// Some of `pairs` differ by more than `margin` either way ("depends largely on ..."): shown
/// when some pair's one-sided bound at [`ALPHA`] divided by the number of pairs lies beyond
/// the margin (any one pair shows it, so the level is shared among them: Bonferroni), refuted
/// when every pair's 90% interval lies inside (-margin, margin) (every pair must hold, so each
/// runs at [`ALPHA`]: an intersection-union test), open otherwise; open with no pair.
pub fn differs_by(pairs: &[Difference], margin: f64) -> Decision {
    let k = pairs.len().max(1) as f64;
    let beyond = |d: &Difference| d.diff.abs() - critical(ALPHA / k, d.df) * d.se > margin;
    if pairs.iter().any(beyond) {
        Decision::Shown
    } else if !pairs.is_empty()
        && pairs
            .iter()
            .all(|d| equivalence(d, margin) == Decision::Shown)
    {
        Decision::Refuted
    } else {
        Decision::Open
    }
}

/// The z a step at one of `named` positions named in advance must exceed: a one-sided normal
/// test at [`ALPHA`] over the named positions (Bonferroni), not over every position searched.
pub fn named_position_z(named: usize) -> f64 {
    Normal::standard().inverse_cdf(1.0 - ALPHA / named.max(1) as f64)
}

/// The permutation p-value of the named positions' rank: the share of `resamples` random sets
/// of as many positions whose summed statistic is at least the named set's (with the named set
/// counted once, so it is never zero). Small when the named positions hold the largest values.
pub fn named_rank_p(values: &[f64], named: &[usize], resamples: usize, seed: u64) -> Option<f64> {
    let k = named.len();
    if k == 0 || k >= values.len() || named.iter().any(|&i| i >= values.len()) {
        return None;
    }
    let observed: f64 = named.iter().map(|&i| values[i]).sum();
    let mut rng = StdRng::seed_from_u64(seed);
    let at_least = (0..resamples)
        .filter(|_| {
            let s: f64 = sample(&mut rng, values.len(), k)
                .iter()
                .map(|i| values[i])
                .sum();
            s >= observed
        })
        .count();
    Some((at_least + 1) as f64 / (resamples + 1) as f64)
}

/// P(X >= `statistic`) for X chi-square with `df` degrees of freedom: the p-value of a
/// lack-of-fit test (NaN for df < 1).
pub fn chi_square_upper(statistic: f64, df: f64) -> f64 {
    match ChiSquared::new(df) {
        Ok(d) if df >= 1.0 => 1.0 - d.cdf(statistic.max(0.0)),
        _ => f64::NAN,
    }
}

#[cfg(test)]
#[path = "tests_of_claims_tests.rs"]
mod tests;
