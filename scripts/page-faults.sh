#!/usr/bin/env bash
# Page faults per training step of one `batchlab bench` case on tch and in PyTorch, each with
# glibc's malloc at its defaults and keeping freed memory (what the LibTorch build sets for
# itself, crates/cli/src/allocator.rs): `perf stat -e page-faults` over a process of SHORT and
# one of LONG timed steps, the difference over LONG - SHORT steps (start-up and warm-up cancel).
# The whole output to docs/bench/<date>-<cpu>-page-faults-<case>.log and the terminal.
# Usage: scripts/page-faults.sh [CASE] [SHORT] [LONG]
set -euo pipefail
case=${1:-vgg16}
short=${2:-2}
long=${3:-8}
cd "$(dirname "$0")/.."
source scripts/machine.sh
bench_log "-page-faults-$case"
kept="MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=1073741824 MALLOC_ARENA_MAX=1"
faults() { perf stat -e page-faults -x, $1 $2 2>&1 >/dev/null | awk -F, '/page-faults/ {print $1}'; }
{
    machine_lines
    for setting in default kept; do
        for framework in tch PyTorch; do
            if [[ $framework == tch ]]; then
                # MIMALLOC_PURGE_DELAY given: no restart, so glibc keeps its defaults.
                env="env MIMALLOC_PURGE_DELAY=-1"
                [[ $setting == kept ]] && env="env"
                cmd="target/release/batchlab-tch bench --backend tch --only steps --case $case --rounds 1 --samples"
            else
                env="env"
                [[ $setting == kept ]] && env="env $kept"
                cmd=".venv-tch/bin/python -W ignore scripts/pytorch_steps.py --threads 2 --case $case --rounds 1 --samples"
            fi
            a=$(faults "$env $cmd" "$short") b=$(faults "$env $cmd" "$long")
            echo "$framework, glibc $setting: $a faults at $short steps, $b at $long: $(( (b - a) / (long - short) )) a step"
        done
    done
} | tee "$log"
echo "log: $log"
