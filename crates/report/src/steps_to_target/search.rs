//! `search.csv`: the metaparameters of every trial of a steps-to-target study, one row per
//! trial, appended while the study runs (beside the training runner's `results.csv` and
//! `trials.csv`, which know nothing of learning rates or momenta).
//!
//! Appends are crash safe and readers ignore a trailing partial record (see `crate::csv`).
//! Numbers are written in Rust's shortest round-tripping form, so a learning rate reads back
//! bit for bit. Reading is strict: a field that is not what its column holds is an error
//! naming the file, line and column.
//!
//! A runner may append a trial's row twice (it writes the row before the trial's
//! `trials.csv` row, and a supervisor that sees the worker crash in between writes both
//! again); [`latest_search`] keeps the last row of each trial.

use std::collections::BTreeMap;
use std::path::Path;

use crate::csv::{append_lines, quote, read_records, Fields};
use crate::ReportError;

/// The header of `search.csv`, exactly.
pub const SEARCH_HEADER: &str =
    "trial,workload,batch_size,index,learning_rate,momentum,effective_learning_rate";

/// One row of `search.csv`: the metaparameters one trial was trained with.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRow {
    /// The trial's id, as in `trials.csv` and `results.csv`.
    pub trial: String,
    /// `<model>/<optimizer>`, e.g. `simple-cnn/sgd-momentum`.
    pub workload: String,
    /// Training examples per optimizer step.
    pub batch_size: u32,
    /// The trial's position in the quasi-random sequence (the same index gives the same
    /// metaparameters at every batch size).
    pub index: u64,
    /// The learning rate.
    pub learning_rate: f64,
    /// The momentum; 0 for plain SGD.
    pub momentum: f64,
    /// `learning_rate / (1 - momentum)`: the step size momentum amounts to at equilibrium,
    /// which Shallue et al. plot for momentum workloads.
    pub effective_learning_rate: f64,
}

impl SearchRow {
    /// Whether the trial used momentum (a momentum above 0).
    pub fn has_momentum(&self) -> bool {
        self.momentum > 0.0
    }
}

/// Appends `rows` to `path` (normally `<run>/search.csv`) as whole lines, creating the file
/// with [`SEARCH_HEADER`] if it is missing or empty, then syncs it. Fails if the file has
/// another header. One writer per file at a time.
pub fn append_search(path: &Path, rows: &[SearchRow]) -> Result<(), ReportError> {
    let mut out = String::new();
    for r in rows {
        // `{}` of an f64 prints the shortest text that parses back to the same value.
        let fields = [
            quote(&r.trial),
            quote(&r.workload),
            r.batch_size.to_string(),
            r.index.to_string(),
            r.learning_rate.to_string(),
            r.momentum.to_string(),
            r.effective_learning_rate.to_string(),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    append_lines(path, SEARCH_HEADER, &out)
}

/// Every complete row of a `search.csv`, in file order.
pub fn read_search(path: &Path) -> Result<Vec<SearchRow>, ReportError> {
    read_records(path, SEARCH_HEADER)?
        .iter()
        .map(|record| {
            let f = Fields::new(path, record, SEARCH_HEADER);
            Ok(SearchRow {
                trial: f.string(0),
                workload: f.string(1),
                batch_size: f.u32(2)?,
                index: f.u64(3)?,
                learning_rate: f.f64(4)?,
                momentum: f.f64(5)?,
                effective_learning_rate: f.f64(6)?,
            })
        })
        .collect()
}

/// The last row of each trial id: a row written twice (see the module documentation)
/// counts once.
pub fn latest_search(rows: Vec<SearchRow>) -> BTreeMap<String, SearchRow> {
    rows.into_iter().map(|r| (r.trial.clone(), r)).collect()
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
