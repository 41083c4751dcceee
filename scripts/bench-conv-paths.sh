#!/usr/bin/env bash
# flex's convolution paths chosen by this machine's measurement (`batchlab_fast::conv::choice`)
# against the fixed thresholds they replace (`BATCHLAB_CONV_PATHS=thresholds`), on the three
# standard training steps (`batchlab bench --only steps`), interleaved. First one short bench
# run measures every shape the cases meet (the first time a shape is met, in a warm-up step);
# then ROUNDS rounds, each running both in an alternating order, SAMPLES timed steps per case.
# Nothing else may run meanwhile. The whole output (the machine, the measured choices with both
# paths' times, every round) goes to docs/bench/<date>-<cpu>-conv-paths.log and the terminal.
# Usage: scripts/bench-conv-paths.sh ROUNDS SAMPLES
set -euo pipefail

rounds=${1:-3}
samples=${2:-10}
cd "$(dirname "$0")/.."
batchlab=target/release/batchlab

source scripts/machine.sh
bench_log "-conv-paths"
{
    echo "# just bench-conv-paths $rounds $samples"
    machine_lines
    echo "== measuring: $batchlab bench --only steps --rounds 1 --samples 1"
    $batchlab bench --backend flex --only steps --rounds 1 --samples 1 2>&1
    file=$(ls -t "${BATCHLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/batchlab}"/conv-paths/*.tsv | head -1)
    echo "== the choices ($file): site, channels, height, width, padding, other channels, samples, choice, Winograd ms, flex ms"
    cat "$file"
    runs=("env BATCHLAB_CONV_PATHS=thresholds $batchlab bench --backend flex --only steps --rounds 1 --samples $samples"
          "$batchlab bench --backend flex --only steps --rounds 1 --samples $samples")
    rotated_rounds "$rounds" "${runs[@]}"
} | tee "$log"
echo "log: $log"
