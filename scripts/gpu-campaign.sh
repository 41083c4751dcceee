#!/usr/bin/env bash
# The GPU campaign: the seeds' GPU setups in one go on a lent GPU machine, within its budget
# (docs/backends.md, "The GPU campaign"). Run from the repository root there, with the binaries
# `just gpu-pack` left in gpu/ carried beside the tracked tree:
#
#   bash scripts/gpu-campaign.sh [--out DIR] [--budget SECONDS] [--only NAME,...] [--reports ROOT]
#                                [--cache ROOT] [--set KEY=VALUE ...] [--again NAME,...]
#
# (--set goes to every run, e.g. `--set sweep.rounds=3` to fit more studies into one go; a study
# whose newest run carried in is complete is skipped unless --again names it.)
#
# 1. unpacks gpu/batchlab-cuda.zst and gpu/batchlab-tch-cuda.zst (zstd, else python3's
#    zstandard, else the zstandard wheel gpu-pack.sh leaves in gpu/);
# 2. preflight: the card, driver, memory, clocks and power limit (nvidia-smi), PyTorch, CUDA and
#    cuDNN (python3), the libtorch directory tch-cuda runs on (LD_LIBRARY_PATH, which meta.json
#    records); `batchlab check-fast-paths` on each backend, so that tch-cuda's libtorch
#    convolution backward is known to agree with burn's on the card before it is timed;
# 3. the runs of RUNS below in order, each under the time left, a run carried in unfinished
#    resumed (`--resume`); each step-time run on tch-cuda is followed by the PyTorch/cuDNN
#    reference of the same sweep on the same card (scripts/pytorch_steps.py sweep), written
#    into that run's directory as pytorch.csv;
#    The cuda runs read and grow the card's kernel cache, gpu-cache/<card>/ (CubeCL's autotune
#    results and compiled kernels, through a cubecl.toml in the directory the runs start in),
#    carried in from earlier goes so that each go tunes only what none has tuned;
# 4. packs the report directories it wrote, the grown cache and the log into at most 8 files of
#    at most 16 MiB in DIR (default $OUT, else gpu-out), for `just gpu-import DIR` here.
#
# `--rehearse BIN [--rehearse-backend NAME]` runs the same steps with one binary in the cuda
# slot (a wgpu build over Mesa's software Vulkan, the default backend; or the flex binary), the
# configs shrunk (REHEARSAL below), each followed by its reference on the CPU when python3 has
# torch: what CI runs (crates/cli/tests/campaign.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-gpu-out}"
root="reports"
cache_root="gpu-cache"
# One command on a lent machine runs at most 10 minutes: the default leaves a minute of it.
budget=540
only=""
rehearse=""
rehearse_backend="wgpu"
sets=()
again=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --reports) root="$2"; shift 2 ;;
    --cache) cache_root="$2"; shift 2 ;;
    --rehearse) rehearse="$2"; shift 2 ;;
    --rehearse-backend) rehearse_backend="$2"; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    --again) again="$2"; shift 2 ;;
    *) echo "usage: $0 [--out DIR] [--budget SECONDS] [--only NAME,...] [--set KEY=VALUE] [--again NAME,...] [--rehearse BIN [--rehearse-backend NAME]]" >&2; exit 2 ;;
  esac
done

