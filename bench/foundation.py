"""First figures for ptxjit (run on the GPU machine):

  * saxpy's compile time in a cold process (including LLVM and CUDA start-up) and warm;
  * the launch overhead of an empty kernel beside a bare C++ cuLaunchKernel loop, same run.

Usage: python bench/foundation.py [--bare ./bare_launch] [--json out.json]
The bare launcher is bench/bare_launch.cpp, built with
  g++ -O2 -std=c++17 -I/usr/local/cuda/include bench/bare_launch.cpp -ldl -o bare_launch
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

COLD = r'''
import time
t0 = time.perf_counter()
import numpy as np
from ptxjit import cuda
t1 = time.perf_counter()
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
k = cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")(saxpy)
t2 = time.perf_counter()
x = cuda.to_device(np.ones(1024, np.float32)); o = cuda.device_array_like(x)
k[4, 256](np.float32(2), x, x, o); cuda.synchronize()
t3 = time.perf_counter()
assert (o.copy_to_host() == 3).all()
print({"import_s": t1 - t0, "compile_s": t2 - t1, "first_launch_s": t3 - t2})
'''


def cold_compile():
    out = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, check=True)
    return eval(out.stdout.strip().splitlines()[-1])


def warm_compile(reps=20):
    from ptxjit import cuda
    src = ("def saxpy(a, x, y, out):\n    i = cuda.grid(1)\n    if i < x.size:\n"
           "        out[i] = a * x[i] + y[i]\n")
    times = []
    for _ in range(reps):
        ns = {"cuda": cuda}
        exec(src, ns)  # a fresh function object each time: no cache hit
        t0 = time.perf_counter()
        cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")(ns["saxpy"])
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def launch_overhead(iters=10000, reps=7):
    from ptxjit import cuda

    @cuda.jit
    def empty():
        pass

    cfg = empty[1, 1]
    cfg()
    cuda.synchronize()
    per_indexed, per_bound = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            empty[1, 1]()
        cuda.synchronize()
        per_indexed.append((time.perf_counter() - t0) / iters * 1e6)
        t0 = time.perf_counter()
        for _ in range(iters):
            cfg()
        cuda.synchronize()
        per_bound.append((time.perf_counter() - t0) / iters * 1e6)
    ptx = empty.inspect_ptx(empty.signatures[0])
    return statistics.median(per_indexed), statistics.median(per_bound), ptx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bare", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    res = {}
    colds = [cold_compile() for _ in range(3)]
    res["cold_import_s"] = statistics.median(c["import_s"] for c in colds)
    res["cold_compile_s"] = statistics.median(c["compile_s"] for c in colds)
    res["cold_first_launch_s"] = statistics.median(c["first_launch_s"] for c in colds)
    res["warm_compile_s"] = warm_compile()
    indexed, bound, ptx = launch_overhead()
    res["launch_us_kernel_indexed"] = indexed
    res["launch_us_config_bound"] = bound
    if args.bare:
        name = re.search(r"\.entry\s+([\w$]+)", ptx).group(1)
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(ptx)
        out = subprocess.run([args.bare, f.name, name], capture_output=True, text=True, check=True)
        res.update(json.loads(out.stdout))
        os.unlink(f.name)
        res["ratio_indexed_vs_bare"] = indexed / res["bare_launch_us"]
        res["ratio_bound_vs_bare"] = bound / res["bare_launch_us"]
    print("| metric | value |\n| --- | --- |")
    for k, v in res.items():
        print(f"| {k} | {v:.4g} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
