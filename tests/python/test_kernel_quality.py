"""Kernel quality of the benchmark kernels (issue 6): the PTX of bench/workloads.py's
Black-Scholes kernel, typed all-float32, must stay single precision and use the same
instruction mix as nvcc's default (precise) build of bench/cuda/blackscholes.cu; and the kernel
computes the NumPy reference on every backend.

The PTX checks need no GPU (compile_ptx); they judge no timing.
"""
import math
import re

import numpy as np
import pytest

from ptxjit import cuda


F32_SIG = ("void(float32[::1], float32[::1], float32[::1], float32[::1], float32[::1], "
           "float32, float32)")


def _workloads():
    import workloads  # bench/workloads.py (tests/python/conftest.py puts bench/ on the path)

    return workloads


def _black_scholes():
    w = _workloads()
    return w, w.build(w.BLACK_SCHOLES, cuda, "black_scholes")


def _instructions(ptx):
    """The instruction lines of a PTX text (no directives, labels or braces)."""
    out = []
    for line in ptx.splitlines():
        s = line.strip()
        if not s or s.startswith(("//", ".", "{", "}", "$", ")")):
            continue
        out.append(s)
    return out


def test_black_scholes_float32_ptx_has_no_double_arithmetic(needs_libdevice):
    _, bs = _black_scholes()
    ptx, _ = cuda.compile_ptx(bs.py_func, F32_SIG)
    ins = _instructions(ptx)
    # The Python literals (0.5, 1.0, A1..A5, RSQRT2PI) are weak: nothing widens to float64.
    f64 = [i for i in ins if re.search(r"\.f64\b", i)]
    assert not f64, f64[:10]
    # math.exp/log/sqrt of float32 use the float libdevice routines, inlined: expf's
    # ex2.approx.ftz.f32 core once per exp (three exps), no calls left.
    assert sum("ex2.approx" in i for i in ins) == 3
    assert not [i for i in ins if i.startswith("call")]
    # nvcc's defaults (-prec-div=true -prec-sqrt=true, no fastmath): precise / and sqrt.
    assert any(i.startswith("div.rn.f32") for i in ins)
    assert any(i.startswith("sqrt.rn.f32") for i in ins)
    assert not [i for i in ins if re.match(r"(div|sqrt)\.(approx|full)", i)]


def test_black_scholes_fastmath_uses_approximate_division(needs_libdevice):
    # The contrast that keeps the check above meaningful: fastmath does change the mix.
    _, bs = _black_scholes()
    ptx, _ = cuda.compile_ptx(bs.py_func, F32_SIG, fastmath=True)
    ins = _instructions(ptx)
    assert not any(i.startswith("div.rn.f32") for i in ins)
    assert not [i for i in ins if re.search(r"\.f64\b", i)]


