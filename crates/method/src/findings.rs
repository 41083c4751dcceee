//! A judged claim as data (docs/ARCHITECTURE.md, "Verdicts"): the outcome a rule decided, the
//! quantities it decided from, and the test in words. Every kind's report returns these; the
//! run writes them to `findings.json`, and `report::verdict` words an outcome in one place, so
//! no decision hides inside a sentence.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The version of the rules that judge claims. Raise it whenever a rule or a default parameter
/// changes what it decides: `findings.json` records it, and a committed finding from older
/// rules then differs from the one the current code derives.
pub const RULES_VERSION: u32 = 4;

/// What a rule decided about a claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Outcome {
    /// The data show what the claim says.
    Reproduces {
        /// A qualification worth stating beside it (e.g. the margin it was shown within).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        qualifier: Option<String>,
    },
    /// Some of what the claim says holds, some does not.
    Partly {
        /// Which part holds.
        why: String,
    },
    /// The data contradict the claim.
    DoesNotReproduce {
        /// What was found instead.
        why: String,
    },
    /// The test could neither confirm nor refute the claim at this noise.
    Inconclusive {
        /// The smallest effect the test could have seen, in words with its unit.
        detectable: String,
    },
    /// The claim cannot be judged from this run or on this machine.
    CannotTest {
        /// Why (a GPU is needed, a batch size was not run, too few points for the rule).
        why: String,
    },
}

/// The outcome without its reasons: what tables count and colour by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// See [`Outcome::Reproduces`].
    Reproduces,
    /// See [`Outcome::Partly`].
    Partly,
    /// See [`Outcome::DoesNotReproduce`].
    DoesNotReproduce,
    /// See [`Outcome::Inconclusive`].
    Inconclusive,
    /// See [`Outcome::CannotTest`].
    CannotTest,
}

impl Verdict {
    /// The verdict's one name, as every table and sentence writes it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Reproduces => "reproduces",
            Verdict::Partly => "partly",
            Verdict::DoesNotReproduce => "does not reproduce",
            Verdict::Inconclusive => "inconclusive",
            Verdict::CannotTest => "cannot be tested here",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Outcome {
    /// Reproduces, with nothing to add.
    pub fn reproduces() -> Self {
        Outcome::Reproduces { qualifier: None }
    }

    /// Reproduces, with a qualification.
    pub fn reproduces_with(qualifier: impl Into<String>) -> Self {
        Outcome::Reproduces {
            qualifier: Some(qualifier.into()),
        }
    }

    /// Partly, and which part.
    pub fn partly(why: impl Into<String>) -> Self {
        Outcome::Partly { why: why.into() }
    }

    /// Does not reproduce, and what was found.
    pub fn does_not_reproduce(why: impl Into<String>) -> Self {
        Outcome::DoesNotReproduce { why: why.into() }
    }

    /// Inconclusive, with the smallest effect the test could have seen.
    pub fn inconclusive(detectable: impl Into<String>) -> Self {
        Outcome::Inconclusive {
            detectable: detectable.into(),
        }
    }

    /// Cannot be tested here, and why.
    pub fn cannot_test(why: impl Into<String>) -> Self {
        Outcome::CannotTest { why: why.into() }
    }

    /// The verdict without its reasons.
    pub fn verdict(&self) -> Verdict {
        match self {
            Outcome::Reproduces { .. } => Verdict::Reproduces,
            Outcome::Partly { .. } => Verdict::Partly,
            Outcome::DoesNotReproduce { .. } => Verdict::DoesNotReproduce,
            Outcome::Inconclusive { .. } => Verdict::Inconclusive,
            Outcome::CannotTest { .. } => Verdict::CannotTest,
        }
    }

    /// The reason or qualification beside the verdict, if any.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Reproduces { qualifier } => qualifier.as_deref(),
            Outcome::Partly { why }
            | Outcome::DoesNotReproduce { why }
            | Outcome::CannotTest { why } => Some(why),
            Outcome::Inconclusive { detectable } => Some(detectable),
        }
    }
}

/// One claim, judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The claim's id in the claims registry; none for a claim written inline in a config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The claim in the source's words.
    pub claim: String,
    /// Where it was made.
    pub source: String,
    /// What part of the run it is judged on (a line and budget, a workload), if not all of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The rule's name, e.g. `accuracy-holds`.
    pub rule: String,
    /// What the rule decided.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// What this run measured, in words.
    pub measured: String,
    /// The numbers the rule decided from, by name (units in the name: `diff_points`,
    /// `slope_ms_per_example`); NaN and infinities are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub quantities: BTreeMap<String, f64>,
    /// What the rule decided, as the kind's own value (numbers and kebab-case enums: a
    /// `Decision`, the rule's reading with the numbers it was decided from), which `verdict`
    /// and the sentences word; absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<serde_json::Value>,
    /// The rule in words, with what it could detect.
    pub test: String,
}

