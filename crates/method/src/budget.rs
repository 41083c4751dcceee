//! When a steps-to-target trial is evaluated and how long it may train: one definition for
//! the runner, which follows it, and the report, which states it.
//!
//! - **The step budget** of a trial at batch size B is `max_steps`, or fewer when
//!   `max_epochs` is set: at most ceil(max_epochs x N / B) steps over N training examples.
//!   A fixed step budget that lets small batches reach the target makes large batches train
//!   for many epochs when they miss; an epoch cap bounds the cost of a missed trial by the
//!   examples it sees, which is what a CPU pays for. An epoch cap leaves the largest batch
//!   sizes few steps, though, and a cap below the steps their neighbours needed decides the
//!   answer (nothing reaches because nothing could): `min_steps` is a floor under the epoch
//!   cap, so the budget is max(min_steps, min(max_steps, ceil(max_epochs x N / B))).
//! - **Evaluation steps** start at K (`evaluate_every`) and go on every K steps until the
//!   spacing reaches `growth - 1` of the step count, then grow geometrically: s(i+1) =
//!   max(s(i) + K, ceil(s(i) x growth)). Steps to result are read at these steps, so a
//!   value S is known to within the spacing below it: K steps while S <= K / (growth - 1),
//!   a fraction (growth - 1) of S above. On log axes that is the same resolution at every
//!   batch size, while a fixed K costs thousands of evaluations at small batch sizes (tens
//!   of thousands of steps) or leaves the large ones (tens of steps) unresolved. The last
//!   step of the budget is always evaluated. growth = 1 is the fixed grid every K steps.

use crate::TargetError;

/// A steps-to-target study's evaluation schedule and step budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepBudget {
    /// The first evaluation step and the smallest spacing (K).
    pub evaluate_every: u64,
    /// Factor by which spacing grows once it is below `growth - 1` of the step; 1 = fixed K.
    pub growth: f64,
    /// The most steps a trial trains.
    pub max_steps: u64,
    /// The most epochs a trial trains, if capped.
    pub max_epochs: Option<f64>,
    /// Training examples (N), for the epoch cap.
    pub train_examples: u64,
    /// The fewest steps a trial trains whatever the epoch cap says (0: no floor).
    pub min_steps: u64,
}

impl StepBudget {
    /// Checks the values, naming the first one out of its domain.
    pub fn new(
        evaluate_every: u64,
        growth: f64,
        max_steps: u64,
        max_epochs: Option<f64>,
        train_examples: u64,
    ) -> Result<Self, TargetError> {
        if evaluate_every == 0 {
            return Err(TargetError::argument("evaluate_every", 0, "at least 1"));
        }
        if !(growth >= 1.0 && growth.is_finite()) {
            return Err(TargetError::argument("growth", growth, "a number >= 1"));
        }
        if max_steps == 0 {
            return Err(TargetError::argument("max_steps", 0, "at least 1"));
        }
        if let Some(e) = max_epochs {
            if !(e > 0.0 && e.is_finite()) {
                return Err(TargetError::argument("max_epochs", e, "a number above 0"));
            }
        }
        Ok(Self {
            evaluate_every,
            growth,
            max_steps,
            max_epochs,
            train_examples,
            min_steps: 0,
        })
    }

    /// The same budget with a floor of `min_steps` under the epoch cap (at most `max_steps`).
    pub fn with_min_steps(self, min_steps: u64) -> Result<Self, TargetError> {
        if min_steps > self.max_steps {
            return Err(TargetError::argument(
                "min_steps",
                min_steps,
                "at most max_steps",
            ));
        }
        Ok(Self { min_steps, ..self })
    }

    /// The most steps a trial at `batch_size` trains (at least 1).
    pub fn steps(&self, batch_size: u32) -> u64 {
        let by_epochs = self.max_epochs.map_or(u64::MAX, |e| {
            (e * self.train_examples as f64 / f64::from(batch_size.max(1))).ceil() as u64
        });
        self.max_steps.min(by_epochs).max(self.min_steps).max(1)
    }

    /// The steps at which a trial at `batch_size` is evaluated, increasing, ending with its
    /// budget.
    pub fn evaluation_steps(&self, batch_size: u32) -> Vec<u64> {
        let budget = self.steps(batch_size);
        let mut steps = Vec::new();
        let mut s = self.evaluate_every;
        while s < budget {
            steps.push(s);
            let grown = (s as f64 * self.growth).ceil() as u64;
            s = (s + self.evaluate_every).max(grown);
        }
        steps.push(budget);
        steps
    }

