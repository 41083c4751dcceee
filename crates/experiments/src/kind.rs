//! The kinds of study, as a type: parsed where a config or the registry names one (an unknown
//! name is an error at its key, listing the kinds), and compared as values everywhere else.
//! [`crate::registry::RUNNERS`] has one runner per kind (a test checks both ways).

use std::fmt;

/// A kind of study (`experiment.kind`, a registered claim's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The time of one training step per batch size.
    StepTime,
    /// Real training over a grid; accuracy and time.
    Train,
    /// Memory per batch size and the largest batch under a budget.
    FindBatch,
    /// Steps to a target error per batch size, with a metaparameter search.
    StepsToTarget,
}

impl Kind {
    /// Every kind, in the order docs/results.md lists them.
    pub const ALL: [Kind; 4] = [
        Kind::StepTime,
        Kind::Train,
        Kind::FindBatch,
        Kind::StepsToTarget,
    ];

    /// The name configs and the registry spell it with.
    pub fn name(self) -> &'static str {
        match self {
            Kind::StepTime => "step-time",
            Kind::Train => "train",
            Kind::FindBatch => "find-batch",
            Kind::StepsToTarget => "steps-to-target",
        }
    }

    /// The kind named `name`, if any.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The names, for an error that lists them.
    pub fn names() -> String {
        Kind::ALL.map(Kind::name).join(", ")
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::word_serde!(Kind, name, Kind::ALL, |word| format!(
    "unknown kind {word:?}; expected one of: {}",
    Kind::names()
));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
            let text = toml::to_string(
                &[("kind", k)]
                    .into_iter()
                    .collect::<std::collections::BTreeMap<_, _>>(),
            )
            .unwrap();
            let back: std::collections::BTreeMap<String, Kind> = toml::from_str(&text).unwrap();
            assert_eq!(back["kind"], k);
        }
        let err = toml::from_str::<std::collections::BTreeMap<String, Kind>>("kind = \"magic\"")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown kind \"magic\"") && err.contains("step-time"),
            "{err}"
        );
    }
}
