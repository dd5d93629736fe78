"""The kernels whose code objects the code-object fuzzer mutates: the frontend's sample kernels
(tests/fixtures/bytecode/samples.py, with the real `cuda` and `numpy` in place of its stand-ins)
and the kernels below, each with arguments to launch it with. Together they cover the
constructs the frontend translates: loops of every shape, branches, tuples and unpacking,
device functions (positional, keyword and default arguments, several returns), closures and
global constants, math and cmath, complex numbers, float32, shared memory and atomics,
exceptions, slices, and code long enough to need EXTENDED_ARG.

`corpus()` returns the list of `Case`s (built once per process).
"""
import cmath
import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from ptxjit import cuda

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "..", "fixtures", "bytecode", "samples.py")


@dataclass
class Case:
    name: str
    func: object  # the Python function of the kernel
    args: tuple  # a function returning fresh launch arguments
    devices: dict = field(default_factory=dict)  # global name -> Python function of a device fn
    griddim: int = 1
    blockdim: int = 8


TABLE = (1.5, -2.0, 4.25)
LIMIT = 7
SCALE32 = np.float32(0.5)


def _arrays(*specs):
    def make():
        out = []
        for s in specs:
            if s == "f":
                out.append(np.linspace(-2.0, 3.0, 16))
            elif s == "f2":
                out.append(np.arange(12.0).reshape(3, 4))
            elif s == "i":
                out.append(np.arange(-4, 12, dtype=np.int64))
            elif s == "f32":
                out.append(np.linspace(-1.0, 1.0, 16).astype(np.float32))
            elif s == "c":
                out.append(np.linspace(0, 1, 16) + 1j * np.linspace(1, 0, 16))
            elif s == "b":
                out.append(np.array([True, False] * 8))
            else:  # a scalar
                out.append(s)
        return tuple(out)

    return make


# ---- device functions ----

def d_poly(x, a=1.0, b=2.0):
    return a * x * x + b * x - 1.0


def d_divmod(a, b):
    if b == 0:
        return 0, 0
    return a // b, a % b


def d_clamp(v, lo, hi):
    if v < lo:
        return lo
    elif v > hi:
        return hi
    return v


def d_sum_range(n):
    t = 0
    for k in range(n):
        if k % 3 == 0:
            continue
        t += k
        if t > 50:
            break
    return t


# ---- kernels ----

def k_device_calls(x, out):
    i = cuda.grid(1)
    if i < x.size:
        q, r = d_divmod(i + 7, 3)
        out[i] = d_poly(x[i], b=0.5) + d_clamp(x[i], -1.0, 1.0) + q - r + d_sum_range(i)


def k_while_nested(x, out):
    i = cuda.grid(1)
    if i >= out.size:
        return
    n = 0
    acc = 0.0
    while n < 5:
        m = 0
        while m < n:
            if (n + m) % 2:
                acc += x[(n * m) % x.size]
            m += 1
        n += 1
    else:
        acc -= 1.0
    out[i] = acc


