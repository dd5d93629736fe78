"""float16 (``f2``, ``np.float16``) end to end on both backends: signatures, NumPy scalars and
arrays, arithmetic and comparisons in half precision, NumPy's promotion with other types,
conversions, math functions, ``cuda.fp16``, shared/local arrays, ufuncs, and the PTX's half
instructions."""
import math
import operator
import re

import numpy as np
import pytest

from ptxjit import cuda, errors, f2, float16, float32, int8, types, vectorize, void

RNG = np.random.default_rng(7)


def halves(n, lo=0.0, hi=1.0):
    return RNG.uniform(lo, hi, n).astype(np.float16)


# ---- types and signatures ------------------------------------------------------------------


def test_type_objects_and_signature_strings():
    assert f2 is float16 is types.float16 is types.half
    assert str(float16[:]) == "array(float16, 1d, A)"
    assert float16(1.5) == np.float16(1.5) and type(float16(1.5)) is np.float16

    @cuda.jit("void(f2[:], f2, float16)")
    def k(out, a, b):
        out[0] = a + b

    assert k.signatures == [(float16[:], float16, float16)]


# ---- arithmetic, comparisons, promotion ----------------------------------------------------

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv]


@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.__name__)
def test_binary_ops_in_half_precision(backend, op):
    def body(out, a, b):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = OP(a[i], b[i])  # noqa: F821

    k = cuda.jit("void(f2[:], f2[:], f2[:])")(_with_global(body, OP=op))
    a, b = halves(64, 0.1, 4.0), halves(64, 0.1, 4.0)
    out = np.zeros(64, np.float16)
    k[2, 32](out, a, b)
    np.testing.assert_array_equal(out, op(a, b))  # one rounding to half, as NumPy


def _with_global(fn, **names):
    """fn with extra globals (so one body serves several operators); an `operator` function
    becomes a device function applying it."""
    import types as pytypes

    g = dict(fn.__globals__)
    for k, v in names.items():
        g[k] = _DEVICE_OPS.get(v, v)
    return pytypes.FunctionType(fn.__code__, g, fn.__name__)


_DEVICE_OPS = {
    operator.add: cuda.jit(device=True)(lambda a, b: a + b),
    operator.sub: cuda.jit(device=True)(lambda a, b: a - b),
    operator.mul: cuda.jit(device=True)(lambda a, b: a * b),
    operator.truediv: cuda.jit(device=True)(lambda a, b: a / b),
    operator.lt: cuda.jit(device=True)(lambda a, b: a < b),
    operator.le: cuda.jit(device=True)(lambda a, b: a <= b),
    operator.gt: cuda.jit(device=True)(lambda a, b: a > b),
    operator.ge: cuda.jit(device=True)(lambda a, b: a >= b),
    operator.eq: cuda.jit(device=True)(lambda a, b: a == b),
    operator.ne: cuda.jit(device=True)(lambda a, b: a != b),
}


@pytest.mark.parametrize("other", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.float32,
                                   np.float64])
def test_mixed_arithmetic_follows_numpy_promotion(backend, other):
    @cuda.jit
    def k(out, a, b):
        out[0] = a + b
        out[1] = a * b

    res_ty = np.result_type(np.float16, other)
    out = np.zeros(2, res_ty)
    a, b = np.float16(0.75), other(3)
    k[1, 1](out, a, b)
    np.testing.assert_allclose(out, [a + b, a * b], rtol=1e-3)
    assert out.dtype == res_ty


def test_literals_stay_half(backend):
    @cuda.jit
    def k(out, a):
        out[0] = a * 2 + 0.5  # weak literals adopt float16 (NEP 50)
        out[1] = -a
        out[2] = abs(-a)

    out = np.zeros(3, np.float16)
    k[1, 1](out, np.float16(1.25))
    np.testing.assert_array_equal(out, [3.0, -1.25, 1.25])
    assert k.signatures[0][1] == float16


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                                operator.ne], ids=lambda o: o.__name__)
def test_comparisons(backend, op):
    k = cuda.jit("void(b1[:], f2, f2)")(_with_global(_cmp_body, OP=op))
    for a, b in [(1.0, 2.0), (2.0, 1.0), (1.5, 1.5), (np.nan, 1.0)]:
        out = np.zeros(1, np.bool_)
        k[1, 1](out, np.float16(a), np.float16(b))
        assert out[0] == op(np.float16(a), np.float16(b)), (a, b)


