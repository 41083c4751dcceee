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
//! it from the spacing of the lowest ones. Differences between two cells take the difference
//! of their intervals' ends (both 95%, so at least 90% together): conservative.

use batchlab_method::findings::Outcome;

use crate::numbers::fixed;
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::scaling::{spreads_below_best, upper_rank, LEVEL};
use crate::steps_to_target::steps::TrialOutcome;

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
            })
        })
        .collect()
}

/// Points of error (percent), two decimals.
fn points(e: f64) -> String {
    if e.is_finite() {
        fixed(100.0 * e, 2)
    } else {
        "∞".into()
    }
}

/// "12.34% (11.90–13.02%) at 16", per cell.
pub(super) fn cells_text(cells: &[BestError]) -> String {
    let parts: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "{}: {}% ({}–{}%, {} trials{})",
                c.batch_size,
                points(c.best),
                points(c.interval.0),
                points(c.interval.1),
                c.trials,
                c.test_error
                    .map_or(String::new(), |t| format!("; test {}%", points(t)))
            )
        })
        .collect();
    if parts.is_empty() {
        "no ok trial".into()
    } else {
        parts.join("; ")
    }
}

/// No degradation: every batch size's best error is within `margin` (a fraction of error)
/// of the smallest batch size's. Compared by the worst and best cases of the two intervals.
pub(super) fn judge_no_degradation(cells: &[BestError], margin: f64) -> Outcome {
    let Some((first, rest)) = cells.split_first() else {
        return Outcome::cannot_test("no batch size with an ok trial");
    };
    if rest.is_empty() {
        return Outcome::cannot_test("one batch size with an ok trial: nothing to compare");
    }
    // (batch, worst case, best case) of each degradation against the smallest batch size.
    let diffs: Vec<(u32, f64, f64)> = rest
        .iter()
        .map(|c| {
            (
                c.batch_size,
                c.interval.1 - first.interval.0,
                c.interval.0 - first.interval.1,
            )
        })
        .collect();
    let m = points(margin);
    if let Some((b, _, d)) = diffs.iter().find(|(_, _, d)| *d > margin) {
        return Outcome::does_not_reproduce(format!(
            "at batch {b} the best error is worse than at {} by at least {} points, beyond the margin of {m}",
            first.batch_size,
            points(*d)
        ));
    }
    let (b, worst, _) = diffs
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("rest is not empty");
    if worst <= margin {
        Outcome::reproduces_with(format!(
            "every batch size within {m} points of batch {}'s best error",
            first.batch_size
        ))
    } else {
        Outcome::inconclusive(format!(
            "a degradation of up to {} points at batch {b} is within the intervals, against a margin of {m}",
            points(worst)
        ))
    }
}

/// Extra regularization crucial at the largest batch size both workloads have: the gain
/// `versus`'s best error − `w`'s (the regularized one's) exceeds `margin`.
pub(super) fn judge_regularization(w: &[BestError], versus: &[BestError], margin: f64) -> Outcome {
    let Some((with, without)) = w
        .iter()
        .rev()
        .find_map(|c| Some((c, versus.iter().find(|v| v.batch_size == c.batch_size)?)))
    else {
        return Outcome::cannot_test("no batch size with ok trials of both workloads");
    };
    let low = without.interval.0 - with.interval.1;
    let high = without.interval.1 - with.interval.0;
    let gain = format!(
        "at batch {}: a gain of {} points ({} to {})",
        with.batch_size,
        points(without.best - with.best),
        points(low),
        points(high)
    );
    if low > margin {
        Outcome::reproduces_with(gain)
    } else if high < margin {
        Outcome::does_not_reproduce(format!(
            "{gain}, below the margin of {} points",
            points(margin)
        ))
    } else {
        Outcome::inconclusive(format!(
            "{gain}: the interval straddles the margin of {} points",
            points(margin)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlab_method::findings::Verdict::*;

    fn cell(batch_size: u32, best: f64, half: f64) -> BestError {
        BestError {
            batch_size,
            trials: 32,
            best,
            interval: (best - half, best + half),
            chosen: format!("t{batch_size}"),
            test_error: None,
        }
    }

    #[test]
    fn no_degradation_by_the_worst_and_best_cases() {
        let flat = [
            cell(16, 0.11, 0.002),
            cell(256, 0.112, 0.002),
            cell(4096, 0.113, 0.002),
        ];
        assert_eq!(judge_no_degradation(&flat, 0.01).verdict(), Reproduces);
        let worse = [cell(16, 0.11, 0.002), cell(4096, 0.14, 0.002)];
        assert_eq!(
            judge_no_degradation(&worse, 0.01).verdict(),
            DoesNotReproduce
        );
        let wide = [cell(16, 0.11, 0.01), cell(4096, 0.115, 0.01)];
        assert_eq!(judge_no_degradation(&wide, 0.01).verdict(), Inconclusive);
        assert_eq!(judge_no_degradation(&flat[..1], 0.01).verdict(), CannotTest);
    }

    #[test]
    fn regularization_is_judged_at_the_largest_shared_batch_size() {
        let with = [cell(16, 0.11, 0.002), cell(4096, 0.12, 0.002)];
        let without = [cell(16, 0.11, 0.002), cell(4096, 0.14, 0.002)];
        assert_eq!(
            judge_regularization(&with, &without, 0.01).verdict(),
            Reproduces
        );
        assert_eq!(
            judge_regularization(&with, &with, 0.01).verdict(),
            DoesNotReproduce
        );
        let close = [cell(16, 0.11, 0.002), cell(4096, 0.131, 0.005)];
        assert_eq!(
            judge_regularization(&with, &close, 0.01).verdict(),
            Inconclusive
        );
    }
}