@pytest.mark.parametrize("scalar", ["python", "float32"])
def test_black_scholes_matches_reference(backend, scalar):
    w, bs = _black_scholes()
    n = 1000
    S, X, T = w.black_scholes_inputs(n, seed=3)
    R, V = (0.02, 0.30) if scalar == "python" else (np.float32(0.02), np.float32(0.30))
    dS, dX, dT = (cuda.to_device(a) for a in (S, X, T))
    dcall = cuda.device_array(n, np.float32)
    dput = cuda.device_array(n, np.float32)
    bs[(n + 255) // 256, 256](dcall, dput, dS, dX, dT, R, V)
    call_ref, put_ref = w.black_scholes_reference(S, X, T, 0.02, 0.30)
    np.testing.assert_allclose(dcall.copy_to_host(), call_ref, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(dput.copy_to_host(), put_ref, rtol=1e-3, atol=1e-3)


# ---- Python float/complex launch arguments are weak scalars (NEP 50) ----------------------

def test_black_scholes_python_float_scalars_stay_float32(cpu, needs_libdevice):
    # The bench launches with R = 0.02, V = 0.30 (Python floats). Only `R + 0.5 * V * V` (a
    # Python-scalar expression) is computed in double; the per-option math is float32.
    _, bs = _black_scholes()
    n = 64
    S, X, T = (np.ones(n, np.float32) for _ in range(3))
    out = [np.zeros(n, np.float32) for _ in range(2)]
    bs[1, 64](out[0], out[1], S, X, T, 0.02, 0.30)
    ptx = bs.inspect_ptx()
    assert len(ptx) == 1
    ins = _instructions(next(iter(ptx.values())))
    f64 = [i for i in ins if re.search(r"\.f64\b", i) and not i.startswith(("ld.param", "cvt"))]
    assert len(f64) <= 2, f64
    assert sum("ex2.approx" in i for i in ins) == 3
    # The specialization still shows (and packs) the argument as float64.
    assert str(bs.signatures[0][-1]) == "float64"


def test_python_float_argument_is_weak(backend):
    @cuda.jit
    def k(x, a, out32, out64):
        i = cuda.grid(1)
        if i < x.size:
            out32[i] = x[i] * a
            out64[i] = x[i] * a  # float32 product (NumPy 2: float32 array * Python float)

    x = np.linspace(0.1, 7.3, 257, dtype=np.float32)
    a = 0.1
    out32 = np.zeros_like(x)
    out64 = np.zeros(x.size, np.float64)
    k[3, 128](x, a, out32, out64)
    expect = x * np.float32(a)  # float32 arithmetic
    np.testing.assert_array_equal(out32, expect)
    np.testing.assert_array_equal(out64, expect.astype(np.float64))
    # Some products differ from the double product rounded to float32: the test can fail.
    assert not np.array_equal(expect.astype(np.float64), x.astype(np.float64) * a)


def test_python_float_argument_alone_keeps_double(backend):
    @cuda.jit
    def k(a, b, out):
        out[0] = a + b
        out[1] = math.sqrt(a)
        out[2] = a

    a, b = 0.1, 0.2
    out = np.zeros(3, np.float64)
    k[1, 1](a, b, out)
    assert out[0] == a + b and out[1] == math.sqrt(a) and out[2] == a


def test_numpy_float64_argument_stays_float64(backend):
    @cuda.jit
    def k(x, a, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * a

    x = np.linspace(0.1, 7.3, 100, dtype=np.float32)
    out = np.zeros(x.size, np.float64)
    k[1, 128](x, np.float64(0.1), out)
    np.testing.assert_array_equal(out, x.astype(np.float64) * 0.1)
    # The same kernel with a Python float is a second specialization, float32 arithmetic.
    k[1, 128](x, 0.1, out)
    np.testing.assert_array_equal(out, (x * np.float32(0.1)).astype(np.float64))


def test_reassigned_python_float_argument_takes_the_unified_type(backend):
    @cuda.jit
    def k(x, a, out):
        if x[0] > 0:
            a = x[1]  # float32: `a` becomes a float32 variable, the argument rounded into it
        out[0] = a * 3.0

    x = np.array([-1.0, 2.5], np.float32)
    out = np.zeros(1, np.float64)
    k[1, 1](x, 0.1, out)
    assert out[0] == np.float64(np.float32(0.1) * np.float32(3.0))


def test_python_float_argument_to_device_function_is_float64(backend):
    @cuda.jit(device=True)
    def scale(v, a):
        return v * a

    @cuda.jit
    def k(a, out):
        out[0] = scale(a, 3.0)

    out = np.zeros(1, np.float64)
    k[1, 1](0.1, out)
    assert out[0] == 0.1 * 3.0


def test_python_complex_argument_is_weak(backend):
    @cuda.jit
    def k(z, c, out):
        out[0] = z[0] * c

    z = np.array([1.1 + 0.7j], np.complex64)
    out = np.zeros(1, np.complex128)
    k[1, 1](z, 0.3 - 1.9j, out)
    # Computed in complex64: the stored value is exactly a complex64 (a complex128 product of
    # these operands is not). The GPU may contract the product into FMAs, so compare with the
    # host's complex64 product within a few float32 ULP rather than exactly.
    assert np.complex128(np.complex64(out[0])) == out[0]
    wide = np.complex128(z[0]) * np.complex128(0.3 - 1.9j)
    assert np.complex128(np.complex64(wide)) != wide
    np.testing.assert_allclose(out[0], z[0] * np.complex64(0.3 - 1.9j), rtol=4e-7)
