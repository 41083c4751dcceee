# batchlab's commands. Logic lives in the `batchlab` binary; these are one-line shortcuts.
# Everything runs in the release profile: one build serves running, benchmarking and testing.

set shell := ["bash", "-euo", "pipefail", "-c"]

batchlab := "bash scripts/batchlab.sh"

# The project-local PyTorch of the LibTorch backend, and the environment torch-sys builds in.
venv_tch := ".venv-tch"
# LibTorch builds in its own target directory: burn with `tch` is another feature set, and sharing
# target/ would rebuild burn each time the default build and this one alternate.
tch_target := "target/tch"
wgpu_target := env_var_or_default("BATCHLAB_WGPU_TARGET", "target/wgpu")
no_avx512_target := "target/no-avx512"
with_torch := "VIRTUAL_ENV=\"$PWD/" + venv_tch + "\" PATH=\"$PWD/" + venv_tch + "/bin:$PATH\" LIBTORCH_USE_PYTORCH=1"
# The GPU machine's PyTorch, and the environment the tch-cuda binary builds against.
torch_gpu := "2.11.0"
venv_tch_cuda := ".venv-tch-cuda"
tch_cuda_target := "target/tch-cuda"
cuda_target := "target/cuda"
with_torch_cuda := "VIRTUAL_ENV=\"$PWD/" + venv_tch_cuda + "\" PATH=\"$PWD/" + venv_tch_cuda + "/bin:$PATH\" LIBTORCH_USE_PYTORCH=1"

# Run experiments/NAME.toml (default: the quick CPU sweep); the last line printed is the report directory.
# Usage: just run | just run experiment=vgg16-step-time-cpu | just run vgg16-step-time-cpu --set sweep.rounds=3
run experiment="quickstart" *ARGS:
    {{batchlab}} run "{{trim_start_match(experiment, "experiment=")}}" {{ARGS}}

# Run a shardable study (train, steps-to-target) as SHARDS processes at once on this machine, one
# thread each (default: one per core); the shard that finishes last merges the report.
# Usage: just run-parallel steps-to-target-fmnist | just run-parallel steps-to-target-fmnist 4
# | just run-parallel steps-to-target-fmnist 2 --resume (further arguments go to every shard's run)
run-parallel experiment shards=`nproc` *ARGS:
    cargo build --release --quiet -p batchlab-cli
    pids=(); for i in $(seq 0 $(( {{shards}} - 1 ))); do \
        {{batchlab}} run "{{trim_start_match(experiment, "experiment=")}}" --shard "$i/{{shards}}" --set backend.threads=1 {{ARGS}} & pids+=($!); \
    done; status=0; for p in "${pids[@]}"; do wait "$p" || status=1; done; exit $status

# The whole test suite (what CI runs). Its runs race their paths in a directory of their own,
# not this machine's (`BATCHLAB_CACHE_DIR`): choices timed while the suite loads every core
# would be kept for the real runs after it.
test:
    cache="$(mktemp -d)"; trap 'rm -rf "$cache"' EXIT; BATCHLAB_CACHE_DIR="$cache" cargo test --release --workspace

# Training-step benchmarks on every backend built in (interleaved), the sweep harness's overhead,
# the data loader and an epoch's split. `just bench-tch` runs them with LibTorch beside flex.
bench *ARGS:
    {{batchlab}} bench {{ARGS}}

# The benchmarks from the LibTorch build: flex and tch side by side in one interleaved run.
bench-tch *ARGS: build-tch
    target/release/batchlab-tch bench {{ARGS}}

