//! Which gap a batch size named by a claim means.

use serde::{Deserialize, Serialize};

use super::Jump;

/// Which gap between measured batch sizes a named position b means. The registry states it per
/// claim, quoting the article's wording and mechanism: seed 000 says "at 16, 32, 48 and 64" and
/// explains each jump as another round once a batch exceeds 16, so its positions are
/// [`Gap::After`]. Only that gap is read: a step on the neighbouring gap is not a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gap {
    /// From b to the next measured batch size: the step where a batch first exceeds b. The
    /// default, the reading of the seed whose positions every committed config names.
    #[default]
    After,
    /// From the previous measured batch size to b: the step where a batch first reaches b.
    Before,
}

impl Gap {
    /// Its name in configs and the registry.
    pub fn name(self) -> &'static str {
        match self {
            Gap::After => "after",
            Gap::Before => "before",
        }
    }

    /// Whether `gap` is the one position `b` means: where b was measured, the gap after
    /// (before) it; where it was not, the gap that spans it (no other gap touches b then).
    pub fn means(self, gap: &Jump, b: u32) -> bool {
        let spans = gap.previous_batch_size < b && b < gap.batch_size;
        spans
            || match self {
                Gap::After => gap.previous_batch_size == b,
                Gap::Before => gap.batch_size == b,
            }
    }

    /// The gap a position means, in the rules' words.
    pub fn of_position(self) -> &'static str {
        match self {
            Gap::After => "the gap from it to the next measured batch size",
            Gap::Before => "the gap from the previous measured batch size to it",
        }
    }
}
