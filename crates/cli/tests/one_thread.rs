//! A training study on one thread, end to end: every command runs on a thread of rayon's pool
//! (`cli::threads`), and the data loader prepares each batch's examples on that same pool, so
//! with `threads = 1` the command's wait for a batch must run the pool's work itself
//! (`datasets::loader`): without that, such a run hung for good.

mod common;

use std::{
    fs,
    process::Stdio,
    time::{Duration, Instant},
};

use common::{run_command, TRAIN};

/// Far more than the study takes (a few seconds): past it, the run is taken to hang.
const HANG: Duration = Duration::from_secs(240);

#[test]
fn a_training_study_on_one_thread_finishes() {
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("train.toml");
    fs::write(&config, format!("{TRAIN}\n[backend]\nthreads = 1\n")).unwrap();
    let mut child = run_command(&config, &scratch.path().join("reports"), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            panic!("a training study with threads = 1 still ran after {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");
}
