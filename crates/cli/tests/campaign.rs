//! The GPU campaign rehearsed on the CPU (flex), end to end: runs, packing into at most 8 files
//! of at most 16 MiB, and `gpu-import` restoring the reports. `tests/wgpu.rs` rehearses it on
//! wgpu, the CubeCL path cuda takes.

mod common;

#[test]
fn the_campaign_rehearses_packs_and_imports_on_the_cpu() {
    let scratch = tempfile::tempdir().unwrap();
    let rehearsal = common::rehearse_campaign(
        "flex",
        "vgg16-step-time,mobilenet-step-time",
        &[],
        &scratch.path().join("gpu-cache"),
    );
    for run in rehearsal.runs {
        let meta = std::fs::read_to_string(run.join("meta.json")).unwrap();
        assert!(meta.contains("\"status\": \"complete\""), "{meta}");
        assert!(meta.contains("\"backend\": \"flex\""), "{meta}");
        assert!(run.join("report.md").is_file() && run.join("step_time.svg").is_file());
    }
}
