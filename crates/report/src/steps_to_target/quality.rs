//! Solution quality: the best final validation error each batch size's search reaches, with
//! where another search of as many trials would find its best, and the claims about it
//! (seed 004: no degradation at large batch sizes once metaparameters are tuned; extra
//! regularization crucial at very large ones).
//!
//! A cell's **best error** is the lowest validation error at the last evaluation of its `ok`
//! trials (a diverged trial never is); the **chosen trial** is that trial, and its test error
//! (where the run evaluated the test split) is the one reported, chosen on validation alone.
//! The interval is the rank law of `scaling::rerun`, which holds for any quantity a search
//! minimises: above the best exact from the trials' ranks (diverged trials ranked last), below
//! it from the spacing of the lowest ones. A difference between two cells has the interval of
//! the difference of two other searches' bests, each drawn from its own cell's law on its own
//! random stream ([`difference`]): the two searches are independent, so are their draws.

use batchlab_method::stats::quantile_sorted;
use batchlab_method::tests_of_claims::Decision;
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::scaling::{spreads_below_best, upper_rank, BestOfN, LEVEL};
use crate::steps_to_target::steps::TrialOutcome;

/// Draws of each difference: its 2.5% and 97.5% points move by well under a tenth of a point
/// of error between seeds at this count.
const DIFFERENCE_DRAWS: usize = 4000;

/// The best final validation error of one (workload, batch size).
#[derive(Debug, Clone, PartialEq)]
pub struct BestError {
    /// Training examples per step.
    pub batch_size: u32,
    /// Trials with an outcome (ok with evaluations, or diverged).
    pub trials: usize,
    /// The lowest final validation error.
    pub best: f64,
    /// Where another search's best would land (95%).
    pub interval: (f64, f64),
    /// The chosen trial and its test error, where measured.
    pub chosen: String,
    /// Test error of the chosen trial's final model.
    pub test_error: Option<f64>,
    /// Another search's best final error, as a law to draw from.
    pub law: BestOfN,
    /// This cell's own random stream (its workload's and batch size's).
    pub stream: u64,
}

/// The central interval (at [`LEVEL`]) of another search's best at `a` minus another's at `b`,
/// each drawn on its cell's own stream; a draw with no ok trial is an infinite error. Draws
/// where both are infinite say nothing and are left out.
pub(super) fn difference(a: &BestError, b: &BestError) -> (f64, f64) {
    let (mut ra, mut rb) = (
        StdRng::seed_from_u64(a.stream),
        StdRng::seed_from_u64(b.stream),
    );
    let mut diffs: Vec<f64> = (0..DIFFERENCE_DRAWS)
        .map(|_| a.law.sample(&mut ra).high() - b.law.sample(&mut rb).high())
        .filter(|d| !d.is_nan())
        .collect();
    if diffs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    diffs.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    (
        quantile_sorted(&diffs, tail),
        quantile_sorted(&diffs, 1.0 - tail),
    )
}

/// A cell's stream: its workload's, and its batch size within it.
fn cell_stream(workload: u64, batch_size: u32) -> u64 {
    workload
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(u64::from(batch_size))
}

/// The best error of each batch size of `w` with an ok trial.
pub(super) fn best_errors(w: &Workload) -> Vec<BestError> {
    let mut sizes: Vec<u32> = w.trials.iter().map(|t| t.batch_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let tail = (1.0 - LEVEL) / 2.0;
    sizes
        .into_iter()
        .filter_map(|b| {
            let cell: Vec<_> = w.trials.iter().filter(|t| t.batch_size == b).collect();
            let n = cell
                .iter()
                .filter(|t| t.final_error.is_some() || t.outcome == Some(TrialOutcome::Infeasible))
                .count();
            let mut ok: Vec<_> = cell
                .iter()
                .filter_map(|t| Some((t.final_error?, *t)))
                .collect();
            ok.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (best, chosen) = *ok.first()?;
            let values: Vec<f64> = ok.iter().map(|x| x.0).collect();
            let law = BestOfN::of_values(&values, n - ok.len(), 0.0);
            let top = upper_rank(n, tail);
            let high = ok.get(top - 1).map_or(f64::INFINITY, |x| x.0);
            let k = top.min(ok.len());
            let low = spreads_below_best(tail, k)
                .map_or(0.0, |t| (best - t * (ok[k - 1].0 - best)).max(0.0));
            Some(BestError {
                batch_size: b,
                trials: n,
                best,
                interval: (low, high),
                chosen: chosen.id.clone(),
                test_error: chosen.test_error,
                law,
                stream: cell_stream(w.stream, b),
            })
        })
        .collect()
}

/// No degradation of the best error with batch size, decided against the margin (a fraction
/// of error) from the interval of each batch size's difference from the smallest's
/// ([`difference`]); `words` words it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum NoDegradation {
    /// Fewer than two batch sizes with an ok trial (how many): nothing to compare.
    TooFew(usize),
    /// The first batch size whose difference from the smallest (`first`) lies wholly above the
    /// margin, with that difference's interval.
    Worse {
        first: u32,
        batch: u32,
        low: f64,
        high: f64,
    },
    /// Every difference's interval lies below the margin.
    Within { first: u32 },
    /// Neither: the highest top of a difference's interval, and its batch size.
    Open { batch: u32, worst: f64 },
}