def _cmp_body(out, a, b):
    out[0] = OP(a, b)  # noqa: F821


def test_inplace_operators(backend):
    @cuda.jit("void(f2[:], f2)")
    def k(a, x):
        a[0] += x
        a[1] -= x
        a[2] *= x
        a[3] /= x

    a = np.array([1, 2, 3, 4], np.float16)
    expect = a.copy()
    x = np.float16(0.3)
    expect[0] += x
    expect[1] -= x
    expect[2] *= x
    expect[3] /= x
    k[1, 1](a, x)
    np.testing.assert_array_equal(a, expect)


# ---- conversions ---------------------------------------------------------------------------


@pytest.mark.parametrize("to", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                np.uint32, np.uint64, np.float32, np.float64, np.complex64,
                                np.complex128])
def test_conversions_from_half(backend, to):
    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i]

    x = np.array([12.3, 0.5, 100.9, 3.0], np.float16)
    out = np.zeros(4, to)
    k[1, 4](out, x)
    np.testing.assert_array_equal(out, x.astype(to))  # ints truncate toward zero, as NumPy


def test_conversions_to_half_round_to_nearest_even(backend):
    @cuda.jit
    def k(out, x64, n):
        i = cuda.grid(1)
        if i < x64.size:
            out[i] = np.float16(x64[i])
        out[x64.size] = float16(n)

    # values at and near half's rounding boundaries, overflow and subnormals
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65504.0, 65519.0, 65520.0, 1e-7, 2**-25,
                  3 * 2**-26, -0.1, np.inf, 70000.0])
    out = np.zeros(len(x) + 1, np.float16)
    k[1, 16](out, x, np.int64(2049))
    np.testing.assert_array_equal(out[:-1], x.astype(np.float16))
    assert out[-1] == np.float16(2049)


def test_float_builtin_keeps_float_type(backend):
    @cuda.jit
    def k(out16, out32, a, b):
        out16[0] = float(a) / 3
        out32[0] = float(b) / 3

    o16, o32 = np.zeros(1, np.float16), np.zeros(1, np.float32)
    k[1, 1](o16, o32, np.float16(1), np.float32(1))
    assert o16[0] == np.float16(1) / np.float16(3)
    assert o32[0] == np.float32(1) / np.float32(3)
    assert cuda.compile_ptx(lambda x: float(x), (float16,), device=True)[1] == float16


def test_scalar_arguments_from_python(backend):
    @cuda.jit("void(f2[:], f2)")
    def k(out, x):
        out[0] = x

    out = np.zeros(1, np.float16)
    for v in [0.1, 3, np.float32(2.5), np.float16(-7.25), 1e6]:
        k[1, 1](out, v)
        assert out[0] == np.float16(v)


# ---- math and cuda.fp16 --------------------------------------------------------------------


@pytest.mark.parametrize("fn", ["sin", "cos", "exp", "log", "log2", "log10", "sqrt", "fabs",
                                "tanh", "exp2"])
