#!/usr/bin/env bash
# Unpacks what scripts/gpu-campaign.sh packed (DIR/campaign.tar.*.N, in order) here (or under
# ROOT): its report directories into reports/, the card's grown kernel cache into gpu-cache/
# (replacing the files it grew); prints each run directory it restored.
# Usage: just gpu-import DIR | bash scripts/gpu-import.sh DIR [ROOT]
set -euo pipefail
dir="$(realpath "${1:?usage: gpu-import DIR (the folder the campaign packed into)}")"
cd "${2:-$(dirname "$0")/..}"
mapfile -t parts < <(ls "$dir"/campaign.tar.*.[0-9] 2>/dev/null | sort -t. -k4 -n)
if [ "${#parts[@]}" -eq 0 ]; then
  echo "error: $dir holds no campaign.tar.*.N parts (what scripts/gpu-campaign.sh packs)" >&2
  exit 1
fi
packed="$(mktemp)"
trap 'rm -f "$packed"' EXIT
cat "${parts[@]}" > "$packed"
# GNU tar reads zstd and gzip alike.
names=$(tar -tf "$packed")
case "$names" in
  *..*|/*) echo "error: the archive names paths outside reports/ and gpu-cache/" >&2; exit 1 ;;
esac
for name in $names; do
  case "$name" in reports/*/*|gpu-cache/*) ;; *) echo "error: $name is neither a report directory nor a kernel cache" >&2; exit 1 ;; esac
done
runs=$(printf '%s\n' $names | grep '^reports/' | cut -d/ -f1-3 | sort -u)
tar -xf "$packed"
# `latest` of each experiment: its newest complete run, as a run leaves it.
for experiment in $(printf '%s\n' $runs | cut -d/ -f1-2 | sort -u); do
  for run in $(ls -d "$experiment"/*/ | sort -r); do
    if grep -q '"status": "complete"' "$run/meta.json" 2>/dev/null; then
      ln -sfn "$(basename "$run")" "$experiment/latest"
      break
    fi
  done
done
# The references a go appended after its run had compacted itself, stored compactly too (a next
# go expands one to resume it).
if [ -x target/release/batchlab ]; then
  for run in $runs; do target/release/batchlab compact "$run" >&2 || true; done
fi
for run in $runs; do echo "$run"; done
