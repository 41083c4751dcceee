#!/usr/bin/env bash
# Unpacks what scripts/gpu-campaign.sh packed (DIR/campaign.tar.*.N, in order) into reports/
# here (or under ROOT), and prints each run directory it restored.
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
runs=$(tar -tf "$packed" | cut -d/ -f1-3 | sort -u)
case "$runs" in
  *..*|/*) echo "error: the archive names paths outside reports/" >&2; exit 1 ;;
esac
for run in $runs; do
  case "$run" in reports/*/*) ;; *) echo "error: $run is not a report directory" >&2; exit 1 ;; esac
done
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
for run in $runs; do echo "$run"; done
