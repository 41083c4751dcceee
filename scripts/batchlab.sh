#!/usr/bin/env bash
# `batchlab` as `just run` and `just batchlab` start it: the build whose matrix kernels this
# machine measured faster (scripts/choose-kernels.sh, `just choose-kernels`), built first so it is
# never stale; the default build (AVX-512 kernels where the CPU has them) where nothing was
# chosen. meta.json's `flex_kernels` says which kernels ran. `--choice-file` prints where the
# choice is kept: one file per CPU (model name, family, model) and core count.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/machine.sh
choice_file="${BATCHLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/batchlab}/matrix-kernels/$slug-$(nproc)t"
if [[ ${1:-} == --choice-file ]]; then
    echo "$choice_file"
    exit 0
fi
if [[ $(head -1 "$choice_file" 2>/dev/null) == avx2 ]]; then
    cargo build --release --quiet -p batchlab-cli --no-default-features --target-dir target/no-avx512
    exec target/no-avx512/release/batchlab "$@"
fi
exec cargo run --release --quiet -p batchlab-cli -- "$@"
