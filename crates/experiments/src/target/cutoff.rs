//! Stopping a trial that can no longer lower its batch size's steps to result.
//!
//! Steps to result at a batch size is the earliest evaluation step at which *any* of its
//! trials reached the target. Once one trial has reached it at step S, another trial of the
//! same (workload, batch size) that has not reached it by step S cannot change that number,
//! whatever it does later; training it on costs the most CPU of the whole search (a bad
//! learning rate runs to the end of its budget). Such a trial is stopped at S ("beaten").
//! Steps to result, the best trial and its metaparameters are the same as without the
//! cutoff (a trial reaching at exactly S still counts: ties go to the first trial); what
//! changes is only whether a beaten trial would have reached the target later, which is why
//! the report counts it among the missed and its record says where it stopped.
//!
//! Evaluations are appended to results.csv as they happen, so a shard running at the same
//! time as this one contributes as soon as one of its trials reaches the target.

use std::{fs, path::Path};

use batchlab_report::{
    target::steps::TARGET_SLACK,
    train::{read_evals, TrainEval},
};

use crate::shard::shard_of;

/// The results.csv files of this run: `dir`'s own and, for a shard, its sibling shards'.
fn results_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let siblings = match (shard_of(dir), dir.parent()) {
        (Ok(Some(_)), Some(shards)) => fs::read_dir(shards)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default(),
        _ => vec![dir.to_path_buf()],
    };
    siblings
        .into_iter()
        .map(|d| d.join("results.csv"))
        .filter(|p| p.exists())
        .collect()
}

/// Whether an evaluation row reached `target` (the report's rule, with its slack).
fn reached(row: &TrainEval, target: f64) -> bool {
    1.0 - row.val_accuracy <= target + TARGET_SLACK * target.abs().max(1.0)
}

/// The fewest steps at which a trial of the cell whose trial ids start with `cell_prefix`
/// has reached `target` so far in this run, if any has. A file that cannot be read only
/// means no cutoff from it.
pub fn best_known_steps(dir: &Path, cell_prefix: &str, target: f64) -> Option<u64> {
    results_files(dir)
        .iter()
        .filter_map(|path| read_evals(path).ok())
        .flatten()
        .filter(|row| row.trial.starts_with(cell_prefix) && reached(row, target))
        .map(|row| row.step)
        .min()
}
