//! Every kind of study, registered in one table. A new kind is one module implementing
//! [`Study`], one line in [`RUNNERS`], and a TOML in `experiments/`.

use std::path::Path;

use crate::{
    config::{BackendConfig, ConfigError, ExperimentHeader, HeaderOnly, OutputConfig, Source},
    isolate::{UnitEvents, WorkerExit},
    progress::Progress,
    session::{Isolation, RunError},
    step_time, steps_to_target, train,
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

/// A resolved experiment, ready to run.
pub trait Study {
    /// `[experiment]`.
    fn header(&self) -> &ExperimentHeader;
    /// `[backend]`.
    fn backend(&self) -> &BackendConfig;
    /// `[output]`.
    fn output(&self) -> &OutputConfig;
    /// The resolved config (every default filled in) as TOML: saved as the report's config.toml,
    /// from which the experiment can be run again.
    fn resolved_toml(&self) -> String;
    /// A few lines on what a run will do (`batchlab check`).
    fn plan(&self) -> Vec<String>;
    /// Checks that what the study reads (datasets) is present, before anything is created or
    /// trained. Studies on synthetic data have nothing to check.
    fn check_inputs(&self) -> Result<(), RunError> {
        Ok(())
    }
    /// Whether `--shard i/n` may split the study (its units are independent trials, not
    /// measurements timed against each other).
    fn shardable(&self) -> bool {
        false
    }
    /// Runs, or continues, the study in `dir`, appending raw results as they are produced.
    fn run(
        &self,
        dir: &Path,
        isolation: &Isolation,
        progress: &dyn Progress,
    ) -> Result<(), RunError>;
    /// Does the remaining work in `dir`, announcing each unit: the worker side of
    /// [`crate::isolate`], in a child process or in this one.
    fn work(&self, dir: &Path, events: &dyn UnitEvents) -> Result<WorkerExit, RunError>;
    /// Writes summary.csv, the figures and report.md from `dir`'s raw results; returns the
    /// findings in a few lines for the terminal.
    fn render(&self, dir: &Path) -> Result<Vec<String>, RunError>;
}

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