# Every way this machine can run the three standard training steps, side by side in one run:
# flex (the default build), flex with AVX2 kernels only (a build without `avx512`, where the CPU
# has AVX-512, and there PyTorch and Keras held to AVX2 too, like for like), tch (the LibTorch build, on tch alone: flex's small CNN beside libtorch in one
# process runs up to 1.6x slower, see docs/tch-performance.md; the GPU campaign's tch-cuda build
# serves where it exists; with only a PyTorch environment and no LibTorch build, tch is left out
# and the log says so), plain PyTorch (scripts/pytorch_steps.py) and Keras 3 on TensorFlow
# (scripts/keras_steps.py), the same networks and protocol. `rounds` rounds, each running every
# framework once in a rotated order, one round of `samples` steps each; the whole output goes to
# docs/bench/<date>-<cpu>.log (scripts/bench-frameworks.sh).
bench-frameworks rounds="3" samples="10": setup-keras
    cargo build --release --quiet -p batchlab-cli
    if grep -qw avx512f /proc/cpuinfo; then just build-no-avx512; fi
    test -x target/release/batchlab-tch || test -x {{tch_cuda_target}}/release/batchlab || test -x .venv-tch-cuda/bin/python || just build-tch
    bash scripts/bench-frameworks.sh {{rounds}} {{samples}}

# Keras 3 on TensorFlow (CPU) for `bench-frameworks`, in the git-ignored .venv-keras (about
# 1.6 GB installed), once.
setup-keras:
    test -x .venv-keras/bin/python || python3 -m venv .venv-keras
    .venv-keras/bin/python -c "import keras, tensorflow" 2>/dev/null || .venv-keras/bin/pip install tensorflow-cpu==2.21.0 keras==3.15.1

# flex without its AVX-512 matrix kernels (`--no-default-features`), as
# target/release/batchlab-no-avx512, built in its own target directory: another feature set of
# burn, which in target/ would rebuild the default build's burn twice.
build-no-avx512:
    cargo build --release --quiet -p batchlab-cli --no-default-features --target-dir {{no_avx512_target}}
    mkdir -p target/release && cp {{no_avx512_target}}/release/batchlab target/release/batchlab-no-avx512

# Which matrix kernels flex runs on this machine, chosen by measurement: the default build
# (AVX-512 kernels) against the AVX2 one (target/release/batchlab-no-avx512), `rounds`
# alternating runs of the step benchmarks; the faster on the geometric mean of the three cases
# is kept per machine, and `just run` / `just batchlab` start that build from then on
# (scripts/choose-kernels.sh, scripts/batchlab.sh); logged to docs/bench/<date>-<cpu>-kernels.log.
choose-kernels rounds="3" samples="10": build-no-avx512
    cargo build --release --quiet -p batchlab-cli
    bash scripts/choose-kernels.sh {{rounds}} {{samples}}

# flex's convolution paths and dense products measured on this machine against the fixed
# thresholds, interleaved, on the standard steps or those `args` pick (e.g. `--case mlp --batch
# 256`), logged to docs/bench/<date>-<cpu>-paths.log (scripts/bench-paths.sh).
bench-paths rounds="3" samples="10" *args:
    cargo build --release --quiet -p batchlab-cli
    bash scripts/bench-paths.sh {{rounds}} {{samples}} {{args}}

# The MLP step's eight matrix products alone in numpy's OpenBLAS, PyTorch's MKL, flex's kernel
# (gemm) and batchlab's packed one, `rounds` rotated rounds, logged to
# docs/bench/<date>-<cpu>-mlp-products.log (scripts/bench-mlp-products.sh); `binary` =
# target/release/batchlab-no-avx512 (built first) times the AVX2 kernels on a CPU with AVX-512.
bench-mlp-products rounds="3" binary="target/release/batchlab": setup-keras
    cargo build --release --quiet -p batchlab-cli
    case "{{binary}}" in *no-avx512*) just build-no-avx512;; esac
    test -x {{venv_tch}}/bin/python || just build-tch
    bash scripts/bench-mlp-products.sh {{rounds}} {{binary}}

