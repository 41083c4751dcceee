"""The three standard training-step benchmarks of `batchlab bench`, written in plain PyTorch.

The same networks (layer for layer: Keras-style VGG16 with biases and no dropout, the seed-003
small CNN, the MLP), optimizers, batch sizes and protocol as batchlab's: per visit a fresh model,
2 warm-up steps dropped, then timed steps; rounds that visit every case once in a shuffled order.
PyTorch on the CPU computes synchronously, so the clock read after `optimizer.step()` is the
end of the step. Prints ms per step: median and IQR per case, then every sample; with
`--profile`, each case's costliest ops instead.

Run with the project's PyTorch (`just bench-pytorch`); `--threads 0` keeps PyTorch's default.

`sweep` is the PyTorch/cuDNN reference of a batchlab step-time sweep on a GPU (the GPU
campaign, scripts/gpu-campaign.sh): one of the seeds' networks (VGG16, VGG19, MobileNet v1,
ResNet-50, in the Keras layouts batchlab builds), every batch size of a range in rounds of a new
shuffled order, `warmup` dropped steps then `samples` timed steps per visit, the device
synchronised before each clock read; rows in the columns of batchlab's step-time results.csv,
backend `pytorch-cuda` (or `pytorch-cuda-amp` under `--amp`: torch.autocast with float16 and
a GradScaler, as seed 002 measured), so the reference reads as one more sweep.
"""

import argparse
import random
import time

import torch
from torch import nn

from step_rounds import print_results, time_rounds


def vgg(stages, input_hw, classes):
    """Keras' VGG layout: 3x3 convs with biases, 2x2 max pools, three dense layers, no dropout."""
    layers, cin = [], 3
    for stage in stages:
        for cout in stage:
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU()]
            cin = cout
        layers.append(nn.MaxPool2d(2))
    flat = cin * (input_hw // 32) ** 2
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(flat, 4096), nn.ReLU(),
                         nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, classes))


VGG16 = [[64, 64], [128, 128], [256] * 3, [512] * 3, [512] * 3]
VGG19 = [[64, 64], [128, 128], [256] * 4, [512] * 4, [512] * 4]


def vgg16(input_hw, classes):
    return vgg(VGG16, input_hw, classes)


def mobilenet_v1(classes):
    """Keras applications.MobileNet at alpha 1: ReLU6, BatchNorm eps 1e-3, no conv biases."""
    def conv_bn(cin, cout, stride, groups=1, kernel=3):
        return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01), nn.ReLU6()]
    layers, cin = conv_bn(3, 32, 2), 32
    for cout, stride in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1),
                         (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]:
        layers += conv_bn(cin, cin, stride, groups=cin) + conv_bn(cin, cout, 1, kernel=1)
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(1e-3),
                         nn.Linear(cin, classes))


def resnet50(classes):
    """torchvision's ResNet-50 (v1.5: the stride on the 3x3 conv), the nearest PyTorch has to
    Keras' ResNet50 (which strides the 1x1 conv and gives convs biases)."""
    import torchvision
    return torchvision.models.resnet50(num_classes=classes)


def mobilenet_v3_large(classes):
    """torchvision's MobileNetV3-Large, the network seed 002 trained (batchlab builds the same
    layout)."""
    import torchvision
    return torchvision.models.mobilenet_v3_large(num_classes=classes)


SWEEP_MODELS = {
    "vgg16": lambda hw, classes: vgg16(hw, classes),
    "vgg19": lambda hw, classes: vgg(VGG19, hw, classes),
    "mobilenet-v1": lambda hw, classes: mobilenet_v1(classes),
    "resnet50": lambda hw, classes: resnet50(classes),
    "mobilenet-v3-large": lambda hw, classes: mobilenet_v3_large(classes),
}


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


RESULTS_HEADER = "batch_size,round,sample,step_ms,status,backend,device,peak_mem_mb,message"


