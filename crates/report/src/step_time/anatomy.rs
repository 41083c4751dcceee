//! The anatomy of a jump: where the extra time of a batch size b goes, compared with its
//! neighbours b - 1 and b + 1, from the parts of dissected steps (`stages.csv`).
//!
//! For every part (each stage's forward and backward, the optimizer update, and the whole
//! step), the median time at b - 1, b and b + 1, and the change at b against each neighbour,
//! median(b) - median(neighbour), with a bootstrap interval (each batch size's samples resampled
//! on their own, [`RESAMPLES`] times, 95% percentiles). A part **exceeds its noise** when both
//! changes' intervals exclude zero on the same side: b differs from both neighbours, as a jump
//! (or a dip) at b alone would. The parts that exceed their noise, largest change first, are the
//! ones responsible; each one's share of the whole step's change says how much of the jump it
//! explains.

use std::collections::BTreeMap;

use batchlab_method::rows::step_time::{StagePhase, StageSample};
use batchlab_method::stats::{median, quantile_sorted};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Bootstrap resamples of each change.
pub const RESAMPLES: usize = 2000;

/// A change with its 95% interval, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// median(b) - median(neighbour).
    pub ms: f64,
    /// Low end.
    pub low: f64,
    /// High end.
    pub high: f64,
}

impl Change {
    /// -1, 0 or 1: the side of zero the interval lies on (0 when it holds zero).
    fn side(&self) -> i8 {
        if self.low > 0.0 {
            1
        } else if self.high < 0.0 {
            -1
        } else {
            0
        }
    }
}

/// One part of the step around b.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Position of the stage (0 for the optimizer and the step).
    pub stage_index: u32,
    /// The stage's name (`optimizer`, `step` for those).
    pub stage: String,
    /// `forward`, `backward`, `optimizer` or `step`.
    pub phase: StagePhase,
    /// Median ms at b - 1, b, b + 1.
    pub medians: [f64; 3],
    /// b against b - 1.
    pub below: Change,
    /// b against b + 1.
    pub above: Change,
}

impl Part {
    /// Both changes exclude zero on the same side (see the module documentation).
    pub fn exceeds_noise(&self) -> bool {
        let side = self.below.side();
        side != 0 && side == self.above.side()
    }

    /// The smaller of the two changes in size, with its sign: how much b stands out of both
    /// neighbours.
    pub fn standout_ms(&self) -> f64 {
        if self.below.ms.abs() <= self.above.ms.abs() {
            self.below.ms
        } else {
            self.above.ms
        }
    }
}

/// The anatomy of batch size b.
#[derive(Debug, Clone, PartialEq)]
pub struct Anatomy {
    /// The batch size dissected with its neighbours.
    pub centre: u32,
    /// The whole step.
    pub step: Part,
    /// Every stage's forward and backward, then the optimizer, in network order.
    pub parts: Vec<Part>,
}

impl Anatomy {
    /// The parts that exceed their noise, the largest standout first.
    pub fn responsible(&self) -> Vec<&Part> {
        let mut out: Vec<&Part> = self.parts.iter().filter(|p| p.exceeds_noise()).collect();
        out.sort_by(|a, b| b.standout_ms().abs().total_cmp(&a.standout_ms().abs()));
        out
    }
}

fn change(at: &[f64], neighbour: &[f64], rng: &mut StdRng) -> Change {
    let resample = |xs: &[f64], rng: &mut StdRng| {
        let draw: Vec<f64> = (0..xs.len())
            .map(|_| xs[rng.random_range(0..xs.len())])
            .collect();
        median(&draw)
    };
    let mut diffs: Vec<f64> = (0..RESAMPLES)
        .map(|_| resample(at, rng) - resample(neighbour, rng))
        .collect();
    diffs.sort_by(f64::total_cmp);
    Change {
        ms: median(at) - median(neighbour),
        low: quantile_sorted(&diffs, 0.025),
        high: quantile_sorted(&diffs, 0.975),
    }
}

