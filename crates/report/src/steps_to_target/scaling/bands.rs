//! The three regimes by positive tests: a window of neighbouring batch sizes is in a regime
//! only when the whole interval of its log-log slope lies inside that regime's band.
//!
//! A slope of -1 is perfect scaling (twice the batch size, half the steps), 0 no gain. The
//! bands are stated in the study's config (`[analysis]` `perfect_slope_from`,
//! `perfect_slope_to`, `plateau_slope_from`) and the claims registry; by default perfect
//! scaling is a slope inside [-1.25, -0.75], diminishing returns inside (-0.75, -0.25), the
//! plateau (maximal data parallelism) inside [-0.25, +inf). A window whose interval straddles
//! a border is in no regime: "open", with the interval's half-width saying what it could
//! resolve. Nothing is a plateau by default: the first reports called a segment a plateau
//! whenever its interval touched zero, so a noisy halving of the steps passed as one.

use super::interval::{CurveIntervals, SlopeWindow};
use super::Regime;

/// The slope bands of the three regimes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegimeBands {
    /// Perfect scaling: a slope from this ...
    pub perfect_from: f64,
    /// ... to this (diminishing returns start above it).
    pub perfect_to: f64,
    /// Maximal data parallelism: a slope from this up (diminishing returns end below it).
    pub plateau_from: f64,
}

impl Default for RegimeBands {
    fn default() -> Self {
        RegimeBands {
            perfect_from: -1.25,
            perfect_to: -0.75,
            plateau_from: -0.25,
        }
    }
}

impl RegimeBands {
    /// Whether the bands are in order (perfect below diminishing below plateau) and finite.
    pub fn is_valid(&self) -> bool {
        [self.perfect_from, self.perfect_to, self.plateau_from]
            .iter()
            .all(|x| x.is_finite())
            && self.perfect_from < self.perfect_to
            && self.perfect_to < self.plateau_from
    }

    /// The regime whose band holds the whole `interval`, if one does.
    pub fn classify(&self, (lo, hi): (f64, f64)) -> Option<Regime> {
        if lo >= self.perfect_from && hi <= self.perfect_to {
            Some(Regime::PerfectScaling)
        } else if lo > self.perfect_to && hi < self.plateau_from {
            Some(Regime::DiminishingReturns)
        } else if lo >= self.plateau_from {
            Some(Regime::MaximalDataParallelism)
        } else {
            None
        }
    }

    /// Whether `interval` lies wholly outside `regime`'s band: the window cannot be in it.
    pub fn excludes(&self, regime: Regime, (lo, hi): (f64, f64)) -> bool {
        match regime {
            Regime::PerfectScaling => hi < self.perfect_from || lo > self.perfect_to,
            Regime::DiminishingReturns => hi <= self.perfect_to || lo >= self.plateau_from,
            Regime::MaximalDataParallelism => hi < self.plateau_from,
        }
    }

    /// The bands in words.
    pub fn describe(&self) -> String {
        format!(
            "perfect scaling inside [{}, {}], diminishing returns inside ({}, {}), maximal data parallelism inside [{}, +∞)",
            self.perfect_from, self.perfect_to, self.perfect_to, self.plateau_from, self.plateau_from
        )
    }
}

/// Each slope window with the regime its interval shows, if any, and each regime's batch
/// sizes (from the first window that shows it to the last).
#[derive(Debug, Clone, PartialEq)]
pub struct BandRegimes {
    /// Every window, in increasing batch size, with the regime it shows.
    pub windows: Vec<(SlopeWindow, Option<Regime>)>,
    /// The bands used.
    pub bands: RegimeBands,
}

impl BandRegimes {
    /// Judges every window of `curve` by `bands`.
    pub fn new(curve: &CurveIntervals, bands: RegimeBands) -> Self {
        BandRegimes {
            windows: curve
                .windows
                .iter()
                .map(|w| (*w, bands.classify(w.interval)))
                .collect(),
            bands,
        }
    }

    /// The batch sizes (indices into the curve's) from the first window showing `regime` to
    /// the last.
    pub fn range(&self, regime: Regime) -> Option<(usize, usize)> {
        let shown = || self.windows.iter().filter(|(_, r)| *r == Some(regime));
        Some((shown().next()?.0.first, shown().next_back()?.0.last))
    }

    /// The regimes shown, in the order of the windows, each once per run of windows.
    pub fn sequence(&self) -> Vec<Regime> {
        let mut out: Vec<Regime> = vec![];
        for r in self.windows.iter().filter_map(|(_, r)| *r) {
            if out.last() != Some(&r) {
                out.push(r);
            }
        }
        out
    }

    /// Whether a regime shown later comes before one shown earlier in the claim's order
    /// (perfect, diminishing, plateau): e.g. perfect scaling at batch sizes beyond a plateau.
    pub fn out_of_order(&self) -> bool {
        self.sequence().windows(2).any(|w| w[1] < w[0])
    }

    /// Whether every window's interval lies outside `regime`'s band: the data rule the regime
    /// out over the batch sizes swept (not merely fail to show it).
    pub fn excluded(&self, regime: Regime) -> bool {
        !self.windows.is_empty()
            && self
                .windows
                .iter()
                .all(|(w, _)| self.bands.excludes(regime, w.interval))
    }

    /// The widest half-width among open windows (what the test could not resolve), if any.
    pub fn widest_open(&self) -> Option<f64> {
        self.windows
            .iter()
            .filter(|(_, r)| r.is_none())
            .map(|(w, _)| w.half_width())
            .max_by(f64::total_cmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_in_a_regime_only_when_its_whole_interval_is() {
        let b = RegimeBands::default();
        assert!(b.is_valid());
        assert_eq!(b.classify((-1.1, -0.8)), Some(Regime::PerfectScaling));
        assert_eq!(b.classify((-0.7, -0.3)), Some(Regime::DiminishingReturns));
        assert_eq!(
            b.classify((-0.2, f64::INFINITY)),
            Some(Regime::MaximalDataParallelism)
        );
        // Touching zero is not enough: this interval also holds a halving of the steps.
        assert_eq!(b.classify((-1.0, 0.1)), None);
        assert_eq!(b.classify((-0.8, -0.6)), None);
        assert_eq!(b.classify((f64::NEG_INFINITY, -0.9)), None);
        assert!(!RegimeBands {
            perfect_to: -0.1,
            ..b
        }
        .is_valid());
    }
}
