#!/usr/bin/env python3
"""Summarises a `just bench-paths` log (docs/bench/*-paths*.log) as the docs quote it.

Per case and arm (the paths this machine measured, the fixed thresholds, and the earlier build
where the log has one): the median ms per step of every round (each round's own median of its
timed steps), their median and range, then the measured arm's median over each other arm's.
Reads only the log, so a figure in the docs can be traced to it.
Usage: scripts/paths-summary.py LOG...
"""

import re
import statistics
import sys


def arm(command):
    if "BATCHLAB_CONV_PATHS=thresholds" in command:
        return "thresholds"
    if command.split()[0].endswith("/batchlab"):
        return "measured"
    return "before"


def summarise(path):
    rounds = {}
    current = None
    for line in open(path):
        header = re.match(r"== round \d+: (.*)", line)
        if header:
            current = arm(header.group(1))
            continue
        row = re.match(r"(\S+ \S+ b\d+ \S+)\s+flex\s+([\d.]+)\s", line)
        if current and row:
            rounds.setdefault((row.group(1), current), []).append(float(row.group(2)))
    print(f"== {path}")
    for case in dict.fromkeys(case for case, _ in rounds):
        medians = {}
        for name in ["measured", "thresholds", "before"]:
            ms = rounds.get((case, name))
            if not ms:
                continue
            medians[name] = statistics.median(ms)
            print(f"{case:<30} {name:<10} {medians[name]:7.1f} ms ({min(ms):.1f}-{max(ms):.1f}, {len(ms)} rounds)")
        for name in ["thresholds", "before"]:
            if name in medians:
                print(f"{case:<30} measured / {name}: {medians['measured'] / medians[name]:.3f}")


for log in sys.argv[1:]:
    summarise(log)
