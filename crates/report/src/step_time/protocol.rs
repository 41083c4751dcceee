//! How a step-time sweep measured, as numbers, and its one line in words (the report's header
//! and `batchlab check`).

/// A sweep's protocol: what its config and the warm-up rule fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepProtocol {
    /// Rounds, each visiting every batch size once in a new shuffled order.
    pub rounds: usize,
    /// Seeds the order (and the model and data).
    pub seed: u64,
    /// Fewest warm-up steps dropped at a visit.
    pub warmup_min: usize,
    /// Most warm-up steps; above `warmup_min`, warm-up goes on until the step settles.
    pub warmup_max: usize,
    /// The last steps that must agree for warm-up to end, and within what fraction.
    pub settle: (usize, f64),
    /// Timed steps kept at a visit.
    pub samples: usize,
    /// The optimizer's name, part of the timed step.
    pub optimizer: String,
    /// The anatomy's visits, where the sweep takes steps apart.
    pub anatomy: Option<AnatomyProtocol>,
}

/// The anatomy's visits: rounds over the named batch sizes and their neighbours.
#[derive(Debug, Clone, PartialEq)]
pub struct AnatomyProtocol {
    /// Rounds over `batch_sizes`.
    pub rounds: usize,
    /// Every batch size visited (each named one with its neighbours).
    pub batch_sizes: Vec<u32>,
    /// The batch sizes named in `[anatomy] around`.
    pub around: Vec<u32>,
    /// Steps taken apart and dropped at a visit.
    pub warmup_steps: usize,
    /// Steps taken apart and kept at a visit.
    pub samples: usize,
}

impl SweepProtocol {
    /// The protocol in one line.
    pub fn words(&self) -> String {
        let anatomy = self.anatomy.as_ref().map_or(String::new(), |a| {
            format!(
                "; then, for the anatomy, {} rounds over batch sizes {:?} (each of {:?} with its neighbours), each visit {} step(s) taken apart and dropped, then {} taken apart: every stage's forward and backward on its own input and the optimizer update, each between two syncs, beside the whole step",
                a.rounds, a.batch_sizes, a.around, a.warmup_steps, a.samples
            )
        });
        let (window, spread) = self.settle;
        let warmup = if self.warmup_max <= self.warmup_min {
            format!("{} warm-up steps dropped", self.warmup_min)
        } else {
            format!(
                "at least {} and at most {} warm-up steps dropped, until the last {window} agree within {:.0}% (each kept in warmup.csv)",
                self.warmup_min,
                self.warmup_max,
                spread * 100.0
            )
        };
        format!(
            "{} rounds, each visiting every batch size once in a new shuffled order (seed {}); per visit {warmup}, then {} timed steps of forward + loss + backward + {} update, the device synchronised before every clock read; synthetic inputs made on the device before timing",
            self.rounds, self.seed, self.samples, self.optimizer
        ) + &anatomy
    }
}
