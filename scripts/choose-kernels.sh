#!/usr/bin/env bash
# Which of gemm's matrix kernels flex runs on this machine, chosen by measurement: the default
# build (AVX-512 kernels) against target/release/batchlab-no-avx512 (AVX2), ROUNDS alternating
# runs of the step benchmarks (`batchlab bench --only steps`: VGG16, the small CNN, the MLP),
# the first binary swapped each round (`rotated_rounds`); nothing else may run meanwhile. The
# AVX2 build is chosen when the geometric mean over the three cases of its median step time over
# the AVX-512 build's lies below 1. The choice goes to
# ${BATCHLAB_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/batchlab}/matrix-kernels/<cpu>-<cores>t
# (first line avx2 or avx512, then each case's ratio), which scripts/batchlab.sh (`just run` and
# every `just batchlab`) reads; the whole output to docs/bench/<date>-<cpu>-kernels.log.
# Usage: scripts/choose-kernels.sh ROUNDS SAMPLES
set -euo pipefail

rounds=${1:-3}
samples=${2:-10}
cd "$(dirname "$0")/.."
if ! grep -qw avx512f /proc/cpuinfo; then
    echo "this CPU has no AVX-512F: both builds run the AVX2 kernels, nothing to choose"
    exit 0
fi
source scripts/machine.sh
bench_log "-kernels"
choice_file=$(bash scripts/batchlab.sh --choice-file)
{
    echo "# just choose-kernels $rounds $samples"
    machine_lines
    bench="bench --backend flex --only steps --rounds 1 --samples $samples"
    rotated_rounds "$rounds" "target/release/batchlab-no-avx512 $bench" "target/release/batchlab $bench"
} | tee "$log"
python3 - "$log" "$choice_file" <<'PY' | tee -a "$log"
import math, os, re, statistics, sys
log, out = sys.argv[1], sys.argv[2]
medians = {}
for block in re.split(r"\n== round \d+: ", open(log).read())[1:]:
    build = "avx2" if block.startswith("target/release/batchlab-no-avx512") else "avx512"
    for m in re.finditer(r"^(\S+) .*?\bflex\s+([\d.]+)\s", block, re.M):
        medians.setdefault((m.group(1), build), []).append(float(m.group(2)))
cases = sorted({case for case, _ in medians})
ratios = {c: statistics.median(medians[(c, "avx2")]) / statistics.median(medians[(c, "avx512")]) for c in cases}
mean = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
choice = "avx2" if mean < 1 else "avx512"
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, "w") as f:
    f.write(choice + "\n")
    for c in cases:
        f.write(f"{c}\tavx2 / avx512 {ratios[c]:.3f}\n")
    f.write(f"geometric mean\t{mean:.3f}\n")
print("== the choice: " + ", ".join(f"{c} avx2 / avx512 {ratios[c]:.3f}" for c in cases))
print(f"geometric mean {mean:.3f}: {choice}, written to {out}")
PY
echo "log: $log"