impl Finding {
    /// A finding with no quantities yet.
    pub fn new(
        claim: ClaimText,
        rule: impl Into<String>,
        outcome: Outcome,
        measured: impl Into<String>,
        test: impl Into<String>,
    ) -> Self {
        Finding {
            id: claim.id,
            claim: claim.quote,
            source: claim.source,
            scope: claim.scope,
            rule: rule.into(),
            outcome,
            measured: measured.into(),
            quantities: BTreeMap::new(),
            reading: None,
            test: test.into(),
        }
    }

    /// Records what the rule decided (see [`Finding::reading`]); a value serde cannot write
    /// as JSON leaves none.
    pub fn with_reading(mut self, value: &impl Serialize) -> Self {
        self.reading = reading(value);
        self
    }

    /// Records the numbers the rule decided from (finite ones only: JSON has no NaN).
    pub fn with_quantities<'a>(mut self, values: impl IntoIterator<Item = (&'a str, f64)>) -> Self {
        for (name, value) in values {
            if value.is_finite() {
                self.quantities.insert(name.to_string(), value);
            }
        }
        self
    }
}

/// What a rule decided, as [`Finding::reading`] records it; none for a value serde cannot
/// write as JSON.
pub fn reading(value: &impl Serialize) -> Option<serde_json::Value> {
    serde_json::to_value(value).ok()
}

/// Who made a claim and where a run judges it: what every [`Finding`] starts from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClaimText {
    /// The registry id, if registered.
    pub id: Option<String>,
    /// The claim in the source's words.
    pub quote: String,
    /// Where it was made.
    pub source: String,
    /// The part of the run it is judged on.
    pub scope: Option<String>,
}

impl ClaimText {
    /// A claim with its source, judged on the whole run.
    pub fn new(quote: impl Into<String>, source: impl Into<String>) -> Self {
        ClaimText {
            id: None,
            quote: quote.into(),
            source: source.into(),
            scope: None,
        }
    }

    /// The same claim with its registry id.
    pub fn with_id(mut self, id: Option<String>) -> Self {
        self.id = id;
        self
    }

    /// The same claim, judged on part of the run.
    pub fn scoped(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }
}

/// `findings.json`: every claim a run judged, with what identifies how and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingsFile {
    /// The experiment's name.
    pub experiment: String,
    /// The run directory's name.
    pub run: String,
    /// The commit the run was made with (meta.json's `git_commit`).
    pub run_commit: String,
    /// [`RULES_VERSION`] of the code that judged it.
    pub rules_version: u32,
    /// SHA-256 of the claims registry the registered claims were read from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_sha256: Option<String>,
    /// Where it ran.
    pub machine: crate::machine::Machine,
    /// The judged claims, in the report's order.
    pub findings: Vec<Finding>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_round_trips_with_its_reason_beside_the_verdict() {
        let finding = Finding::new(
            ClaimText::new("Adam holds", "seed 003").scoped("adam line"),
            "accuracy-holds",
            Outcome::inconclusive("0.8 points"),
            "-0.2 points",
            "two one-sided tests",
        )
        .with_quantities([("diff_points", -0.2), ("se_points", f64::NAN)]);
        let text = serde_json::to_string(&finding).unwrap();
        assert!(
            text.contains(r#""verdict":"inconclusive","detectable":"0.8 points""#),
            "{text}"
        );
        assert!(!text.contains("se_points"), "NaN kept: {text}");
        let back: Finding = serde_json::from_str(&text).unwrap();
        assert_eq!(back, finding);
        assert_eq!(back.outcome.verdict(), Verdict::Inconclusive);
        assert_eq!(back.outcome.reason(), Some("0.8 points"));
    }

    #[test]
    fn a_reading_is_written_as_numbers_and_enums_and_old_files_load_without_one() {
        use crate::tests_of_claims::{Decision, Difference};
        #[derive(Serialize)]
        #[serde(rename_all = "kebab-case")]
        enum Read {
            Measured { d: Difference, decided: Decision },
        }
        let finding = Finding::new(
            ClaimText::new("it falls", "seed 003"),
            "accuracy-falls",
            Outcome::reproduces(),
            "-7 points",
            "one-sided",
        );
        let text = serde_json::to_string(&finding).unwrap();
        assert!(!text.contains("reading"), "{text}");
        let back: Finding = serde_json::from_str(&text).unwrap();
        assert_eq!(back.reading, None);
        let read = Read::Measured {
            d: Difference {
                diff: -7.0,
                se: 1.0,
                df: 4.0,
            },
            decided: Decision::Shown,
        };
        let text = serde_json::to_string(&finding.with_reading(&read)).unwrap();
        assert!(
            text.contains(
                r#""reading":{"measured":{"d":{"df":4.0,"diff":-7.0,"se":1.0},"decided":"shown"}}"#
            ),
            "{text}"
        );
        let back: Finding = serde_json::from_str(&text).unwrap();
        assert_eq!(back.reading.unwrap()["measured"]["decided"], "shown");
    }
}