/// The anatomy of `centre` from `samples` (any batch sizes; those of centre - 1, centre and
/// centre + 1 are used), with a seeded bootstrap. `None` unless all three have samples of
/// the whole step.
pub fn anatomy(samples: &[StageSample], centre: u32, seed: u64) -> Option<Anatomy> {
    let sizes = [centre.checked_sub(1)?, centre, centre + 1];
    // (stage index, phase (in the order a step runs them), stage) -> per batch size, the times.
    let mut groups: BTreeMap<(u32, StagePhase, String), [Vec<f64>; 3]> = BTreeMap::new();
    for s in samples {
        let Some(k) = sizes.iter().position(|&b| b == s.batch_size) else {
            continue;
        };
        let key = (s.stage_index, s.phase, s.stage.clone());
        groups.entry(key).or_default()[k].push(s.ms);
    }
    let mut rng = StdRng::seed_from_u64(seed ^ u64::from(centre));
    let mut parts = vec![];
    let mut step = None;
    for ((stage_index, phase, stage), times) in groups {
        if times.iter().any(Vec::is_empty) {
            continue;
        }
        let part = Part {
            stage_index,
            stage,
            phase,
            medians: [median(&times[0]), median(&times[1]), median(&times[2])],
            below: change(&times[1], &times[0], &mut rng),
            above: change(&times[1], &times[2], &mut rng),
        };
        if phase == StagePhase::Step {
            step = Some(part);
        } else {
            parts.push(part);
        }
    }
    // Network order, the optimizer last.
    parts.sort_by_key(|p| {
        (
            p.phase == StagePhase::Optimizer,
            p.stage_index,
            p.phase != StagePhase::Forward,
        )
    });
    Some(Anatomy {
        centre,
        step: step?,
        parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three stages on a smooth cost, 0.01 ms per example each way, with a deterministic
    /// +-2% wobble; stage `b` backward takes 2 ms more at batch 128 only.
    fn synthetic() -> Vec<StageSample> {
        let mut rows = vec![];
        for batch_size in [127, 128, 129] {
            for sample in 0..12u32 {
                let wobble = 1.0 + 0.02 * ((sample * 7 % 5) as f64 - 2.0) / 2.0;
                let mut step = 0.0;
                let mut push = |index: u32, stage: &str, phase: StagePhase, ms: f64| {
                    rows.push(StageSample {
                        batch_size,
                        round: 0,
                        sample,
                        stage_index: index,
                        stage: stage.into(),
                        phase,
                        ms,
                    });
                };
                for (index, stage) in ["a", "b", "c"].iter().enumerate() {
                    for phase in [StagePhase::Forward, StagePhase::Backward] {
                        let mut ms = 0.01 * f64::from(batch_size) * wobble;
                        if *stage == "b" && phase == StagePhase::Backward && batch_size == 128 {
                            ms += 2.0;
                        }
                        step += ms;
                        push(index as u32, stage, phase, ms);
                    }
                }
                push(0, "optimizer", StagePhase::Optimizer, 0.5 * wobble);
                push(0, "step", StagePhase::Step, step + 0.5 * wobble);
            }
        }
        rows
    }

    #[test]
    fn the_layer_whose_time_jumps_is_named_and_no_other() {
        let a = anatomy(&synthetic(), 128, 0).unwrap();
        assert_eq!(a.parts.len(), 7);
        assert_eq!(
            (a.parts[0].stage.as_str(), a.parts[0].phase),
            ("a", StagePhase::Forward)
        );
        assert_eq!(a.parts[6].phase, StagePhase::Optimizer);
        let responsible = a.responsible();
        assert_eq!(responsible.len(), 1, "{responsible:?}");
        let b = responsible[0];
        assert_eq!((b.stage.as_str(), b.phase), ("b", StagePhase::Backward));
        assert!(b.below.low < 2.0 && b.below.high > 1.9, "{b:?}");
        assert!(a.step.exceeds_noise(), "{:?}", a.step);
        // Its share of the step's change is all of it, within the wobble.
        let share = b.standout_ms() / a.step.standout_ms();
        assert!((0.8..1.2).contains(&share), "{share}");
        assert!(anatomy(&synthetic(), 200, 0).is_none());
        assert!(anatomy(&synthetic(), 0, 0).is_none());
    }
}
