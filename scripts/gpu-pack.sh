#!/usr/bin/env bash
# Strips and compresses the GPU binaries (`just build-cuda`, `just build-tch-cuda`) into gpu/,
# the folder a GPU run carries, and says what travels: each binary raw, stripped and compressed,
# and the tracked tree + gpu/ against the 64 MiB limit.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p gpu
# The commit the binaries and tree were packed from: the GPU machine gets the tree without its
# repository, so meta.json takes the commit from here (BATCHLAB_GIT_COMMIT).
commit=$(git rev-parse HEAD)
git diff --quiet HEAD -- . ':(exclude)reports' || commit="$commit-dirty"
echo "$commit" > gpu/commit
total=0
for b in cuda tch-cuda; do
  raw="target/release/batchlab-$b"
  [ -x "$raw" ] || { echo "error: $raw missing (just build-$b)" >&2; exit 1; }
  strip -o "gpu/batchlab-$b" "$raw"
  stripped=$(stat -c %s "gpu/batchlab-$b")
  zstd -q -19 -T0 -f --rm -o "gpu/batchlab-$b.zst" "gpu/batchlab-$b"
  size=$(stat -c %s "gpu/batchlab-$b.zst")
  total=$((total + size))
  printf '%-20s raw %6.1f MiB, stripped %6.1f MiB, zstd -19 %6.1f MiB\n' "batchlab-$b" \
    "$(echo "$(stat -c %s "$raw") / 1048576" | bc -l)" \
    "$(echo "$stripped / 1048576" | bc -l)" "$(echo "$size / 1048576" | bc -l)"
done
# scripts/gpu-campaign.sh unpacks the binaries with zstd or python3's zstandard; a bare GPU
# machine may have neither, so the wheel travels too (PyPI, for the machine's Python 3.12).
ls gpu/zstandard-*.whl >/dev/null 2>&1 || python3 -m pip download -q --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d gpu zstandard==0.25.0
for w in gpu/zstandard-*.whl; do total=$((total + $(stat -c %s "$w"))); done
tree=$(git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {print s}')
printf 'tracked tree %.1f MiB + gpu/ %.1f MiB = %.1f MiB of 64 MiB\n' \
  "$(echo "$tree / 1048576" | bc -l)" "$(echo "$total / 1048576" | bc -l)" \
  "$(echo "($tree + $total) / 1048576" | bc -l)"
