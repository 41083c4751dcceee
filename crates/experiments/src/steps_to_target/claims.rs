//! `[[analysis.claims]]` of a steps-to-target study: the source's claims about the shape of
//! steps to result, each with the rule that judges it (the report states each rule in full).
//!
//! ```toml
//! [[analysis.claims]]
//! claim = "momentum extends perfect scaling to larger batch sizes than plain SGD"
//! source = "seed 004: Shallue et al. 2018, section 4.3"
//! workload = "mlp/sgd-momentum"
//! rule = "extends-perfect-scaling"   # three-regimes | extends-perfect-scaling | matches-search
//!                                    # | max-useful-batch-differs | -not-larger | -equal
//!                                    # | no-simple-lr-scaling | best-error-equal
//!                                    # | regularization-helps-at-large-batch
//!                                    # | gradient-noise-falls (needs noise_every)
//! versus = "mlp/sgd"                 # the rules but three-regimes, no-simple-lr-scaling,
//!                                    # best-error-equal and gradient-noise-falls compare two
//!                                    # workloads
//! # margin = 2.0                     # the max-useful-batch rules: the factor within which two
//! #                                  # maximum useful batch sizes count as the same (> 1);
//! #                                  # no-simple-lr-scaling: within which a best rate follows
//! #                                  # linear scaling
//! ```

use batchlab_report::steps_to_target::{RatioClaim, TargetClaimRule};
use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, Source};

/// The rules a claim can be judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetRule {
    /// The workload's curve shows perfect scaling, then diminishing returns, then a plateau.
    ThreeRegimes,
    /// The workload scales perfectly to a larger batch size than `versus`.
    ExtendsPerfectScaling,
    /// The workload's search finds steps to result as low as `versus`'s at every batch size
    /// both measured (a cheaper search against a longer one).
    MatchesSearch,
    /// The two maximum useful batch sizes differ by more than `margin`, either way.
    MaxUsefulBatchDiffers,
    /// The workload's maximum useful batch size is not larger than `versus`'s by `margin`.
    MaxUsefulBatchNotLarger,
    /// The two maximum useful batch sizes are the same within `margin`.
    MaxUsefulBatchEqual,
    /// The best learning rate follows no simple rule (no power law through every batch size's
    /// near-best region; one workload).
    NoSimpleLrScaling,
    /// Every batch size's best final validation error is within `margin` (points of error)
    /// of the smallest batch size's: no degradation (one workload).
    BestErrorEqual,
    /// At the largest batch size, the workload (regularized) beats `versus`'s best final
    /// validation error by more than `margin` (points of error).
    RegularizationHelpsAtLargeBatch,
    /// Half the batch gives a noisier gradient estimate than the whole batch at the same
    /// parameters (the study's noise measurements, `noise_every`; one workload).
    GradientNoiseFalls,
}

/// `no-simple-lr-scaling`'s margin where an entry names none (configs written before it had
/// one): the factor within which a best rate follows linear scaling, as claims/registry.toml
/// fixes it for `no-simple-learning-rate-rule` (a test keeps the two equal).
pub const LINEAR_SCALING_MARGIN: f64 = 2.0;

/// `extends-perfect-scaling`'s margin where an entry names none: the factor within which two
/// maximum useful batch sizes count as the same, as claims/registry.toml fixes it for the
/// max-useful-batch claims (a test keeps the registered ones equal).
pub const SAME_MAX_USEFUL_BATCH: f64 = 2.0;

/// What a rule's `margin` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Margin {
    /// A factor above 1 between two maximum useful batch sizes.
    Factor,
    /// A difference of validation error in percentage points, between 0 and 100.
    Error,
}

impl TargetRule {
    /// The margin the rule takes, if any.
    pub fn margin(self) -> Option<Margin> {
        match self {
            TargetRule::MaxUsefulBatchDiffers
            // Without one, SAME_MAX_USEFUL_BATCH.
            | TargetRule::ExtendsPerfectScaling
            | TargetRule::MaxUsefulBatchNotLarger
            | TargetRule::MaxUsefulBatchEqual
            // Without one, the study's evaluate_growth (its resolution).
            | TargetRule::MatchesSearch
            // Without one, LINEAR_SCALING_MARGIN.
            | TargetRule::NoSimpleLrScaling => Some(Margin::Factor),
            TargetRule::BestErrorEqual | TargetRule::RegularizationHelpsAtLargeBatch => {
                Some(Margin::Error)
            }
            _ => None,
        }
    }

    /// Whether the rule judges one workload (no `versus`).
    fn one_workload(self) -> bool {
        matches!(
            self,
            TargetRule::ThreeRegimes
                | TargetRule::NoSimpleLrScaling
                | TargetRule::BestErrorEqual
                | TargetRule::GradientNoiseFalls
        )
    }
}

