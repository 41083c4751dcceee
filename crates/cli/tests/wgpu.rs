//! The GPU code path end to end without a GPU (a build with `--features wgpu`, `just
//! test-wgpu`): burn's CubeCL backend over wgpu, on whatever Vulkan adapter the machine has
//! (in CI, Mesa's software one, lavapipe). A step-time sweep, a training grid and a
//! steps-to-target search run on `wgpu` as on flex: the device is synchronised before each
//! clock read and its memory is read from the CubeCL runtime, as on cuda.

#![cfg(feature = "wgpu")]

mod common;

use std::{fs, path::Path};

use common::{run_to_dir, STEP_TIME, TARGET, TRAIN};

fn meta(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap()
}

fn on_wgpu(config: &str) -> String {
    format!("{config}\n[backend]\nname = \"wgpu\"\n")
}

#[test]
fn studies_run_on_wgpu_and_name_its_adapter() {
    let scratch = tempfile::tempdir().unwrap();
    // A short sweep: every new batch size compiles its shaders on its first step.
    let sweep = STEP_TIME
        .replace("batch_range = [1, 24]", "batch_range = [1, 6]")
        .replace("rounds = 3", "rounds = 2");
    for (name, config) in [
        ("step-time", sweep.as_str()),
        ("train", TRAIN),
        ("target", TARGET),
    ] {
        let path = scratch.path().join(format!("{name}.toml"));
        fs::write(&path, on_wgpu(config)).unwrap();
        let dir = run_to_dir(&path, &scratch.path().join("reports"));
        let meta = meta(&dir);
        assert_eq!(meta["backend"], "wgpu", "{name}: {meta}");
        assert_eq!(meta["status"], "complete", "{name}: {meta}");
        let device = meta["device"].as_str().unwrap();
        // The adapter in words: name (graphics API, device type, driver); a CPU adapter is a
        // software rasteriser, and says so wherever the device is named.
        assert!(device.contains("device, driver"), "{name}: {device}");
        if device.contains("Cpu device") {
            assert!(device.contains("software rasteriser"), "{name}: {device}");
        }
        let results = common::table(&dir.join("results.csv"));
        assert!(results.lines().count() > 1, "{name}: no results");
        let report = fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(
            report.contains(device),
            "{name}: the report does not name {device}"
        );
        if name == "step-time" {
            // Device memory from the CubeCL runtime, in every sample's peak_mem_mb (the
            // column before the message, empty when ok; the device column holds commas).
            assert!(results.starts_with(
                "batch_size,round,sample,step_ms,status,backend,device,peak_mem_mb,message\n"
            ));
            for line in results.lines().skip(1) {
                let mb: f64 = line.rsplit(',').nth(1).unwrap().parse().unwrap();
                assert!(mb > 0.0, "{line}");
            }
        }
    }
}

/// A batch-size search on a device: the limit is the device's memory (`available`), each
/// probe's peak the CubeCL allocator's reservation.
const FIND_BATCH: &str = r#"
[experiment]
name = "wgpu-find-batch"
kind = "find-batch"
description = "a tiny MLP's batch-size search on wgpu, capped at 256"

[model]
architecture = "mlp"
input = [1, 8, 8]
classes = 4
hidden = [64]

[optimizer]
name = "sgd"

[curve]
batch_sizes = [1, 4, 16, 64]
repeats = 1

[search]
memory_budget = "available"
start = 16
max_batch = 256

[probe]
warmup_steps = 1
samples = 2
"#;

#[test]
fn the_batch_size_search_probes_the_device() {
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join("find-batch.toml");
    fs::write(&path, on_wgpu(FIND_BATCH)).unwrap();
    let dir = run_to_dir(&path, &scratch.path().join("reports"));
    let meta = meta(&dir);
    assert_eq!(meta["backend"], "wgpu", "{meta}");
    assert_eq!(meta["status"], "complete", "{meta}");
    let probes = common::table(&dir.join("probes.csv"));
    assert!(probes.lines().count() > 4, "{probes}");
    let report = fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("256"), "{report}");
}

/// The GPU campaign rehearsed on wgpu (scripts/gpu-campaign.sh --rehearse): burn's CubeCL path,
/// which cuda takes on the card, end to end through packing and `gpu-import`; then again with the
/// kernel cache it brought back, which starts warm and tunes nothing. MobileNet alone, at one
/// batch size: on lavapipe, with the autotuner, VGG16's first step at 3x32x32 takes minutes, and
/// each batch size's first MobileNet step tunes anew (batch sizes 1-3 took 480 s alone on a
/// 2-core Zen 3 EPYC and overran the campaign's 600 s budget in CI; batch size 1 alone, 118 s
/// cold and 58 s warm). tests/campaign.rs rehearses the whole shrunk sweep on flex.
#[test]
fn the_campaign_rehearses_packs_imports_and_reruns_warm_on_wgpu() {
    let scratch = tempfile::tempdir().unwrap();
    let keys = |run: &Path| {
        let meta = meta(run);
        assert_eq!(meta["backend"], "wgpu", "{meta}");
        assert_eq!(meta["status"], "complete", "{meta}");
        assert!(run.join("report.md").is_file() && run.join("warmup.csv").is_file());
        let cache = &meta["kernel_cache"];
        (
            cache["keys_at_start"].as_u64().unwrap(),
            cache["keys_at_end"].as_u64().unwrap(),
        )
    };
    let one = ["sweep.batch_range=[1,1]"];
    let cold = common::rehearse_campaign(
        "wgpu",
        "mobilenet-step-time",
        &one,
        &scratch.path().join("cache"),
    );
    let (start, end) = keys(&cold.runs[0]);
    assert!(
        end > start,
        "the first go tuned nothing: {start} -> {end} keys"
    );
    let warm = common::rehearse_campaign("wgpu", "mobilenet-step-time", &one, &cold.cache);
    let (start, end) = keys(&warm.runs[0]);
    assert!(start > 0, "the imported cache was not read");
    assert_eq!(end, start, "the go with the imported cache tuned again");
}
