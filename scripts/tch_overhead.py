"""What burn adds around libtorch's ops, per training step: burn on LibTorch (`batchlab bench
--backend tch`) against plain PyTorch (scripts/pytorch_steps.py) on the same libtorch, one case
of `batchlab bench`, both profiled with `perf record` (CPU clock, every thread).

A process also builds its model and, for Python, imports torch; to leave that out, each
framework runs twice, with SHORT and with LONG timed steps, and a step's CPU time is the
difference of the two profiles over LONG - SHORT steps (the same setup and warm-up in both).
Each round runs every process in a rotated order. Prints, per round and as the median over
rounds, the CPU ms a step spends in each group of code (libtorch's matrix products, its
element-wise ops, its dispatch and autograd, OpenMP's waiting threads, allocation, the kernel,
burn and batchlab's Rust, Python) in each framework and its difference from PyTorch, then the
symbols whose CPU time differs most from PyTorch's, then MKL's own timing of every matrix
product (MKL_VERBOSE).

Usage: tch_overhead.py --tch [LABEL=]BIN [--tch LABEL=BIN] --python PY --case mlp
                       [--short STEPS --long STEPS --rounds 3]
"""

import argparse
import collections
import os
import re
import statistics
import subprocess
import tempfile

# (group, dso pattern, symbol pattern): the first match names a sample's group.
GROUPS = [
    ("kernel (page faults, mappings, scheduling)", r"\[kernel", r""),
    ("OpenMP (threads waiting, forking)", r"libgomp|libiomp", r""),
    ("libc: copying and filling", r"^libc[.-]", r"mem(cpy|move|set)|str"),
    ("libc: allocation", r"^libc[.-]", r"malloc|free|_int_|tcache|mmap|munmap|brk|arena"),
    ("libc: other", r"^libc[.-]", r""),
    # oneDNN's convolutions run as code it generates at run time: perf names it "[JIT] tid N".
    ("libtorch: products, convolutions (MKL, oneDNN)", r"libtorch|\[unknown\]|\[JIT\]|anon|libmkl|libdnnl",
     r"mkl_|gemm|dnnl|brg|^0x"),
    ("libtorch: autograd engine", r"libtorch", r"torch::autograd|AutogradMeta|Node::"),
    ("libtorch: element-wise ops, reductions, loss", r"libtorch|libc10",
     r"TensorIteratorBase::loop|VectorizedLoop|callback_fn<at::native|at::native::|at::vec::"),
    ("libtorch: dispatch, tensors, allocator", r"libtorch|libc10",
     r"c10::|Dispatcher|_ops::|TensorImpl|TensorBase|TensorIterator|intrusive|Allocator|"
     r"at::empty|empty_cpu|OperatorHandle|RecordFunction|KernelFunction|TensorOptions"),
    ("libtorch: other", r"libtorch|libc10", r""),
    ("Python (interpreter, torch bindings)", r"python|libtorch_python", r""),
    ("burn, batchlab, tch's C wrapper (Rust binary)", r"^batchlab", r""),
    ("other", r"", r""),
]
COMPILED = [(name, re.compile(dso), re.compile(sym)) for name, dso, sym in GROUPS]


def group(dso, sym):
    for name, dso_re, sym_re in COMPILED:
        if dso_re.search(dso) and sym_re.search(sym):
            return name
    return "other"


def profile(cmd, freq):
    """{(dso, symbol): samples} of `cmd` under perf, and the command's output."""
    with tempfile.NamedTemporaryFile(suffix=".data") as data:
        out = subprocess.run(["perf", "record", "-q", "-F", str(freq), "-o", data.name, "--"] + cmd,
                             capture_output=True, text=True, check=True).stdout
        report = subprocess.run(
            ["perf", "report", "-i", data.name, "--stdio", "--no-children", "--sort", "dso,sym",
             "-F", "sample,dso,sym", "-t", "\t"],
            capture_output=True, text=True, check=True).stdout
    samples = collections.Counter()
    for line in report.splitlines():
        fields = line.split("\t")
        if line.startswith("#") or len(fields) < 3 or not fields[0].strip().isdigit():
            continue
        sym = re.sub(r"^\[[.kgu]\] ", "", fields[2].strip())
        samples[(fields[1].strip(), sym)] += int(fields[0])
    return samples, out


