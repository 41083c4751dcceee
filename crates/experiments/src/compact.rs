//! A finished run stored compactly (docs/ARCHITECTURE.md, "Storage"): a sharded run's rows in
//! its top directory alone ([`crate::shard::prune_merged`]), and each large raw table as
//! Parquet ([`batchlab_method::rows::stored`]); CSV again on demand ([`export_csv`]).

use std::path::{Path, PathBuf};

use batchlab_method::rows::stored::{self, Compacted, COMPACT_FROM_BYTES};
use batchlab_report::step_time::REFERENCE_TABLES;

use crate::{
    error::RunError,
    shard::{prune_merged, shard_dirs},
};

/// Every raw table a kind appends to while it runs: what a finished run compacts and what
/// [`export_csv`] writes.
pub const RAW_TABLES: [&str; 7] = [
    "results.csv",
    "trials.csv",
    "search.csv",
    "noise.csv",
    "stages.csv",
    "warmup.csv",
    "probes.csv",
];

/// [`RAW_TABLES`] and the GPU campaign's PyTorch references beside a step-time run
/// ([`REFERENCE_TABLES`]): every table compacted and exported.
fn every_table() -> impl Iterator<Item = &'static str> {
    RAW_TABLES.into_iter().chain(REFERENCE_TABLES)
}

/// What [`compact_run`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// A sharded run's shards were pruned now.
    pub pruned_shards: bool,
    /// A sharded run not yet finished in every shard: nothing was compacted.
    pub unfinished_shards: bool,
    /// Each raw table present, and what became of it.
    pub tables: Vec<(PathBuf, Compacted)>,
}

/// Stores the finished run `dir` compactly: for a sharded run, once every shard is complete,
/// the shards' copies of the merged rows go; then each raw table of at least
/// [`COMPACT_FROM_BYTES`] becomes Parquet, the shards' `trials.csv` included. A sharded run with a shard still to finish is left
/// as it is (its merged tables are rewritten at every merge).
pub fn compact_run(dir: &Path) -> Result<Compaction, RunError> {
    let sharded = dir.join("shards").is_dir();
    let pruned_shards = sharded && prune_merged(dir)?;
    let unfinished_shards = sharded && !crate::shard::is_merged(dir);
    let mut tables = Vec::new();
    if !unfinished_shards {
        // A merged shard keeps only its ledger, trials.csv (see `shard::prune_merged`).
        let ledgers = shard_dirs(dir).into_iter().map(|d| d.join("trials.csv"));
        let own = every_table().map(|name| dir.join(name));
        for path in own.chain(ledgers) {
            match stored::compact(&path, COMPACT_FROM_BYTES)? {
                Compacted::Absent => {}
                done => tables.push((path, done)),
            }
        }
    }
    Ok(Compaction {
        pruned_shards,
        unfinished_shards,
        tables,
    })
}

/// Writes each raw table of the run `dir`, whether stored as CSV or Parquet, as CSV into `out`
/// (created if missing); returns the files written.
pub fn export_csv(dir: &Path, out: &Path) -> Result<Vec<PathBuf>, RunError> {
    std::fs::create_dir_all(out).map_err(|e| RunError::io(out, e))?;
    let mut written = Vec::new();
    for name in every_table() {
        let to = out.join(name);
        if stored::write_csv_to(&dir.join(name), &to)? {
            written.push(to);
        }
    }
    if written.is_empty() {
        return Err(RunError::io(
            dir,
            format!(
                "no raw table here (expected one of {})",
                RAW_TABLES.join(", ")
            ),
        ));
    }
    Ok(written)
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
