//! The simple gradient noise scale B_simple = tr(Sigma) / |G|^2 of McCandlish et al. 2018
//! ("An Empirical Model of Large-Batch Training", arXiv 1812.06162), estimated during
//! training. G is the true gradient and Sigma the covariance of per-example gradients; the
//! paper predicts the critical batch size B_crit (the knee of the steps-to-result curve,
//! fitted by the report) to be of the order of B_simple, which is what batchlab checks.
//!
//! # The estimator (the paper's Appendix A)
//!
//! The mean gradient over B examples, G_B, has E|G_B|^2 = |G|^2 + tr(Sigma) / B. With the
//! squared norms of two such means, over b_small and b_big examples,
//!
//! - |G|^2 ~ (b_big |G_big|^2 - b_small |G_small|^2) / (b_big - b_small), and
//! - tr(Sigma) ~ (|G_small|^2 - |G_big|^2) / (1 / b_small - 1 / b_big)
//!
//! are unbiased. Only each norm's expectation enters, so the two means may share examples
//! (the small batch may be part of the big one, as when b_small is one device's share of a
//! data-parallel step or one micro-batch of an accumulated one).
//!
//! Single estimates are very noisy (often negative), and B_simple is a ratio, which an
//! average of ratios would bias; so, as the paper does, the two estimates are averaged
//! separately, by exponential moving averages, and B_simple is the ratio of the averages.
//! The averages are debiased like Adam's moments (divided by 1 - decay^t), so early values
//! are a plain weighted mean of the estimates so far rather than pulled towards zero.

use serde::{Deserialize, Serialize};

use crate::TargetError;

/// Running estimate of B_simple from gradients of two batch sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseScale {
    b_small: f64,
    b_big: f64,
    decay: f64,
    updates: u64,
    /// Undebiased moving averages, started at 0.
    ema_g_sq: f64,
    ema_trace: f64,
    /// decay^updates, for debiasing.
    decay_power: f64,
}

/// One update of a [`NoiseScale`], for logging over training.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoiseRecord {
    /// Updates so far, this one included (1 for the first).
    pub update: u64,
    /// The squared norm of the mean gradient over `b_small` examples, as given.
    pub g_small_sq: f64,
    /// The squared norm of the mean gradient over `b_big` examples, as given.
    pub g_big_sq: f64,
    /// This update's estimate of |G|^2 alone (may be negative).
    pub g_sq_estimate: f64,
    /// This update's estimate of tr(Sigma) alone (may be negative).
    pub trace_estimate: f64,
    /// The moving average of the |G|^2 estimates, debiased.
    pub g_sq: f64,
    /// The moving average of the tr(Sigma) estimates, debiased.
    pub trace: f64,
    /// `trace / g_sq`, when both are positive.
    pub b_simple: Option<f64>,
}

impl NoiseScale {
    /// An estimator for mean gradients over `b_small` and `b_big` examples (`1 <= b_small <
    /// b_big`), averaging each estimate with weight `1 - decay` on the newest (`0 <= decay <
    /// 1`; 0 keeps only the latest update, 0.99 averages over about the last 100). The
    /// paper's choice is a decay near 1: the estimates are noisy and B_simple changes slowly.
    pub fn new(b_small: u32, b_big: u32, decay: f64) -> Result<Self, TargetError> {
        if b_small == 0 {
            return Err(TargetError::argument("b_small", b_small, "at least 1"));
        }
        if b_big <= b_small {
            return Err(TargetError::argument("b_big", b_big, "larger than b_small"));
        }
        if !(0.0..1.0).contains(&decay) {
            return Err(TargetError::argument("decay", decay, "in [0, 1)"));
        }
        Ok(NoiseScale {
            b_small: f64::from(b_small),
            b_big: f64::from(b_big),
            decay,
            updates: 0,
            ema_g_sq: 0.0,
            ema_trace: 0.0,
            decay_power: 1.0,
        })
    }

    /// Adds one pair of squared norms: `g_small_sq` = |G_small|^2 of a mean gradient over
    /// `b_small` examples and `g_big_sq` = |G_big|^2 over `b_big` examples, taken at the
    /// same parameters. Both must be finite and non-negative (a NaN from a diverged step
    /// would poison every later average, so it is refused and the state left unchanged).
    pub fn update(&mut self, g_small_sq: f64, g_big_sq: f64) -> Result<NoiseRecord, TargetError> {
        for (name, value) in [("g_small_sq", g_small_sq), ("g_big_sq", g_big_sq)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(TargetError::argument(
                    name,
                    value,
                    "a finite squared norm >= 0",
                ));
            }
        }
        let (bs, bb) = (self.b_small, self.b_big);
        let g_sq_estimate = (bb * g_big_sq - bs * g_small_sq) / (bb - bs);
        let trace_estimate = (g_small_sq - g_big_sq) / (1.0 / bs - 1.0 / bb);
        self.updates += 1;
        self.decay_power *= self.decay;
        self.ema_g_sq = self.decay * self.ema_g_sq + (1.0 - self.decay) * g_sq_estimate;
        self.ema_trace = self.decay * self.ema_trace + (1.0 - self.decay) * trace_estimate;
        Ok(NoiseRecord {
            update: self.updates,
            g_small_sq,
            g_big_sq,
            g_sq_estimate,
            trace_estimate,
            g_sq: self.g_sq().unwrap_or(f64::NAN),
            trace: self.trace().unwrap_or(f64::NAN),
            b_simple: self.b_simple(),
        })
    }

    /// The averaged estimate of |G|^2; `None` before the first update.
    pub fn g_sq(&self) -> Option<f64> {
        self.debiased(self.ema_g_sq)
    }

    /// The averaged estimate of tr(Sigma); `None` before the first update.
    pub fn trace(&self) -> Option<f64> {
        self.debiased(self.ema_trace)
    }

    /// B_simple = tr(Sigma) / |G|^2 from the averaged estimates. `None` before the first
    /// update and while either average is not positive: a non-positive |G|^2 means the
    /// noise swamps the signal at these batch sizes (B_simple is beyond what they can
    /// measure), and a non-positive trace is noise in the estimate; neither is a number to
    /// plot.
    pub fn b_simple(&self) -> Option<f64> {
        match (self.trace(), self.g_sq()) {
            (Some(trace), Some(g_sq)) if trace > 0.0 && g_sq > 0.0 => Some(trace / g_sq),
            _ => None,
        }
    }

    /// Updates so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The smaller batch size.
    pub fn b_small(&self) -> u32 {
        self.b_small as u32
    }

    /// The larger batch size.
    pub fn b_big(&self) -> u32 {
        self.b_big as u32
    }

    /// The moving average's decay.
    pub fn decay(&self) -> f64 {
        self.decay
    }

    fn debiased(&self, ema: f64) -> Option<f64> {
        (self.updates > 0).then(|| ema / (1.0 - self.decay_power))
    }
}

#[cfg(test)]
#[path = "noise_tests.rs"]
mod tests;
