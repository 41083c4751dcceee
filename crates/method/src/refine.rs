//! The two stages of a steps-to-target search: independent quasi-random points for every
//! cell (workload, batch size), then a refining stage around the best point of the first.
//!
//! # Independent points per cell
//!
//! With one scrambled Halton sequence for every batch size, batch sizes are compared on the
//! same draws: a lucky or unlucky point repeats at every batch size, and a metaparameter
//! region the draws miss is missed everywhere. [`cell_seed`] gives each cell its own
//! scramble (the study's seed mixed with the cell's name), so each batch size gets its own
//! random design and the search's luck is independent between them, as in Shallue et al.,
//! who tuned every batch size by its own search.
//!
//! # The refining stage
//!
//! Best-of-N of a random search improves slowly with N: the best of the first stage lies
//! within a factor of the optimum in each coordinate, and most of a second random stage
//! would land far from it again. A second stage of as many trials drawn from a smaller box,
//! a factor [`RefineConfig::factor`] either side of the first stage's best point on the log
//! scale of each metaparameter (cut to the search space), spends them where the first stage
//! found the target reachable fastest. The box is the same shape on the log scale the first
//! stage drew on, and its points come from a scramble of their own.
//!
//! Which first-stage trial is best ([`best_explored`]): the fewest steps to the target
//! (ties: the lowest index); when none reached it, the lowest validation error any feasible
//! trial had at an evaluation (ties: the lowest index), since the direction to the target is
//! then towards that trial; when no trial trained without diverging or failing, there is no
//! centre and the second stage draws from the whole space (its trials are then simply more
//! random trials).

use serde::{Deserialize, Serialize};

use crate::TargetError;

/// `[search.refine]`: the refining stage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefineConfig {
    /// Trials of the second stage per cell (0: none).
    pub trials: usize,
    /// The box spans the first stage's best value divided and multiplied by this factor, in
    /// each metaparameter (learning rate, 1 - momentum): 3 spans one decade around it.
    #[serde(default = "default_factor")]
    pub factor: f64,
}

fn default_factor() -> f64 {
    3.0
}

impl RefineConfig {
    /// Fails unless the factor is finite and above 1.
    pub fn check(&self) -> Result<(), TargetError> {
        if !(self.factor.is_finite() && self.factor > 1.0) {
            return Err(TargetError::argument(
                "factor",
                self.factor,
                "a finite number above 1",
            ));
        }
        Ok(())
    }
}

/// The scramble seed of a cell: the study's `seed` mixed with the cell's name (its trial-id
/// prefix, e.g. `mlp-sgd-b64-t`), and `stage` (0 for the first stage, 1 for the refining
/// one), by FNV-1a then SplitMix64's finaliser so that neighbouring names give unrelated
/// seeds. Stable across platforms and releases: it depends on nothing but these bytes.
pub fn cell_seed(seed: u64, cell: &str, stage: u8) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed
        .to_le_bytes()
        .iter()
        .chain(cell.as_bytes())
        .chain(&[stage])
    {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = hash.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A first-stage trial as the refining stage sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explored {
    /// Its index in the cell (ties go to the lowest).
    pub index: u64,
    /// Trained without diverging or failing.
    pub feasible: bool,
    /// The first evaluation step at which it reached the target, if it did.
    pub reached_at: Option<u64>,
    /// Its lowest validation error at any evaluation (NaN: none).
    pub lowest_error: f64,
}

/// The position in `trials` of the first stage's best trial by the rule of the module
/// documentation; `None` when no trial is feasible with an evaluation.
pub fn best_explored(trials: &[Explored]) -> Option<usize> {
    let feasible = || trials.iter().enumerate().filter(|(_, t)| t.feasible);
    let reached = feasible()
        .filter_map(|(k, t)| t.reached_at.map(|s| (k, s, t.index)))
        .min_by_key(|&(_, steps, index)| (steps, index))
        .map(|(k, _, _)| k);
    reached.or_else(|| {
        feasible()
            .filter(|(_, t)| t.lowest_error.is_finite())
            .min_by(|(_, a), (_, b)| {
                a.lowest_error
                    .total_cmp(&b.lowest_error)
                    .then(a.index.cmp(&b.index))
            })
            .map(|(k, _)| k)
    })
}

/// The refining range of one metaparameter: `centre` divided and multiplied by `factor`,
/// cut to `space` ([min, max]); the whole space when there is no centre.
pub fn refined_range(centre: Option<f64>, factor: f64, space: [f64; 2]) -> [f64; 2] {
    match centre {
        Some(c) => {
            let lo = (c / factor).clamp(space[0], space[1]);
            let hi = (c * factor).clamp(space[0], space[1]);
            [lo, hi]
        }
        None => space,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explored(index: u64, feasible: bool, reached_at: Option<u64>, error: f64) -> Explored {
        Explored {
            index,
            feasible,
            reached_at,
            lowest_error: error,
        }
    }

    #[test]
    fn cells_and_stages_get_different_seeds_and_the_same_inputs_the_same_seed() {
        let a = cell_seed(4, "mlp-sgd-b16-t", 0);
        assert_eq!(a, cell_seed(4, "mlp-sgd-b16-t", 0));
        assert_ne!(a, cell_seed(4, "mlp-sgd-b32-t", 0));
        assert_ne!(a, cell_seed(4, "mlp-sgd-b16-t", 1));
        assert_ne!(a, cell_seed(5, "mlp-sgd-b16-t", 0));
        // Pinned, so that a change of the mixing (which would silently change every
        // search) fails here.
        assert_eq!(cell_seed(4, "mlp-sgd-b16-t", 0), 0x4271_9ca3_9d1f_3f4f);
    }

    #[test]
    fn the_fewest_steps_win_then_the_lowest_error_then_nothing() {
        let trials = [
            explored(0, true, Some(300), 0.10),
            explored(1, false, Some(100), 0.05), // diverged after reaching: infeasible
            explored(2, true, Some(200), 0.12),
            explored(3, true, Some(200), 0.11), // a tie: the lower index (2) wins
        ];
        assert_eq!(best_explored(&trials), Some(2));
        let missed = [
            explored(0, true, None, 0.20),
            explored(1, true, None, 0.15),
            explored(2, false, None, 0.01),
            explored(3, true, None, f64::NAN),
        ];
        assert_eq!(best_explored(&missed), Some(1));
        let none = [
            explored(0, false, None, 0.2),
            explored(1, true, None, f64::NAN),
        ];
        assert_eq!(best_explored(&none), None);
        assert_eq!(best_explored(&[]), None);
    }

    #[test]
    fn the_box_is_cut_to_the_space_and_is_the_space_without_a_centre() {
        assert_eq!(
            refined_range(Some(0.1), 3.0, [0.001, 1.0]),
            [0.1 / 3.0, 0.1 * 3.0]
        );
        assert_eq!(refined_range(Some(0.9), 3.0, [0.001, 1.0]), [0.3, 1.0]);
        assert_eq!(
            refined_range(Some(0.001), 10.0, [0.001, 1.0]),
            [0.001, 0.01]
        );
        assert_eq!(refined_range(None, 3.0, [0.001, 1.0]), [0.001, 1.0]);
        assert!(RefineConfig {
            trials: 4,
            factor: 1.0
        }
        .check()
        .is_err());
        assert!(RefineConfig {
            trials: 4,
            factor: f64::NAN
        }
        .check()
        .is_err());
        assert!(RefineConfig {
            trials: 4,
            factor: 2.0
        }
        .check()
        .is_ok());
    }
}