# (slot, experiment): the order of a go. VGG16 on cuDNN first (the seeds' library), then the
# other networks; then seed 002's powers of two at its setup (power-of-two-step-time:
# MobileNetV3-Large, Adam) with its references in float32, under autocast and in cuDNN's benchmark
# mode (slot pytorch: pytorch-amp.csv and pytorch-cudnn-benchmark.csv beside pytorch.csv in the
# tch-cuda run's directory; seed 002 measured under automatic mixed precision and made its
# benchmark-mode remark of this setup, whose 11 sizes benchmark in a fraction of the time VGG16's
# 70 take); then burn's own kernels on cuda, whose first visits compile and tune; then VGG16's
# references in benchmark mode and under autocast, and its steps taken apart around 16, 32, 48,
# 64 with burn's own ops (where the staircase they make on the card comes from).
RUNS=(
  "tch-cuda vgg16-step-time"
  "tch-cuda vgg19-step-time"
  "tch-cuda mobilenet-step-time"
  "tch-cuda resnet50-step-time"
  "tch-cuda power-of-two-step-time"
  "pytorch power-of-two-step-time amp"
  "pytorch power-of-two-step-time cudnn-benchmark"
  "cuda vgg16-step-time"
  "cuda vgg19-step-time"
  "cuda mobilenet-step-time"
  "cuda resnet50-step-time"
  "pytorch vgg16-step-time cudnn-benchmark"
  "pytorch vgg16-step-time amp"
  "tch-cuda vgg16-anatomy-step-time"
)
# Seconds kept back for packing, and the shortest run worth starting.
RESERVE=45
SHORTEST=30
# A rehearsal's configs: the same studies, small enough for a CPU or software Vulkan.
REHEARSAL=(--set sweep.batch_range=[1,3] --set sweep.rounds=1 --set sweep.samples=2
  --set sweep.warmup_steps=1 --set sweep.warmup_max_steps=4 --set model.input=[3,32,32]
  --set model.classes=10
  --set analysis.claimed_jumps=[])

start=$(date +%s)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/bin" "$root" "$cache_root"
repo="$PWD"
root="$(realpath "$root")"
cache_root="$(realpath "$cache_root")"
log="$out/campaign.log"
: > "$log"
say() { printf '[%4ds] %s\n' "$(( $(date +%s) - start ))" "$*" | tee -a "$log"; }
left() { echo $(( budget - ($(date +%s) - start) )); }
touch "$work/stamp"

# --- 1. binaries ---------------------------------------------------------------------------
unzstd_to() { # FILE.zst OUT
  if ! command -v zstd >/dev/null && ! python3 -c "import zstandard" 2>/dev/null \
    && ls gpu/zstandard-*.whl >/dev/null 2>&1; then
    # A bare GPU machine may have neither: the wheel gpu-pack.sh downloaded travels in gpu/.
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/py" gpu/zstandard-*.whl \
      && export PYTHONPATH="$work/py${PYTHONPATH:+:$PYTHONPATH}"
  fi
  if command -v zstd >/dev/null; then zstd -dqf -o "$2" "$1"
  elif python3 -c "import zstandard" 2>/dev/null; then
    python3 -c "import sys, zstandard; zstandard.ZstdDecompressor().copy_stream(open(sys.argv[1], 'rb'), open(sys.argv[2], 'wb'))" "$1" "$2"
  else say "error: neither zstd nor python3's zstandard here to unpack $1"; return 1; fi
}
declare -A bin backend
if [ -n "$rehearse" ]; then
  rehearse="$(realpath "$rehearse")"
  # burn's CubeCL path (cuda's) is what wgpu rehearses; LibTorch on the GPU has no stand-in.
  bin[cuda]="$rehearse"; backend[cuda]="$rehearse_backend"
  say "rehearsal: the cuda runs on $rehearse with backend $rehearse_backend, configs shrunk: ${REHEARSAL[*]}"
else
  for slot in cuda tch-cuda; do
    if [ -f "gpu/batchlab-$slot.zst" ]; then
      unzstd_to "gpu/batchlab-$slot.zst" "$work/bin/batchlab-$slot" && chmod +x "$work/bin/batchlab-$slot"
      bin[$slot]="$work/bin/batchlab-$slot"; backend[$slot]="$slot"
      say "unpacked gpu/batchlab-$slot.zst ($(stat -c %s "$work/bin/batchlab-$slot") bytes)"
    else
      say "no gpu/batchlab-$slot.zst: its runs are skipped (just gpu-pack makes it)"
    fi
  done
fi

# meta.json's commit: the runs start outside the repository (see the kernel cache below), so
# it is named here: the packed binaries' (scripts/gpu-pack.sh recorded it), else the checkout's.
# The binaries' first: a GPU machine's copy of the tree may carry a stale .git (on 2026-11-27
# it named the session's first commit, 444f96a, for binaries packed at 8455df4).
if [ -z "$rehearse" ] && [ -f gpu/commit ]; then
  export BATCHLAB_GIT_COMMIT="$(cat gpu/commit)"
