//! A batch size's trials as right-censored observations, and the distribution of the best of
//! N drawn from them.
//!
//! A trial that reached the target gives its steps. A trial that stopped without reaching it
//! (its budget spent, or stopped early because a sibling had already reached the target) says
//! only that its steps are beyond where it stopped: it is **right-censored** there, not a
//! failure. A trial that diverged never reaches it. Reading a censored trial as "never" (what
//! the first steps-to-target reports did) makes resamples without the few reaching trials look
//! hopeless and blames an open interval on "too few trials reached" when the stop caused it.
//!
//! Per batch size the distribution of one trial's steps to the target is estimated three
//! ways, the two bounds of partial identification and the estimate between them:
//!
//! - [`Reading::Optimistic`]: every censored trial reaches the target right at its stop (the
//!   fewest steps the data allow);
//! - [`Reading::KaplanMeier`]: the product-limit estimate (Kaplan and Meier 1958), which
//!   assumes a censored trial would have gone on like the trials still running at its stop;
//! - [`Reading::Pessimistic`]: no censored trial ever reaches it (the most).
//!
//! Steps to result at N trials is the best of N. What the intervals need is where another
//! search's best of N would land; [`rerun`](super::rerun) gives that law from this search's
//! trials, with the Kaplan-Meier share reached by a step standing in for a trial's rank where
//! trials are censored. With no censored trial the three readings agree. Past the last step
//! any trial was observed at (the cell's *support*), the data say nothing: a draw that lands
//! there is "more than C steps", never a number made up.

use rand::Rng;

use super::rerun::{self, LEVEL};

/// One trial as the bootstrap sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draw {
    /// Reached the target, first at this step.
    Reached(u64),
    /// Stopped at this step without having reached it: its steps are beyond it.
    Censored(u64),
    /// Diverged: never reaches it.
    Never,
}

/// Which distribution of a trial's steps is read from censored trials (see the module
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Censored trials reach the target at their stop.
    Optimistic,
    /// The product-limit estimate.
    KaplanMeier,
    /// Censored trials never reach it.
    Pessimistic,
}

impl Reading {
    /// The three readings, bounds last.
    pub const ALL: [Reading; 3] = [
        Reading::KaplanMeier,
        Reading::Optimistic,
        Reading::Pessimistic,
    ];
}

/// A value of steps to result drawn for one batch size: exact, or only known to lie beyond
/// the cell's support.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Steps {
    /// This many steps.
    Exact(f64),
    /// More than this many steps (the last step the cell's trials were seen at), or never.
    Beyond(f64),
}

impl Steps {
    /// The value as a lower bound (`Beyond(c)` gives c).
    pub fn low(self) -> f64 {
        match self {
            Steps::Exact(v) | Steps::Beyond(v) => v,
        }
    }

    /// The value as an upper bound (`Beyond` gives infinity).
    pub fn high(self) -> f64 {
        match self {
            Steps::Exact(v) => v,
            Steps::Beyond(_) => f64::INFINITY,
        }
    }
}

/// Another search's best of N trials' steps to the target at one batch size, given this
/// search's trials under one reading ([`rerun`](super::rerun) gives the law).
#[derive(Debug, Clone, PartialEq)]
pub struct BestOfN {
    /// Steps at which some trial reached the target, increasing.
    times: Vec<f64>,
    /// P(best <= times[i]).
    cdf: Vec<f64>,
    /// X(k) - X(1) over the `k` lowest reaching trials: the scale of the low tail.
    spread: f64,
    /// The reaching trials `spread` is taken over.
    k: usize,
    /// The last step any trial of the cell was seen at.
    support: f64,
    /// The least value a draw takes: one step; no error.
    floor: f64,
}

