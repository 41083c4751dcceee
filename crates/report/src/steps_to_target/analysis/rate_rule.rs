//! Which scaling rule the best learning rate follows: the decision the report words.

use super::workload::LearningRateScaling;

/// Which rule a fitted slope of log(best rate) against log(batch size) is consistent with:
/// linear scaling (slope 1, Goyal et al. 2017) or square-root scaling (0.5, Krizhevsky
/// 2014), by whether each lies inside the slope's 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateRule {
    /// The interval holds 1, not 0.5.
    Linear,
    /// The interval holds 0.5, not 1.
    SquareRoot,
    /// The interval holds both: too few or too noisy points to tell them apart.
    Both,
    /// The interval lies below 0.5: the rate grows more slowly than the square root.
    BelowBoth,
    /// The interval lies above 1: the rate grows faster than the batch size.
    AboveLinear,
    /// The interval lies between 0.5 and 1 and holds neither.
    Between,
    /// Two points fit a line exactly: no interval, and a nearest rule that says little.
    NoInterval {
        /// Whether the slope is nearer to 1 than to 0.5.
        nearer_linear: bool,
    },
}

impl LearningRateScaling {
    /// The rule this fit is consistent with.
    pub fn rule(&self) -> RateRule {
        let Some((lo, hi)) = self.interval else {
            return RateRule::NoInterval {
                nearer_linear: (self.slope - 1.0).abs() < (self.slope - 0.5).abs(),
            };
        };
        // A slack of 1e-9 keeps an exactly fitted line (a zero-width interval that rounding
        // puts beside the rule) consistent with its rule.
        let within = |rule: f64| lo - 1e-9 <= rule && rule <= hi + 1e-9;
        match (within(1.0), within(0.5)) {
            (true, false) => RateRule::Linear,
            (false, true) => RateRule::SquareRoot,
            (true, true) => RateRule::Both,
            (false, false) if hi < 0.5 => RateRule::BelowBoth,
            (false, false) if lo > 1.0 => RateRule::AboveLinear,
            (false, false) => RateRule::Between,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(slope: f64, interval: Option<(f64, f64)>) -> LearningRateScaling {
        LearningRateScaling {
            slope,
            interval,
            from: 4,
            to: 64,
            points: 5,
            perfect_scaling_range: true,
        }
    }

    #[test]
    fn each_rule_by_where_the_interval_lies() {
        let rule = |lo, hi| fit(0.5 * (lo + hi), Some((lo, hi))).rule();
        assert_eq!(rule(0.9, 1.1), RateRule::Linear);
        assert_eq!(rule(0.4, 0.6), RateRule::SquareRoot);
        assert_eq!(rule(0.4, 1.1), RateRule::Both);
        assert_eq!(rule(0.1, 0.3), RateRule::BelowBoth);
        assert_eq!(rule(1.2, 1.5), RateRule::AboveLinear);
        assert_eq!(rule(0.6, 0.9), RateRule::Between);
        // An exact fit on the rule is consistent with it.
        assert_eq!(rule(1.0, 1.0), RateRule::Linear);
        assert_eq!(
            fit(0.8, None).rule(),
            RateRule::NoInterval {
                nearer_linear: true
            }
        );
    }
}
