//! Every kind of study, registered in one table. A new kind is one module implementing
//! [`Study`], one line in [`RUNNERS`], and a TOML in `experiments/` (docs/ARCHITECTURE.md,
//! "Adding a kind").

use crate::{
    config::{ConfigError, HeaderOnly, Source},
    find_batch, step_time, steps_to_target,
    study::Study,
    train,
};

/// A runner: the `kind` a config names, what it does, and how it reads its config.
pub struct Runner {
    /// The value of `experiment.kind`.
    pub kind: &'static str,
    /// One line for `batchlab list`.
    pub doc: &'static str,
    /// Parses and resolves a config of this kind.
    pub load: fn(&Source) -> Result<Box<dyn Study>, ConfigError>,
}

/// The runners, by kind.
pub const RUNNERS: &[Runner] = &[
    Runner {
        kind: "find-batch",
        doc: "memory per batch size in fresh processes, its model, the largest batch under a budget (doubling, then bisection), utilization and a recommendation",
        load: find_batch::load,
    },
    Runner {
        kind: "step-time",
        doc: "time of one training step per batch size, in shuffled rounds; jumps, linear fit, throughput",
        load: step_time::load,
    },
    Runner {
        kind: "steps-to-target",
        doc: "steps to a target validation error per batch size, with a quasi-random metaparameter search (Shallue et al. 2018)",
        load: steps_to_target::load,
    },
    Runner {
        kind: "train",
        doc: "real training over batch sizes x optimizers x data variants x budgets x seeds; accuracy, time",
        load: train::load,
    },
];

/// Reads `[experiment].kind`, then lets that runner parse and resolve the whole document.
pub fn load_study(source: &Source) -> Result<Box<dyn Study>, ConfigError> {
    let header: HeaderOnly = source.parse()?;
    let runner = RUNNERS
        .iter()
        .find(|r| r.kind == header.experiment.kind)
        .ok_or_else(|| {
            let kinds: Vec<&str> = RUNNERS.iter().map(|r| r.kind).collect();
            source.error(
                "experiment.kind",
                format!(
                    "unknown kind {:?}; expected one of: {}",
                    header.experiment.kind,
                    kinds.join(", ")
                ),
            )
        })?;
    header.experiment.validate(source)?;
    (runner.load)(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_kind_lists_the_known_ones() {
        let source = Source {
            origin: "x.toml".into(),
            text: "[experiment]\nname = \"x\"\nkind = \"magic\"\n".into(),
            overrides: vec![],
        };
        let err = load_study(&source).err().unwrap();
        assert_eq!(err.location, Some((3, 1)));
        assert!(err.message.contains("step-time"), "{err}");
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
