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

use batchlab_method::findings::Outcome;

use crate::numbers::signed;

/// What a claim says about r.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    /// The rule in words, for the report's test column.
    pub fn words(self, margin: f64) -> String {
        let m = signed(margin);
        let inv = signed(1.0 / margin);
        match self {
            RatioClaim::Larger => format!("reproduces when it lies above {m} (larger by more than the margin {m}x, within which two count as the same), does not when it lies below {m}"),
            RatioClaim::Differs => format!("reproduces when it lies outside [{inv}, {m}] (a difference of more than the margin {m}x either way), does not when it lies inside it (the same within the margin)"),
            RatioClaim::NotLarger => format!("reproduces when it lies below {m} (not larger by the margin {m}x), does not when it lies above {m}"),
            RatioClaim::Equal => format!("reproduces when it lies inside [{inv}, {m}] (the same within the margin {m}x), does not when it lies outside it"),
        }
    }

    /// The verdict from the interval (lo, hi) of r against the registry's `margin`.
    pub fn judge(self, (lo, hi): (f64, f64), margin: f64) -> Outcome {
        let interval = format!("ratio interval {}–{}", signed(lo), signed(hi));
        let (inv, m) = (1.0 / margin, margin);
        let open = |could: String| {
            Outcome::inconclusive(format!(
                "the {interval} straddles a bound of the rule: {could}"
            ))
        };
        match self {
            RatioClaim::Larger if lo > m => Outcome::reproduces_with(interval),
            RatioClaim::Larger if hi <= m => Outcome::does_not_reproduce(format!(
                "not larger by more than the margin ({interval})"
            )),
            RatioClaim::Larger => open(format!("a ratio clearly above or below {}", signed(m))),
            RatioClaim::Differs if lo > m || hi < inv => Outcome::reproduces_with(interval),
            RatioClaim::Differs if inv <= lo && hi <= m => {
                Outcome::does_not_reproduce(format!("the same within the margin ({interval})"))
            }
            RatioClaim::Differs => open(format!(
                "a difference beyond {}x either way, or a sameness within it",
                signed(m)
            )),
            RatioClaim::NotLarger if hi < m => Outcome::reproduces_with(interval),
            RatioClaim::NotLarger if lo > m => {
                Outcome::does_not_reproduce(format!("larger by more than the margin ({interval})"))
            }
            RatioClaim::NotLarger => open(format!("a ratio clearly above or below {}", signed(m))),
            RatioClaim::Equal if inv <= lo && hi <= m => Outcome::reproduces_with(interval),
            RatioClaim::Equal if lo > m || hi < inv => Outcome::does_not_reproduce(format!(
                "they differ by more than the margin ({interval})"
            )),
            RatioClaim::Equal => open(format!(
                "it could not show a ratio within [{}, {}]",
                signed(inv),
                signed(m)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlab_method::findings::Verdict::{self, *};

    fn verdicts(claim: RatioClaim) -> Vec<Verdict> {
        // Far above, just above 1, inside the margin, straddling the margin, far below.
        [(3.0, 5.0), (1.1, 1.5), (0.7, 1.4), (1.5, 3.0), (0.1, 0.3)]
            .into_iter()
            .map(|i| claim.judge(i, 2.0).verdict())
            .collect()
    }

    #[test]
    fn each_claim_by_where_the_interval_lies_against_its_margin() {
        use RatioClaim::*;
        // Larger is larger beyond the margin within which two count as the same: a ratio
        // bounded above 1 but inside x2 is the same size, not larger (as Differs reads it).
        assert_eq!(
            verdicts(Larger),
            [
                Reproduces,
                DoesNotReproduce,
                DoesNotReproduce,
                Inconclusive,
                DoesNotReproduce
            ]
        );
        assert_eq!(
            verdicts(Differs),
            [
                Reproduces,
                DoesNotReproduce,
                DoesNotReproduce,
                Inconclusive,
                Reproduces
            ]
        );
        assert_eq!(
            verdicts(NotLarger),
            [
                DoesNotReproduce,
                Reproduces,
                Reproduces,
                Inconclusive,
                Reproduces
            ]
        );
        assert_eq!(
            verdicts(Equal),
            [
                DoesNotReproduce,
                Reproduces,
                Reproduces,
                Inconclusive,
                DoesNotReproduce
            ]
        );
    }

    #[test]
    fn an_unbounded_interval_decides_nothing_it_cannot() {
        let open = (0.8, f64::INFINITY);
        assert_eq!(RatioClaim::Equal.judge(open, 2.0).verdict(), Inconclusive);
        assert_eq!(
            RatioClaim::NotLarger.judge(open, 2.0).verdict(),
            Inconclusive
        );
        assert_eq!(RatioClaim::Differs.judge(open, 2.0).verdict(), Inconclusive);
    }
}
