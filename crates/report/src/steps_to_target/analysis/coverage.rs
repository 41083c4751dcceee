//! How often one search's interval of steps to result holds another search's value, for
//! workloads that repeat the same search with other points (`[analysis] replicates`).
//!
//! A best of N searched again is a fresh draw of the quantity the bootstrap interval is about,
//! so a 95% interval should hold about 95% of the other searches' values (a prediction
//! interval's reading). Refining trials depend on their first stage, which the bootstrap
//! ignores; this is where that would show.

use super::workload::Workload;

/// One interval checked against another replicate's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CoverageCheck {
    pub batch_size: f64,
    /// The replicate whose interval is checked.
    pub interval_of: String,
    pub interval: (f64, f64),
    /// The replicate whose value it should hold.
    pub value_of: String,
    /// Its steps to result (infinite: none reached).
    pub value: f64,
    pub covered: bool,
}

/// Every check over the replicates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Coverage {
    pub replicates: Vec<String>,
    pub checks: Vec<CoverageCheck>,
}

impl Coverage {
    /// The replicates found among `workloads` (at least two), every ordered pair checked at
    /// every batch size both have.
    pub fn of(workloads: &[Workload], replicates: &[String]) -> Option<Coverage> {
        let found: Vec<&Workload> = replicates
            .iter()
            .filter_map(|label| workloads.iter().find(|w| &w.label == label))
            .collect();
        if found.len() < 2 {
            return None;
        }
        let mut checks = vec![];
        for a in &found {
            for b in found.iter().filter(|b| b.label != a.label) {
                let (ia, ib) = (&a.intervals, &b.intervals);
                for (k, &batch) in ia.batch_sizes.iter().enumerate() {
                    let Some(j) = ib.batch_sizes.iter().position(|&x| x == batch) else {
                        continue;
                    };
                    let (lo, hi) = ia.intervals[k];
                    let value = ib.steps[j];
                    checks.push(CoverageCheck {
                        batch_size: batch,
                        interval_of: a.label.clone(),
                        interval: (lo, hi),
                        value_of: b.label.clone(),
                        value,
                        covered: lo <= value && value <= hi,
                    });
                }
            }
        }
        Some(Coverage {
            replicates: found.iter().map(|w| w.label.clone()).collect(),
            checks,
        })
    }

    /// Checks whose interval held the value.
    pub fn covered(&self) -> usize {
        self.checks.iter().filter(|c| c.covered).count()
    }

    /// The Wilson 95% interval of the coverage rate (the checks are not independent: each
    /// value is checked against several intervals, so this is narrower than the truth).
    pub fn rate_interval(&self) -> (f64, f64) {
        let n = self.checks.len() as f64;
        if n == 0.0 {
            return (0.0, 1.0);
        }
        let p = self.covered() as f64 / n;
        let z: f64 = 1.96;
        let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
        ((centre - half).max(0.0), (centre + half).min(1.0))
    }
}
