#!/usr/bin/env bash
# Every way this machine runs the three standard training steps (`batchlab bench --only steps`:
# VGG16 3x64x64 b16 SGD, the small CNN 3x200x200 b32 Adam, the MLP 784-512-512-10 b1024 SGD),
# side by side in one run: flex (the default build), flex without its AVX-512 matrix kernels
# (where the CPU has them, and there PyTorch and Keras held to AVX2 too), tch (burn on LibTorch),
# plain PyTorch (scripts/pytorch_steps.py) and Keras 3 on TensorFlow (scripts/keras_steps.py),
# the same networks and protocol.
#
# ROUNDS rounds, each running every framework once in a rotated order, one round of SAMPLES
# timed steps per case each; nothing else may run meanwhile. The whole output (the machine,
# every version, every round's table and samples, and at the end the paths flex and tch chose
# on this machine) goes to docs/bench/<date>-<cpu>.log and to the terminal.
# Usage: scripts/bench-frameworks.sh ROUNDS SAMPLES
set -euo pipefail

rounds=${1:-3}
samples=${2:-10}
cd "$(dirname "$0")/.."

# tch and PyTorch: the LibTorch build and its PyTorch (`just build-tch`, .venv-tch), or else the
# GPU campaign's (`just build-tch-cuda`, .venv-tch-cuda), whose libtorch computes on the CPU
# alike (its CUDA kernels are never loaded without a GPU). With only a PyTorch (a machine whose
# disk has no room for a LibTorch build), tch is left out and the log says so.
tch="" python_torch=""
if [[ -x target/release/batchlab-tch && -x .venv-tch/bin/python ]]; then
    tch=target/release/batchlab-tch python_torch=.venv-tch/bin/python
elif [[ -x target/tch-cuda/release/batchlab && -x .venv-tch-cuda/bin/python ]]; then
    tch=target/tch-cuda/release/batchlab python_torch=.venv-tch-cuda/bin/python
elif [[ -x .venv-tch/bin/python ]]; then
    python_torch=.venv-tch/bin/python
elif [[ -x .venv-tch-cuda/bin/python ]]; then
    python_torch=.venv-tch-cuda/bin/python
else
    echo "no PyTorch: run 'just build-tch' (or 'just build-tch-cuda') first" >&2
    exit 1
fi
python_keras=.venv-keras/bin/python
[[ -x $python_keras ]] || { echo "no Keras: run 'just setup-keras' first" >&2; exit 1; }

runs=("target/release/batchlab bench --only steps --rounds 1 --samples $samples"
      "$python_torch -W ignore scripts/pytorch_steps.py --rounds 1 --samples $samples"
      "$python_keras scripts/keras_steps.py --rounds 1 --samples $samples")
if [[ -n $tch ]]; then
    runs+=("$tch bench --backend tch --only steps --rounds 1 --samples $samples")
fi
# Where the CPU has AVX-512: flex's AVX2 build, and PyTorch and Keras held to AVX2 as well (their
# libraries' own switches: ATen's kernels, MKL's and oneDNN's), so that flex's AVX2 code is also
# set against the frameworks' AVX2 code on the same cores, like for like; a stand-in, not a
# measurement, for a CPU without AVX-512 (e.g. the Zen 3 of issue 44).
avx2_only="env ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2"
if grep -qw avx512f /proc/cpuinfo; then
    [[ -x target/release/batchlab-no-avx512 ]] || { echo "run 'just build-no-avx512' first" >&2; exit 1; }
    runs+=("target/release/batchlab-no-avx512 bench --only steps --rounds 1 --samples $samples"
           "$avx2_only ${runs[1]}"
           "$avx2_only ${runs[2]}")
fi

source scripts/machine.sh
bench_log ""
{
    echo "# just bench-frameworks $rounds $samples"
    machine_lines
    echo "memory: $(free -g | awk '/^Mem:/ {print $2}') GiB; kernel $(uname -r)"
    echo "rustc: $(rustc --version)"
    echo "tch binary: ${tch:-none (no LibTorch build here: tch left out)}; PyTorch: $($python_torch -c 'import torch; print(torch.__version__)' 2>/dev/null)"
    echo "Keras: $($python_keras -c 'import os; os.environ["TF_CPP_MIN_LOG_LEVEL"]="3"; import keras, tensorflow as tf; print(keras.__version__, "on TensorFlow", tf.__version__)' 2>/dev/null)"
    if grep -qw avx512f /proc/cpuinfo; then
        echo "held to AVX2 ($avx2_only): PyTorch's ATen kernels $($avx2_only $python_torch -c 'import torch; print(torch.backends.cpu.get_cpu_capability())' 2>/dev/null) (by default $($python_torch -c 'import torch; print(torch.backends.cpu.get_cpu_capability())' 2>/dev/null))"
    fi
    echo "rounds: $rounds, each running every framework once in a rotated order, $samples timed steps per case"
    rotated_rounds "$rounds" "${runs[@]}"
} | tee "$log"
# The paths flex and tch measured on this machine (batchlab_fast::choice), as the rounds above
# left them: each file the runs named, whole (key, shape, chosen path, each path's ms).
for file in $(grep -o 'paths measured here kept in [^ ,]*' "$log" | awk '{print $NF}' | sort -u); do
    echo "== $file"
    cat "$file" 2>/dev/null || echo "(not written)"
done | tee -a "$log"
echo "log: $log"