impl BestOfN {
    /// The distribution of another search's best of `trials.len()` given `trials` read by
    /// `reading`.
    pub fn new(trials: &[Draw], reading: Reading) -> Self {
        let read: Vec<Draw> = trials
            .iter()
            .map(|&d| match (d, reading) {
                (Draw::Censored(c), Reading::Optimistic) => Draw::Reached(c),
                (Draw::Censored(_), Reading::Pessimistic) => Draw::Never,
                (d, _) => d,
            })
            .collect();
        let support = trials
            .iter()
            .filter_map(|d| match d {
                Draw::Reached(s) | Draw::Censored(s) => Some(*s as f64),
                Draw::Never => None,
            })
            .fold(0.0, f64::max);
        let mut times: Vec<u64> = read
            .iter()
            .filter_map(|d| match d {
                Draw::Reached(s) => Some(*s),
                _ => None,
            })
            .collect();
        times.sort_unstable();
        let k = rerun::upper_rank(trials.len(), (1.0 - LEVEL) / 2.0).min(times.len());
        let spread = match k {
            0 => 0.0,
            k => (times[k - 1] - times[0]) as f64,
        };
        times.dedup();
        let n = trials.len();
        let mut survival = 1.0;
        let mut cdf = Vec::with_capacity(times.len());
        for &t in &times {
            let events = read.iter().filter(|d| **d == Draw::Reached(t)).count();
            // At risk at t: not yet reached before t and not censored before t (a trial
            // censored at t was still running then).
            let at_risk = read
                .iter()
                .filter(|d| match d {
                    Draw::Reached(s) | Draw::Censored(s) => *s >= t,
                    Draw::Never => true,
                })
                .count();
            survival *= 1.0 - events as f64 / at_risk as f64;
            // The Kaplan-Meier share reached by t, as a rank among the n trials.
            let rank = n as f64 * (1.0 - survival);
            cdf.push(1.0 - rerun::beaten_by_rank(n, rank));
        }
        BestOfN {
            times: times.into_iter().map(|t| t as f64).collect(),
            cdf,
            spread,
            k,
            support,
            floor: 1.0,
        }
    }

    /// The distribution of another search's best of N for a quantity a search minimises and
    /// reads exactly (no censoring): `values` of the trials that gave one, `never` trials that
    /// gave none (diverged: ranked last). The same law as [`BestOfN::new`] with every trial
    /// reached or never, where the Kaplan-Meier rank is the plain rank; no draw lies below
    /// `floor`, the least value the quantity takes (0 for an error).
    pub fn of_values(values: &[f64], never: usize, floor: f64) -> Self {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() + never;
        let k = rerun::upper_rank(n, (1.0 - LEVEL) / 2.0).min(sorted.len());
        let spread = match k {
            0 => 0.0,
            k => sorted[k - 1] - sorted[0],
        };
        let support = sorted.last().copied().unwrap_or(0.0);
        let mut times = sorted.clone();
        times.dedup();
        let cdf = times
            .iter()
            .map(|&t| {
                let rank = sorted.iter().filter(|&&v| v <= t).count();
                1.0 - rerun::beaten_by_rank(n, rank as f64)
            })
            .collect();
        BestOfN {
            times,
            cdf,
            spread,
            k,
            support,
            floor,
        }
    }

    /// The best of N observed: the fewest steps at which a trial reached the target under this
    /// reading, or beyond the support when none did.
    pub fn observed(&self) -> Steps {
        self.times
            .first()
            .map_or(Steps::Beyond(self.support), |&t| Steps::Exact(t))
    }

    /// One draw of another search's best of N: below the observed best with probability 1/2
    /// (from the low-tail rule), else at a trial's steps or beyond the support.
    pub fn sample(&self, rng: &mut impl Rng) -> Steps {
        let u: f64 = rng.random();
        let Some(&best) = self.times.first() else {
            return Steps::Beyond(self.support);
        };
        if u < 0.5 {
            return Steps::Exact(rerun::below_best_quantile(
                u,
                best,
                self.spread,
                self.k,
                self.floor,
            ));
        }
        match self.cdf.iter().position(|&p| u < p) {
            Some(i) => Steps::Exact(self.times[i]),
            None => Steps::Beyond(self.support),
        }
    }

