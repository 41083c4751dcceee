//! How a training grid trained and evaluated, as numbers, and its one line in words (the
//! report's header and `batchlab check`).

/// A training grid's protocol: what its config fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainProtocol {
    /// Epochs of the epochs budget.
    pub epochs: usize,
    /// With a steps budget beside it: its steps, where the config fixes them (else what the
    /// smallest batch size takes in the epochs); `None` without one.
    pub matched_steps: Option<Option<u64>>,
    /// The learning-rate schedule: `None` for a constant rate, else its kind's name and the
    /// fraction of the initial rate it decays to.
    pub decay: Option<(String, f64)>,
    /// When the validation split is evaluated.
    pub evaluations: Evaluations,
    /// Whether evaluations run at each trial's training batch size.
    pub eval_at_train_batch: bool,
    /// Whether the last partial batch of an epoch is dropped.
    pub drop_last: bool,
    /// Seeds the order of trials.
    pub order_seed: u64,
    /// The loss, as a multiple of the first, at which a trial counts as diverged.
    pub divergence_factor: f64,
}

/// When a training grid evaluates the validation split.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Evaluations {
    /// Every so many steps, and at the end.
    EverySteps(u64),
    /// So many times, evenly spaced.
    Times(usize),
    /// After every epoch.
    EveryEpoch,
}

impl TrainProtocol {
    /// The protocol in one line.
    pub fn words(&self) -> String {
        let budgets = match self.matched_steps {
            Some(steps) => format!(
                "two budgets: {} epochs, and the same number of steps for every batch size ({})",
                self.epochs,
                steps.map_or(
                    "what the smallest batch size takes in those epochs".into(),
                    |s| format!("{s} steps")
                )
            ),
            None => format!("{} epochs", self.epochs),
        };
        let schedule = match &self.decay {
            None => "constant".to_string(),
            Some((kind, end)) => format!("{kind} decay to {end} of the initial rate"),
        };
        format!(
            "{budgets}; learning-rate schedule {schedule}; evaluation on the validation split {} (timed apart from training), test split at the end{}; {} order of trials shuffled (seed {}); a trial whose loss turns non-finite or exceeds {}x its first loss is recorded as diverged",
            match self.evaluations {
                Evaluations::EverySteps(every) => format!("every {every} steps and at the end"),
                Evaluations::Times(n) => format!("{n} times evenly spaced"),
                Evaluations::EveryEpoch => "after every epoch".into(),
            },
            if self.eval_at_train_batch {
                " (evaluations at each trial's training batch size, so test time measures inference at it)"
            } else {
                ""
            },
            if self.drop_last {
                "last partial batch dropped;"
            } else {
                "last partial batch kept;"
            },
            self.order_seed,
            self.divergence_factor
        )
    }
}