# What burn adds around libtorch's ops per training step of one bench case (vgg16, small-cnn,
# mlp): burn on LibTorch against plain PyTorch on the same libtorch, both under `perf record`,
# CPU ms per step by group of code and by symbol, logged to
# docs/bench/<date>-<cpu>-tch-overhead-<case>.log (scripts/bench-tch-overhead.sh); more LibTorch
# builds to compare (an older commit's) as LABEL=BIN.
bench-tch-overhead case="mlp" rounds="3" *more: build-tch
    bash scripts/bench-tch-overhead.sh {{case}} {{rounds}} {{more}}

# mimalloc keeping freed memory (what the binary sets for itself) against its default, on the
# three standard steps, interleaved, logged to docs/bench/<date>-<cpu>-allocator.log
# (scripts/bench-allocator.sh); `backend=tch`: glibc's malloc (libtorch's) keeping freed memory
# against its defaults on the LibTorch build, logged to ...-allocator-tch.log.
bench-allocator rounds="3" samples="10" backend="flex":
    cargo build --release --quiet -p batchlab-cli
    if [ "{{backend}}" = tch ]; then just build-tch; fi
    bash scripts/bench-allocator.sh {{rounds}} {{samples}} {{backend}}

# Any other batchlab command, e.g. `just batchlab list`.
batchlab *ARGS:
    {{batchlab}} {{ARGS}}

# Re-render a run's tables, figures and report.md from its raw tables; `--png` draws PNG copies
# of the figures too (reports keep SVG alone). Usage: just report reports/X/RUN [--png]
report dir *ARGS:
    {{batchlab}} report "{{dir}}" {{ARGS}}

# Write a run's raw tables as CSV into DIR/csv: a finished run stores its large ones as Parquet.
csv dir:
    {{batchlab}} csv "{{dir}}"

# The GPU binary, burn-cuda with CubeCL's autotuner, as target/release/batchlab-cuda, built in its
# own target directory (burn with cuda is another feature set). CUDARC_CUDA_VERSION fixes the CUDA
# API version cudarc binds (13000 = CUDA 13.0, driver 580); set it to match the GPU machine's.
build-cuda:
    CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-13000}" cargo build --release -p batchlab-cli --features cuda --target-dir {{cuda_target}}
    mkdir -p target/release && cp {{cuda_target}}/release/batchlab target/release/batchlab-cuda

# LibTorch on the GPU, as target/release/batchlab-tch-cuda: built against the PyTorch the GPU
# machine has (torch {{torch_gpu}}, whose PyPI wheel is the CUDA 13.0 build), installed into the
# git-ignored .venv-tch-cuda (about 4.6 GB). tch 0.22 targets PyTorch 2.9;
# LIBTORCH_BYPASS_VERSION_CHECK lets torch-sys build its wrapper against 2.11, whose C++ API
# kept every function that wrapper calls. The build must link libtorch_cuda (checked with
# readelf): on the GPU machine the binary runs on that machine's own libtorch and cuDNN through
# LD_LIBRARY_PATH (scripts/gpu-campaign.sh), which meta.json records.
build-tch-cuda:
    test -x {{venv_tch_cuda}}/bin/python || python3 -m venv {{venv_tch_cuda}}
    {{venv_tch_cuda}}/bin/python -c "import torch; assert torch.__version__.startswith('{{torch_gpu}}') and torch.version.cuda" 2>/dev/null || {{venv_tch_cuda}}/bin/pip install torch=={{torch_gpu}}
    {{with_torch_cuda}} LIBTORCH_BYPASS_VERSION_CHECK=1 cargo build --release -p batchlab-cli --features tch --target-dir {{tch_cuda_target}}
    readelf -d {{tch_cuda_target}}/release/batchlab | grep -q 'NEEDED.*libtorch_cuda.so' || { echo "error: batchlab-tch-cuda does not link libtorch_cuda.so: it would run on the CPU"; exit 1; }
    mkdir -p target/release && cp {{tch_cuda_target}}/release/batchlab target/release/batchlab-tch-cuda

# Both GPU binaries, stripped and compressed (zstd) into gpu/ (git-ignored), which a GPU run
# carries beside the tracked tree; prints each size and the total against the 64 MiB that travels.
gpu-pack: build-cuda build-tch-cuda
    bash scripts/gpu-pack.sh

