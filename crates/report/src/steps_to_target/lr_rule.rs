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
//! nothing). The verdict, on one standard for presence and absence (docs/ARCHITECTURE.md,
//! "Verdicts"), with the registry's factor `margin` as the departure that counts: no line of
//! any slope comes within `margin` of every region (reproduces: every power law, the simplest
//! rule, misses some batch size by more than the margin); lines do, but none of slope 1
//! (partly: linear scaling, the seed's example, fails by more than the margin; some power law
//! does not); a line of slope 1 keeps every region, closed on both sides, within `margin` of
//! it (does not reproduce: the data bound the best rate to linear scaling); otherwise
//! inconclusive (the regions are too wide or open to bound it either way).

use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::steps::TrialOutcome;
use serde::Serialize;

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

/// Whether one line of slope `k` through log(rate) against log(batch size) lies, at every
/// region, at or above `floor(region)` and at or below `ceiling(region)` (log values; `None`:
/// no constraint on that side).
fn a_line_passes(
    regions: &[RateRegion],
    k: f64,
    floor: impl Fn(&RateRegion) -> Option<f64>,
    ceiling: impl Fn(&RateRegion) -> Option<f64>,
) -> bool {
    let (mut from, mut to) = (f64::NEG_INFINITY, f64::INFINITY);
    for r in regions {
        let x = f64::from(r.batch_size).ln();
        if let Some(f) = floor(r) {
            from = from.max(f - k * x);
        }
        if let Some(c) = ceiling(r) {
            to = to.min(c - k * x);
        }
    }
    from <= to + 1e-9
}

/// Whether a line of slope `k` comes within a factor `margin` of every region (1: passes
/// through each; open sides constrain nothing).
fn fits(regions: &[RateRegion], k: f64, margin: f64) -> bool {
    let m = margin.ln();
    a_line_passes(
        regions,
        k,
        |r| (!r.open_low).then(|| r.low.ln() - m),
        |r| (!r.open_high).then(|| r.high.ln() + m),
    )
}

/// The range of slopes whose lines come within `margin` of every region (1: pass through
/// each), searched in steps of 0.01 over [`SLOPES`]; `None` when none does.
pub fn fitting_slopes(regions: &[RateRegion], margin: f64) -> Option<(f64, f64)> {
    let steps = ((SLOPES.1 - SLOPES.0) / 0.01).round() as usize;
    let ks: Vec<f64> = (0..=steps)
        .map(|i| SLOPES.0 + 0.01 * i as f64)
        .filter(|&k| fits(regions, k, margin))
        .collect();
    Some((*ks.first()?, *ks.last()?))
}

/// Whether a line of slope `k` keeps every region within a factor `margin` of it: each region
/// closed on both sides, and its low end at least line / margin and its high end at most
/// line x margin.
fn bounded(regions: &[RateRegion], k: f64, margin: f64) -> bool {
    let m = margin.ln();
    !regions.iter().any(|r| r.open_low || r.open_high)
        && a_line_passes(
            regions,
            k,
            |r| Some(r.high.ln() - m),
            |r| Some(r.low.ln() + m),
        )
}

/// The widest near-best region: one open on a side (the best rate may lie anywhere beyond
/// the searched space), else the one whose high / low factor is largest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Widest {
    /// The first region reaching the searched space's edge, by batch size.
    Open(u32),
    /// The factor high / low of the widest closed region, and its batch size.
    Span { factor: f64, batch: u32 },
}

/// The widest region, as the factor high / low and its batch size; an open one first.
fn widest(regions: &[RateRegion]) -> Widest {
    if let Some(r) = regions.iter().find(|r| r.open_low || r.open_high) {
        return Widest::Open(r.batch_size);
    }
    let r = regions
        .iter()
        .max_by(|a, b| (a.high / a.low).total_cmp(&(b.high / b.low)))
        .expect("three regions or more");
    Widest::Span {
        factor: r.high / r.low,
        batch: r.batch_size,
    }
}

