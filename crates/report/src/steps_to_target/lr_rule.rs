//! Whether the best learning rate follows a simple rule in the batch size (seed 004's
//! conclusion 3), judged from the region of near-best settings at each batch size rather than
//! from the single best trial.
//!
//! At each batch size, the **near-best region** is the range of effective learning rates
//! (lr / (1 − momentum); lr alone without momentum) of the trials that reached the target
//! within the upper end of the cell's 95% interval of steps to result: the settings another
//! search as large could have found best. A region whose trials come within
//! [`EDGE_SHARE`] of a bound of the searched space is **open** on that side: the best setting
//! may lie outside the space. A simple rule is a power law, lr_eff ∝ B^k, a straight line in
//! log-log; it fits when one line passes through every region (an open side constrains
//! nothing). The verdict: no line of any slope passes (reproduces: no power law, the simplest
//! rule, holds at every batch size); lines pass but none of slope 1 (partly: linear scaling
//! fails, a power law does not); lines of slope 1 and of slope 0.5 both pass (inconclusive: the
//! regions are too wide to tell a rule from another); otherwise lines of slope 1 pass and the
//! claim does not reproduce for this workload.

use batchlab_method::findings::Outcome;

use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::steps::TrialOutcome;

/// The share of the searched log-range at each end whose settings count as on its edge.
pub const EDGE_SHARE: f64 = 0.1;

/// Slopes the search for fitting lines considers, in log-log (a rule beyond them is no rule).
const SLOPES: (f64, f64) = (-3.0, 3.0);

/// The searched space of one workload: learning rate and, where searched, 1 − momentum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchSpace {
    /// Learning rate bounds.
    pub learning_rate: [f64; 2],
    /// 1 − momentum bounds, where momentum is searched.
    pub one_minus_momentum: Option<[f64; 2]>,
}

/// The near-best effective learning rates at one batch size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateRegion {
    /// Training examples per step.
    pub batch_size: u32,
    /// Lowest near-best effective learning rate.
    pub low: f64,
    /// Highest near-best effective learning rate.
    pub high: f64,
    /// Near-best trials.
    pub trials: usize,
    /// Whether the region reaches the searched space's low edge (the best may lie below).
    pub open_low: bool,
    /// Whether it reaches the high edge (the best may lie above).
    pub open_high: bool,
}

/// Where `x` lies in `[lo, hi]` on a log scale, 0 to 1.
fn log_share(x: f64, [lo, hi]: [f64; 2]) -> f64 {
    (x.ln() - lo.ln()) / (hi.ln() - lo.ln())
}

/// The near-best region at each batch size with steps to result (see the module).
pub(super) fn regions(w: &Workload, space: Option<&SearchSpace>) -> Vec<RateRegion> {
    let iv = &w.intervals;
    let mut out = vec![];
    for (k, &b) in iv.batch_sizes.iter().enumerate() {
        let bound = iv.intervals[k].1;
        let near: Vec<_> = w
            .trials
            .iter()
            .filter(|t| f64::from(t.batch_size) == b)
            .filter(|t| matches!(t.outcome, Some(TrialOutcome::Reached(s)) if (s as f64) <= bound))
            .filter_map(|t| t.search.as_ref())
            .filter(|s| s.effective_learning_rate > 0.0)
            .collect();
        if near.is_empty() {
            continue;
        }
        let rates = near.iter().map(|s| s.effective_learning_rate);
        let low = rates.clone().fold(f64::INFINITY, f64::min);
        let high = rates.fold(0.0, f64::max);
        let (mut open_low, mut open_high) = (false, false);
        if let Some(space) = space {
            for s in &near {
                let lr = log_share(s.learning_rate, space.learning_rate);
                // A low 1 − momentum (momentum near 1) raises the effective rate.
                let om = space
                    .one_minus_momentum
                    .map(|r| log_share(1.0 - s.momentum, r));
                open_low |= lr <= EDGE_SHARE || om.is_some_and(|o| o >= 1.0 - EDGE_SHARE);
                open_high |= lr >= 1.0 - EDGE_SHARE || om.is_some_and(|o| o <= EDGE_SHARE);
            }
        }
        out.push(RateRegion {
            batch_size: b as u32,
            low,
            high,
            trials: near.len(),
            open_low,
            open_high,
        });
    }
    out
}

