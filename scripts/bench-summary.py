#!/usr/bin/env python3
"""Summarises a `just bench-frameworks` log (docs/bench/*.log) as the docs quote it.

Per case and framework: the median ms per step of every round (each round's own median of its
timed steps), their median and range; then flex against the best other framework (the lowest
median of rounds among tch, PyTorch and Keras), for each flex build, and against the best of
the frameworks alone (PyTorch and Keras: tch is batchlab itself on libtorch); where the log has
PyTorch and Keras held to AVX2 (a CPU with AVX-512), flex's AVX2 build against the better of
those, like for like; then tch against PyTorch; then round by round, each flex build over the
best other and the best framework of the same round. Reads only the log, so a figure in the docs
can be traced to it.
Usage: scripts/bench-summary.py LOG
"""

import re
import statistics
import sys

CASES = ["vgg16 3x64x64 b16 sgd", "small-cnn 3x200x200 b32 adam", "mlp 784-512-512-10 b1024 sgd"]


def framework(command, avx512):
    if "batchlab-no-avx512" in command:
        return "flex AVX2"
    if "--backend tch" in command:
        return "tch"
    # PyTorch and Keras held to AVX2 on a CPU with AVX-512 (scripts/bench-frameworks.sh).
    held = " AVX2" if "ONEDNN_MAX_CPU_ISA=AVX2" in command else ""
    if "pytorch_steps.py" in command:
        return "PyTorch" + held
    if "keras_steps.py" in command:
        return "Keras" + held
    return "flex AVX-512" if avx512 else "flex"


def main():
    lines = open(sys.argv[1]).read().splitlines()
    # The log's header says whether the CPU has AVX-512 (what the default flex build runs).
    avx512 = any("avx512f: yes" in line for line in lines)
    by_round = {}  # (framework, case) -> {round: its median}
    current = None
    for line in lines:
        if line.startswith("== round"):
            number = int(re.match(r"== round (\d+)", line).group(1))
            current = framework(line.split(":", 1)[1], avx512)
            continue
        for case in CASES:
            m = re.match(rf"{re.escape(case)}\s+(?:\S+\s+)?([0-9.]+)\s+[0-9.]+ \.\. ", line)
            if current and m:
                by_round.setdefault((current, case), {})[number] = float(m.group(1))
    rounds = {key: list(ms.values()) for key, ms in by_round.items()}  # the medians of the rounds
    names = sorted({f for f, _ in rounds}, key=lambda f: ("flex" not in f, f))
    print("| case | " + " | ".join(names) + " |")
    print("| --- |" + " ---: |" * len(names))
    med = {}
    for case in CASES:
        cells = []
        for f in names:
            ms = rounds.get((f, case), [])
            if not ms:
                cells.append("")
                continue
            med[f, case] = statistics.median(ms)
            cells.append(f"{med[f, case]:.1f} ({min(ms):.1f}-{max(ms):.1f})")
        print(f"| {case} | " + " | ".join(cells) + " |")
    print()
    others = [f for f in names if "flex" not in f and "AVX2" not in f]
    frameworks = [f for f in others if f != "tch"]
    held = [f for f in names if "flex" not in f and "AVX2" in f]
    for label, among, flexes in [("best other", others, names),
                                 ("best framework", frameworks, names),
                                 ("best framework held to AVX2", held, ["flex AVX2"])]:
        for case in CASES:
            best = min(among, key=lambda f: med.get((f, case), float("inf")), default=None)
            if (best, case) not in med:
                continue
            for f in flexes:
                if "flex" in f and (f, case) in med:
                    print(f"{case}: {f} {med[f, case]:.1f} ms / {label} ({best}) "
                          f"{med[best, case]:.1f} ms = {med[f, case] / med[best, case]:.2f}x")
    for case in CASES:
        if ("tch", case) in med and ("PyTorch", case) in med:
            print(f"{case}: tch {med['tch', case]:.1f} ms / PyTorch {med['PyTorch', case]:.1f} ms"
                  f" = {med['tch', case] / med['PyTorch', case]:.2f}x")
    print()
    for label, among in [("best other", others), ("best framework", frameworks)]:
        for case in CASES:
            for f in (f for f in names if "flex" in f and (f, case) in by_round):
                ratios = []
                for number, ms in sorted(by_round[f, case].items()):
                    best = [by_round[o, case][number] for o in among
                            if number in by_round.get((o, case), {})]
                    if best:
                        ratios.append(ms / min(best))
                if ratios:
                    print(f"{case}: {f} / {label} of the same round, round by round: "
                          + " ".join(f"{r:.2f}" for r in ratios)
                          + f" ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