/// No degradation: every batch size's best error is within `margin` (a fraction of error)
/// of the smallest batch size's, judged by the interval of each difference ([`difference`]).
pub(super) fn no_degradation(cells: &[BestError], margin: f64) -> NoDegradation {
    let (first, rest) = match cells.split_first() {
        Some((first, rest)) if !rest.is_empty() => (first, rest),
        _ => return NoDegradation::TooFew(cells.len()),
    };
    // (batch, interval) of each degradation against the smallest batch size.
    let diffs: Vec<(u32, (f64, f64))> = rest
        .iter()
        .map(|c| (c.batch_size, difference(c, first)))
        .collect();
    if let Some(&(batch, (low, high))) = diffs.iter().find(|(_, (low, _))| *low > margin) {
        return NoDegradation::Worse {
            first: first.batch_size,
            batch,
            low,
            high,
        };
    }
    let (batch, (_, worst)) = diffs
        .iter()
        .copied()
        .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
        .expect("rest is not empty");
    if worst <= margin {
        NoDegradation::Within {
            first: first.batch_size,
        }
    } else {
        NoDegradation::Open { batch, worst }
    }
}

/// Extra regularization crucial at the largest batch size both workloads have, decided: the
/// gain `versus`'s best error − `w`'s (the regularized one's), its interval, and whether that
/// interval lies above the margin (shown), below it (refuted) or across it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Regularization {
    /// No batch size with ok trials of both workloads.
    NoSharedBatch,
    /// The gain at the largest shared batch size.
    Gain {
        batch: u32,
        gain: f64,
        low: f64,
        high: f64,
        decided: Decision,
    },
}

/// Extra regularization crucial at the largest batch size both workloads have: the gain
/// `versus`'s best error − `w`'s (the regularized one's) exceeds `margin`.
pub(super) fn regularization(w: &[BestError], versus: &[BestError], margin: f64) -> Regularization {
    let Some((with, without)) = w
        .iter()
        .rev()
        .find_map(|c| Some((c, versus.iter().find(|v| v.batch_size == c.batch_size)?)))
    else {
        return Regularization::NoSharedBatch;
    };
    let (low, high) = difference(without, with);
    let decided = if low > margin {
        Decision::Shown
    } else if high < margin {
        Decision::Refuted
    } else {
        Decision::Open
    };
    Regularization::Gain {
        batch: with.batch_size,
        gain: without.best - with.best,
        low,
        high,
        decided,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell of 32 trials whose final errors run evenly from `best` to `best + 31 step`, on
    /// its own stream.
    fn cell(batch_size: u32, best: f64, step: f64) -> BestError {
        let values: Vec<f64> = (0..32).map(|i| best + step * f64::from(i)).collect();
        BestError {
            batch_size,
            trials: 32,
            best,
            interval: (best, best + step),
            chosen: format!("t{batch_size}"),
            test_error: None,
            law: BestOfN::of_values(&values, 0, 0.0),
            stream: u64::from(batch_size) + (1000.0 * best) as u64,
        }
    }

    #[test]
    fn no_degradation_by_the_interval_of_each_difference() {
        let flat = [
            cell(16, 0.11, 0.0005),
            cell(256, 0.112, 0.0005),
            cell(4096, 0.113, 0.0005),
        ];
        assert_eq!(
            no_degradation(&flat, 0.01),
            NoDegradation::Within { first: 16 }
        );
        let worse = [cell(16, 0.11, 0.0005), cell(4096, 0.14, 0.0005)];
        assert!(matches!(
            no_degradation(&worse, 0.01),
            NoDegradation::Worse { batch: 4096, low, .. } if low > 0.01
        ));
        let wide = [cell(16, 0.11, 0.005), cell(4096, 0.115, 0.005)];
        assert!(matches!(
            no_degradation(&wide, 0.01),
            NoDegradation::Open { batch: 4096, worst } if worst > 0.01
        ));
        assert_eq!(no_degradation(&flat[..1], 0.01), NoDegradation::TooFew(1));
    }

    #[test]
    fn regularization_is_judged_at_the_largest_shared_batch_size() {
        let with = [cell(16, 0.11, 0.0005), cell(4096, 0.12, 0.0005)];
        let without = [cell(16, 0.11, 0.0005), cell(4096, 0.14, 0.0005)];
        let decided = |versus: &[BestError]| match regularization(&with, versus, 0.01) {
            Regularization::Gain { batch, decided, .. } => {
                assert_eq!(batch, 4096);
                decided
            }
            Regularization::NoSharedBatch => panic!("4096 is shared"),
        };
        assert_eq!(decided(&without), Decision::Shown);
        assert_eq!(decided(&with), Decision::Refuted);
        let close = [cell(16, 0.11, 0.0005), cell(4096, 0.131, 0.002)];
        assert_eq!(decided(&close), Decision::Open);
        assert_eq!(
            regularization(&with, &[], 0.01),
            Regularization::NoSharedBatch
        );
    }

    #[test]
    fn a_difference_draws_each_cell_on_its_own_stream() {
        // Two cells with the same trials: on one shared stream every draw would be equal and
        // the difference's interval a point at zero; on their own streams it spreads both ways.
        let (a, b) = (cell(16, 0.11, 0.001), cell(32, 0.11, 0.001));
        let (low, high) = difference(&a, &b);
        assert!(low < -0.001 && high > 0.001, "{low} {high}");
        assert!((low + high).abs() < 0.001, "symmetric: {low} {high}");
    }
}
