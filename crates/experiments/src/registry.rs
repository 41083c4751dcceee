//! Every kind of study, registered in one table. A new kind is one module implementing the
//! driver's `StudyPlan` and `Units`, one line in [`RUNNERS`], and a TOML in `experiments/`
//! (docs/ARCHITECTURE.md, "Adding things").

use crate::{
    claim_registry::ConfigKey,
    config::{ConfigError, HeaderOnly, Source},
    find_batch,
    kind::Kind,
    step_time, steps_to_target,
    study::Study,
    train,
};

/// A runner: the `kind` a config names, what it does, and how it reads its config.
pub struct Runner {
    /// The value of `experiment.kind`.
    pub kind: Kind,
    /// One line for `batchlab list`.
    pub doc: &'static str,
    /// Parses and resolves a config of this kind.
    pub load: fn(&Source) -> Result<Box<dyn Study>, ConfigError>,
    /// Where its config carries a registered claim's parameter, by rule and parameter.
    pub config_key: fn(&str, &str) -> Option<ConfigKey>,
}

/// The runners, by kind.
pub const RUNNERS: &[Runner] = &[
    Runner {
        kind: Kind::FindBatch,
        doc: "memory per batch size in fresh processes, its model, the largest batch under a budget (doubling, then bisection), utilization and a recommendation",
        load: find_batch::load,
        config_key: find_batch::config_key,
    },
    Runner {
        kind: Kind::StepTime,
        doc: "time of one training step per batch size, in shuffled rounds; jumps, linear fit, throughput",
        load: step_time::load,
        config_key: step_time::config_key,
    },
    Runner {
        kind: Kind::StepsToTarget,
        doc: "steps to a target validation error per batch size, with a quasi-random metaparameter search (Shallue et al. 2018)",
        load: steps_to_target::load,
        config_key: steps_to_target::config_key,
    },
    Runner {
        kind: Kind::Train,
        doc: "real training over batch sizes x optimizers x data variants x budgets x seeds; accuracy, time",
        load: train::load,
        config_key: train::config_key,
    },
];

/// The runner of `kind`: every kind has one (a test checks).
pub fn runner(kind: Kind) -> &'static Runner {
    RUNNERS
        .iter()
        .find(|r| r.kind == kind)
        .expect("every kind has a runner (registry's tests)")
}

/// Where the config of a claim's test of record carries the registered `param` of a claim of
/// `kind` judged by `rule` (a `claim_registry::KeyLookup`): the kind's runner says.
pub fn config_key(kind: Kind, rule: &str, param: &str) -> Option<ConfigKey> {
    (runner(kind).config_key)(rule, param)
}

/// Reads `[experiment].kind`, then lets that runner parse and resolve the whole document.
pub fn load_study(source: &Source) -> Result<Box<dyn Study>, ConfigError> {
    let header: HeaderOnly = source.parse()?;
    // An unknown kind is an error at experiment.kind already (Kind's Deserialize).
    let runner = runner(header.experiment.kind);
    header.experiment.validate(source)?;
    (runner.load)(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_runner_and_every_runner_a_kind() {
        for kind in Kind::ALL {
            let n = RUNNERS.iter().filter(|r| r.kind == kind).count();
            assert_eq!(n, 1, "{kind}: {n} runners in RUNNERS");
        }
        assert_eq!(RUNNERS.len(), Kind::ALL.len());
    }

    #[test]
    fn unknown_kind_lists_the_known_ones() {
        let source = Source {
            origin: "x.toml".into(),
            text: "[experiment]\nname = \"x\"\nkind = \"magic\"\n".into(),
            overrides: vec![],
        };
        let err = load_study(&source).err().unwrap();
        // At the value that names no kind.
        assert_eq!(err.location, Some((3, 8)));
        assert!(
            err.message.contains("unknown kind \"magic\"") && err.message.contains("step-time"),
            "{err}"
        );
    }

    #[test]
    fn bad_names_are_refused() {
        let source = Source {
            origin: "x.toml".into(),
            text: "[experiment]\nname = \"../escape\"\nkind = \"step-time\"\n".into(),
            overrides: vec![],
        };
        let err = load_study(&source).err().unwrap();
        assert_eq!(err.key.as_deref(), Some("experiment.name"));
    }
}
