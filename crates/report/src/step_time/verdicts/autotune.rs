//! "Training can be slightly faster with cuDNN's benchmark mode" (seed 002): the same go's
//! PyTorch references of one sweep, cuDNN's defaults (`pytorch.csv`) against its benchmark mode
//! (`pytorch-cudnn-benchmark.csv`), compared at each batch size both measured: the log of the
//! default median over the tuned one, averaged with a 90% t interval over the batch sizes (the
//! sizes are the units: each is its own set of kernels to choose), read as the gain
//! 1 - tuned / default. Faster: the gain's lower bound reaches the margin; slightly: its upper
//! bound stays below the largest gain that is still slight.

use batchlab_method::tests_of_claims::{Arm, Decision, Difference};
use serde::Serialize;

/// The comparison, as values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Speedup {
    /// A reference is missing, and which.
    Missing(String),
    /// Fewer common batch sizes than the rule's 2.
    TooFewCommon(usize),
    /// The mean gain with its 90% interval, the common batch sizes (count, first, last) and
    /// what the two one-sided tests decided.
    Measured {
        gain: f64,
        low: f64,
        high: f64,
        common: usize,
        first: u32,
        last: u32,
        decided: SpeedupDecision,
    },
}

/// What the two one-sided tests of [`Speedup`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum SpeedupDecision {
    /// Faster by at least the margin, and by less than the largest slight gain.
    Slightly,
    /// Bounded below the margin: no gain worth a setting.
    NoGain,
    /// Bounded above the largest slight gain: faster, but not slightly.
    TooLarge,
    /// Neither: the gain the test could have shown.
    Open { detectable: f64 },
}

/// `default` and `tuned` are (batch size, median ms) at each sweep's ok batch sizes.
pub(crate) fn speedup(
    default: &[(u32, f64)],
    tuned: &[(u32, f64)],
    margin: f64,
    max_gain: f64,
) -> Speedup {
    let common: Vec<(u32, f64)> = default
        .iter()
        .filter_map(|&(b, d)| {
            let (_, t) = tuned.iter().find(|(tb, _)| *tb == b)?;
            let r = (d / t).ln();
            r.is_finite().then_some((b, r))
        })
        .collect();
    let logs: Vec<f64> = common.iter().map(|c| c.1).collect();
    let Some(d) = Difference::one_sample(Arm::of(&logs)) else {
        return Speedup::TooFewCommon(common.len());
    };
    let (low, high) = d.interval90();
    // A gain g is a log ratio of -ln(1 - g).
    let (at_margin, at_max) = (-(1.0 - margin).ln(), -(1.0 - max_gain).ln());
    let faster = bounded(low, high, at_margin);
    let slight = bounded(low, high, at_max);
    let decided = match (faster, slight) {
        (Decision::Refuted, _) => SpeedupDecision::NoGain,
        (_, Decision::Shown) => SpeedupDecision::TooLarge,
        (Decision::Shown, Decision::Refuted) => SpeedupDecision::Slightly,
        _ => SpeedupDecision::Open {
            // A true log ratio this far above the margin's puts the lower bound on it.
            detectable: gain(at_margin + (high - low) / 2.0),
        },
    };
    Speedup::Measured {
        gain: gain(d.diff),
        low: gain(low),
        high: gain(high),
        common: common.len(),
        first: common[0].0,
        last: common[common.len() - 1].0,
        decided,
    }
}

/// Whether (low, high) lies above `threshold` (shown), below it (refuted), or across it.
fn bounded(low: f64, high: f64, threshold: f64) -> Decision {
    if low > threshold {
        Decision::Shown
    } else if high < threshold {
        Decision::Refuted
    } else {
        Decision::Open
    }
}

/// The gain 1 - tuned / default of a log ratio ln(default / tuned).
fn gain(log_ratio: f64) -> f64 {
    1.0 - (-log_ratio).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (batch size, median ms) of a sweep.
    type Medians = Vec<(u32, f64)>;

    /// Eleven batch sizes, the tuned sweep `factor` times the default's, with a spread.
    fn pair(factor: f64, spread: f64) -> (Medians, Medians) {
        let default: Vec<(u32, f64)> = (0..11).map(|i| (100 + i, 50.0 + i as f64)).collect();
        let tuned = default
            .iter()
            .enumerate()
            .map(|(i, &(b, ms))| {
                let wiggle = if i % 2 == 0 {
                    1.0 + spread
                } else {
                    1.0 - spread
                };
                (b, ms * factor * wiggle)
            })
            .collect();
        (default, tuned)
    }

    fn decided(factor: f64, spread: f64) -> SpeedupDecision {
        let (default, tuned) = pair(factor, spread);
        match speedup(&default, &tuned, 0.02, 0.25) {
            Speedup::Measured { decided, .. } => decided,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_gain_is_slight_between_the_margin_and_the_largest_slight_one() {
        assert_eq!(decided(0.90, 0.005), SpeedupDecision::Slightly);
        assert_eq!(decided(1.00, 0.005), SpeedupDecision::NoGain);
        assert_eq!(decided(1.03, 0.005), SpeedupDecision::NoGain);
        assert_eq!(decided(0.50, 0.005), SpeedupDecision::TooLarge);
        assert!(matches!(
            decided(0.97, 0.05),
            SpeedupDecision::Open { detectable } if detectable > 0.02 && detectable < 0.2
        ));
        let (default, tuned) = pair(0.9, 0.0);
        assert_eq!(
            speedup(&default[..1], &tuned, 0.02, 0.25),
            Speedup::TooFewCommon(1)
        );
        match speedup(&default, &tuned, 0.02, 0.25) {
            Speedup::Measured {
                gain,
                common,
                first,
                last,
                ..
            } => {
                assert!((gain - 0.1).abs() < 1e-9, "{gain}");
                assert_eq!((common, first, last), (11, 100, 110));
            }
            other => panic!("{other:?}"),
        }
    }
}
