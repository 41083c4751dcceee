#!/usr/bin/env bash
# What burn adds around libtorch's ops, per training step of one `batchlab bench` case: burn on
# LibTorch (target/release/batchlab-tch, `just build-tch`) against plain PyTorch on the same
# libtorch (.venv-tch), both under `perf record`, ROUNDS rounds (scripts/tch_overhead.py says
# how); the whole output to docs/bench/<date>-<cpu>-tch-overhead-<case>.log and the terminal.
# More LibTorch builds to compare, e.g. one of an older commit, follow as LABEL=BIN.
# Usage: scripts/bench-tch-overhead.sh [CASE] [ROUNDS] [LABEL=BIN...]
set -euo pipefail
case=${1:-mlp}
rounds=${2:-3}
more=()
for build in "${@:3}"; do more+=(--tch "$build"); done
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "no perf: apt-get install linux-perf" >&2; exit 1; }
source scripts/machine.sh
bench_log "-tch-overhead-$case"
{
    machine_lines
    echo "tch binaries: target/release/batchlab-tch ${*:3}; PyTorch: $(.venv-tch/bin/python -c 'import torch; print(torch.__version__)'); $(perf --version)"
    .venv-tch/bin/python scripts/tch_overhead.py --tch tch=target/release/batchlab-tch \
        "${more[@]}" --python .venv-tch/bin/python --case "$case" --rounds "$rounds"
} | tee "$log"
echo "log: $log"
