//! `batchlab data list|fetch|info`.

use std::{io::IsTerminal, path::Path};

use crate::out::outln;
use anyhow::{anyhow, bail, Result};
use batchlab_datasets::{acquire::Acquire, catalog, spec::DatasetName};
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum Action {
    /// The datasets batchlab knows and whether each is on this machine.
    List,
    /// Download, verify and extract a dataset (resumes a broken download).
    Fetch {
        /// cifar10, cats-vs-dogs, fashion-mnist or mnist.
        #[arg(value_parser = parse_name)]
        name: DatasetName,
        /// Base URL of a mirror serving the same file names (still verified against the
        /// official checksums).
        #[arg(long, env = "BATCHLAB_MIRROR")]
        mirror: Option<String>,
    },
    /// Where a dataset is, its checksum state, counts per split and class, skipped files.
    Info {
        /// cifar10, cats-vs-dogs, fashion-mnist, mnist or synthetic.
        #[arg(value_parser = parse_name)]
        name: DatasetName,
    },
}

/// What `run`, `check` and `submit` do with a dataset the study reads that is not on this
/// machine: fetch it (verified, resumable, once, before any worker starts), or not.
#[derive(Debug, Clone, clap::Args)]
pub struct FetchArgs {
    /// Never download: a missing dataset stops the run with the files to put where.
    #[arg(long, env = "BATCHLAB_OFFLINE")]
    offline: bool,
    /// Base URL of a mirror serving the datasets' files (still verified against the official
    /// checksums).
    #[arg(long, env = "BATCHLAB_MIRROR")]
    mirror: Option<String>,
}

impl FetchArgs {
    /// For `run` and `submit`: fetch what is missing, unless offline.
    pub fn acquire(&self) -> Acquire {
        if self.offline {
            return Acquire::Offline;
        }
        Acquire::Fetch {
            mirror: self.mirror.clone(),
            progress: std::io::stderr().is_terminal(),
        }
    }

    /// For `check`: say what `run` would fetch, fetch nothing.
    pub fn plan(&self) -> Acquire {
        if self.offline {
            Acquire::Offline
        } else {
            Acquire::Plan
        }
    }
}

fn parse_name(text: &str) -> Result<DatasetName, String> {
    DatasetName::parse(text)
}

pub fn run(action: Action, data_dir: &Path) -> Result<()> {
    let lines = match action {
        Action::List => DatasetName::ALL
            .iter()
            .map(|&name| match catalog::locate(name, data_dir) {
                Ok(dir) => format!("{:<14} present: {}", name.as_str(), dir.display()),
                Err(_) => format!(
                    "{:<14} missing: batchlab data fetch {}",
                    name.as_str(),
                    name.as_str()
                ),
            })
            .collect(),
        Action::Fetch { name, mirror } => {
            let progress = std::io::stderr().is_terminal();
            catalog::fetch(name, data_dir, mirror.as_deref(), progress).map_err(|e| anyhow!(e))?
        }
        Action::Info { name } => catalog::info(name, data_dir).map_err(|e| anyhow!(e))?,
    };
    for line in &lines {
        outln!("{line}");
    }
    let mismatched = lines
        .iter()
        .filter(|l| l.contains("CHECKSUM MISMATCH"))
        .count();
    if mismatched > 0 {
        bail!(
            "{mismatched} file(s) above do not match their published checksums: delete them and run `batchlab data fetch` again"
        );
    }
    Ok(())
}
