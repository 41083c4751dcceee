use std::fs;

use polars_core::prelude::DataType;
use polars_io::prelude::{ParquetReader, SerReader};

use super::*;
use crate::rows::train::{Budget, TrialRecord, TRIALS_HEADER};
use crate::rows::{append_rows, read_rows};

/// Every kind of field a writer of ours produces: u32 and u64 counts, an f32 loss widened to
/// f64, f64 times, NaN and infinity, an empty number, a clock written to the microsecond, text
/// with commas, quotes and a line break.
const TABLE: &str = "trial,batch_size,examples,loss,seconds,accuracy,offset,clock,message\n\
b8-s0,8,4294967296,1.9362938404083252,0.027586265000000002,0.4332,-3,0.19033,\n\
b16-s0,16,12,0.5,NaN,inf,7,-0.5,\"out of memory, \"\"really\"\"\nat step 3\"\n\
b32-s0,32,5,0.25,0.0000001,,0,,plain\n";

#[test]
fn a_table_reads_back_byte_for_byte_with_each_column_narrowly_typed() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("results.csv");
    fs::write(&csv, TABLE).unwrap();
    let done = compact(&csv, 0).unwrap();
    assert!(matches!(done, Compacted::Parquet { .. }), "{done:?}");
    assert!(!csv.exists());
    assert_eq!(read_text(&csv).unwrap().unwrap(), TABLE);
    let frame = ParquetReader::new(fs::File::open(parquet_path(&csv)).unwrap())
        .finish()
        .unwrap();
    let types: Vec<DataType> = frame.columns().iter().map(|c| c.dtype().clone()).collect();
    assert_eq!(
        types,
        [
            DataType::String,
            DataType::UInt32,
            DataType::UInt64,
            DataType::Float32,
            DataType::Float64,
            DataType::Float64,
            DataType::Int64,
            DataType::Int64,
            DataType::String,
        ]
    );
    // The clock as counts of its last decimal, its scale in the Parquet column's name.
    assert_eq!(frame.columns()[7].name().as_str(), "clock#1e-5");
    let out = dir.path().join("copy.csv");
    assert!(write_csv_to(&csv, &out).unwrap());
    assert_eq!(fs::read_to_string(out).unwrap(), TABLE);
}

#[test]
fn text_that_would_not_read_back_the_same_stays_csv() {
    // `1.50` reads as 1.5, which `{}` writes as `1.5`: a number column would lose the text.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("results.csv");
    let table = "trial,v\na,1.50\nb,2\n";
    fs::write(&csv, table).unwrap();
    assert!(matches!(
        compact(&csv, 0).unwrap(),
        Compacted::Parquet { .. }
    ));
    // Kept as text instead: the column is not a number column by the `{}` rule.
    assert_eq!(read_text(&csv).unwrap().unwrap(), table);
}

#[test]
fn small_and_cut_short_tables_stay_csv_and_a_stale_copy_goes() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("results.csv");
    fs::write(&csv, TABLE).unwrap();
    fs::write(parquet_path(&csv), b"stale").unwrap();
    assert_eq!(compact(&csv, 1 << 20).unwrap(), Compacted::Small);
    assert!(csv.exists() && !parquet_path(&csv).exists());
    fs::write(&csv, &TABLE[..TABLE.len() - 3]).unwrap();
    assert_eq!(compact(&csv, 0).unwrap(), Compacted::CutShort);
    assert!(csv.exists());
    assert_eq!(
        compact(&dir.path().join("none.csv"), 0).unwrap(),
        Compacted::Absent
    );
}

fn record(trial: &str) -> TrialRecord {
    TrialRecord {
        trial: trial.into(),
        seed: 1,
        batch_size: 8,
        optimizer: "sgd".into(),
        variant: "standard".into(),
        budget: Budget::Epochs,
        status: crate::rows::Status::Ok,
        epochs: 1.0,
        steps: 10,
        examples: 80,
        train_seconds: 0.5,
        data_seconds: 0.1,
        eval_seconds: 0.1,
        test_seconds: 0.2,
        test_loss: f64::from(0.3f32),
        test_accuracy: 0.9,
        message: String::new(),
    }
}

#[test]
fn rows_read_from_either_form_and_appending_expands_the_parquet_form() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("trials.csv");
    append_rows(&csv, &[record("a"), record("b")]).unwrap();
    let before = fs::read_to_string(&csv).unwrap();
    assert!(before.starts_with(TRIALS_HEADER));
    compact(&csv, 0).unwrap();
    assert!(!csv.exists() && exists(&csv));
    let rows: Vec<TrialRecord> = read_rows(&csv).unwrap();
    assert_eq!(rows, [record("a"), record("b")]);
    append_rows(&csv, &[record("c")]).unwrap();
    assert!(!parquet_path(&csv).exists());
    let after = fs::read_to_string(&csv).unwrap();
    assert!(
        after.starts_with(&before) && after.ends_with("\n"),
        "{after}"
    );
    assert_eq!(read_rows::<TrialRecord>(&csv).unwrap().len(), 3);
}

#[test]
fn a_damaged_parquet_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("noise.csv");
    fs::write(parquet_path(&csv), b"PAR1 not really").unwrap();
    let err = read_rows::<TrialRecord>(&csv).unwrap_err().to_string();
    assert!(
        err.contains("noise.parquet") && err.contains("not a table"),
        "{err}"
    );
}

#[test]
fn clock_columns_lose_only_float_noise_below_a_nanosecond() {
    // train_seconds: float sums of nanosecond readings; mean_seconds: not readings (a mean
    // lies anywhere between two nanoseconds), kept exactly; a NaN stays a NaN.
    let table = "trial,train_seconds,mean_seconds\n\
a,0.08887546499999997,0.1234567891234\n\
b,0.16906489599999994,0.5\n\
c,NaN,0.25\n\
d,12.5,0.125\n";
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("results.csv");
    fs::write(&csv, table).unwrap();
    assert!(matches!(
        compact(&csv, 0).unwrap(),
        Compacted::Parquet { .. }
    ));
    let expected = "trial,train_seconds,mean_seconds\n\
a,0.088875465,0.1234567891234\n\
b,0.169064896,0.5\n\
c,NaN,0.25\n\
d,12.5,0.125\n";
    assert_eq!(read_text(&csv).unwrap().unwrap(), expected);
    // A clock column off a whole nanosecond by more than noise is not a clock: kept.
    let off = "trial,train_seconds\na,0.0888754654\nb,0.5\n";
    let csv = dir.path().join("off.csv");
    fs::write(&csv, off).unwrap();
    compact(&csv, 0).unwrap();
    assert_eq!(read_text(&csv).unwrap().unwrap(), off);
}