def sweep(args):
    """The reference sweep: rows appended to `args.out` as they are measured (resumable)."""
    import csv
    import os
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    lo, hi = args.batch_range
    sizes = list(range(lo, hi + 1)) if not args.batch_sizes else args.batch_sizes
    name = torch.cuda.get_device_name(device) if cuda else "cpu"
    backend = "pytorch-" + device.type + ("-amp" if args.amp else "")
    done = set()
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = {(int(r["round"]), int(r["batch_size"])) for r in csv.DictReader(f)}
    else:
        with open(args.out, "w") as f:
            f.write(RESULTS_HEADER + "\n")
    c, hw, _ = args.input
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    model = SWEEP_MODELS[args.model](hw, args.classes).to(device)
    optimizers = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
    opt = optimizers[args.optimizer](model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler(device.type, enabled=args.amp)
    loss_fn = nn.CrossEntropyLoss()
    for rnd in range(args.rounds):
        order = list(sizes)
        rng.shuffle(order)
        for b in order:
            if (rnd, b) in done:
                continue
            images = torch.randn(b, c, hw, hw, device=device)
            labels = torch.arange(b, device=device) % args.classes
            rows = []
            try:
                if cuda:
                    torch.cuda.reset_peak_memory_stats(device)
                for i in range(args.warmup + args.samples):
                    if cuda:
                        torch.cuda.synchronize(device)
                    start = time.perf_counter()
                    opt.zero_grad(set_to_none=True)
                    with torch.autocast(device.type, dtype=torch.float16, enabled=args.amp):
                        loss = loss_fn(model(images), labels)
                    scaler.scale(loss).backward()
                    scaler.step(opt)
                    scaler.update()
                    if cuda:
                        torch.cuda.synchronize(device)
                    ms = (time.perf_counter() - start) * 1e3
                    if i >= args.warmup:
                        rows.append([b, rnd, i - args.warmup, f"{ms!r}", "ok", backend, name])
                peak = torch.cuda.max_memory_reserved(device) / 2**20 if cuda else None
                rows = [r + ["" if peak is None else repr(float(peak)), ""] for r in rows]
            except torch.OutOfMemoryError as e:
                torch.cuda.empty_cache()
                rows = [[b, rnd, "", "", "oom", backend, name, "", str(e).splitlines()[0]]]
            with open(args.out, "a", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows(rows)
                f.flush()
                os.fsync(f.fileno())
            print(f"round {rnd} batch {b}: {rows[-1][3] or rows[-1][4]} ms", flush=True)


def main():
    import sys
    if len(sys.argv) > 1 and sys.argv[1] == "sweep":
        parser = argparse.ArgumentParser(description="the PyTorch reference of a step-time sweep")
        ints = lambda text: [int(v) for v in text.split(",")]
        parser.add_argument("--model", choices=sorted(SWEEP_MODELS), required=True)
        parser.add_argument("--input", type=ints, default=[3, 224, 224])
        parser.add_argument("--classes", type=int, default=1000)
        parser.add_argument("--batch-range", type=ints, default=[1, 70])
        parser.add_argument("--batch-sizes", type=ints, default=None)
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--warmup", type=int, default=2)
        parser.add_argument("--samples", type=int, default=10)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--device", default="cuda")
        parser.add_argument("--optimizer", choices=["sgd", "adam", "adamw"], default="sgd")
        parser.add_argument("--lr", type=float, default=0.01)
        parser.add_argument("--amp", action="store_true")
        parser.add_argument("--cudnn-benchmark", action="store_true")
        parser.add_argument("--out", required=True)
        sweep(parser.parse_args(sys.argv[2:]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--case", action="append", default=[],
                        choices=[case[0].split()[0] for case in CASES],
                        help="a case to time (repeat for several; default: all three)")
    parser.add_argument("--profile", action="store_true",
                        help="instead of timing, print each case's costliest ops (torch.profiler)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cases = [case for case in CASES if not args.case or case[0].split()[0] in args.case]
    if args.profile:
        for case in cases:
            profile(case, args.samples)
        return
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{args.rounds} round(s) x (2 warm-up + {args.samples} timed steps) per case")
    print_results(time_rounds(cases, visit, args.rounds, args.samples))

if __name__ == "__main__":
    main()