/// Whether a line of slope `k` through log(rate) against log(batch size) passes through every
/// region (open sides constrain nothing).
fn fits(regions: &[RateRegion], k: f64) -> bool {
    let (mut from, mut to) = (f64::NEG_INFINITY, f64::INFINITY);
    for r in regions {
        let x = f64::from(r.batch_size).ln();
        if !r.open_low {
            from = from.max(r.low.ln() - k * x);
        }
        if !r.open_high {
            to = to.min(r.high.ln() - k * x);
        }
    }
    from <= to + 1e-9
}

/// The range of slopes whose lines pass through every region, searched in steps of 0.01 over
/// [`SLOPES`]; `None` when none does.
pub fn fitting_slopes(regions: &[RateRegion]) -> Option<(f64, f64)> {
    let steps = ((SLOPES.1 - SLOPES.0) / 0.01).round() as usize;
    let ks: Vec<f64> = (0..=steps)
        .map(|i| SLOPES.0 + 0.01 * i as f64)
        .filter(|&k| fits(regions, k))
        .collect();
    Some((*ks.first()?, *ks.last()?))
}

/// The verdict of the claim that the best learning rate follows no simple rule.
pub(super) fn judge(regions: &[RateRegion]) -> Outcome {
    if regions.len() < 3 {
        return Outcome::cannot_test(format!(
            "{} batch sizes with near-best trials; a rule needs 3 to be tested",
            regions.len()
        ));
    }
    match fitting_slopes(regions) {
        None => Outcome::reproduces_with(
            "no power law passes through every batch size's near-best region".to_string(),
        ),
        Some(_) if !fits(regions, 1.0) => Outcome::partly(format!(
            "linear scaling misses a batch size's near-best region, but power laws of slope {} fit every one",
            slopes_text(regions)
        )),
        Some(_) if fits(regions, 0.5) => Outcome::inconclusive(format!(
            "power laws of slope {} fit every near-best region, linear and square-root scaling alike: the regions are too wide to tell a rule from another",
            slopes_text(regions)
        )),
        Some(_) => Outcome::does_not_reproduce(format!(
            "linear scaling passes through every batch size's near-best region (slopes {} fit)",
            slopes_text(regions)
        )),
    }
}

/// "0.62 to 1.10", or "none".
pub(super) fn slopes_text(regions: &[RateRegion]) -> String {
    fitting_slopes(regions).map_or("none".into(), |(a, b)| format!("{a:.2} to {b:.2}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlab_method::findings::Verdict::*;

    /// Regions around rate = c · B^k, ±`width` in log, none open.
    fn law(k: f64, width: f64, bend_at_end: f64) -> Vec<RateRegion> {
        [16u32, 64, 256, 1024, 4096]
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let centre = 0.01 * f64::from(b).powf(k) * if i == 4 { bend_at_end } else { 1.0 };
                RateRegion {
                    batch_size: b,
                    low: centre * (-width).exp(),
                    high: centre * width.exp(),
                    trials: 5,
                    open_low: false,
                    open_high: false,
                }
            })
            .collect()
    }

    #[test]
    fn the_verdict_follows_which_lines_pass_through_the_regions() {
        assert_eq!(judge(&law(1.0, 0.2, 1.0)).verdict(), DoesNotReproduce);
        assert_eq!(judge(&law(0.5, 0.2, 1.0)).verdict(), Partly);
        // A rate that stops growing at the largest batch size: no power law.
        assert_eq!(judge(&law(1.0, 0.2, 0.05)).verdict(), Reproduces);
        // Regions wider than the difference between the rules.
        assert_eq!(judge(&law(0.75, 3.0, 1.0)).verdict(), Inconclusive);
        assert_eq!(judge(&law(1.0, 0.2, 1.0)[..2]).verdict(), CannotTest);
        let (a, b) = fitting_slopes(&law(1.0, 0.2, 1.0)).unwrap();
        assert!(a < 1.0 && 1.0 < b && b - a < 0.2, "{a} {b}");
    }

    #[test]
    fn an_open_side_constrains_nothing() {
        let mut bent = law(1.0, 0.2, 0.05);
        // The largest batch size's near-best settings reach the space's high edge: the rate
        // that stopped growing may be the space's doing, and the line may pass above.
        bent[4].open_high = true;
        assert_eq!(judge(&bent).verdict(), DoesNotReproduce);
    }
}
