//! The row type of every CSV file a run writes, and the one way such files are appended to
//! and read: serde through the `csv` crate, by column name, never by position.
//!
//! - [`append_rows`], [`read_rows`], [`read_rows_so_far`]: crash-safe appends, a strict reader,
//!   and the reader a resumed run uses (see [`file`]).
//! - [`merge`]: the rows a shard contributes to the merged results (those of its finished
//!   trials).
//! - [`find_batch`]: a batch-size finder's `probes.csv` ([`find_batch::ProbeSample`]).
//! - [`step_time`]: a step-time sweep's `results.csv` ([`step_time::StepSample`]).
//! - [`train`]: a training study's `results.csv` ([`train::TrainEval`]) and `trials.csv`
//!   ([`train::TrialRecord`]).
//! - [`steps_to_target`]: a steps-to-target study's `search.csv` ([`steps_to_target::SearchRow`])
//!   and `noise.csv` ([`steps_to_target::NoiseRow`]).
//!
//! - [`stored`]: a finished run's large tables as Parquet, read back as the same CSV text.
//!
//! Numbers are written in Rust's shortest round-tripping form (`{}` of an f64, not the
//! `csv` crate's own float format), so every value reads back bit for bit and files written
//! before this crate existed keep their exact text; NaN and infinities as `NaN`, `inf` and
//! `-inf`.

pub mod file;
pub mod find_batch;
pub mod merge;
mod number;
pub mod prediction;
pub mod status;
pub mod step_time;
pub mod steps_to_target;
pub mod stored;
pub mod train;

pub use file::{append_rows, cut_tail, read_rows, read_rows_so_far, retain_rows};
pub use status::Status;

/// One row of a CSV file: its serde field names, in order, are the file's columns.
pub trait Row: serde::Serialize + serde::de::DeserializeOwned {
    /// The file's header line, exactly (checked against the fields by each row's tests).
    const HEADER: &'static str;
    /// Checks values no writer of ours produces (a negative time, an unknown status): the
    /// column at fault and what is wrong. Readers reject such a row, naming file and line.
    fn check(&self) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// `Err` unless `value` (of `column`) is a fraction in [0, 1]; NaN means "not measured".
pub(crate) fn check_fraction(
    column: &'static str,
    value: f64,
) -> Result<(), (&'static str, String)> {
    if value.is_nan() || (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err((column, format!("{value} is not a fraction between 0 and 1")))
    }
}

/// `Err` if `value` (of `column`) is negative or infinite; NaN means "not measured".
pub(crate) fn check_time(column: &'static str, value: f64) -> Result<(), (&'static str, String)> {
    if value < 0.0 || value.is_infinite() {
        Err((column, format!("{value} is not a possible time or size")))
    } else {
        Ok(())
    }
}

/// A row that belongs to one trial: a resumed run drops those of trials that never finished,
/// so that a trial run again writes its rows once.
pub trait TrialRow: Row {
    /// The id of the trial the row belongs to.
    fn trial(&self) -> &str;
}

/// The header the `csv` crate derives from `row`'s serde fields.
#[cfg(test)]
pub(crate) fn serde_header<T: Row>(row: &T) -> String {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.serialize(row).unwrap();
    let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
    text.lines().next().unwrap().to_string()
}
