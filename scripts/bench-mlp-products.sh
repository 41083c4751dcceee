#!/usr/bin/env bash
# The MLP benchmark step's eight matrix products (3.29 GFLOP a pass) alone, in the libraries the
# frameworks call: numpy's OpenBLAS (.venv-keras, `just setup-keras`) and PyTorch's MKL
# (.venv-tch), on 2 threads, and in flex's kernel and batchlab's packed one (`batchlab bench
# --only products`, the release build), ROUNDS rounds in a rotated order (scripts/mlp_products.py
# times one round in Python); the whole output to docs/bench/<date>-<cpu>-mlp-products.log and
# the terminal.
# Usage: scripts/bench-mlp-products.sh [ROUNDS] [BINARY]: BINARY defaults to the release build;
# target/release/batchlab-no-avx512 (`just build-no-avx512`) times flex's and batchlab's AVX2
# kernels on a CPU with AVX-512, in a log named -mlp-products-avx2.
set -euo pipefail
rounds=${1:-3}
binary=${2:-target/release/batchlab}
cd "$(dirname "$0")/.."
source scripts/machine.sh
case $binary in *no-avx512*) bench_log -mlp-products-avx2 ;; *) bench_log -mlp-products ;; esac
threads="env OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2"
{
    machine_lines
    echo "batchlab binary: $binary"
    rotated_rounds "$rounds" \
        "$threads .venv-keras/bin/python -W ignore scripts/mlp_products.py numpy" \
        "$threads .venv-tch/bin/python -W ignore scripts/mlp_products.py torch" \
        "env RAYON_NUM_THREADS=2 $binary bench --only products --rounds 1"
} | tee "$log"
