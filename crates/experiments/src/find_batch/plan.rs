//! The probes of a batch-size finder and which comes next: first the curve (every listed batch
//! size, `repeats` times, in one seeded shuffled order), then the search, whose next probe
//! follows from the outcomes so far. Both are functions of the rows on disk, so a resumed run
//! repeats no probe and skips none.

use batchlab_method::rows::Status;
use std::collections::HashSet;

use batchlab_method::{
    batch_search::{BatchSearch, Next, ProbeOutcome},
    rows::find_batch::{ProbePhase, ProbeSample},
};
use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};

/// One probe: a batch size run in a process of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// Which phase.
    pub phase: ProbePhase,
    /// Index within the phase.
    pub index: u32,
    /// The batch size.
    pub batch_size: u32,
    /// The repeat of this batch size (curve), 0 in the search.
    pub repeat: u32,
}

impl Probe {
    /// The unit id of the worker protocol: `c3-b16-r1` (curve), `s5-b384` (search).
    pub fn id(&self) -> String {
        if self.phase == ProbePhase::Curve {
            format!("c{}-b{}-r{}", self.index, self.batch_size, self.repeat)
        } else {
            format!("s{}-b{}", self.index, self.batch_size)
        }
    }

    /// Parses [`Probe::id`].
    pub fn parse_id(id: &str) -> Option<Self> {
        let (phase, rest) = match id.split_at_checked(1)? {
            ("c", rest) => (ProbePhase::Curve, rest),
            ("s", rest) => (ProbePhase::Search, rest),
            _ => return None,
        };
        let mut parts = rest.split('-');
        let index = parts.next()?.parse().ok()?;
        let batch_size = parts.next()?.strip_prefix('b')?.parse().ok()?;
        let repeat = match (phase, parts.next()) {
            (ProbePhase::Curve, Some(r)) => r.strip_prefix('r')?.parse().ok()?,
            (ProbePhase::Search, None) => 0,
            _ => return None,
        };
        parts.next().is_none().then_some(Self {
            phase,
            index,
            batch_size,
            repeat,
        })
    }
}

/// The curve's probes in their planned order: every (batch size, repeat), shuffled once from
/// `seed`, so that drift over the run cannot pass for a trend in batch size.
pub fn curve(batch_sizes: &[u32], repeats: u32, seed: u64) -> Vec<Probe> {
    let mut pairs: Vec<(u32, u32)> = (0..repeats)
        .flat_map(|r| batch_sizes.iter().map(move |&b| (b, r)))
        .collect();
    pairs.shuffle(&mut StdRng::seed_from_u64(seed));
    pairs
        .into_iter()
        .enumerate()
        .map(|(i, (batch_size, repeat))| Probe {
            phase: ProbePhase::Curve,
            index: i as u32,
            batch_size,
            repeat,
        })
        .collect()
}

/// The outcome of every search probe on disk, in probing order.
pub fn search_outcomes(done: &[ProbeSample]) -> Vec<(u32, ProbeOutcome)> {
    let mut seen = HashSet::new();
    let mut probes: Vec<(u32, u32, ProbeOutcome)> = done
        .iter()
        .filter(|r| r.phase == ProbePhase::Search && seen.insert(r.probe))
        .map(|r| {
            let outcome = match r.status {
                Status::Ok => ProbeOutcome::Fits,
                Status::Oom => ProbeOutcome::OutOfMemory,
                _ => ProbeOutcome::Failed,
            };
            (r.probe, r.batch_size, outcome)
        })
        .collect();
    probes.sort_by_key(|&(index, _, _)| index);
    probes.into_iter().map(|(_, b, o)| (b, o)).collect()
}

/// The next probe to run given the rows on disk, or `None` when the study is done.
pub fn next_probe(curve: &[Probe], search: BatchSearch, done: &[ProbeSample]) -> Option<Probe> {
    let curve_done: HashSet<u32> = done
        .iter()
        .filter(|r| r.phase == ProbePhase::Curve)
        .map(|r| r.probe)
        .collect();
    if let Some(probe) = curve.iter().find(|p| !curve_done.contains(&p.index)) {
        return Some(probe.clone());
    }
    let outcomes = search_outcomes(done);
    match search.next(&outcomes) {
        Next::Probe(batch_size) => Some(Probe {
            phase: ProbePhase::Search,
            index: outcomes.len() as u32,
            batch_size,
            repeat: 0,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(phase: ProbePhase, probe: u32, batch_size: u32, status: &str) -> ProbeSample {
        let status: Status = status.parse().unwrap();
        ProbeSample {
            phase,
            probe,
            batch_size,
            repeat: 0,
            sample: None,
            step_ms: (status == Status::Ok).then_some(1.0),
            cpu_ms: None,
            status,
            peak_rss_mb: None,
            limited_peak_mb: None,
            limit: "rlimit-as".into(),
            budget_mb: 100.0,
            threads: 1,
            backend: "flex".into(),
            device: "cpu".into(),
            message: String::new(),
        }
    }

    #[test]
    fn ids_round_trip() {
        for probe in curve(&[1, 16], 2, 0) {
            assert_eq!(Probe::parse_id(&probe.id()), Some(probe));
        }
        let s = Probe {
            phase: ProbePhase::Search,
            index: 5,
            batch_size: 384,
            repeat: 0,
        };
        assert_eq!(s.id(), "s5-b384");
        assert_eq!(Probe::parse_id("s5-b384"), Some(s));
        for bad in ["", "x1-b2", "s5-b384-r1", "c1-b2", "s-b2", "c1-b2-r"] {
            assert_eq!(Probe::parse_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_curve_comes_first_then_the_search_resumes_from_the_rows() {
        let plan = curve(&[1, 2], 2, 3);
        assert_eq!(plan.len(), 4);
        let search = BatchSearch { start: 1, cap: 64 };
        let mut done = Vec::new();
        for p in &plan {
            assert_eq!(next_probe(&plan, search, &done).as_ref(), Some(p));
            done.push(row(ProbePhase::Curve, p.index, p.batch_size, "ok"));
        }
        // Two samples of one probe are one probe.
        done.push(row(ProbePhase::Search, 0, 1, "ok"));
        done.push(row(ProbePhase::Search, 0, 1, "ok"));
        let next = next_probe(&plan, search, &done).unwrap();
        assert_eq!(
            (next.phase, next.index, next.batch_size),
            (ProbePhase::Search, 1, 2)
        );
        done.push(row(ProbePhase::Search, 1, 2, "oom"));
        assert_eq!(next_probe(&plan, search, &done), None, "found: 1");
    }
}
