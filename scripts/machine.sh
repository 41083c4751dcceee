# This machine, sourced by the scripts that name it: $slug, the CPU as model name, family and
# model (e.g. amd-epyc-f26-m2); `bench_log SUFFIX` sets $log to docs/bench/<date>-<slug>SUFFIX.log;
# `machine_lines` prints the date, the commit and the CPU, the first lines of every such log;
# `rotated_rounds ROUNDS RUN...` runs every command once per round, in an order rotated each round.
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
family=$(lscpu | sed -n 's/^CPU family: *//p' | head -1)
model=$(lscpu | sed -n 's/^Model: *//p' | head -1)
slug=$(echo "$cpu-f$family-m$model" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')

bench_log() {
    mkdir -p docs/bench
    log="docs/bench/$(date -u +%Y%m%d-%H%M)-$slug$1.log"
}

machine_lines() {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' (crates modified)')"
    echo "cpu: $cpu, family $family, model $model; $(nproc) cores; avx512f: $(grep -qw avx512f /proc/cpuinfo && echo yes || echo no); avx2: $(grep -qw avx2 /proc/cpuinfo && echo yes || echo no)"
}

rotated_rounds() {
    local rounds=$1 r i run
    shift
    local runs=("$@") n=$#
    for r in $(seq 1 "$rounds"); do
        for i in $(seq 0 $((n - 1))); do
            run=${runs[$(( (i + r) % n ))]}
            echo "== round $r: $run"
            $run 2>&1
        done
    done
}
