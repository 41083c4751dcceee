//! `batchlab claims` and `batchlab results`: the claims registry beside the committed verdicts
//! (the arithmetic and wording live in `batchlab_experiments::results`).

use std::path::{Path, PathBuf};

use crate::out::outln;
use anyhow::{bail, Context, Result};
use batchlab_experiments::claim_registry::Registry;
use batchlab_experiments::results::{claims_lines, collect, results_markdown};

/// `batchlab results`' arguments.
#[derive(clap::Args, Debug)]
pub struct ResultsArgs {
    /// The report root whose committed runs are read.
    #[arg(long, default_value = "reports")]
    pub reports: PathBuf,
    /// The file to write.
    #[arg(long, default_value = "docs/results.md")]
    pub out: PathBuf,
    /// Write nothing; fail if the file differs from what the reports give (what CI runs).
    #[arg(long)]
    pub check: bool,
}

/// Prints every registered claim with its verdict of record.
pub fn claims(reports: &Path) -> Result<()> {
    let registry = Registry::builtin()?;
    let results = collect(&registry, reports)?;
    for line in claims_lines(&results) {
        outln!("{line}");
    }
    Ok(())
}

/// Writes (or checks) docs/results.md.
pub fn results(args: &ResultsArgs) -> Result<()> {
    let registry = Registry::builtin()?;
    let text = results_markdown(&registry, &collect(&registry, &args.reports)?);
    if args.check {
        let current = std::fs::read_to_string(&args.out)
            .with_context(|| format!("cannot read {}", args.out.display()))?;
        if current != text {
            bail!(
                "{} is out of date with the committed findings and claims/registry.toml: run `batchlab results` and commit it",
                args.out.display()
            );
        }
        outln!("{} is current", args.out.display());
        return Ok(());
    }
    batchlab_experiments::run_dir::write_atomically(&args.out, &text)?;
    outln!("{}", args.out.display());
    Ok(())
}
