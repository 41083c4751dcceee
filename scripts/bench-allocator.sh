#!/usr/bin/env bash
# mimalloc keeping what it frees (`MIMALLOC_PURGE_DELAY=-1`, what the batchlab binary sets for
# itself: crates/cli/src/allocator.rs) against mimalloc's default (`MIMALLOC_PURGE_DELAY=1000`
# in the mimalloc 3 that libmimalloc-sys builds: memory freed for a second goes back to the
# kernel), on the three standard training steps (`batchlab bench --only steps`,
# flex), interleaved: ROUNDS rounds, each running both in an alternating order, SAMPLES timed
# steps per case. Nothing else may run meanwhile. The whole output goes to
# docs/bench/<date>-<cpu>-allocator.log and the terminal. With BACKEND tch, glibc's malloc
# keeping what it frees against its defaults on the LibTorch build and on PyTorch instead
# (-allocator-tch.log).
# Usage: scripts/bench-allocator.sh ROUNDS SAMPLES [flex|tch]
set -euo pipefail

rounds=${1:-3}
samples=${2:-10}
backend=${3:-flex}
cd "$(dirname "$0")/.."

source scripts/machine.sh
if [[ $backend == tch ]]; then
    # glibc's malloc, which libtorch allocates with, keeping what it frees (the LibTorch build
    # sets MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ and MALLOC_ARENA_MAX for itself,
    # crates/cli/src/allocator.rs) against glibc's defaults (MIMALLOC_PURGE_DELAY=-1 given
    # beforehand: the binary then does not restart, and glibc's thresholds stay its own), on tch.
    # PyTorch from Python (.venv-tch) beside it, with glibc's defaults and with the same two
    # variables, to show what the setting gives any libtorch.
    bench_log "-allocator-tch"
    bench="target/release/batchlab-tch bench --backend tch --only steps --rounds 1 --samples $samples"
    torch=".venv-tch/bin/python -W ignore scripts/pytorch_steps.py --rounds 1 --samples $samples"
    kept="MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=1073741824 MALLOC_ARENA_MAX=1"
    runs=("env MIMALLOC_PURGE_DELAY=-1 $bench" "$bench" "$torch" "env $kept $torch")
else
    bench_log "-allocator"
    bench="target/release/batchlab bench --backend flex --only steps --rounds 1 --samples $samples"
    runs=("env MIMALLOC_PURGE_DELAY=1000 $bench" "env MIMALLOC_PURGE_DELAY=-1 $bench")
fi
{
    echo "# just bench-allocator $rounds $samples $backend"
    machine_lines
    rotated_rounds "$rounds" "${runs[@]}"
} | tee "$log"
echo "log: $log"
