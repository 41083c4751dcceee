# batchlab's commands. Logic lives in the `batchlab` binary; these are one-line shortcuts.
# Everything runs in the release profile: one build serves running, benchmarking and testing.

set shell := ["bash", "-euo", "pipefail", "-c"]

batchlab := "cargo run --release --quiet -p batchlab-cli --"

# Run experiments/NAME.toml (default: the quick CPU sweep); the last line printed is the report directory.
# Usage: just run | just run experiment=vgg16-step-time-cpu | just run vgg16-step-time-cpu --set sweep.rounds=3
run experiment="quickstart" *ARGS:
    {{batchlab}} run "{{trim_start_match(experiment, "experiment=")}}" {{ARGS}}

# Run a shardable study (train, steps-to-target) as SHARDS processes at once on this machine, one
# thread each (default: one per core); the shard that finishes last merges the report.
# Usage: just run-parallel steps-to-target-fmnist | just run-parallel steps-to-target-fmnist 4
run-parallel experiment shards=`nproc`:
    cargo build --release --quiet -p batchlab-cli
    pids=(); for i in $(seq 0 $(( {{shards}} - 1 ))); do \
        {{batchlab}} run "{{trim_start_match(experiment, "experiment=")}}" --shard "$i/{{shards}}" --set backend.threads=1 & pids+=($!); \
    done; status=0; for p in "${pids[@]}"; do wait "$p" || status=1; done; exit $status

# The whole test suite (what CI runs).
test:
    cargo test --release --workspace

# Training-step benchmarks on flex and the sweep harness's overhead.
bench *ARGS:
    {{batchlab}} bench {{ARGS}}

# flex's AVX-512 matrix kernels (the default build) against the AVX2 ones (a build without the
# `avx512` feature, kept as target/release/batchlab-no-avx512), interleaved: `rounds` alternating
# runs of the step benchmarks, the first binary swapped each round. Without AVX-512F both run AVX2.
bench-kernels rounds="3" samples="10":
    cargo build --release --quiet -p batchlab-cli --no-default-features
    cp target/release/batchlab target/release/batchlab-no-avx512
    cargo build --release --quiet -p batchlab-cli
    for r in $(seq 1 {{rounds}}); do \
        pair=(target/release/batchlab-no-avx512 target/release/batchlab); \
        if (( r % 2 == 0 )); then pair=("${pair[1]}" "${pair[0]}"); fi; \
        for b in "${pair[@]}"; do echo "== round $r: $b"; "$b" bench --only steps --samples {{samples}}; done; \
    done

# Any other batchlab command, e.g. `just batchlab list`.
batchlab *ARGS:
    {{batchlab}} {{ARGS}}

# Re-render a run's tables, figures and report.md from its results.csv.
report dir:
    {{batchlab}} report "{{dir}}"

# Build the GPU binary (target/release/batchlab with CUDA). CUDARC_CUDA_VERSION fixes the CUDA API
# version cudarc binds (13000 = CUDA 13.0, driver 580); set it to match the GPU machine's driver.
build-cuda:
    CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-13000}" cargo build --release -p batchlab-cli --features cuda

# Check that the GPU build compiles (no GPU needed).
check-cuda:
    CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-13000}" cargo check --release -p batchlab-cli --features cuda

# Formatting and lints, as required before every commit.
lint:
    cargo fmt --all -- --check
    cargo clippy --release --workspace --all-targets -- -D warnings
