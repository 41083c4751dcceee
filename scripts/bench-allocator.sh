#!/usr/bin/env bash
# mimalloc keeping what it frees (`MIMALLOC_PURGE_DELAY=-1`, what the batchlab binary sets for
# itself: crates/cli/src/allocator.rs) against mimalloc's default (`MIMALLOC_PURGE_DELAY=1000`
# in the mimalloc 3 that libmimalloc-sys builds: memory freed for a second goes back to the
# kernel), on the three standard training steps (`batchlab bench --only steps`,
# flex), interleaved: ROUNDS rounds, each running both in an alternating order, SAMPLES timed
# steps per case. Nothing else may run meanwhile. The whole output goes to
# docs/bench/<date>-<cpu>-allocator.log and the terminal. Usage: scripts/bench-allocator.sh ROUNDS SAMPLES
set -euo pipefail

rounds=${1:-3}
samples=${2:-10}
cd "$(dirname "$0")/.."
batchlab=target/release/batchlab

source scripts/machine.sh
bench_log "-allocator"
{
    echo "# just bench-allocator $rounds $samples"
    machine_lines
    runs=("env MIMALLOC_PURGE_DELAY=1000 $batchlab bench --backend flex --only steps --rounds 1 --samples $samples"
          "env MIMALLOC_PURGE_DELAY=-1 $batchlab bench --backend flex --only steps --rounds 1 --samples $samples")
    rotated_rounds "$rounds" "${runs[@]}"
} | tee "$log"
echo "log: $log"