    /// The last step any trial of the cell was seen at.
    pub fn support(&self) -> f64 {
        self.support
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;

    #[test]
    fn of_values_is_the_law_of_uncensored_trials() {
        let by_draws = BestOfN::new(
            &[
                Draw::Reached(3),
                Draw::Reached(5),
                Draw::Reached(5),
                Draw::Reached(9),
                Draw::Never,
            ],
            Reading::KaplanMeier,
        );
        let by_values = BestOfN::of_values(&[9.0, 5.0, 3.0, 5.0], 1, 1.0);
        assert_eq!(by_values.times, by_draws.times);
        assert_eq!(
            (by_values.spread, by_values.k),
            (by_draws.spread, by_draws.k)
        );
        assert_eq!(by_values.support, by_draws.support);
        for (a, b) in by_values.cdf.iter().zip(&by_draws.cdf) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
    }
    use rand::SeedableRng;

    #[test]
    fn without_censoring_the_readings_agree_and_match_the_minimum_of_resamples() {
        let trials = [
            Draw::Reached(100),
            Draw::Reached(200),
            Draw::Never,
            Draw::Reached(400),
        ];
        let km = BestOfN::new(&trials, Reading::KaplanMeier);
        for r in Reading::ALL {
            assert_eq!(BestOfN::new(&trials, r), km);
        }
        // Another search's best of 4 is at most our r-th trial unless the r smallest of the 8
        // are all ours: P = 1 - C(4, r) / C(8, r).
        let expect = [
            1.0 - 4.0 / 8.0,
            1.0 - 4.0 / 8.0 * 3.0 / 7.0,
            1.0 - 4.0 / 8.0 * 3.0 / 7.0 * 2.0 / 6.0,
        ];
        for (p, e) in km.cdf.iter().zip(expect) {
            assert!((p - e).abs() < 1e-12, "{p} {e}");
        }
        assert_eq!(km.observed(), Steps::Exact(100.0));
        let mut rng = StdRng::seed_from_u64(1);
        let draws: Vec<Steps> = (0..20_000).map(|_| km.sample(&mut rng)).collect();
        let beyond = draws
            .iter()
            .filter(|s| matches!(s, Steps::Beyond(_)))
            .count();
        // Beyond our third reaching trial: 1/14 = 7.1%.
        assert!((1300..1560).contains(&beyond), "{beyond}");
        // Below our best: half of the draws, none below one step.
        let below = draws.iter().filter(|s| s.high() < 100.0).count();
        assert!((9800..10200).contains(&below), "{below}");
        assert!(draws.iter().all(|s| s.low() >= 1.0));
    }

    #[test]
    fn a_censored_trial_is_neither_a_miss_nor_a_success() {
        // One reached at 100; three stopped at 300 (beaten), never known to miss.
        let trials = [
            Draw::Reached(100),
            Draw::Censored(300),
            Draw::Censored(300),
            Draw::Censored(300),
        ];
        let opt = BestOfN::new(&trials, Reading::Optimistic);
        let km = BestOfN::new(&trials, Reading::KaplanMeier);
        let pess = BestOfN::new(&trials, Reading::Pessimistic);
        // Optimistic: all reach by 300, so another search's best is beyond only if all 4 of
        // ours come first among the 8: C(4, 4) / C(8, 4) = 1/70.
        assert!((opt.cdf.last().unwrap() - (1.0 - 1.0 / 70.0)).abs() < 1e-12);
        assert_eq!(km.times, vec![100.0]);
        assert_eq!(pess.times, vec![100.0]);
        // KM and pessimistic agree before the censoring; past it KM says nothing more.
        assert_eq!(km.cdf, pess.cdf);
        assert_eq!(km.support(), 300.0);
    }

    #[test]
    fn kaplan_meier_gives_censored_mass_to_later_events() {
        // Censored at 50 before events at 100 and 200: KM's survival after 100 is
        // (1 - 1/3) = 2/3 (the censored trial left the risk set), not 3/4.
        let trials = [
            Draw::Censored(50),
            Draw::Reached(100),
            Draw::Reached(200),
            Draw::Never,
        ];
        let km = BestOfN::new(&trials, Reading::KaplanMeier);
        let s1: f64 = 2.0 / 3.0;
        let at = |rank: f64| 1.0 - rerun::beaten_by_rank(4, rank);
        assert!((km.cdf[0] - at(4.0 * (1.0 - s1))).abs() < 1e-12);
        let s2 = s1 * 0.5;
        assert!((km.cdf[1] - at(4.0 * (1.0 - s2))).abs() < 1e-12);
    }
}