/// The claim that the best learning rate follows no simple rule, decided (see the module).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum LrRule {
    /// Fewer than 3 batch sizes with near-best trials (how many).
    TooFew(usize),
    /// No power law comes within the margin of every region (reproduces).
    NoPowerLaw,
    /// Linear scaling misses a region by more than the margin, but power laws of these slopes
    /// come within it of every one (partly).
    NotLinear { slopes: (f64, f64) },
    /// A line of slope 1 keeps every region, closed, within the margin of it (does not
    /// reproduce).
    Linear,
    /// None of these: the regions are too wide or open to bound the rate either way.
    Open(Widest),
}

/// The claim that the best learning rate follows no simple rule, decided; `margin` is the
/// registry's factor within which a rate follows linear scaling.
pub(super) fn decide(regions: &[RateRegion], margin: f64) -> LrRule {
    if regions.len() < 3 {
        return LrRule::TooFew(regions.len());
    }
    match fitting_slopes(regions, margin) {
        None => LrRule::NoPowerLaw,
        Some(slopes) if !fits(regions, 1.0, margin) => LrRule::NotLinear { slopes },
        Some(_) if bounded(regions, 1.0, margin) => LrRule::Linear,
        Some(_) => LrRule::Open(widest(regions)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        use LrRule::*;
        assert_eq!(decide(&law(1.0, 0.2, 1.0), 2.0), Linear);
        assert!(matches!(
            decide(&law(0.5, 0.2, 1.0), 2.0),
            NotLinear { slopes: (a, b) } if a < 0.5 && 0.5 < b
        ));
        // A rate that stops growing at the largest batch size: no power law.
        assert_eq!(decide(&law(1.0, 0.2, 0.05), 2.0), NoPowerLaw);
        // Regions wider than the difference between the rules.
        assert!(matches!(
            decide(&law(0.75, 3.0, 1.0), 2.0),
            Open(Widest::Span { .. })
        ));
        assert_eq!(decide(&law(1.0, 0.2, 1.0)[..2], 2.0), TooFew(2));
        let (a, b) = fitting_slopes(&law(1.0, 0.2, 1.0), 1.0).unwrap();
        assert!(a < 1.0 && 1.0 < b && b - a < 0.2, "{a} {b}");
    }

    #[test]
    fn an_open_side_constrains_nothing() {
        let mut bent = law(1.0, 0.2, 0.05);
        // The largest batch size's near-best settings reach the space's high edge: the rate
        // that stopped growing may be the space's doing, and the line may pass above; but an
        // open region bounds nothing, so linear scaling is not shown either.
        bent[4].open_high = true;
        assert_eq!(decide(&bent, 2.0), LrRule::Open(Widest::Open(4096)));
    }

    #[test]
    fn linear_scaling_refutes_only_when_the_regions_bound_it_within_the_margin() {
        // Regions of x2.7 (±0.5 in log) around linear scaling: a line passes through them all,
        // but they reach beyond x1.5 of any line, so the data do not bound the rate to it.
        let wide = law(1.0, 0.5, 1.0);
        assert!(matches!(
            decide(&wide, 1.5),
            LrRule::Open(Widest::Span { factor, .. }) if (factor - 1f64.exp()).abs() < 1e-9
        ));
        // The same regions are within x2 of the line: bounded, the claim refuted.
        assert_eq!(decide(&wide, 2.0), LrRule::Linear);
    }

    #[test]
    fn a_departure_within_the_margin_is_no_departure() {
        // Narrow regions on linear scaling but the largest batch size's at x0.6: no line passes
        // through them all, yet linear scaling comes within x2 of each (and bounds them:
        // refuted); with a margin of x1.2 it misses, and a flatter power law does not (partly).
        let bent = law(1.0, 0.05, 0.6);
        assert_eq!(fitting_slopes(&bent, 1.0), None);
        assert_eq!(decide(&bent, 2.0), LrRule::Linear);
        assert!(matches!(decide(&bent, 1.2), LrRule::NotLinear { .. }));
        // Bent to x0.2: beyond x1.5 of every power law (reproduces), within x2 of a flatter
        // one but not of linear scaling (partly).
        let bent = law(1.0, 0.05, 0.2);
        assert_eq!(decide(&bent, 1.5), LrRule::NoPowerLaw);
        assert!(matches!(decide(&bent, 2.0), LrRule::NotLinear { .. }));
    }
}
