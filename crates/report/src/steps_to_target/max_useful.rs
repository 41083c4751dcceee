//! Claims about two workloads' maximum useful batch sizes, judged by the ratio of their
//! critical batch sizes.
//!
//! **The maximum useful batch size** of a workload is, everywhere in batchlab, B_crit of
//! S(B) = S_min (1 + B_crit / B) fitted to its steps to result (claims/registry.toml's
//! definition): the batch size where the local slope d log S / d log B = −B_crit / (B + B_crit)
//! crosses −1/2, so that doubling the batch there still saves a factor √2 of the steps, and
//! doubling it further saves ever less. Two workloads are compared by the 95% interval of
//! r = B_crit(workload) / B_crit(versus) over paired bootstrap replicates of both curves, and
//! the claim's margin m > 1 is the factor below which two maximum useful batch sizes count as
//! the same (one doubling of the batch-size grid, 2, is the convention the registry states).

use batchlab_method::tests_of_claims::Decision;
use serde::Serialize;

/// What a claim says about r.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RatioClaim {
    /// r is larger than 1: momentum extends perfect scaling (no margin: any reliable excess).
    Larger,
    /// r differs from 1 by more than the margin, in either direction.
    Differs,
    /// r is not larger than the margin: the workload does not scale better by that much.
    NotLarger,
    /// r lies within the margin of 1 both ways: the two are the same.
    Equal,
}

impl RatioClaim {
    /// The rule's name, as the registry and the configs spell it.
    pub fn rule(self) -> &'static str {
        match self {
            RatioClaim::Larger => "extends-perfect-scaling",
            RatioClaim::Differs => "max-useful-batch-differs",
            RatioClaim::NotLarger => "max-useful-batch-not-larger",
            RatioClaim::Equal => "max-useful-batch-equal",
        }
    }

    /// Where the interval (lo, hi) of r lies against the registry's `margin`: inside what
    /// the claim says (shown), inside its opposite (refuted), or across a bound of the rule.
    pub fn decide(self, (lo, hi): (f64, f64), margin: f64) -> Decision {
        let (inv, m) = (1.0 / margin, margin);
        let (shown, refuted) = match self {
            RatioClaim::Larger => (lo > m, hi <= m),
            RatioClaim::Differs => (lo > m || hi < inv, inv <= lo && hi <= m),
            RatioClaim::NotLarger => (hi < m, lo > m),
            RatioClaim::Equal => (inv <= lo && hi <= m, lo > m || hi < inv),
        };
        if shown {
            Decision::Shown
        } else if refuted {
            Decision::Refuted
        } else {
            Decision::Open
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Decision::*;

    fn decisions(claim: RatioClaim) -> Vec<Decision> {
        // Far above, just above 1, inside the margin, straddling the margin, far below.
        [(3.0, 5.0), (1.1, 1.5), (0.7, 1.4), (1.5, 3.0), (0.1, 0.3)]
            .into_iter()
            .map(|i| claim.decide(i, 2.0))
            .collect()
    }

    #[test]
    fn each_claim_by_where_the_interval_lies_against_its_margin() {
        use RatioClaim::{Differs, Equal, Larger, NotLarger};
        // Larger is larger beyond the margin within which two count as the same: a ratio
        // bounded above 1 but inside x2 is the same size, not larger (as Differs reads it).
        assert_eq!(decisions(Larger), [Shown, Refuted, Refuted, Open, Refuted]);
        assert_eq!(decisions(Differs), [Shown, Refuted, Refuted, Open, Shown]);
        assert_eq!(decisions(NotLarger), [Refuted, Shown, Shown, Open, Shown]);
        assert_eq!(decisions(Equal), [Refuted, Shown, Shown, Open, Refuted]);
    }

    #[test]
    fn an_unbounded_interval_decides_nothing_it_cannot() {
        let open = (0.8, f64::INFINITY);
        assert_eq!(RatioClaim::Equal.decide(open, 2.0), Open);
        assert_eq!(RatioClaim::NotLarger.decide(open, 2.0), Open);
        assert_eq!(RatioClaim::Differs.decide(open, 2.0), Open);
    }
}
