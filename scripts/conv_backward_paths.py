"""Times a convolution's backward two ways in PyTorch: libtorch's own `convolution_backward`
(what PyTorch's autograd calls), and the way burn 0.21 composes it on any backend, burn-tch
included: the input gradient as a transposed convolution, the weight gradient as a forward
convolution with batch and channels swapped (the output gradient as the kernel), the bias
gradient as a sum. Same tensors, same threads, interleaved; prints median ms of each.

Layers: the small CNN's 3->32 convolution at 200x200 (batch 32) and VGG16's conv1_2 at 64x64
(batch 16 and 17). Run with the project's PyTorch (`just build-tch` installs it):
  .venv-tch/bin/python scripts/conv_backward_paths.py
"""

import statistics
import time

import torch
import torch.nn.functional as F

LAYERS = [  # name, batch, in channels, out channels, size
    ("small-cnn conv 3->32 200x200 b32", 32, 3, 32, 200),
    ("vgg16 conv1_2 64->64 64x64 b16", 16, 64, 64, 64),
    ("vgg16 conv1_2 64->64 64x64 b17", 17, 64, 64, 64),
]


def libtorch(x, w, g):
    return torch.ops.aten.convolution_backward(
        g, x, w, [w.shape[0]], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])


def burn_way(x, w, g):
    dx = F.conv_transpose2d(g, w, padding=1)
    dw = F.conv2d(x.transpose(0, 1), g.transpose(0, 1), padding=1).transpose(0, 1)
    db = g.sum(dim=(0, 2, 3))
    return dx, dw, db


def ms(f, *args, repeats=5):
    f(*args)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f(*args)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def main():
    torch.manual_seed(0)
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads")
    for name, n, cin, cout, size in LAYERS:
        x = torch.randn(n, cin, size, size)
        w = torch.randn(cout, cin, 3, 3)
        g = torch.randn(n, cout, size, size)
        a, b = libtorch(x, w, g), burn_way(x, w, g)
        err = max((p - q).abs().max().item() / p.abs().max().item() for p, q in zip(a, b))
        own, burn = [], []
        for _ in range(3):  # interleaved rounds
            own += ms(libtorch, x, w, g)
            burn += ms(burn_way, x, w, g)
        print(f"{name}: convolution_backward {statistics.median(own):.1f} ms, burn's "
              f"composition {statistics.median(burn):.1f} ms "
              f"({statistics.median(burn) / statistics.median(own):.2f}x; results agree "
              f"within {err:.1e} of the largest)")


if __name__ == "__main__":
    main()