/// One `[[analysis.claims]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetClaimConfig {
    /// The claim's id in claims/registry.toml, if registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The claim in the source's words.
    pub claim: String,
    /// Where it was made.
    pub source: String,
    /// The workload it is about (`<model>/<optimizer or name>`).
    pub workload: String,
    /// How it is judged.
    pub rule: TargetRule,
    /// The workload it is compared with (every rule but `three-regimes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versus: Option<String>,
    /// The factor within which two maximum useful batch sizes (the `max-useful-batch-*`
    /// rules) or two searches' steps to result (`matches-search`) count as the same; above 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
}

impl TargetClaimConfig {
    /// The rule as the report judges it; `resolution` is the study's `budget.evaluate_growth`,
    /// the factor two steps to result must differ by to be told apart, which `matches-search`
    /// takes as its margin where the entry names none (configs written before it had one).
    pub fn report_rule(&self, resolution: f64) -> TargetClaimRule {
        let margin = self.margin.unwrap_or(1.0);
        match self.rule {
            TargetRule::ThreeRegimes => TargetClaimRule::ThreeRegimes,
            TargetRule::ExtendsPerfectScaling => {
                TargetClaimRule::ExtendsPerfectScaling(self.margin.unwrap_or(SAME_MAX_USEFUL_BATCH))
            }
            TargetRule::MatchesSearch => {
                TargetClaimRule::MatchesSearch(self.margin.unwrap_or(resolution))
            }
            TargetRule::MaxUsefulBatchDiffers => {
                TargetClaimRule::MaxUsefulBatch(RatioClaim::Differs, margin)
            }
            TargetRule::MaxUsefulBatchNotLarger => {
                TargetClaimRule::MaxUsefulBatch(RatioClaim::NotLarger, margin)
            }
            TargetRule::MaxUsefulBatchEqual => {
                TargetClaimRule::MaxUsefulBatch(RatioClaim::Equal, margin)
            }
            TargetRule::NoSimpleLrScaling => {
                TargetClaimRule::NoSimpleLrScaling(self.margin.unwrap_or(LINEAR_SCALING_MARGIN))
            }
            // The report works in fractions of error; the config in points.
            TargetRule::BestErrorEqual => TargetClaimRule::NoDegradation(margin / 100.0),
            TargetRule::RegularizationHelpsAtLargeBatch => {
                TargetClaimRule::RegularizationHelps(margin / 100.0)
            }
            TargetRule::GradientNoiseFalls => TargetClaimRule::GradientNoiseFalls,
        }
    }

    /// Checks the entry against the study's workload labels; errors name
    /// `analysis.claims[i].KEY`.
    pub fn check(&self, i: usize, source: &Source, labels: &[String]) -> Result<(), ConfigError> {
        let key = |k: &str| format!("analysis.claims[{i}].{k}");
        let known = |name: &str, k: &str| {
            if labels.iter().any(|l| l == name) {
                Ok(())
            } else {
                Err(source.error(
                    &key(k),
                    format!(
                        "{name:?} names no workload; expected one of {}",
                        labels.join(", ")
                    ),
                ))
            }
        };
        known(&self.workload, "workload")?;
        match (self.rule.margin(), self.margin) {
            (Some(Margin::Factor), Some(m)) if m.is_finite() && m > 1.0 => {}
            (Some(Margin::Error), Some(m)) if m > 0.0 && m < 100.0 => {}
            (Some(Margin::Factor), Some(m)) => {
                return Err(source.error(
                    &key("margin"),
                    format!("expected a factor above 1, got {m}"),
                ))
            }
            (Some(Margin::Error), Some(m)) => {
                return Err(source.error(
                    &key("margin"),
                    format!("expected points of validation error between 0 and 100, got {m}"),
                ))
            }
            (Some(Margin::Factor), None)
                if matches!(
                    self.rule,
                    TargetRule::MatchesSearch
                        | TargetRule::NoSimpleLrScaling
                        | TargetRule::ExtendsPerfectScaling
                ) => {}
            (Some(Margin::Factor), None) => {
                return Err(source.error(
                    &key("margin"),
                    "this rule needs the factor within which two maximum useful batch sizes count as the same, e.g. margin = 2.0",
                ))
            }
            (Some(Margin::Error), None) => {
                return Err(source.error(
                    &key("margin"),
                    "this rule needs the points of validation error it counts as a change, e.g. margin = 1.0",
                ))
            }
            (None, Some(_)) => {
                return Err(source.error(&key("margin"), "this rule takes no margin; remove it"))
            }
            (None, None) => {}
        }
        match (self.rule, &self.versus) {
            (rule, None) if rule.one_workload() => Ok(()),
            (rule, Some(_)) if rule.one_workload() => Err(source.error(
                &key("versus"),
                "this rule judges one workload; remove versus",
            )),
            (_, None) => Err(source.error(
                &key("versus"),
                "this rule compares two workloads: name the second",
            )),
            (_, Some(versus)) if *versus == self.workload => Err(source.error(
                &key("versus"),
                "expected a workload other than the claim's own",
            )),
            (_, Some(versus)) => known(versus, "versus"),
        }
    }
}
