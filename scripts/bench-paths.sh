#!/usr/bin/env bash
# flex's paths chosen by this machine's measurement (`batchlab_fast::choice`: the convolutions'
# and the dense layers' products) against the fixed thresholds they replace
# (`BATCHLAB_CONV_PATHS=thresholds`), on training steps (`batchlab bench --only steps`, the
# three standard cases, or those BENCH_ARGS pick, e.g. `--case mlp --batch 256`), interleaved.
# First one short bench run measures every shape the cases meet (the first time a shape is met,
# in a warm-up step); then ROUNDS rounds, each running both in a rotated order, SAMPLES timed
# steps per case. Nothing else may run meanwhile. The whole output (the machine, the measured
# choices with every path's time, every round) goes to docs/bench/<date>-<cpu>-paths[-<case>][-b<batch>].log and
# the terminal. With BEFORE=<another batchlab binary> (an earlier build, kept for the purpose)
# that binary runs as a third arm, its own choices file (its generation's) measured first too.
# Usage: [BEFORE=BINARY] scripts/bench-paths.sh ROUNDS SAMPLES [BENCH_ARGS...]
set -euo pipefail

rounds=${1:-3}
samples=${2:-10}
shift 2 || shift $#
extra="$*"
cd "$(dirname "$0")/.."
batchlab=target/release/batchlab

source scripts/machine.sh
# The picked case and batch in the log's name (`--case mlp --batch 256`: -paths-mlp-b256).
bench_log "-paths$(echo " $extra" | sed 's/ --case / /g; s/ --batch / b/g' | tr -c 'a-z0-9\n' '-' | sed 's/-$//')"
{
    echo "# just bench-paths $rounds $samples $extra"
    machine_lines
    echo "== measuring: $batchlab bench --only steps --rounds 1 --samples 1 $extra"
    $batchlab bench --backend flex --only steps --rounds 1 --samples 1 $extra 2>&1
    if [ -n "${BEFORE:-}" ]; then
        echo "== measuring, before: $BEFORE bench --only steps --rounds 1 --samples 1 $extra"
        "$BEFORE" bench --backend flex --only steps --rounds 1 --samples 1 $extra 2>&1
    fi
    # This build's file: the newest of its generation (`choice::GENERATION`).
    generation=$(sed -n 's/^pub const GENERATION: u32 = \([0-9]*\);/\1/p' crates/fast/src/choice.rs)
    file=$(ls -t "${BATCHLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/batchlab}"/conv-paths/*-g"$generation".tsv | head -1)
    echo "== the choices ($file): the site, its shape, the choice, each path's ms (- where it cannot compute it)"
    echo "   convolutions: site, channels, height, width, padding, other channels, samples; paths winograd, direct, winograd-positions"
    echo "   dense products [m, k] x [k, n]: site, m, k, n; paths packed, flex, split, short"
    cat "$file"
    bench="bench --backend flex --only steps --rounds 1 --samples $samples $extra"
    runs=("env BATCHLAB_CONV_PATHS=thresholds $batchlab $bench" "$batchlab $bench")
    [ -n "${BEFORE:-}" ] && runs+=("$BEFORE $bench")
    # The protocol and the measured builds' fast-path words are in the measuring runs' output:
    # not repeated every round.
    rotated_rounds "$rounds" "${runs[@]}" | grep -v -e '^training-step benchmarks:' -e '^  flex: '
} | tee "$log"
echo "log: $log"
