"""Builtin min() and max() of two floats: numba-cuda's libdevice fmin/fmax, PTX min/max.f32 and
.f64 (in the type the operands promote to). A NaN operand gives the other operand (NaN only when
both are NaN) and +0.0 counts as greater than -0.0, on both backends. Other operands (integers,
mixed ints and floats, three or more values, a tuple) keep Python's rule: the first of equal
values, a NaN wherever Python's comparisons leave it (docs/language.md#min-and-max)."""
import math

import numpy as np
import pytest

from ptxjit import cuda, types

NAN = float("nan")


def kernel():
    @cuda.jit
    def k(a, b, lo, hi):
        i = cuda.grid(1)
        if i < a.size:
            lo[i] = min(a[i], b[i])
            hi[i] = max(a[i], b[i])
    return k


@pytest.mark.parametrize("ta,tb", [(np.float32, np.float32), (np.float32, np.float64),
                                   (np.float64, np.float32), (np.float64, np.float64)])
def test_nan_and_signed_zeros(backend, ta, tb):
    a = np.array([1.0, NAN, 2.0, NAN, 0.0, -0.0, -1.5, 3.0], ta)
    b = np.array([2.0, 5.0, NAN, NAN, -0.0, 0.0, -1.5, -np.inf], tb)
    rt = np.result_type(ta, tb)
    lo, hi = np.zeros(a.size, rt), np.zeros(a.size, rt)
    kernel()[1, 32](a, b, lo, hi)
    np.testing.assert_array_equal(lo, np.fmin(a, b))
    np.testing.assert_array_equal(hi, np.fmax(a, b))
    # +0.0 > -0.0 whichever comes first
    assert [math.copysign(1, v) for v in lo[4:6]] == [-1, -1]
    assert [math.copysign(1, v) for v in hi[4:6]] == [1, 1]


def test_other_operands_keep_python_semantics(backend):
    @cuda.jit
    def k(x, out):
        out[0] = max(x[0], 1)        # a float and an int: Python's rule, NaN stays
        out[1] = min(1.0, x[0], 2.0)  # three values: the first of Python's comparisons
        out[2] = max((x[1], x[0]))   # a tuple
        out[3] = max(x[1], 2.0)      # two floats: NaN ignored

    out = np.zeros(4)
    k[1, 1](np.array([NAN, 0.5]), out)
    assert math.isnan(out[0]) and out[1] == 1.0 and out[2] == 0.5 and out[3] == 2.0


@pytest.mark.parametrize("ta,tb,insn", [("float32", "float32", "f32"),
                                        ("float32", "float64", "f64"),
                                        ("float64", "float32", "f64"),
                                        ("float64", "float64", "f64")])
def test_ptx_uses_min_and_max(ta, tb, insn):
    def f(a, b, c):
        i = cuda.grid(1)
        c[i] = max(a[i], b[i]) + min(a[i], b[i])

    ptx, _ = cuda.compile_ptx(f, (getattr(types, ta)[::1], getattr(types, tb)[::1],
                                  types.float64[::1]))
    assert f"max.{insn}" in ptx and f"min.{insn}" in ptx
