//! The wall time `run` and `check` state before a run starts (`batchlab_experiments::estimate`),
//! and the question `run` asks in an interactive terminal when it is long.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use batchlab_experiments::{
    estimate::{duration, estimate, Estimate, CONFIRM_ABOVE_S},
    shard::Shard,
    Study,
};

/// The estimate's lines, for this shard's share when `shard` is given; a line saying why
/// there is none when it cannot be made (a run goes on without it).
pub fn lines(
    study: &dyn Study,
    root: &Path,
    shard: Option<Shard>,
) -> (Option<Estimate>, Vec<String>) {
    match estimate(study, root) {
        Ok(Some(e)) => {
            let e = match shard {
                Some(s) => e.share(s.count),
                None => e,
            };
            let mut lines = e.lines();
            if let Some(s) = shard {
                lines[0].push_str(&format!(" (this shard's share, 1/{})", s.count));
            }
            (Some(e), lines)
        }
        Ok(None) => (None, Vec::new()),
        Err(why) => (None, vec![format!("expected wall time: unknown ({why})")]),
    }
}

/// Before `run`: the estimate on stderr; above [`CONFIRM_ABOVE_S`] in an interactive terminal
/// and without `--yes`, a question, and a stop unless it is answered yes.
pub fn confirm(study: &dyn Study, root: &Path, shard: Option<Shard>, yes: bool) -> Result<()> {
    let (estimate, lines) = lines(study, root, shard);
    for line in &lines {
        eprintln!("{line}");
    }
    let Some(e) = estimate else { return Ok(()) };
    if yes || e.seconds.0 <= CONFIRM_ABOVE_S || !std::io::stdin().is_terminal() {
        return Ok(());
    }
    let name = &study.header().name;
    let smaller = smaller_variant(name)
        .map(|v| format!("; a smaller variant: `just run experiment={v}`"))
        .unwrap_or_default();
    eprint!(
        "{name} is expected to run {} or more (above {}){smaller}. Go on? [y/N] ",
        duration(e.seconds.0),
        duration(CONFIRM_ABOVE_S)
    );
    std::io::stderr().flush().ok();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).ok();
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        return Ok(());
    }
    bail!(
        "not started: {name} would run about {}; `--yes` starts it without asking{smaller}",
        duration(e.seconds.0)
    )
}

/// A shipped experiment sized for this machine beside `name`: `<name>-fmnist` or `<name>-cpu`.
fn smaller_variant(name: &str) -> Option<String> {
    ["fmnist", "cpu"]
        .iter()
        .map(|suffix| format!("{name}-{suffix}"))
        .find(|v| {
            PathBuf::from("experiments")
                .join(format!("{v}.toml"))
                .is_file()
        })
}