def k_tuples(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        t = (a[i, 0], a[i, 1], i)
        x, y, z = t
        y, x = x, y
        p = TABLE[i % 3] + TABLE[-1]
        out[i] = x * 2 + y + z + p + len(t) + a.shape[1]


def k_math(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        r = math.sin(v) + math.exp(-abs(v)) + math.atan2(v, 1.5) + math.floor(v * 3.7)
        r += math.hypot(v, 2.0) + math.copysign(1.0, v) + (v ** 2) + math.fmod(v, 0.7)
        if math.isfinite(r) and not math.isnan(v):
            out[i] = r
        else:
            out[i] = -1.0


def k_complex(z, out):
    i = cuda.grid(1)
    if i < z.size:
        w = z[i] * (1.0 - 2.0j) + cmath.exp(z[i]) - z[i].conjugate()
        out[i] = abs(w) + w.real - w.imag + cmath.phase(w)


def k_float32(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i] * np.float32(2.0) + SCALE32
        out[i] = np.float32(math.sqrt(abs(v))) - v * 0.5


def k_ints(a, out):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        w = (v << 3) ^ (v >> 1) | (v & 5)
        w = w // 3 - w % 7 + (-v) ** 2 + ~v
        out[i] = min(w, 100) + max(v, -3, LIMIT) + abs(v)


def k_shared_atomic(x, out):
    buf = cuda.shared.array(8, np.float64)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    if t == 0:
        s = 0.0
        for k in range(8):
            s += buf[k]
        out[0] = s
    cuda.atomic.add(out, 1, 1.0)


def k_raise(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] > 1e300:
            raise ValueError("too large")
        assert x[i] == x[i], "nan"
        out[i] = x[i]


def k_slices(x, out):
    i = cuda.grid(1)
    if i == 0:
        y = x[2:10:2]
        z = x[::-1]
        out[0] = y[1] + z[0] + x[-1] + y.size
        out[1:3] = 5.0


def k_bools(b, x, out):
    i = cuda.grid(1)
    if i < x.size:
        ok = b[i] and x[i] > 0 or not b[i] and x[i] < 0
        out[i] = 1.0 if ok else (0.0 if x[i] is not None else 2.0)


def k_range_steps(out):
    i = cuda.grid(1)
    if i == 0:
        t = 0
        for a in range(10, -3, -3):
            for b in range(a):
                t += a - b
        for c in range(2, 9, 2):
            t -= c
        out[0] = t


def k_scalar_args(x, out, n, s):
    i = cuda.grid(1)
    if i < n and i < x.size:
        out[i] = x[i] * s + n


def _make_long():
    # Over 256 constants and names' worth of code: LOAD_CONST and jumps need EXTENDED_ARG.
    lines = ["def k_long(x, out):", "    i = cuda.grid(1)", "    if i < x.size:",
             "        v = x[i]"]
    for j in range(280):
        lines.append(f"        v = v * {1.0 + j / 1000!r} + {j}" if j % 2 else
                     f"        if v > {j * 10}:\n            v -= {j + 0.25!r}")
    lines.append("        out[i] = v")
    ns = {"cuda": cuda}
    exec(compile("\n".join(lines) + "\n", "<codefuzz k_long>", "exec"), ns)
    return ns["k_long"]


def _closure_kernel():
    factor = 3.0
    offset = 2

    def k_closure(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * factor + offset

    return k_closure


def _sample_cases():
    """The frontend's sample kernels, with real modules, and arguments chosen by their
    parameter names (arrays are float64 of 16 elements, 2-d for the `_2d`/tuple samples)."""
    sys.path.insert(0, os.path.dirname(SAMPLES))
    try:
        import samples
    finally:
        sys.path.pop(0)
    samples.cuda = cuda
    samples.np = np
    scalars = {"n": 12, "start": 3, "v": 2, "opt": None}
    two_d = {"index_2d", "tuple_unpack"}
    out = []
    for name in samples.SUPPORTED + samples.REJECTED:
        f = getattr(samples, name)
        code = f.__code__
        params = code.co_varnames[:code.co_argcount]
        specs = []
        for p in params:
            if p in scalars:
                specs.append(scalars[p])
            elif name in two_d or name == "augmented" and p == "a":
                specs.append("f2")
            else:
                specs.append("f")
        if name == "augmented":
            specs = ["f2", "f", 2]
        out.append(Case(f"samples.{name}", f, _arrays(*specs)))
    return out


_CORPUS = None


def corpus():
    global _CORPUS
    if _CORPUS is None:
        devices = {"d_poly": d_poly, "d_divmod": d_divmod, "d_clamp": d_clamp,
                   "d_sum_range": d_sum_range}
        own = [
            Case("device_calls", k_device_calls, _arrays("f", "f"), devices),
            Case("while_nested", k_while_nested, _arrays("f", "f")),
            Case("tuples", k_tuples, _arrays("f2", "f")),
            Case("math", k_math, _arrays("f", "f")),
            Case("complex", k_complex, _arrays("c", "f")),
            Case("float32", k_float32, _arrays("f32", "f32")),
            Case("ints", k_ints, _arrays("i", "i")),
            Case("shared_atomic", k_shared_atomic, _arrays("f", "f")),
            Case("raise", k_raise, _arrays("f", "f")),
            Case("slices", k_slices, _arrays("f", "f")),
            Case("bools", k_bools, _arrays("b", "f", "f")),
            Case("range_steps", k_range_steps, _arrays("i")),
            Case("scalar_args", k_scalar_args, _arrays("f", "f", 9, 0.25)),
            Case("long", _make_long(), _arrays("f", "f")),
            Case("closure", _closure_kernel(), _arrays("f", "f")),
        ]
        _CORPUS = own + _sample_cases()
    return _CORPUS