elif commit=$(git rev-parse HEAD 2>/dev/null); then
  git diff --quiet HEAD -- . ':(exclude)reports' || commit="$commit-dirty"
  export BATCHLAB_GIT_COMMIT="$commit"
elif [ -f gpu/commit ]; then
  export BATCHLAB_GIT_COMMIT="$(cat gpu/commit)"
fi

# --- 2. preflight --------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.free,clocks.sm,clocks.max.sm,clocks.mem,power.limit \
    --format=csv 2>&1 | tee -a "$log"
fi
torch_lib=""
if python3 -c "import torch" 2>/dev/null; then
  python3 - <<'PY' 2>&1 | tee -a "$log"
import torch
cuda = torch.cuda.is_available()
# The multiprocessor count: the SM of the batch-size formula seed 002 relays
# (coulom-batch-size-formula in claims/registry.toml).
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
      "gpu", torch.cuda.get_device_name(0) if cuda else "none",
      "multiprocessors", torch.cuda.get_device_properties(0).multi_processor_count if cuda else "none")
PY
  torch_lib="$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
else
  say "python3 has no torch: the PyTorch references are skipped"
fi
# tch-cuda runs on this machine's libtorch and cuDNN (the binary's run path is the build
# machine's); meta.json records the variable.
tch_env=()
if [ -z "$rehearse" ] && [ -n "$torch_lib" ]; then
  tch_env=(env "LD_LIBRARY_PATH=$torch_lib:${LD_LIBRARY_PATH:-}")
  say "tch-cuda: LD_LIBRARY_PATH=$torch_lib:${LD_LIBRARY_PATH:-}"
fi
# Runs a command the way a slot's binary runs: tch-cuda's on this machine's libtorch.
in_slot() { # SLOT COMMAND...
  local slot="$1"
  shift
  if [ "$slot" = "tch-cuda" ]; then ${tch_env[@]+"${tch_env[@]}"} "$@"; else "$@"; fi
}

# The card's kernel cache (CubeCL reads cubecl.toml from the directory a run starts in).
card="$(nvidia-smi --query-gpu=name --format=csv,noheader --id=0 2>/dev/null | head -n 1 || true)"
[ -n "$rehearse" ] && card="rehearsal $rehearse_backend"
card="$(echo "${card:-unknown card}" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')"
cache="$cache_root/$card"
mkdir -p "$cache" "$work/run"
cat > "$work/run/cubecl.toml" <<TOML
[autotune]
cache = { file = "$cache/autotune" }

[compilation]
cache = { file = "$cache/compilation" }
TOML
cached() { find "$cache" -type f 2>/dev/null | wc -l; }
# meta.json counts the autotune keys there at each run's start and end.
export BATCHLAB_KERNEL_CACHE="$cache"
say "kernel cache $cache: $(cached) file(s) carried in"

# The fast convolution + ReLU (on tch-cuda: libtorch's own backward) against burn's on the card,
# before anything is timed: where it disagrees, the tch-cuda runs time burn's own ops instead.
fast_paths=()
for slot in tch-cuda cuda; do
  [ -n "${bin[$slot]:-}" ] || continue
  # Only flex and LibTorch have fast paths; on CubeCL both sides would be burn's.
  case "${backend[$slot]}" in flex|tch|tch-cuda) ;; *) continue ;; esac
  if in_slot "$slot" timeout -k 10 120 "${bin[$slot]}" check-fast-paths --backend "${backend[$slot]}" >> "$log" 2>&1; then
    say "check-fast-paths on ${backend[$slot]}: every case agrees"
  else
    say "check-fast-paths on ${backend[$slot]} failed (exit $?): its runs time burn's own ops (backend.fast_paths = false)"
    [ "$slot" = "tch-cuda" ] && fast_paths=(--set backend.fast_paths=false)
  fi
done