# The GPU campaign, on the GPU machine (scripts/gpu-campaign.sh; docs/backends.md, "The GPU
# campaign"): the seeds' GPU setups in one go, packed for `just gpu-import`.
gpu-campaign *ARGS:
    bash scripts/gpu-campaign.sh {{ARGS}}

# Unpack a GPU campaign's output folder here: its report directories into reports/.
gpu-import dir:
    bash scripts/gpu-import.sh "{{dir}}"

# The same without CubeCL's autotuner (burn-cubecl's default kernel for each op): for a GPU lent
# for minutes, where tuning every shape bucket would take the whole lease (docs/backends.md).
build-cuda-untuned:
    CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-13000}" cargo build --release -p batchlab-cli --features cuda-untuned

# LibTorch (`--backend tch`): installs PyTorch 2.9.0 (the version burn-tch 0.21's tch 0.22
# requires) into the git-ignored virtual environment .venv-tch, once: PyPI's wheel is the CUDA
# build, about 6.7 GB installed. Then builds target/release/batchlab-tch against it (offline:
# LIBTORCH_USE_PYTORCH=1 makes torch-sys link the installed libtorch instead of downloading one);
# the binary finds libtorch through its run path, so it runs without LD_LIBRARY_PATH.
build-tch:
    test -x {{venv_tch}}/bin/python || python3 -m venv {{venv_tch}}
    {{venv_tch}}/bin/python -c "import torch; assert torch.__version__.startswith('2.9.0')" 2>/dev/null || {{venv_tch}}/bin/pip install torch==2.9.0
    {{with_torch}} cargo build --release -p batchlab-cli --features tch --target-dir {{tch_target}}
    mkdir -p target/release && cp {{tch_target}}/release/batchlab target/release/batchlab-tch

# The tests with LibTorch: the models' and runners' unit tests in the tch build (every family
# learns on tch too; flex and tch compute the same logits; the backend's threads and version),
# then a sweep and a training grid on tch end to end, then batchlab-fast's in-place optimizers
# against burn-optim's on LibTorch. The rest of `just test` does not change.
test-tch: build-tch
    {{with_torch}} LD_LIBRARY_PATH="$({{venv_tch}}/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')/lib" cargo test --release -p batchlab-models -p batchlab-experiments --features tch --lib --target-dir {{tch_target}}
    {{with_torch}} cargo test --release -p batchlab-cli --features tch --test tch --target-dir {{tch_target}}
    {{with_torch}} LD_LIBRARY_PATH="$({{venv_tch}}/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')/lib" cargo test --release -p batchlab-fast --features tch --target-dir {{tch_target}}

# wgpu (`--backend wgpu`): burn's CubeCL backend over Vulkan (Metal, DX12 elsewhere), in its own
# target directory (BATCHLAB_WGPU_TARGET, default target/wgpu, so that target/release/batchlab
# stays the default build; CI points it at the tests' own: docs/ARCHITECTURE.md, "One build of the
# dependencies"). Without a GPU it runs on Mesa's software Vulkan:
# apt-get install mesa-vulkan-drivers libvulkan1.
build-wgpu:
    cargo build --release -p batchlab-cli --features wgpu --target-dir {{wgpu_target}}
    mkdir -p target/release && cp {{wgpu_target}}/release/batchlab target/release/batchlab-wgpu

# The GPU code path run for real on whatever Vulkan adapter this machine has (CI: lavapipe).
test-wgpu:
    cargo test --release -p batchlab-cli --features wgpu --test wgpu --target-dir {{wgpu_target}}

# Check that the GPU build compiles (no GPU needed).
check-cuda:
    CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-13000}" cargo check --release -p batchlab-cli --features cuda

# Formatting and lints, as required before every commit.
lint:
    cargo fmt --all -- --check
    cargo clippy --release --workspace --all-targets -- -D warnings
