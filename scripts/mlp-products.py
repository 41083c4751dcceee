#!/usr/bin/env python3
"""The MLP benchmark step's eight matrix products alone, in OpenBLAS (numpy) and MKL (PyTorch).

`just bench-frameworks`' MLP (784-512-512-10, batch 1024, SGD) spends most of flex's step in its
products (docs/flex-performance.md). This times just those products (three forward, three
kernel gradients, two input gradients; 3.29 GFLOP) in the libraries the frameworks call, on 2
threads, in alternating rounds: what the fastest step on this machine could spend on products.

Usage: python3 scripts/mlp-products.py [ROUNDS]   (numpy from .venv-keras, torch from .venv-tch)
One round: 20 untimed passes over the eight products, then 60 timed ones; each round prints the
median pass and its quartiles, in ms and GFLOP/s.
"""

import os
import platform
import subprocess
import sys
import time

BATCH = 1024
# C[m, n] = op(A) op(B), with A or B transposed as the layer's backward reads them.
SHAPES = [
    (BATCH, 784, 512, False, False), (BATCH, 512, 512, False, False), (BATCH, 512, 10, False, False),
    (784, BATCH, 512, True, False), (512, BATCH, 512, True, False), (512, BATCH, 10, True, False),
    (BATCH, 512, 512, False, True), (BATCH, 10, 512, False, True),
]
FLOP = sum(2 * m * k * n for m, k, n, _, _ in SHAPES)
PYTHONS = {"numpy": ".venv-keras/bin/python", "torch": ".venv-tch/bin/python"}


def operands(library):
    """The eight products' operands, and the product."""
    if library == "numpy":
        import numpy as np

        rng = np.random.default_rng(0)
        ops = []
        for m, k, n, ta, tb in SHAPES:
            a = rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32)
            b = rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32)
            ops.append((a.T if ta else a, b.T if tb else b))
        return ops
    import torch

    torch.set_num_threads(2)
    generator = torch.Generator().manual_seed(0)
    ops = []
    for m, k, n, ta, tb in SHAPES:
        a = torch.randn((k, m) if ta else (m, k), generator=generator)
        b = torch.randn((n, k) if tb else (k, n), generator=generator)
        ops.append((a.t() if ta else a, b.t() if tb else b))
    return ops


def version(library):
    if library == "numpy":
        import numpy as np

        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"numpy {np.__version__}, {blas['name']} {blas['version']}"
    import torch

    mkl = [line.strip(" -") for line in torch.__config__.show().splitlines() if "Math Kernel" in line]
    return f"torch {torch.__version__}, {mkl[0] if mkl else 'no MKL'}"


def child(library, rounds):
    ops = operands(library)
    if rounds == "1":
        print(f"{library}: {version(library)}", flush=True)
    for _ in range(20):
        for a, b in ops:
            a @ b
    times = []
    for _ in range(60):
        start = time.perf_counter()
        for a, b in ops:
            a @ b
        times.append(time.perf_counter() - start)
    times.sort()
    median, low, high = times[30], times[15], times[45]
    print(
        f"{library} round {rounds}: median {median * 1e3:.2f} ms ({FLOP / median / 1e9:.0f} GFLOP/s), "
        f"quartiles {low * 1e3:.2f}-{high * 1e3:.2f} ms",
        flush=True,
    )


def main():
    if len(sys.argv) == 3 and sys.argv[1] in PYTHONS:
        child(sys.argv[1], sys.argv[2])
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor(),
    )
    ids = {
        key: line.split(":", 1)[1].strip()
        for line in open("/proc/cpuinfo")
        for key in ("cpu family", "model")
        if line.split(":")[0].strip() == key
    }
    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"cpu: {cpu} (family {ids.get('cpu family')}, model {ids.get('model')}), {os.cpu_count()} cpus")
    print(f"products: {len(SHAPES)}, {FLOP / 1e9:.2f} GFLOP per pass; threads: 2")
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2")
    for round_ in range(1, rounds + 1):
        for library, python in PYTHONS.items():
            subprocess.run([python, "-W", "ignore", __file__, library, str(round_)], env=env, check=True)


if __name__ == "__main__":
    main()
