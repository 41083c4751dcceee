//! The order in which a sweep visits its batch sizes, and what is left of it after a crash.

use batchlab_method::rows::Status;
use std::collections::HashSet;

use batchlab_method::rows::step_time::StepSample;
use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};

/// One visit: a batch size measured once in one round, or (`dissect`) its steps taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Visit {
    /// 0-based round.
    pub round: u32,
    /// The batch size.
    pub batch_size: u32,
    /// A visit of `[anatomy]`: steps taken apart, written to stages.csv.
    pub dissect: bool,
}

impl Visit {
    /// The unit id used in the worker protocol, e.g. `r2-b48` (`d2-b48` taking steps apart).
    pub fn id(&self) -> String {
        let kind = if self.dissect { 'd' } else { 'r' };
        format!("{kind}{}-b{}", self.round, self.batch_size)
    }

    /// Parses [`Visit::id`].
    pub fn parse_id(id: &str) -> Option<Self> {
        let dissect = id.starts_with('d');
        let (round, batch) = id
            .strip_prefix(if dissect { 'd' } else { 'r' })?
            .split_once("-b")?;
        Some(Self {
            round: round.parse().ok()?,
            batch_size: batch.parse().ok()?,
            dissect,
        })
    }
}

/// Every visit of a sweep: `rounds` rounds, each a new shuffle of the batch sizes, from `seed`
/// (`dissect`: the visits of `[anatomy]`).
pub fn shuffled_rounds(batch_sizes: &[u32], rounds: usize, seed: u64, dissect: bool) -> Vec<Visit> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..rounds as u32)
        .flat_map(|round| {
            let mut order = batch_sizes.to_vec();
            order.shuffle(&mut rng);
            order.into_iter().map(move |batch_size| Visit {
                round,
                batch_size,
                dissect,
            })
        })
        .collect()
}

/// The visits of `plan` still to do given the rows already in results.csv (`done`) and the
/// (round, batch size) of the dissecting visits in stages.csv (`dissected`): a visit with rows
/// is done; a batch size that failed once (out of memory, error) is not tried again, since the
/// same shape on the same device fails the same way.
pub fn remaining_visits(
    plan: &[Visit],
    done: &[StepSample],
    dissected: &HashSet<(u32, u32)>,
) -> Vec<Visit> {
    let finished: HashSet<(u32, u32)> = done
        .iter()
        .filter(|s| s.sample.is_some())
        .map(|s| (s.round, s.batch_size))
        .collect();
    let failed: HashSet<u32> = done
        .iter()
        .filter(|s| s.status != Status::Ok)
        .map(|s| s.batch_size)
        .collect();
    plan.iter()
        .filter(|v| {
            let key = (v.round, v.batch_size);
            let visited = if v.dissect {
                dissected.contains(&key)
            } else {
                finished.contains(&key)
            };
            !visited && !failed.contains(&v.batch_size)
        })
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(round: u32, batch_size: u32, status: &str) -> StepSample {
        let status: Status = status.parse().unwrap();
        StepSample {
            batch_size,
            round,
            sample: (status == Status::Ok).then_some(0),
            step_ms: (status == Status::Ok).then_some(1.0),
            status,
            backend: "flex".into(),
            device: "cpu".into(),
            peak_mem_mb: None,
            message: String::new(),
        }
    }

    #[test]
    fn every_round_visits_every_batch_size_once_in_a_seeded_shuffled_order() {
        let sizes: Vec<u32> = (1..=20).collect();
        let plan = shuffled_rounds(&sizes, 3, 7, false);
        assert_eq!(plan.len(), 60);
        for round in 0..3 {
            let mut seen: Vec<u32> = plan
                .iter()
                .filter(|v| v.round == round)
                .map(|v| v.batch_size)
                .collect();
            assert_ne!(seen, sizes, "round {round} is shuffled");
            seen.sort_unstable();
            assert_eq!(seen, sizes);
        }
        let order = |p: &[Visit]| p.iter().map(|v| v.batch_size).collect::<Vec<_>>();
        assert_ne!(order(&plan[..20]), order(&plan[20..40]), "rounds differ");
        assert_eq!(plan, shuffled_rounds(&sizes, 3, 7, false));
        assert_ne!(plan, shuffled_rounds(&sizes, 3, 8, false));
    }

    #[test]
    fn resume_skips_finished_visits_and_failed_batch_sizes() {
        let plan = shuffled_rounds(&[1, 2, 4], 2, 0, false);
        let done = vec![row(0, 1, "ok"), row(0, 1, "ok"), row(0, 4, "oom")];
        let left = remaining_visits(&plan, &done, &HashSet::new());
        let mut left_ids: Vec<(u32, u32)> = left.iter().map(|v| (v.round, v.batch_size)).collect();
        left_ids.sort_unstable();
        assert_eq!(left_ids, vec![(0, 2), (1, 1), (1, 2)]);
        let order: Vec<Visit> = plan.iter().filter(|v| left.contains(v)).copied().collect();
        assert_eq!(left, order, "the planned order is kept");
        // Dissecting visits are done by their own rows, and a failed batch size skips them too.
        let dissect = shuffled_rounds(&[1, 2, 4], 1, 0, true);
        let dissected: HashSet<(u32, u32)> = [(0, 2)].into();
        let left = remaining_visits(&dissect, &done, &dissected);
        assert_eq!(
            left.iter().map(|v| v.batch_size).collect::<Vec<_>>(),
            vec![1]
        );
    }

    #[test]
    fn visit_ids_round_trip() {
        let v = Visit {
            round: 12,
            batch_size: 48,
            dissect: false,
        };
        assert_eq!(v.id(), "r12-b48");
        assert_eq!(Visit::parse_id(&v.id()), Some(v));
        assert_eq!(Visit::parse_id("b48"), None);
        let d = Visit { dissect: true, ..v };
        assert_eq!(d.id(), "d12-b48");
        assert_eq!(Visit::parse_id(&d.id()), Some(d));
    }
}