def median_ms(output, case):
    """The median ms per step the benchmark printed for `case`."""
    for line in output.splitlines():
        if line.startswith(case) or re.match(rf"\s*{re.escape(case)}\b", line):
            numbers = re.findall(r"\d+\.\d+", line)
            if numbers:
                return float(numbers[0])
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tch", action="append", required=True,
                        help="a LibTorch build of batchlab, LABEL=BIN or BIN (label tch)")
    parser.add_argument("--python", required=True)
    parser.add_argument("--case", default="mlp", choices=["vgg16", "small-cnn", "mlp"])
    parser.add_argument("--short", type=int, help="default: 20 steps on the MLP, 2 else")
    parser.add_argument("--long", type=int, help="default: 220 steps on the MLP, 12 else")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--freq", type=int, default=1999)
    args = parser.parse_args()
    mlp = args.case == "mlp"
    args.short = args.short or (20 if mlp else 2)
    args.long = args.long or (220 if mlp else 12)
    os.environ.update({"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"})
    binaries = dict(t.split("=", 1) if "=" in t else ("tch", t) for t in args.tch)
    frameworks = list(binaries) + ["PyTorch"]

    def command(framework, steps):
        if framework in binaries:
            return [binaries[framework], "bench", "--backend", "tch", "--only", "steps",
                    "--case", args.case, "--rounds", "1", "--samples", str(steps)]
        return [args.python, "-W", "ignore", "scripts/pytorch_steps.py", "--threads", "2",
                "--case", args.case, "--rounds", "1", "--samples", str(steps)]

    runs = [(f, n) for f in frameworks for n in (args.short, args.long)]
    per_round = []
    for r in range(args.rounds):
        got = {}
        for i in range(len(runs)):
            framework, steps = runs[(i + r) % len(runs)]
            got[(framework, steps)] = profile(command(framework, steps), args.freq)
        step = {}
        for framework in frameworks:
            (short, _), (long, out) = got[(framework, args.short)], got[(framework, args.long)]
            per_sym = {key: (long[key] - short[key]) * 1e3 / args.freq / (args.long - args.short)
                       for key in set(long) | set(short)}
            step[framework] = (per_sym, median_ms(out, args.case))
        per_round.append(step)
        walls = ", ".join(f"{f} {step[f][1]:.1f} ms" for f in frameworks)
        print(f"== round {r + 1}: CPU ms per step by group (the {args.long}-step run's median "
              f"wall-clock step: {walls})")
        print_groups(frameworks, [step])
    print(f"== median of {args.rounds} rounds, CPU ms per step ({args.long} - {args.short} steps, "
          f"perf at {args.freq} Hz on every thread)")
    print_groups(frameworks, per_round)
    for framework in frameworks[:-1]:
        print_symbols(framework, per_round)
    calls = {framework: collections.defaultdict(list) for framework in frameworks}
    for r in range(args.rounds):
        for framework in frameworks[r % len(frameworks):] + frameworks[:r % len(frameworks)]:
            for signature, ms in mkl_calls(command(framework, args.short)):
                calls[framework][signature].append(ms)
    print_products(frameworks, calls, args.short + 2, args.rounds)


def mkl_calls(cmd):
    """[(signature, ms)] of every matrix product MKL ran for `cmd` (MKL_VERBOSE=1)."""
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         check=True, env=dict(os.environ, MKL_VERBOSE="1")).stdout
    calls = []
    for m in re.finditer(r"MKL_VERBOSE (\w+)\(([^,]+,[^,]+,\d+,\d+,\d+),\S*\) ([\d.]+)(us|ms|s)", out):
        scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(4)]
        calls.append((f"{m.group(1)}({m.group(2)})", float(m.group(3)) * scale))
    return calls


def print_products(frameworks, calls, steps, rounds):
    """Each MKL call's signature (column-major: transa, transb, m, n, k), its calls per step and
    its median ms in each framework; then the sum per step of count x median."""
    print(f"== MKL's matrix products (MKL_VERBOSE=1, one {steps}-step process per framework and "
          "round, warm-up included, rounds rotating the order): calls per step x median ms a call")
    print(f"{'call (column-major)':<28}" + "".join(f" {f:>16}" for f in frameworks))
    totals = collections.Counter()
    for signature in sorted(set().union(*(set(calls[f]) for f in frameworks))):
        cells = []
        for framework in frameworks:
            ms = calls[framework].get(signature, [])
            per_step = len(ms) / (steps * rounds)
            median = statistics.median(ms) if ms else 0.0
            totals[framework] += per_step * median
            cells.append(f"{per_step:>4.1f} x {median:>7.2f}" if ms else "-")
        print(f"{signature:<28}" + "".join(f" {c:>16}" for c in cells))
    print(f"{'ms per step in the products':<28}"
          + "".join(f" {totals[f]:>16.2f}" for f in frameworks))


def by_group(per_sym):
    totals = collections.Counter()
    for (dso, sym), ms in per_sym.items():
        totals[group(dso, sym)] += ms
    return totals


def print_groups(frameworks, rounds):
    reference = frameworks[-1]
    print(f"{'group':<52}" + "".join(f" {f:>9}" for f in frameworks)
          + "".join(f" {f + ' - ' + reference:>20}" for f in frameworks[:-1]))
    rows = {f: [by_group(step[f][0]) for step in rounds] for f in frameworks}
    for name in [name for name, _, _ in GROUPS] + ["total"]:
        def value(framework):
            if name == "total":
                return statistics.median(sum(g.values()) for g in rows[framework])
            return statistics.median(g[name] for g in rows[framework])
        values = {f: value(f) for f in frameworks}
        if name != "total" and all(abs(v) < 0.05 for v in values.values()):
            continue
        print(f"{name:<52}" + "".join(f" {values[f]:>9.2f}" for f in frameworks)
              + "".join(f" {values[f] - values[reference]:>+20.2f}" for f in frameworks[:-1]))


def print_symbols(framework, rounds, top=12):
    reference = list(rounds[0])[-1]
    keys = set()
    for step in rounds:
        keys |= set(step[framework][0]) | set(step[reference][0])

    def med(f, key):
        return statistics.median(step[f][0].get(key, 0.0) for step in rounds)

    diff = sorted(((med(framework, k) - med(reference, k), k) for k in keys), key=lambda d: d[0])
    print(f"== the {top} symbols {framework} spends most more CPU ms per step on than "
          f"{reference}, then most less")
    for d, (dso, sym) in list(reversed(diff))[:top] + diff[:top]:
        print(f"{d:>+8.2f}  {group(dso, sym)[:28]:<28}  {dso[:22]:<22}  {short(sym)[:110]}")


def short(sym):
    """A libtorch kernel's symbol without the wrappers every element-wise loop shares, so that
    the kernel's own name shows within a line."""
    for wrapper in ["c10::function_ref<void (char**, long const*, long, long)>::callback_fn<",
                    "at::TensorIteratorBase::loop_2d_from_1d<", "at::native::AVX2::",
                    "VectorizedLoop2d<", "at::native::(anonymous namespace)::"]:
        sym = sym.replace(wrapper, "")
    return sym


if __name__ == "__main__":
    main()
