//! `[[analysis.claims]]` of a steps-to-target study: the source's claims about the shape of
//! steps to result, each with the rule that judges it (the report states each rule in full).
//!
//! ```toml
//! [[analysis.claims]]
//! claim = "momentum extends perfect scaling to larger batch sizes than plain SGD"
//! source = "seed 004: Shallue et al. 2018, section 4.3"
//! workload = "mlp/sgd-momentum"
//! rule = "extends-perfect-scaling"   # three-regimes | extends-perfect-scaling | matches-search
//! versus = "mlp/sgd"                 # the other two rules' second workload
//! ```

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
    /// The workload it is compared with (`extends-perfect-scaling`, `matches-search`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versus: Option<String>,
}

impl TargetClaimConfig {
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
        match (self.rule, &self.versus) {
            (TargetRule::ThreeRegimes, None) => Ok(()),
            (TargetRule::ThreeRegimes, Some(_)) => Err(source.error(
                &key("versus"),
                "three-regimes judges one workload; remove versus",
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
