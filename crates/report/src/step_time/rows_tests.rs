use batchlab_method::rows::Status;
use std::fs::OpenOptions;
use std::io::Write;

use std::path::Path;

use batchlab_method::rows::step_time::RESULTS_HEADER;
use batchlab_method::rows::{append_rows, read_rows};
use batchlab_method::FileError;

use super::*;

// The typed names the runner used before rows went generic, kept so the tests read as before.
fn append_step_samples(path: &Path, rows: &[StepSample]) -> Result<(), FileError> {
    append_rows(path, rows)
}
fn read_step_samples(path: &Path) -> Result<Vec<StepSample>, FileError> {
    read_rows(path)
}

pub(crate) fn ok(batch_size: u32, round: u32, sample: u32, step_ms: f64) -> StepSample {
    StepSample {
        batch_size,
        round,
        sample: Some(sample),
        step_ms: Some(step_ms),
        status: Status::Ok,
        backend: "flex".into(),
        device: "cpu".into(),
        peak_mem_mb: Some(512.25),
        message: String::new(),
    }
}

pub(crate) fn failed(batch_size: u32, round: u32, status: &str, message: &str) -> StepSample {
    StepSample {
        sample: None,
        step_ms: None,
        status: status.parse().unwrap(),
        peak_mem_mb: None,
        message: message.into(),
        ..ok(batch_size, round, 0, 0.0)
    }
}

fn awkward_rows() -> Vec<StepSample> {
    let mut device = ok(2, 0, 0, 1.0 / 3.0);
    device.device = "NVIDIA \"Tesla\" T4, 16 GB".into();
    vec![
        ok(1, 0, 0, 12.5),
        ok(1, 0, 1, 12.25),
        device,
        failed(
            70,
            0,
            "oom",
            "CUDA out of memory. Tried to allocate 2.00 GiB, \"free\": 1.2 GiB\nline two",
        ),
        failed(
            71,
            1,
            "error",
            "panicked at 'x | y', src/lib.rs:3:5\r\nwindows line, é ü ∞",
        ),
        StepSample {
            peak_mem_mb: None,
            ..ok(3, 2, 4, 1e-7)
        },
    ]
}

#[test]
fn round_trip_with_awkward_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let rows = awkward_rows();
    append_step_samples(&path, &rows[..2]).unwrap();
    append_step_samples(&path, &rows[2..]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(&format!("{RESULTS_HEADER}\n")));
    assert_eq!(
        text.matches(RESULTS_HEADER).count(),
        1,
        "header written once"
    );
    assert_eq!(read_step_samples(&path).unwrap(), rows);
}

#[test]
fn empty_file_gets_a_header_and_reads_as_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    append_step_samples(&path, &[]).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("{RESULTS_HEADER}\n")
    );
    assert_eq!(read_step_samples(&path).unwrap(), vec![]);
}

#[test]
fn a_truncated_last_line_is_ignored_then_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let rows = awkward_rows();
    append_step_samples(&path, &rows).unwrap();
    for partial in [
        "5,0,3,12.5,o",
        "7,0,,,error,flex,cpu,,\"killed, mid\nmessage",
    ] {
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(partial.as_bytes()).unwrap();
        drop(file);
        // The reader skips the unterminated record ...
        assert_eq!(read_step_samples(&path).unwrap(), rows);
        // ... and the next append removes it instead of fusing with it.
        append_step_samples(&path, &[]).unwrap();
        assert_eq!(read_step_samples(&path).unwrap(), rows);
    }
    let more = vec![ok(9, 3, 0, 99.0)];
    append_step_samples(&path, &more).unwrap();
    assert_eq!(read_step_samples(&path).unwrap(), [rows, more].concat());
}

#[test]
fn errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.csv");
    let err = read_step_samples(&missing).unwrap_err().to_string();
    assert!(err.contains("missing.csv"), "{err}");

    let other = dir.path().join("other.csv");
    std::fs::write(&other, "a,b\n1,2\n").unwrap();
    let err = append_step_samples(&other, &[ok(1, 0, 0, 1.0)])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("other.csv") && err.contains("expected"),
        "{err}"
    );
    let err = read_step_samples(&other).unwrap_err().to_string();
    assert!(err.contains("other.csv"), "{err}");

    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        format!("{RESULTS_HEADER}\nnot-a-number,0,0,1.0,ok,flex,cpu,,\n"),
    )
    .unwrap();
    let err = read_step_samples(&bad).unwrap_err().to_string();
    assert!(err.contains("bad.csv"), "{err}");
}