    /// The evaluation step just below `steps` (0 if none): steps to result S means the
    /// target was first reached in (previous, S].
    pub fn previous_evaluation(&self, batch_size: u32, steps: u64) -> u64 {
        self.evaluation_steps(batch_size)
            .into_iter()
            .take_while(|&s| s < steps)
            .last()
            .unwrap_or(0)
    }

    /// The schedule and the budget in words, for the report.
    pub fn describe(&self) -> String {
        format!(
            "{} and at the end of the budget; {} per trial",
            self.evaluations_text(),
            self.limit_text()
        )
    }

    /// "checked every K steps ..." in words.
    pub fn evaluations_text(&self) -> String {
        let k = self.evaluate_every;
        if self.growth > 1.0 {
            let from = (k as f64 / (self.growth - 1.0)).ceil() as u64;
            format!(
                "checked every {k} steps up to about step {from}, then at steps {:.0}% apart (each the previous x {})",
                100.0 * (self.growth - 1.0),
                self.growth
            )
        } else {
            format!("checked every {k} steps")
        }
    }

    /// "at most S steps [or E epochs ...]" in words.
    pub fn limit_text(&self) -> String {
        let text = self.cap_text();
        if self.min_steps > 0 && self.max_epochs.is_some() {
            format!("{text}, but at least {} steps", self.min_steps)
        } else {
            text
        }
    }

    fn cap_text(&self) -> String {
        match self.max_epochs {
            Some(e) => format!(
                "at most {} steps or {e} epochs of the {} training examples, whichever is fewer",
                self.max_steps, self.train_examples
            ),
            None => format!("at most {} steps", self.max_steps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_grid_ends_with_the_budget() {
        let b = StepBudget::new(10, 1.0, 35, None, 1000).unwrap();
        assert_eq!(b.evaluation_steps(8), vec![10, 20, 30, 35]);
        let b = StepBudget::new(10, 1.0, 30, None, 1000).unwrap();
        assert_eq!(b.evaluation_steps(8), vec![10, 20, 30]);
    }

    #[test]
    fn spacing_grows_once_k_is_below_the_growth_fraction() {
        let b = StepBudget::new(5, 1.25, 100, None, 1000).unwrap();
        // Every 5 up to 20 (5 / 0.25), then x1.25 rounded up.
        assert_eq!(
            b.evaluation_steps(1),
            vec![5, 10, 15, 20, 25, 32, 40, 50, 63, 79, 99, 100]
        );
        assert_eq!(b.previous_evaluation(1, 32), 25);
        assert_eq!(b.previous_evaluation(1, 5), 0);
    }

    #[test]
    fn epoch_cap_bounds_large_batches_only() {
        let b = StepBudget::new(10, 1.1, 5000, Some(2.0), 1000).unwrap();
        assert_eq!(b.steps(1), 2000);
        assert_eq!(b.steps(16), 125);
        assert_eq!(b.steps(3), 667);
        assert_eq!(b.steps(4096), 1);
        let unbounded = StepBudget::new(10, 1.1, 5000, None, 1000).unwrap();
        assert_eq!(unbounded.steps(4096), 5000);
    }

    #[test]
    fn a_step_floor_lifts_the_epoch_cap_of_large_batches_only() {
        let b = StepBudget::new(10, 1.1, 5000, Some(2.0), 1000)
            .unwrap()
            .with_min_steps(300)
            .unwrap();
        assert_eq!(b.steps(1), 2000);
        assert_eq!(b.steps(16), 300);
        assert_eq!(*b.evaluation_steps(16).last().unwrap(), 300);
        assert!(b.limit_text().ends_with("but at least 300 steps"));
        let err = b.with_min_steps(6000).unwrap_err().to_string();
        assert!(err.starts_with("min_steps"), "{err}");
    }

    #[test]
    fn bad_values_are_named() {
        for (result, name) in [
            (StepBudget::new(0, 1.0, 10, None, 1), "evaluate_every"),
            (StepBudget::new(1, 0.9, 10, None, 1), "growth"),
            (StepBudget::new(1, 1.0, 0, None, 1), "max_steps"),
            (StepBudget::new(1, 1.0, 10, Some(0.0), 1), "max_epochs"),
        ] {
            assert!(result.unwrap_err().to_string().starts_with(name), "{name}");
        }
    }
}
