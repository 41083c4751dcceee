//! The trials of a grid, their step budgets and evaluation points.

use batchlab_datasets::DataConfig;
use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};

use super::budget::Budget;
use super::config::{GridConfig, TrainConfig};
use crate::{optim::label, trial::TrialLabels};

/// One training run of the grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trial {
    /// `b{batch}-{optimizer}-{variant}-{budget}-s{seed}`: unique, stable across runs.
    pub id: String,
    /// Seeds initialisation, shuffles and random augmentation.
    pub seed: u64,
    /// The batch size.
    pub batch_size: u32,
    /// Index into `[[optimizers]]`.
    pub optimizer: usize,
    /// The optimizer's label.
    pub optimizer_label: String,
    /// The variant's label.
    pub variant: String,
    /// The budget.
    pub budget: Budget,
}

impl Trial {
    /// How the trial is named in the result rows.
    pub fn labels(&self) -> TrialLabels {
        TrialLabels {
            id: self.id.clone(),
            seed: self.seed,
            batch_size: self.batch_size,
            optimizer: self.optimizer_label.clone(),
            variant: self.variant.clone(),
            budget: self.budget,
        }
    }
}

/// Every trial, in a seeded shuffled order.
pub fn trials(config: &TrainConfig, variants: &[(String, DataConfig)]) -> Vec<Trial> {
    let g = &config.grid;
    let budgets: &[Budget] = if g.steps_matched {
        &[Budget::Epochs, Budget::Steps]
    } else {
        &[Budget::Epochs]
    };
    let mut trials = Vec::new();
    for &batch_size in &g.batch_sizes {
        for (optimizer, o) in config.optimizers.iter().enumerate() {
            for (variant, _) in variants {
                for &budget in budgets {
                    for &seed in &g.seeds {
                        let optimizer_label = label(o);
                        trials.push(Trial {
                            id: format!(
                                "b{batch_size}-{optimizer_label}-{variant}-{}-s{seed}",
                                budget.as_str()
                            ),
                            seed,
                            batch_size,
                            optimizer,
                            optimizer_label,
                            variant: variant.clone(),
                            budget,
                        });
                    }
                }
            }
        }
    }
    trials.shuffle(&mut StdRng::seed_from_u64(g.order_seed));
    trials
}

/// Optimizer steps in one epoch of `examples` at `batch_size`.
pub fn steps_per_epoch(examples: usize, batch_size: u32, drop_last: bool) -> u64 {
    let b = batch_size as usize;
    (if drop_last {
        examples / b
    } else {
        examples.div_ceil(b)
    }) as u64
}

impl Trial {
    /// The trial's total steps on a training set of `examples`.
    pub fn total_steps(&self, grid: &GridConfig, examples: usize) -> u64 {
        match self.budget {
            Budget::Epochs => {
                grid.epochs as u64 * steps_per_epoch(examples, self.batch_size, grid.drop_last)
            }
            Budget::Steps => grid.steps.unwrap_or_else(|| {
                let smallest = *grid.batch_sizes.iter().min().expect("validated non-empty");
                grid.epochs as u64 * steps_per_epoch(examples, smallest, grid.drop_last)
            }),
        }
    }
}

/// The steps after which a trial of `total` steps is evaluated: every `grid.evaluate_every`
/// steps and at the end, or `grid.evaluations` (default one per epoch of the epoch budget)
/// evenly spaced points.
pub fn evaluation_plan(grid: &GridConfig, total: u64) -> Vec<u64> {
    match grid.evaluate_every {
        Some(every) => {
            let mut steps: Vec<u64> = (1..=total / every).map(|k| k * every).collect();
            if steps.last() != Some(&total) {
                steps.push(total);
            }
            steps
        }
        None => evaluation_steps(total, grid.evaluations.unwrap_or(grid.epochs)),
    }
}

/// `count` evenly spaced steps ending at `total` (for the epoch budget with one evaluation per
/// epoch, the epoch ends).
pub fn evaluation_steps(total: u64, count: usize) -> Vec<u64> {
    let mut steps: Vec<u64> = (1..=count as u64)
        .map(|k| (total * k).div_ceil(count as u64))
        .filter(|&s| s > 0)
        .collect();
    steps.dedup();
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_reads_from_its_name_and_refuses_others() {
        #[derive(serde::Deserialize)]
        struct Claim {
            budget: Budget,
        }
        let read = |text: &str| toml::from_str::<Claim>(text).map(|c| c.budget);
        assert_eq!(read("budget = \"steps\"").unwrap(), Budget::Steps);
        assert_eq!(read("budget = \"epochs\"").unwrap(), Budget::Epochs);
        let err = read("budget = \"weeks\"").err().unwrap().to_string();
        assert!(
            err.contains("expected \"epochs\" or \"steps\", got \"weeks\""),
            "{err}"
        );
    }

    #[test]
    fn epoch_budgets_give_large_batches_fewer_steps_and_evaluations_fall_on_epoch_ends() {
        // Seed 003's setup: 1,200 training images, 5 epochs: 375 steps at 16, 20 at 256.
        assert_eq!(5 * steps_per_epoch(1_200, 16, false), 375);
        assert_eq!(5 * steps_per_epoch(1_200, 256, false), 25);
        assert_eq!(5 * steps_per_epoch(1_200, 256, true), 20);
        assert_eq!(evaluation_steps(375, 5), vec![75, 150, 225, 300, 375]);
        assert_eq!(evaluation_steps(3, 5), vec![1, 2, 3]);
    }
}
