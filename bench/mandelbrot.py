"""Mandelbrot (examples/mandelbrot.py) on the GPU: compile time and kernel time.

Usage: python bench/mandelbrot.py [--json out.json]
  compile: eager compile of the kernel for its signature, process warm (median of 5 fresh
           dispatchers of the same Python function);
  kernel:  the 1024x1536 image with 20 iterations as in the blog, launch + synchronize,
           median of 20 (device arrays, no copies).
"""
import argparse
import importlib.util
import json
import os
import statistics
import time

import numpy as np

from ptxjit import cuda

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("mandelbrot", os.path.join(ROOT, "examples", "mandelbrot.py"))
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)

SIG = "void(float64, float64, float64, float64, uint8[:, ::1], int64)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    res = {}
    image = np.zeros((1024, 1536), dtype=np.uint8)
    d_image = cuda.to_device(image)
    t0 = time.perf_counter()
    m.mandel_kernel[(32, 16), (32, 8)](-2.0, 1.0, -1.0, 1.0, d_image, 20)
    cuda.synchronize()
    res["first_call_s"] = time.perf_counter() - t0
    compiles = []
    for _ in range(5):
        t0 = time.perf_counter()
        cuda.jit(SIG)(m.mandel_kernel.py_func)
        compiles.append(time.perf_counter() - t0)
    res["compile_warm_s"] = statistics.median(compiles)
    kernel = []
    cfg = m.mandel_kernel[(32, 16), (32, 8)]
    for _ in range(20):
        t0 = time.perf_counter()
        cfg(-2.0, 1.0, -1.0, 1.0, d_image, 20)
        cuda.synchronize()
        kernel.append(time.perf_counter() - t0)
    res["kernel_s"] = statistics.median(kernel)
    for k, v in res.items():
        print(f"| mandelbrot {k} | {v * 1e3:.3f} ms |")
    if args.json:
        json.dump(res, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
