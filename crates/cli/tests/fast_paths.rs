//! `batchlab check-fast-paths`, the check the GPU campaign runs before it times anything: on
//! flex, every convolution + ReLU takes batchlab's path and agrees with burn's, and the plain
//! convolutions (libtorch's backward on LibTorch alone) take burn's on both sides.

use std::process::Command;

#[test]
fn the_fast_paths_agree_with_burn_on_flex() {
    let output = Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .arg("check-fast-paths")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Six convolutions + ReLU on batchlab's path; four plain convolutions on burn's on both
    // sides (libtorch's backward is LibTorch's alone).
    assert_eq!(stdout.matches(") agrees\n").count(), 10, "{stdout}");
    assert_eq!(
        stdout.matches("burn's path on both sides").count(),
        4,
        "{stdout}"
    );
    assert!(
        stdout.contains("every case agrees within 1e-4 on flex"),
        "{stdout}"
    );
    assert!(
        stdout.contains("batchlab's path against burn's"),
        "{stdout}"
    );
}