# --- 3. the runs ---------------------------------------------------------------------------
# The newest run directory of `name` (the `latest` link left out: it names the newest complete).
newest() {
  local d
  d=$(find "$root/$1" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort | tail -n 1)
  [ -n "$d" ] && echo "$root/$1/$d"
}
# Whether the newest report directory of `name` says complete / does not (an older unfinished
# run behind a complete one is left alone: its config may differ, e.g. a run with fast paths off).
complete() { local d; d="$(newest "$1" || true)"; [ -n "$d" ] && grep -q '"status": "complete"' "$d/meta.json" 2>/dev/null; }
unfinished() { local d; d="$(newest "$1" || true)"; [ -n "$d" ] && [ -f "$d/meta.json" ] && ! complete "$1"; }
# An unfinished run is resumed only by the build that began it (meta.json's git_commit, the
# packed binaries' here): another build may time another step (on 2026-11-29 every convolution
# on tch-cuda moved to libtorch's backward), which batchlab refuses to mix into one run.
resumable() {
  local d
  d="$(newest "$1" || true)"
  unfinished "$1" && grep -q "\"git_commit\": \"${BATCHLAB_GIT_COMMIT:-none}\"" "$d/meta.json"
}
# A reference table compacted after an earlier go was imported (DIR/NAME.parquet, `batchlab
# compact`) back to the CSV that scripts/pytorch_steps.py resumes, with either binary's `csv`.
expand_reference() { # DIR FILE
  local parquet="$1/${2%.csv}.parquet" slot
  { [ -f "$parquet" ] && [ ! -f "$1/$2" ]; } || return 0
  for slot in cuda tch-cuda; do
    [ -n "${bin[$slot]:-}" ] || continue
    rm -rf "$work/csv"
    if in_slot "$slot" "${bin[$slot]}" csv "$1" --out "$work/csv" >> "$log" 2>&1 \
      && mv "$work/csv/$2" "$1/$2"; then
      rm -f "$parquet"
      return 0
    fi
  done
  say "cannot expand $parquet: its reference is not resumed"
  return 1
}
# The PyTorch reference of `experiment`'s sweep, from its config, into DIR/pytorch.csv, or with
# a VARIANT (cudnn-benchmark, amp: the script's flag) into DIR/pytorch-VARIANT.csv.
reference() { # EXPERIMENT DIR SECONDS [VARIANT]
  [ -n "$torch_lib" ] || return 0
  local config="$2/config.toml" device=cuda
  local file=pytorch.csv flag=()
  [ -n "${4:-}" ] && { file="pytorch-$4.csv"; flag=("--$4"); }
  [ -n "$rehearse" ] && device=cpu
  expand_reference "$2" "$file" || return 0
  # The run's resolved config, read with tomllib: the model, the batch sizes (a range or a
  # list), the protocol and the optimizer, as scripts/pytorch_steps.py takes them.
  local sweep=()
  mapfile -t sweep < <(python3 - "$config" <<'PY'
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
m, s, o = c["model"], c["sweep"], c.get("optimizer", {})
print("--model"); print(m["architecture"])
print("--input"); print(",".join(map(str, m["input"])))
print("--classes"); print(m["classes"])
if s.get("batch_sizes"):
    print("--batch-sizes"); print(",".join(map(str, s["batch_sizes"])))
else:
    print("--batch-range"); print(",".join(map(str, s["batch_range"])))
for key, flag in [("rounds", "--rounds"), ("samples", "--samples"), ("warmup_steps", "--warmup")]:
    print(flag); print(s[key])
print("--optimizer"); print(o.get("name", "sgd"))
if o.get("learning_rate") is not None:
    print("--lr"); print(o["learning_rate"])
PY
  )
  say "reference: PyTorch ${sweep[1]:-?} on $device ${flag[*]:-} into $2/$file"
  timeout -k 30 "$3" python3 -W ignore scripts/pytorch_steps.py sweep "${sweep[@]}" \
    --device "$device" ${flag[@]+"${flag[@]}"} --out "$2/$file" >> "$log" 2>&1 \
    || say "reference stopped (exit $?): its rows so far are kept, and a next go resumes them"
}
for entry in "${RUNS[@]}"; do
  read -r slot experiment variant <<< "$entry"
  if [ -n "$only" ] && [[ ",$only," != *",$experiment,"* ]]; then continue; fi
  seconds=$(( $(left) - RESERVE ))
  if [ "$slot" = "pytorch" ]; then
    dir="$(newest "$experiment-tch-cuda" || true)"
    if [ -z "$rehearse" ] && [ -n "$dir" ] && [ "$seconds" -ge "$SHORTEST" ]; then
      reference "$experiment" "$dir" "$seconds" "$variant"
    fi
    continue
  fi
  [ -n "${bin[$slot]:-}" ] || continue
  if [ "$seconds" -lt "$SHORTEST" ]; then say "out of time: $slot $experiment not started"; continue; fi
  name="$experiment-${backend[$slot]}"
  # A study a go carried in complete is not run again unless --again names it (a new config,
  # e.g. more rounds); its references still resume below.
  if complete "$name" && [[ ",$again," != *",$experiment,"* ]]; then
    say "already complete: $(newest "$name") (--again $experiment runs it anew)"
  else
    args=(run "$repo/experiments/$experiment.toml" --out "$root" --data-dir "$repo/datasets"
      --set "experiment.name=$name" --set "backend.name=${backend[$slot]}")
    [ -n "$rehearse" ] && args+=("${REHEARSAL[@]}")
    args+=(${sets[@]+"${sets[@]}"})
    [ "$slot" = "tch-cuda" ] && args+=(${fast_paths[@]+"${fast_paths[@]}"})
    if resumable "$name"; then
      args+=(--resume)
    elif unfinished "$name"; then
      say "$(newest "$name") is unfinished but another build's: $name starts anew"
    fi
    say "run: ${bin[$slot]} ${args[*]} (at most ${seconds}s)"
    # SIGTERM at the limit, to batchlab alone (--foreground: timeout otherwise signals the whole
    # group too, and a second signal ends batchlab at once, before it records the stop): it stops
    # its worker, marks the run interrupted, and the next go resumes it. KILL 30 s later if not.
    before=$(cached)
    if (cd "$work/run" && in_slot "$slot" timeout --foreground -k 30 "$seconds" "${bin[$slot]}" "${args[@]}") >> "$log" 2>&1; then
      say "done: $name (kernel cache: $before -> $(cached) files)"
    else
      say "stopped (exit $?): $name (kernel cache: $before -> $(cached) files)"
    fi
  fi
  dir="$(newest "$name")"
  if { [ "$slot" = "tch-cuda" ] || [ -n "$rehearse" ]; } && [ -n "$dir" ]; then
    seconds=$(( $(left) - RESERVE ))
    if [ "$seconds" -ge "$SHORTEST" ]; then reference "$experiment" "$dir" "$seconds"; fi
  fi
