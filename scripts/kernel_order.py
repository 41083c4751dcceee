"""A dense layer's products in burn's kernel layout against PyTorch's, in PyTorch's MKL, on 2
threads: why batchlab's dense layers on LibTorch (crates/fast/src/dense/libtorch.rs) run narrow
layers' products in PyTorch's order.

burn keeps a kernel as `in x out`, PyTorch as `out x in`, so the same layer's forward (x·w) and
kernel gradient (xᵀ·d) reach MKL with their operands the other way round. For a batch of 1024
rows and 512 inputs, at each output width: the kernel gradient as burn orders it (`x.t() @ d`)
and as PyTorch does (`(d.t() @ x).t()`, made contiguous), the forward as burn orders it
(`x @ w`) and as PyTorch does (`x @ wt.t()`, `wt` the kernel's transposed copy). 7 rounds
visiting all four in turn, 3 untimed and 25 timed calls each; prints each one's median over the
rounds' medians and their range, in ms.

Usage: .venv-tch/bin/python scripts/kernel_order.py
"""

import time

import torch

ROWS, INPUTS = 1024, 512
WIDTHS = [1, 2, 4, 8, 10, 12, 16, 24, 32, 64, 128, 512]


def main():
    torch.set_num_threads(2)
    g = torch.Generator().manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; x {ROWS} x {INPUTS}")
    print(f"{'outputs':>7} {'dw, burn':>22} {'dw, PyTorch':>22} {'forward, burn':>22} "
          f"{'forward, PyTorch':>22}")
    for n in WIDTHS:
        x = torch.randn(ROWS, INPUTS, generator=g)
        d = torch.randn(ROWS, n, generator=g)
        w = torch.randn(INPUTS, n, generator=g)
        calls = [lambda: x.t() @ d, lambda: (d.t() @ x).t().contiguous(),
                 lambda: x @ w, lambda: x @ w.t().contiguous().t()]
        medians = [[] for _ in calls]
        for _ in range(7):
            for call, kept in zip(calls, medians):
                for _ in range(3):
                    call()
                times = []
                for _ in range(25):
                    start = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - start)
                kept.append(sorted(times)[12] * 1e3)
        cells = [f"{sorted(m)[3]:.3f} ({min(m):.3f}-{max(m):.3f})" for m in medians]
        print(f"{n:>7} " + " ".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