def test_math_functions_on_half(backend, fn):
    kern = cuda.jit("void(f2[:], f2[:])")(_with_global(_math_body, FN=getattr(math, fn)))
    x = halves(32, 0.1, 2.0)
    out = np.zeros_like(x)
    kern[1, 32](out, x)
    expect = getattr(np, {"fabs": "fabs"}.get(fn, fn))(x.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(out, expect, rtol=1e-3)
    assert out.dtype == np.float16


def _math_body(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = FN(x[i])  # noqa: F821


FP16 = {
    "hadd": (2, np.add), "hsub": (2, np.subtract), "hmul": (2, np.multiply),
    "hdiv": (2, np.divide), "hneg": (1, np.negative), "habs": (1, np.abs),
    "hmax": (2, np.fmax), "hmin": (2, np.fmin), "hsin": (1, np.sin), "hcos": (1, np.cos),
    "hlog": (1, np.log), "hlog2": (1, np.log2), "hlog10": (1, np.log10), "hexp": (1, np.exp),
    "hexp2": (1, np.exp2), "hexp10": (1, lambda x: np.power(np.float32(10), x)),
    "hsqrt": (1, np.sqrt), "hrsqrt": (1, lambda x: 1 / np.sqrt(x)), "hceil": (1, np.ceil),
    "hfloor": (1, np.floor), "hrcp": (1, np.reciprocal), "htrunc": (1, np.trunc),
    "hrint": (1, np.rint), "htanh": (1, np.tanh),
}


@pytest.mark.parametrize("name", sorted(FP16))
def test_cuda_fp16_functions(backend, name):
    arity, ref = FP16[name]
    fn = getattr(cuda.fp16, name)
    if arity == 1:
        k = cuda.jit("void(f2[:], f2[:])")(_with_global(_fp16_unary, FN=fn))
        x = halves(32, 0.2, 3.0)
        out = np.zeros_like(x)
        k[1, 32](out, x)
        expect = ref(x.astype(np.float32)).astype(np.float16)
    else:
        k = cuda.jit("void(f2[:], f2[:], f2[:])")(_with_global(_fp16_binary, FN=fn))
        x, y = halves(32, 0.2, 3.0), halves(32, 0.2, 3.0)
        out = np.zeros_like(x)
        k[1, 32](out, x, y)
        expect = ref(x.astype(np.float32), y.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(out, expect, rtol=2e-3)


def _fp16_unary(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = FN(x[i])  # noqa: F821


def _fp16_binary(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = FN(x[i], y[i])  # noqa: F821


def test_cuda_fp16_fma_comparisons_and_literals(backend):
    @cuda.jit
    def k(out, flags, a, b):
        out[0] = cuda.fp16.hfma(a, b, 2)  # the literal converts to float16
        out[1] = cuda.fp16.hmul(a, 2.5)
        flags[0] = cuda.fp16.hlt(a, b)
        flags[1] = cuda.fp16.hge(a, b)
        flags[2] = cuda.fp16.heq(a, a)
        flags[3] = cuda.fp16.hne(a, b)

    out, flags = np.zeros(2, np.float16), np.zeros(4, np.bool_)
    a, b = np.float16(1.5), np.float16(3.0)
    k[1, 1](out, flags, a, b)
    np.testing.assert_array_equal(out, [a * b + np.float16(2), a * np.float16(2.5)])
    np.testing.assert_array_equal(flags, [True, False, True, True])


def test_cuda_fp16_ordered_comparisons_with_nan(backend):
    @cuda.jit("void(b1[:], f2, f2)")
    def k(flags, a, b):
        flags[0] = cuda.fp16.hne(a, b)  # CUDA's __hne: ordered, false with a NaN
        flags[1] = a != b               # Python's !=: true with a NaN
        flags[2] = cuda.fp16.hmax(a, b) == b  # the non-NaN operand

    flags = np.zeros(3, np.bool_)
    k[1, 1](flags, np.float16(np.nan), np.float16(1))
    np.testing.assert_array_equal(flags, [False, True, True])


def test_cuda_fp16_errors():
    with pytest.raises(errors.TypingError, match=r"cuda\.fp16\.hadd.*takes 2 arguments"):
        @cuda.jit("void(f2[:], f2)")
        def k(out, a):
            out[0] = cuda.fp16.hadd(a)

    with pytest.raises(errors.TypingError, match=r"real numbers"):
        @cuda.jit("void(f2[:], f2[:])")
        def k2(out, a):
            out[0] = cuda.fp16.hneg(a)

    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        cuda.fp16.hadd(np.float16(1), np.float16(2))
    from ptxjit.cuda.fp16 import hadd  # importable as a module, as numba.cuda.fp16

    assert hadd is cuda.fp16.hadd


def test_fp16_conversion_intrinsics(backend):
    @cuda.jit
    def k(f, i, o16, oi):
        o16[0] = cuda.fp16.__float2half_rn(f[0])
        o16[1] = cuda.fp16.__float2half_rz(f[0])
        o16[2] = cuda.fp16.__float2half_rd(f[0])
        o16[3] = cuda.fp16.__float2half_ru(f[0])
        o16[4] = cuda.fp16.__int2half_rd(i[0])
        o16[5] = cuda.fp16.__ll2half_ru(i[0])
        o16[6] = cuda.fp16.__double2half(1.0 + 2.0 ** -11 + 2.0 ** -40)
        bits = cuda.fp16.__half_as_short(cuda.fp16.__float2half(f[0]))
        o16[7] = cuda.fp16.__short_as_half(bits)
        oi[0] = cuda.fp16.__half2int_rn(cuda.fp16.__float2half(2.5))
        oi[1] = cuda.fp16.__half2int_ru(cuda.fp16.__float2half(2.25))
        oi[2] = cuda.fp16.__half2ll_rd(cuda.fp16.__float2half(-2.25))
        oi[3] = cuda.fp16.__half2uchar_rz(cuda.fp16.__float2half(300.0))
        oi[4] = cuda.fp16.__hisinf(cuda.fp16.__float2half(-1e6))
        oi[5] = cuda.fp16.__hisnan(cuda.fp16.__hadd_sat(cuda.fp16.__float2half(f[0]), f[0]))

    x = np.float32(1 + 2 ** -11 + 2 ** -20)  # just above a float16 midpoint
    o16, oi = np.zeros(8, np.float16), np.zeros(6, np.int64)
    k[1, 1](np.array([x], np.float32), np.array([2049], np.int64), o16, oi)
    one, up = np.float16(1.0), np.float16(1 + 2 ** -10)
    assert list(o16[:4]) == [up, one, one, up]
    assert o16[4] == 2048 and o16[5] == 2050  # 2049 between the float16s 2048 and 2050
    assert o16[6] == up and o16[7] == up
    assert list(oi) == [2, 3, -3, 255, -1, 0]


def test_shuffles_and_atomics_take_16_bit_floats(backend):
    @cuda.jit
    def k(h, acc, out):
        i = cuda.threadIdx.x
        v = h[i]
        out[i] = cuda.shfl_down_sync(0xffffffff, v, 1)
        cuda.atomic.add(acc, 0, v)
        cuda.atomic.max(acc, 1, v)
        cuda.atomic.sub(acc, 2, v)

    h = (np.arange(32) * 0.25).astype(np.float16)
    acc, out = np.zeros(3, np.float16), np.zeros(32, np.float16)
    k[1, 32](h, acc, out)
    assert acc[0] == np.float16(h.astype(np.float64).sum()) and acc[1] == h.max()
    assert acc[2] == -acc[0]
    np.testing.assert_array_equal(out[:31], h[1:])


# ---- memory: shared, local, device arrays; ufuncs -------------------------------------------


def test_shared_and_local_arrays(backend):
    @cuda.jit
    def k(out, x):
        s = cuda.shared.array(32, dtype=np.float16)
        loc = cuda.local.array(2, dtype=float16)
        i = cuda.threadIdx.x
        s[i] = x[i]
        cuda.syncthreads()
        loc[0] = s[31 - i]
        loc[1] = s[i] * 2
        out[i] = loc[0] + loc[1]

    x = halves(32)
    out = np.zeros_like(x)
    k[1, 32](out, x)
    np.testing.assert_array_equal(out, x[::-1] + x * np.float16(2))


def test_device_arrays(backend):
    x = halves(16)
    d = cuda.to_device(x)
    assert d.dtype == np.float16
    out = cuda.device_array(16, dtype=np.float16)

    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * x[i]

    k[1, 16](out, d)
    np.testing.assert_array_equal(out.copy_to_host(), x * x)


def test_vectorize_half(backend):
    @vectorize(["f2(f2, f2)"], target="cuda" if backend == "cuda" else "cpu")
    def axpy(a, b):
        return a * 2 + b

    x, y = halves(100), halves(100)
    r = axpy(x, y)
    assert r.dtype == np.float16
    np.testing.assert_array_equal(r, x * np.float16(2) + y)


def test_print_half(backend, capfd):
    @cuda.jit
    def k(a):
        print("h", a)

    k[1, 1](np.float16(2.5))
    cuda.synchronize()
    assert "h 2.5" in capfd.readouterr().out


# ---- PTX ----------------------------------------------------------------------------------


@pytest.mark.parametrize("op,instr", [(operator.add, "add.f16"), (operator.sub, "sub.f16"),
                                      (operator.mul, "mul.f16"), (operator.lt, "setp.lt.f16"),
                                      (operator.ne, "setp.neu.f16")])
def test_ptx_has_half_instructions(op, instr):
    ptx, _ = cuda.compile_ptx(_with_global(_cmp_ret, OP=op), (f2, f2), device=True)
    assert instr in ptx
    assert "cvt.f32.f16" not in ptx  # no float32 round trip


def _cmp_ret(a, b):
    return OP(a, b)  # noqa: F821


def test_ptx_fp16_intrinsics():
    k = cuda.jit("void(f2[:], f2, f2, f2)", lto=True)(_fma_body)
    ptx = k.inspect_lto_ptx((f2[:], f2, f2, f2))
    assert "fma.rn.f16" in ptx
    assert ptx == k.inspect_ptx((f2[:], f2, f2, f2))
    neg = cuda.compile_ptx(lambda a: -a, (f2,), device=True)[0]
    assert "neg.f16" in neg
    ab = cuda.compile_ptx(lambda a: abs(a), (f2,), device=True)[0]
    assert "abs.f16" in ab


def _fma_body(out, a, b, c):
    out[0] = cuda.fp16.hfma(a, b, c)


def test_mixed_comparison_promotes_as_numpy():
    def gt(a, b):
        return a > b

    # (LLVM may swap the operands: setp.gt a, b or setp.lt b, a)
    for other, width in [(int8, "f16"), (float32, "f32"), (types.int32, "f64")]:
        ptx = cuda.compile_ptx(gt, (f2, other), device=True)[0]
        assert re.search(r"setp\.(gt|lt)\." + width, ptx), (other, ptx)


def test_exchange_atomics_refuse_half(cpu):
    # (shuffles and add/sub/max/min atomics take float16: test_bfloat16.py)
    @cuda.jit
    def atomic(out, a):
        cuda.atomic.exch(out, 0, a)

    with pytest.raises(errors.TypingError, match="cuda.atomic.exch.*float16"):
        atomic[1, 1](np.zeros(1, np.float16), np.float16(1))


def test_nextafter_steps_in_half_precision(backend):
    @cuda.jit
    def k(out, x, y):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = math.nextafter(x[i], y[i])

    x = np.array([1, 1, -1, -1, 0, 0, 65504, np.nan, 2, 6e-8], np.float16)
    y = np.array([2, 0, 0, -2, 1, -1, np.inf, 1, 2, 0], np.float16)
    out = np.zeros_like(x)
    k[1, 16](out, x, y)
    with np.errstate(over="ignore"):
        expect = np.nextafter(x, y)
    # bit for bit (signed zeros and subnormals too), NaN as any NaN (CUDA's is 0x7fff)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expect))
    ok = ~np.isnan(expect)
    np.testing.assert_array_equal(out[ok].view(np.uint16), expect[ok].view(np.uint16))


def test_numpy_ufuncs_use_half_loops(backend):
    @cuda.jit
    def k(x, i8, out, out8):
        np.sin(x, out)
        np.sqrt(i8, out8)  # NumPy's float16 loop for int8, as NumPy

    x = halves(16, 0, 3)
    i8 = np.arange(16, dtype=np.int8)
    out, out8 = np.zeros_like(x), np.zeros(16, np.float32)
    k[1, 1](x, i8, out, out8)
    np.testing.assert_allclose(out, np.sin(x), rtol=1e-3)
    np.testing.assert_array_equal(out8, np.sqrt(i8).astype(np.float32))