done

# --- 4. pack -------------------------------------------------------------------------------
# Whole run directories (<experiment>/<run> under the report root) with a file written in this
# go, archived as reports/<experiment>/<run>, as `just gpu-import` unpacks them.
runs=$(cd "$root" && find . -mindepth 3 -newer "$work/stamp" -type f ! -name '*.lock' -printf '%h\n' \
  | cut -d/ -f2-3 | sort -u)
if [ -z "$runs" ]; then say "nothing to pack: no report was written"; exit 0; fi
say "packing: $(echo $runs)"
# Archived as reports/<experiment>/<run> and gpu-cache/<card>, as `just gpu-import` unpacks them.
tar -C "$root" --transform "s:^:reports/:" --exclude='*.lock' -cf "$work/campaign.tar" $runs
if [ -n "$(find "$cache" -type f -newer "$work/stamp" | head -n 1)" ]; then
  say "packing the grown kernel cache: $(cached) file(s), $(du -sh "$cache" | cut -f1)"
  tar -C "$cache_root" --transform "s:^:gpu-cache/:" -rf "$work/campaign.tar" "$card"
fi
if command -v zstd >/dev/null; then
  zstd -q -19 -T0 --rm "$work/campaign.tar" -o "$work/campaign.tar.zst"
  packed="$work/campaign.tar.zst"
else
  gzip -9 "$work/campaign.tar"
  packed="$work/campaign.tar.gz"
fi
# At most 7 parts of 16,000,000 bytes (under 16 MiB), the log the eighth file.
size=$(stat -c %s "$packed")
if [ "$size" -gt $(( 7 * 16000000 )) ]; then
  say "error: the reports pack to $size bytes, over 7 parts of 16 MB"; exit 1
fi
split -b 16000000 -d -a 1 "$packed" "$out/$(basename "$packed")."
say "packed $size bytes into $(ls "$out" | grep -c '\.tar\.') part(s) in $out; import with: just gpu-import DIR"
