//! How a steps-to-target search ran, as numbers, and its one line in words (the report's
//! header and `batchlab check`), with each workload's search space.

use super::lr_rule::SearchSpace;

/// A steps-to-target study's protocol: what its config fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetProtocol {
    /// Every workload, in the config's order.
    pub workloads: Vec<WorkloadProtocol>,
    /// Whether every batch size draws the same quasi-random points (else each workload and
    /// batch size scrambles its own).
    pub shared_points: bool,
    /// Seeds the points.
    pub seed: u64,
    /// The refining stage's factor around the best first-stage trial, where there is one.
    pub refine_factor: Option<f64>,
    /// The validation error a trial stops at.
    pub target_error: f64,
    /// Where a trial also stops once beaten: `Some(factor)` (a factor at or below 1 stops it
    /// at another trial's evaluation step), `None` where beaten trials run on.
    pub beaten_factor: Option<f64>,
    /// The loss, as a multiple of the first, at which a trial is infeasible.
    pub divergence_factor: f64,
}

/// One workload's share of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadProtocol {
    /// The workload's label.
    pub label: String,
    /// First-stage trials per batch size.
    pub trials: usize,
    /// Refining trials per batch size (0 without a refining stage).
    pub refine_trials: usize,
    /// Its batch sizes.
    pub batch_sizes: Vec<u32>,
    /// The epochs a trial may train at most, where capped.
    pub max_epochs: Option<f64>,
    /// The steps a trial trains at least, where set.
    pub min_steps: Option<u64>,
    /// Its search space.
    pub space: SearchSpace,
}

impl SearchSpace {
    /// "label: learning rate log-uniform in [lo, hi]", with 1 - momentum where searched.
    pub fn words(&self, label: &str) -> String {
        let [lo, hi] = self.learning_rate;
        let mut text = format!("{label}: learning rate log-uniform in [{lo}, {hi}]");
        if let Some([lo, hi]) = self.one_minus_momentum {
            text.push_str(&format!(", 1 - momentum log-uniform in [{lo}, {hi}]"));
        }
        text
    }
}

impl TargetProtocol {
    /// The protocol in one line.
    pub fn words(&self) -> String {
        let trials: Vec<String> = self
            .workloads
            .iter()
            .map(|w| {
                let mut cap = w
                    .max_epochs
                    .map_or(String::new(), |e| format!(" (at most {e} epochs)"));
                if let Some(m) = w.min_steps {
                    cap.push_str(&format!(" (at least {m} steps)"));
                }
                let refine = match w.refine_trials {
                    0 => String::new(),
                    n => format!(" + {n} refining"),
                };
                format!(
                    "{}: {}{refine} x {:?}{cap}",
                    w.label, w.trials, w.batch_sizes
                )
            })
            .collect();
        let beaten = match self.beaten_factor {
            None => String::new(),
            Some(f) if f > 1.0 => format!("; a trial also stops once it has trained {f} x the steps at which another trial of its batch size reached the target (it can no longer lower steps to result; right-censored there)"),
            Some(_) => "; a trial also stops once another trial of its batch size has reached the target at an earlier or equal evaluation step (it can no longer lower steps to result; right-censored there)".into(),
        };
        let points = if self.shared_points {
            format!("quasi-random trials (scrambled Halton, seed {}; the same points at every batch size)", self.seed)
        } else {
            format!(
                "quasi-random trials (scrambled Halton, seed {}, scrambled anew for every workload and batch size)",
                self.seed
            )
        };
        let refine = self.refine_factor.map_or(String::new(), |factor| {
            format!(
                "; then refining trials, drawn the same way from a box of the best first-stage trial's learning rate (and 1 - momentum) divided and multiplied by {factor} (cut to the space), the best being the fewest steps to the target, else the lowest validation error; they start once their cell's first stage has finished"
            )
        });
        let spaces: Vec<String> = self
            .workloads
            .iter()
            .map(|w| w.space.words(&w.label))
            .collect();
        format!(
            "{points} per batch size, for each workload in order: {}; {}{refine}; each trial stops when its validation error is at or below {} or its step budget is spent{beaten}; a loss that turns non-finite or exceeds {}x the first loss makes the trial infeasible; trials run in shuffled order",
            trials.join(", "),
            spaces.join("; "),
            self.target_error,
            self.divergence_factor
        )
    }
}
