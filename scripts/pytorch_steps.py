"""The three standard training-step benchmarks of `batchlab bench`, written in plain PyTorch.

The same networks (layer for layer: Keras-style VGG16 with biases and no dropout, the seed-003
small CNN, the MLP), optimizers, batch sizes and protocol as batchlab's: per visit a fresh model,
2 warm-up steps dropped, then timed steps; rounds that visit every case once in a shuffled order.
PyTorch on the CPU computes synchronously, so the clock read after `optimizer.step()` is the
end of the step. Prints ms per step: median and IQR per case; with `--profile`, each case's
costliest ops instead.

Run with the project's PyTorch (`just bench-pytorch`); `--threads 0` keeps PyTorch's default.
"""

import argparse
import random
import statistics
import time

import torch
from torch import nn


def vgg16(input_hw, classes):
    layers, cin = [], 3
    for stage in [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]]:
        for cout in stage:
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU()]
            cin = cout
        layers.append(nn.MaxPool2d(2))
    flat = cin * (input_hw // 32) ** 2
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(flat, 4096), nn.ReLU(),
                         nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, classes))


def small_cnn(input_hw):
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(32 * (input_hw // 2) ** 2, 128), nn.ReLU(), nn.Linear(128, 1))


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                         nn.ReLU(), nn.Linear(512, 10))


# name, model factory, input shape, classes, batch, optimizer factory
CASES = [
    ("vgg16 3x64x64 b16 sgd", lambda: vgg16(64, 1000), (3, 64, 64), 1000, 16,
     lambda p: torch.optim.SGD(p, lr=0.01)),
    ("small-cnn 3x200x200 b32 adam", lambda: small_cnn(200), (3, 200, 200), 1, 32,
     lambda p: torch.optim.Adam(p, lr=0.001, eps=1e-7)),
    ("mlp 784-512-512-10 b1024 sgd", mlp, (1, 28, 28), 10, 1024,
     lambda p: torch.optim.SGD(p, lr=0.01)),
]


def visit(case, warmup, samples):
    _, make, shape, classes, batch, optimizer = case
    model = make()
    opt = optimizer(model.parameters())
    images = torch.randn(batch, *shape)
    if classes == 1:
        labels = (torch.arange(batch) % 2).float().unsqueeze(1)
        loss_fn = nn.BCEWithLogitsLoss()
    else:
        labels = torch.arange(batch) % classes
        loss_fn = nn.CrossEntropyLoss()
    times = []
    for i in range(warmup + samples):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
    return times


def profile(case, steps):
    """Prints the ops taking the most time (self CPU time) over `steps` steps after warm-up."""
    from torch.profiler import ProfilerActivity, profile as torch_profile
    visit(case, 2, 0)
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        visit(case, 0, steps)
    print(f"== {case[0]}: ops by self CPU time over {steps} steps")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--profile", action="store_true",
                        help="instead of timing, print each case's costliest ops (torch.profiler)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.profile:
        for case in CASES:
            profile(case, args.samples)
        return
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{args.rounds} round(s) x (2 warm-up + {args.samples} timed steps) per case")
    step_ms = {case[0]: [] for case in CASES}
    order, rng = list(CASES), random.Random(0)
    for _ in range(args.rounds):
        rng.shuffle(order)
        for case in order:
            step_ms[case[0]] += visit(case, 2, args.samples)
    print(f"{'case':<30} {'median ms':>10} {'IQR ms':>23}")
    for name, ms in step_ms.items():
        q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive")
        print(f"{name:<30} {statistics.median(ms):>10.1f} {q1:>10.1f} .. {q3:<9.1f}")


if __name__ == "__main__":
    main()
