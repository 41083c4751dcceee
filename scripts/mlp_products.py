#!/usr/bin/env python3
"""The MLP benchmark step's eight matrix products alone, in numpy's BLAS (OpenBLAS) or PyTorch's
(MKL), on 2 threads: one round, for scripts/bench-mlp-products.sh.

`just bench-frameworks`' MLP (784-512-512-10, batch 1024, SGD) spends most of flex's step in its
products (docs/flex-performance.md): three forward, three kernel gradients, two input gradients.
A round: 20 untimed passes over the eight, then 60 timed ones; it prints the library, the median
pass and its quartiles, in ms and GFLOP/s.

Usage: PYTHON scripts/mlp_products.py numpy|torch
"""

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


def library(name):
    """The library's name and version, a float32 normal matrix of a shape, and a transpose."""
    if name == "numpy":
        import numpy as np

        rng = np.random.default_rng(0)
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        about = f"numpy {np.__version__}, {blas['name']} {blas['version']}"
        return about, lambda shape: rng.standard_normal(shape, dtype=np.float32), lambda a: a.T
    import torch

    torch.set_num_threads(2)
    generator = torch.Generator().manual_seed(0)
    mkl = [l.strip(" -") for l in torch.__config__.show().splitlines() if "Math Kernel" in l]
    about = f"torch {torch.__version__}, {mkl[0] if mkl else 'no MKL'}"
    return about, lambda shape: torch.randn(shape, generator=generator), lambda a: a.t()


def main():
    about, normal, transpose = library(sys.argv[1])
    ops = []
    for m, k, n, ta, tb in SHAPES:
        a = transpose(normal((k, m))) if ta else normal((m, k))
        b = transpose(normal((n, k))) if tb else normal((k, n))
        ops.append((a, b))
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
        f"{about}: median {median * 1e3:.2f} ms ({FLOP / median / 1e9:.0f} GFLOP/s), "
        f"quartiles {low * 1e3:.2f}-{high * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
