"""The protocol and printout the framework step scripts share (scripts/pytorch_steps.py,
scripts/keras_steps.py), without importing any framework: rounds that visit every case once in
a shuffled order (seed 0), then ms per step per case, median and IQR, and every sample."""

import random
import statistics


def time_rounds(cases, visit, rounds, samples):
    """{case name: every timed step in ms}: `rounds` shuffled rounds of `visit(case, 2, samples)`
    (2 warm-up steps dropped, then `samples` timed ones)."""
    step_ms = {case[0]: [] for case in cases}
    order, rng = list(cases), random.Random(0)
    for _ in range(rounds):
        rng.shuffle(order)
        for case in order:
            step_ms[case[0]] += visit(case, 2, samples)
    return step_ms


def print_results(step_ms):
    """Median and IQR per case, then every sample (what scripts/bench-summary.py reads)."""
    print(f"{'case':<30} {'median ms':>10} {'IQR ms':>23}")
    for name, ms in step_ms.items():
        q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive")
        print(f"{name:<30} {statistics.median(ms):>10.1f} {q1:>10.1f} .. {q3:<9.1f}")
    for name, ms in step_ms.items():
        print(f"samples {name}: " + " ".join(f"{v:.1f}" for v in ms))
