"""cuda.popc, brev, clz, ffs, fma, cbrt and selp on both backends, against Python references."""
import re

import numpy as np
import pytest

from ptxjit import cuda, errors, float32, float64, int32, int64, types, uint32, uint64

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def sample(dtype):
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 5, 6, 8, 0x55, info.max, info.min, info.max // 3, 1 << (info.bits - 2)]
    if info.min < 0:
        vals += [-1, -2, -7]
    return np.array(vals, dtype=dtype)


@cuda.jit
def bits_kernel(x, popc, clz, ffs):
    i = cuda.grid(1)
    if i < x.size:
        popc[i] = cuda.popc(x[i])
        clz[i] = cuda.clz(x[i])
        ffs[i] = cuda.ffs(x[i])


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_popc_clz_ffs(backend, dtype):
    x = sample(dtype)
    bits = np.iinfo(dtype).bits
    popc, clz = np.zeros_like(x), np.zeros_like(x)
    ffs = np.zeros(x.size, np.uint32)
    bits_kernel[1, 32](x, popc, clz, ffs)
    unsigned = [int(v) & ((1 << bits) - 1) for v in x]
    np.testing.assert_array_equal(popc, [bin(u).count("1") for u in unsigned])
    np.testing.assert_array_equal(clz, [bits - u.bit_length() for u in unsigned])
    np.testing.assert_array_equal(ffs, [(u & -u).bit_length() for u in unsigned])


@cuda.jit
def brev_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.brev(x[i])


@pytest.mark.parametrize("dtype,bits", [(np.uint32, 32), (np.uint64, 64)])
def test_brev(backend, dtype, bits):
    x = sample(dtype)
    out = np.zeros_like(x)
    brev_kernel[1, 32](x, out)
    expected = [int(format(int(v), f"0{bits}b")[::-1], 2) for v in x]
    np.testing.assert_array_equal(out, np.array(expected, dtype=dtype))


def test_result_types_follow_numba(needs_libdevice):
    for fn, arg, expected in [("popc", "int16", "int16"), ("clz", "uint8", "uint8"),
                              ("ffs", "int64", "uint32"), ("brev", "int32", "uint32"),
                              ("brev", "uint64", "uint64"), ("cbrt", "float32", "float32"),
                              ("cbrt", "int32", "float64")]:
        src = f"def f(x):\n    return cuda.{fn}(x)\n"
        ns = {"cuda": cuda}
        exec(src, ns)
        dev = cuda.jit(device=True)(ns["f"])
        _, ret = cuda.compile_ptx(dev, f"({arg},)", device=True)
        assert str(ret) == expected, (fn, arg, ret)


@cuda.jit
def float_kernel(a, b, c, out32, out64):
    i = cuda.grid(1)
    if i < a.size:
        out64[0, i] = cuda.fma(a[i], b[i], c[i])
        out64[1, i] = cuda.cbrt(a[i])
        out32[0, i] = cuda.fma(float32(a[i]), float32(b[i]), float32(c[i]))
        out32[1, i] = cuda.cbrt(float32(a[i]))
        out64[2, i] = cuda.selp(a[i] > b[i], a[i], c[i])
        out64[3, i] = cuda.selp(i % 2 == 0, i, -i)


def test_fma_cbrt_selp(backend):
    rng = np.random.default_rng(0)
    a = rng.normal(size=40) * 10
    b = rng.normal(size=40)
    c = rng.normal(size=40)
    a[0], b[0], c[0] = 1 + 2.0**-30, 1 - 2.0**-30, -1.0   # fused: no rounding of a*b
    out32 = np.zeros((2, 40), np.float32)
    out64 = np.zeros((4, 40))
    float_kernel[2, 32](a, b, c, out32, out64)
    # a[0]*b[0] + c[0] is exactly -2**-60; without fusion it would round to 0.
    assert out64[0, 0] == -(2.0**-60)
    np.testing.assert_allclose(out64[0], a * b + c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out64[1], np.cbrt(a), rtol=1e-15)
    a32, b32, c32 = (v.astype(np.float32) for v in (a, b, c))
    np.testing.assert_allclose(out32[0], (a32.astype(np.float64) * b32 + c32).astype(np.float32),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out32[1], np.cbrt(a32), rtol=1e-6)
    np.testing.assert_array_equal(out64[2], np.where(a > b, a, c))
    i = np.arange(40)
    np.testing.assert_array_equal(out64[3], np.where(i % 2 == 0, i, -i))


def test_intrinsic_argument_errors(cpu):
    @cuda.jit
    def popc_float(out):
        out[0] = cuda.popc(out[0])

    @cuda.jit
    def fma_two(out):
        out[0] = cuda.fma(out[0], out[0])

    @cuda.jit
    def cbrt_complex(out):
        out[0] = cuda.cbrt(1j).real

    for k, msg in [(popc_float, r"cuda.popc cannot be called with \(float64; expected one integer\)"),
                   (fma_two, r"cuda.fma cannot be called with \(float64, float64; expected three real numbers\)"),
                   (cbrt_complex, r"cuda.cbrt cannot be called")]:
        with pytest.raises(errors.TypingError, match=msg) as e:
            k[1, 1](np.zeros(1))
        assert "test_intrinsics.py" in str(e.value)


def test_ptx_of_intrinsics(needs_libdevice):
    def k(u32, u64, f32, f64):
        u32[0] = cuda.popc(u32[1]) + cuda.clz(u32[2]) + cuda.ffs(u32[3]) + cuda.brev(u32[4])
        u64[0] = cuda.popc(u64[1]) + cuda.brev(u64[2]) + cuda.clz(u64[3])
        f32[0] = cuda.fma(f32[1], f32[2], f32[3])
        f64[0] = cuda.fma(f64[1], f64[2], f64[3]) + cuda.cbrt(f64[4])
        f64[5] = cuda.selp(f64[6] > 0, f64[7], f64[8])
    ptx, _ = cuda.compile_ptx(k, (uint32[::1], uint64[::1], float32[::1], float64[::1]))
    text = re.sub(r"\s+", " ", ptx)
    for needle in ["popc.b32", "popc.b64", "clz.b32", "clz.b64", "brev.b32", "brev.b64",
                   "fma.rn.f32", "fma.rn.f64"]:
        assert needle in text, needle


def test_nanosleep(backend):
    """cuda.nanosleep(ns): nanosleep.u32 on the GPU (sm_70+), which sleeps 0 to 2*ns; the CPU
    backend goes on at once (the zero end of that range)."""

    def use(out, x):
        cuda.nanosleep(32)
        cuda.nanosleep(x)
        out[0] = 1

    out = np.zeros(1, np.int32)
    cuda.jit(use)[1, 1](out, np.uint32(100))
    assert out[0] == 1
    ptx = cuda.compile_ptx(use, (types.int32[::1], types.uint32))[0]
    assert ptx.count("nanosleep.u32") == 2
    with pytest.raises(errors.UnsupportedError, match=r"nanosleep needs 7\.0"):
        cuda.compile_ptx(use, (types.int32[::1], types.uint32), cc=(6, 1))
    with pytest.raises(errors.TypingError, match="nanosleep"):
        cuda.compile_ptx(lambda x: cuda.nanosleep(1.5), (types.float32,), device=True)
