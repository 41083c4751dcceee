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
//! the report reads it as right-censored where it stopped (its record says where).
//!
//! With `budget.beaten_factor` F above 1 a beaten trial trains on to F x S before it stops:
//! still unable to lower steps to result, but right-censored further out, so the report's
//! bootstrap of steps to result (which treats a stopped trial as "not reached by its stop",
//! see `batchlab_report::steps_to_target::scaling::censored`) leaves fewer resamples unbounded.
//!
//! Evaluations are appended to results.csv as they happen, so a shard running at the same
//! time as this one contributes as soon as one of its trials reaches the target.

use std::path::Path;

use batchlab_method::reaching::reaches;
use batchlab_method::rows::{read_rows, train::TrainEval};

use crate::shard::run_dirs;

/// The step at which a trial beaten by a sibling that reached the target at `best` stops:
/// `factor` x `best`, rounded up (at least `best`).
pub fn stop_step(best: u64, factor: f64) -> u64 {
    ((best as f64 * factor).ceil() as u64).max(best)
}

/// How the trials.csv message of a beaten trial begins (its status is `ok`).
const BEATEN_PREFIX: &str = "beaten:";

/// The trials.csv message of a beaten trial (it begins with [`BEATEN_PREFIX`]).
pub fn beaten_message(stopped: u64, batch_size: u32, best: u64, factor: f64) -> String {
    let past = if factor > 1.0 {
        format!(" and it had trained {factor} x that")
    } else {
        String::new()
    };
    format!(
        "{BEATEN_PREFIX} stopped at step {stopped} because another trial of batch size {batch_size} reached the target at step {best}{past}"
    )
}

/// The results.csv files of this run: `dir`'s own and, for a shard, its sibling shards'.
fn results_files(dir: &Path) -> Vec<std::path::PathBuf> {
    run_dirs(dir)
        .into_iter()
        .map(|d| d.join("results.csv"))
        .filter(|p| batchlab_method::rows::stored::exists(p))
        .collect()
}

/// The fewest steps at which a trial of the cell whose trial ids start with `cell_prefix`
/// has reached `target` so far in this run, if any has. A file that cannot be read only
/// means no cutoff from it.
pub fn best_known_steps(dir: &Path, cell_prefix: &str, target: f64) -> Option<u64> {
    results_files(dir)
        .iter()
        .filter_map(|path| read_rows::<TrainEval>(path).ok())
        .flatten()
        .filter(|row| row.trial.starts_with(cell_prefix) && reaches(1.0 - row.val_accuracy, target))
        .map(|row| row.step)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlab_method::rows::train::RESULTS_HEADER;
    use std::fs;

    fn rows(lines: &[(&str, u64, f64)]) -> String {
        let mut text = format!("{RESULTS_HEADER}\n");
        for (trial, step, accuracy) in lines {
            text.push_str(&format!(
                "{trial},0,16,sgd,mlp,steps,0.5,{step},{},1,1,{accuracy},1,0,0\n",
                step * 16
            ));
        }
        text
    }

    #[test]
    fn a_beaten_trial_stops_at_the_factor_times_the_best() {
        assert_eq!(stop_step(100, 1.0), 100);
        assert_eq!(stop_step(100, 3.0), 300);
        assert_eq!(stop_step(7, 1.5), 11);
        let message = beaten_message(300, 64, 100, 3.0);
        assert!(message.starts_with(BEATEN_PREFIX), "{message}");
        assert!(
            message.ends_with("at step 100 and it had trained 3 x that"),
            "{message}"
        );
    }

    #[test]
    fn best_known_reads_this_cell_only() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("results.csv"),
            rows(&[
                ("mlp-sgd-b16-t0", 100, 0.80),
                ("mlp-sgd-b16-t0", 200, 0.91), // reaches 0.1 at 200
                ("mlp-sgd-b16-t1", 150, 0.95), // reaches at 150
                ("mlp-sgd-b160-t0", 10, 0.99), // another batch size
                ("mlp-sgd-nesterov-b16-t0", 20, 0.99), // another workload
                ("mlp-sgd-b16-t2", 50, 0.89),  // 0.11 error: not yet
            ]),
        )
        .unwrap();
        assert_eq!(
            best_known_steps(dir.path(), "mlp-sgd-b16-t", 0.1),
            Some(150)
        );
        assert_eq!(best_known_steps(dir.path(), "mlp-sgd-b32-t", 0.1), None);
        // Exactly on the target counts (1 - 0.9 rounds above 0.1).
        assert_eq!(
            best_known_steps(dir.path(), "mlp-sgd-b16-t", 0.05),
            Some(150)
        );
        assert_eq!(best_known_steps(dir.path(), "mlp-sgd-b16-t", 0.01), None);
    }

    #[test]
    fn a_shard_sees_its_siblings_and_a_partial_line_is_ignored() {
        let run = tempfile::tempdir().unwrap();
        let mine = run.path().join("shards/0-of-2");
        let sibling = run.path().join("shards/1-of-2");
        for (dir, text) in [
            (&mine, rows(&[("mlp-sgd-b16-t0", 300, 0.95)])),
            (
                &sibling,
                rows(&[("mlp-sgd-b16-t1", 120, 0.95)]) + "mlp-sgd-b16-t3,0,16,sgd,mlp,steps,0.5,10",
            ),
        ] {
            fs::create_dir_all(dir).unwrap();
            fs::write(dir.join("results.csv"), text).unwrap();
        }
        fs::write(mine.join("shard.json"), r#"{"index":0,"count":2}"#).unwrap();
        assert_eq!(best_known_steps(&mine, "mlp-sgd-b16-t", 0.1), Some(120));
        // Unsharded, a directory reads only its own file.
        assert_eq!(best_known_steps(&sibling, "mlp-sgd-b16-t", 0.1), Some(120));
        fs::remove_file(mine.join("shard.json")).unwrap();
        assert_eq!(best_known_steps(&mine, "mlp-sgd-b16-t", 0.1), Some(300));
    }
}
