"""CPU-backend cost of array bounds checking (docs/reliability.md): the same kernels compiled
with boundscheck=True and boundscheck=False, best of several timed launches each.

    PTXJIT_TARGET=cpu .venv/bin/python bench/boundscheck_cost.py
"""
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from ptxjit import _core, cuda  # noqa: E402

_core.select_target("cpu")


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def matmul(A, B, C):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        s = 0.0
        for k in range(A.shape[1]):
            s += A[i, k] * B[k, j]
        C[i, j] = s


def stencil(a, out):
    i = cuda.grid(1)
    if 0 < i < a.size - 1:
        out[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]


def best(f, reps=7):
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    n = 1 << 22
    x, y, out = np.random.rand(n), np.random.rand(n), np.zeros(n)
    m = 256
    A, B, C = np.random.rand(m, m), np.random.rand(m, m), np.zeros((m, m))
    cases = {
        "saxpy (4M elements)": (saxpy, lambda k: k[math.ceil(n / 256), 256](2.0, x, y, out)),
        "matmul (256x256, naive)": (matmul, lambda k: k[(16, 16), (16, 16)](A, B, C)),
        "stencil (4M elements)": (stencil, lambda k: k[math.ceil(n / 256), 256](x, out)),
    }
    print(f"{'kernel':28} {'checked ms':>11} {'unchecked ms':>13} {'cost':>7}")
    for name, (fn, launch) in cases.items():
        on = cuda.jit(boundscheck=True)(fn)
        off = cuda.jit(boundscheck=False)(fn)
        t_on = best(lambda: launch(on))
        t_off = best(lambda: launch(off))
        print(f"{name:28} {t_on * 1e3:11.2f} {t_off * 1e3:13.2f} {(t_on / t_off - 1) * 100:6.1f}%")


if __name__ == "__main__":
    main()
