"""A/B of two ptxjit builds on the GPU machine: the launch and vectorize figures of
bench/run.py and its warm compiles, timed in alternating fresh processes, one build then the
other, so that the machine's drift falls on both alike.

    python scripts/ab.py ROOT_A ROOT_B [--rounds 6] [--cpu N] [--json out.json]

Each ROOT is a checkout built by ./setup.sh (its .venv imports its ptxjit). The timing code is
this checkout's (bench/run.py's launch_loop over bench/workloads.py's kernels), so both builds
are measured the same way. Prints per metric the median of the rounds' medians for A and B and
their ratio B/A, the median of the per-round ratios (each round times A and B back to back), and
writes every figure as JSON. --cpu N pins every worker to CPU N: launch timings of unpinned
processes are bimodal (a process lands on a fast or a slow core and stays there), which makes
the medians of a few rounds differ by 10% between two runs of the same builds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(HERE), "bench")

WORKER = r'''
import sys
sys.path.insert(0, sys.argv[1])
import json
import numpy as np
import run as bench
import workloads as w
from ptxjit import cuda, vectorize

it, reps, sync = 10000, 15, cuda.synchronize
res = {}
empty = w.build(w.EMPTY, cuda, "empty")
res["launch_empty"] = bench.launch_loop(empty[1, 1], (), it, reps, sync)
arrays = w.build(w.many_args_source("arrays"), cuda, "many")
arrs = [cuda.to_device(np.full(256, i + 1, np.float32)) for i in range(16)]
res["launch_16_arrays"] = bench.launch_loop(arrays[1, 1], arrs, it, reps, sync)
scalars = w.build(w.many_args_source("scalars"), cuda, "many")
res["launch_16_scalars"] = bench.launch_loop(scalars[1, 1],
                                             [float(i) + 0.5 for i in range(16)], it, reps, sync)

@vectorize(["float32(float32, float32)"], target="cuda")
def add(a, b):
    return a + b

a = cuda.to_device(np.linspace(1.0, 2.0, 1000, dtype=np.float32))
b = cuda.to_device(np.linspace(-1.0, 3.0, 1000, dtype=np.float32))
res["vectorize_add_f32_1000"] = bench.launch_loop(lambda: add(a, b), (), 2000, reps, sync)
res["vectorize_add_f32_1000_scalar"] = bench.launch_loop(lambda: add(a, 2.0), (), 2000, reps,
                                                         sync)

# warm compiles as bench/run.py times them (a fresh function object each time), in µs
import time
cuda.jit(w.SAXPY_SIG)(w.build(w.SAXPY, cuda, "saxpy").py_func)
def compile_us(source, name, sig):
    ts = []
    for _ in range(reps):
        fn = w.build(source, cuda, name).py_func
        t0 = time.perf_counter()
        cuda.jit(sig)(fn)
        ts.append((time.perf_counter() - t0) * 1e6)
    return sorted(ts)[len(ts) // 2]
res["compile_warm_saxpy"] = compile_us(w.SAXPY, "saxpy", w.SAXPY_SIG)
res["compile_warm_mandelbrot"] = compile_us(w.MANDELBROT, "mandel_kernel", w.MANDELBROT_SIG)
print(json.dumps(res))
'''


def measure(root, cpu=None):
    env = dict(os.environ)
    env.setdefault("PTXJIT_TARGET", "cuda")
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    out = subprocess.run([os.path.join(root, ".venv", "bin", "python"), "-c", WORKER, BENCH],
                         capture_output=True, text=True, env=env, timeout=600, check=True,
                         preexec_fn=pin)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--cpu", type=int, help="pin the workers to this CPU")
    ap.add_argument("--json")
    args = ap.parse_args()
    runs = {"a": [], "b": []}
    for r in range(args.rounds):
        order = ("a", "b") if r % 2 == 0 else ("b", "a")
        for side in order:
            runs[side].append(measure(getattr(args, side), args.cpu))
    pinned = f", pinned to CPU {args.cpu}" if args.cpu is not None else ""
    print(f"A = {args.a}\nB = {args.b}\n{args.rounds} rounds, alternating{pinned}; medians (µs)\n")
    print("| metric | A | B | B/A | median of round B/A | A rounds | B rounds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for m in runs["a"][0]:
        fa = [x[m] for x in runs["a"]]
        fb = [x[m] for x in runs["b"]]
        ma, mb = statistics.median(fa), statistics.median(fb)
        paired = statistics.median(b / a for a, b in zip(fa, fb))
        print(f"| {m} | {ma:.3g} | {mb:.3g} | {mb / ma:.3f} | {paired:.3f} | "
              f"{' '.join(f'{v:.3g}' for v in fa)} | {' '.join(f'{v:.3g}' for v in fb)} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
