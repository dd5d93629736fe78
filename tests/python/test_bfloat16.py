"""bfloat16 end to end on both backends: the type objects, conversions rounded exactly (to
nearest even, and the directed modes of cuda.bf16's conversions), arithmetic, comparisons and
promotion, math functions, cuda.bf16's intrinsics, print, and the PTX's bf16 instructions.
NumPy has no bfloat16 dtype: values travel as their bits (int16/uint16 arrays, the
bfloat16_as_int16 / int16_as_bfloat16 intrinsics) and are checked against an exact reference
computed here with fractions; ml_dtypes' arrays and scalars are tested where it is installed."""
import math
import operator
import re
import struct
from fractions import Fraction

import numpy as np
import pytest

from ptxjit import cuda, errors, float16, float32, float64, int8, int16, types
from ptxjit.cuda import bf16
from ptxjit.cuda.bf16 import (bfloat16, bfloat16_as_int16, bfloat16_as_uint16,
                              int16_as_bfloat16)

RNG = np.random.default_rng(11)

# ---- an exact reference -------------------------------------------------------------------


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def value_of(bits):
    """The float value of bfloat16 bits (an int16 or uint16)."""
    return struct.unpack("<f", struct.pack("<I", (int(bits) & 0xffff) << 16))[0]


def ref_bits(v, mode="rn"):
    """The bfloat16 bits (as uint16) of number `v` (int, float or Fraction; nan/inf allowed)
    rounded once under `mode`: rn (to nearest even), rz, rd, ru."""
    if isinstance(v, float) and math.isnan(v):
        return None  # any NaN
    if isinstance(v, float) and math.isinf(v):
        return 0x7f80 if v > 0 else 0xff80
    q = Fraction(v)
    sign = 0x8000 if q < 0 or (q == 0 and math.copysign(1, float(v)) < 0) else 0
    a = abs(q)
    if a == 0:
        return sign
    e = math.floor(math.log2(a))
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (max(e, -126) - 7)
    n, rem = divmod(a, ulp)
    n = int(n)
    up = {"rz": False, "rd": sign != 0, "ru": sign == 0}.get(mode)
    if rem:
        if mode == "rn":
            half = ulp / 2
            n += 1 if rem > half or (rem == half and n % 2) else 0
        elif up:
            n += 1
    r = n * ulp
    if r >= Fraction(2) ** 128:  # past the largest finite value (0x7f7f)
        away = mode == "rn" or up
        return sign | (0x7f80 if away else 0x7f7f)
    return sign | (f32_bits(float(r)) >> 16)


def as_i16(bits):
    return np.array(bits, dtype=np.uint16).view(np.int16)


def bf(values, mode="rn"):
    """int16 array of the bfloat16 bits of `values` (a quiet NaN for NaN)."""
    bits = [ref_bits(v, mode) for v in values]
    return as_i16([0x7fc0 if b is None else b for b in bits])


def assert_bits(got, values, mode="rn"):
    """The bfloat16 bits `got` are those of `values` (numbers) rounded under `mode`."""
    got = np.asarray(got).view(np.uint16)
    assert len(got) == len(values)
    for g, v in zip(got, values):
        want = ref_bits(v, mode)
        if want is None:
            assert math.isnan(value_of(g)), hex(g)
        else:
            assert int(g) == int(want) & 0xffff, (hex(g), hex(int(want) & 0xffff))


# ---- types ----------------------------------------------------------------------------------


def test_type_objects():
    assert bfloat16 is cuda.bfloat16 is types.bfloat16 is cuda.bf16.bfloat16
    assert isinstance(bfloat16, types.Number) and not isinstance(bfloat16, types.Float)
    assert str(bfloat16) == "bfloat16" and str(bfloat16[::1]) == "array(bfloat16, 1d, C)"
    assert types.from_description(("scalar", "bfloat16")) is bfloat16
    assert cuda.is_bfloat16_supported() == (cuda.get_current_device().compute_capability >= (8, 0))
    assert cuda.is_float16_supported()
    # numba-cuda's C-style aliases are the same objects.
    assert bf16.float2bfloat16_rn is bf16.float32_to_bfloat16_rn
    assert bf16.bfloat162ll_rz is bf16.bfloat16_to_int64_rz
    assert bf16.short_as_bfloat16 is bf16.int16_as_bfloat16
    assert "hadd" in bf16.__all__ and "bfloat16" in bf16.__all__
    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        bf16.hadd(1, 2)


def test_eager_signature_and_scalar_parameter(backend):
    @cuda.jit("void(int16[:], bfloat16, __nv_bfloat16)")
    def k(out, a, b):
        out[0] = bfloat16_as_int16(a)
        out[1] = bfloat16_as_int16(b + a)

    assert k.signatures == [(types.int16[:], bfloat16, bfloat16)]
    out = np.zeros(2, np.int16)
    k[1, 1](out, 1.0 + 2 ** -8 + 2 ** -30, 2.5)  # packed with one rounding: up
    assert_bits(out, [1.0 + 2 ** -7, 2.5 + 1.0 + 2 ** -7])


# ---- conversions ----------------------------------------------------------------------------

INT64S = [0, 1, -1, 255, 256, 257, 258, 789, -789, 65535, 2 ** 24 + 1, 2 ** 31 - 1, -2 ** 31,
          2 ** 60 + 2 ** 52 + 1,  # above a midpoint by 1: rounding to float first gives the tie
          2 ** 60 + 2 ** 52, 2 ** 60 + 3 * 2 ** 52, 2 ** 63 - 1, -2 ** 63,
          3 * 2 ** 40 + 2 ** 33 + 2 ** 10, -(3 * 2 ** 40 + 2 ** 33 + 2 ** 10)]
FLOAT64S = [0.0, -0.0, 1.0, 3.14, -3.14, 0.9375, 1 + 2 ** -8, 1 + 3 * 2 ** -8,
            1 + 2 ** -8 + 2 ** -40,  # above the midpoint, though float32(x) is the midpoint
            1e38, 3.4e38, 1e39, -1e39, 1e-39, 2.0 ** -133, 2.0 ** -134, 1e-300, float("inf"),
            float("-inf"), float("nan")]


def test_conversions_to_bfloat16_round_once(backend):
    @cuda.jit
    def k(ints, uints, floats, singles, o1, o2, o3, o4):
        for i in range(ints.size):
            o1[i] = bfloat16_as_int16(bfloat16(ints[i]))
            o2[i] = bfloat16_as_int16(bfloat16(uints[i]))
        for i in range(floats.size):
            o3[i] = bfloat16_as_int16(bfloat16(floats[i]))
            o4[i] = bfloat16_as_int16(bfloat16(singles[i]))

    ints = np.array(INT64S, np.int64)
    uints = np.array([abs(v) for v in INT64S[:-2]] + [2 ** 64 - 1, 2 ** 63 + 2 ** 55 + 1],
                     np.uint64)
    floats = np.array(FLOAT64S)
    singles = floats.astype(np.float32)
    o1, o2 = np.zeros(ints.size, np.int16), np.zeros(uints.size, np.int16)
    o3, o4 = np.zeros(floats.size, np.int16), np.zeros(floats.size, np.int16)
    with np.errstate(over="ignore"):
        k[1, 1](ints, uints, floats, singles, o1, o2, o3, o4)
    assert_bits(o1, [int(v) for v in ints])
    assert_bits(o2, [int(v) for v in uints])
    assert_bits(o3, [float(v) for v in floats])
    assert_bits(o4, [float(v) for v in singles])


@pytest.mark.parametrize("src", ["int16", "uint16", "int32", "uint32", "int64", "uint64",
                                 "float32"])
def test_directed_rounding_conversions(backend, src):
    names = {m: getattr(bf16, f"{src}_to_bfloat16_{m}") for m in ("rn", "rz", "rd", "ru")}
    rn, rz, rd, ru = names["rn"], names["rz"], names["rd"], names["ru"]

    @cuda.jit
    def k(x, out):
        for i in range(x.size):
            out[i, 0] = bfloat16_as_int16(rn(x[i]))
            out[i, 1] = bfloat16_as_int16(rz(x[i]))
            out[i, 2] = bfloat16_as_int16(rd(x[i]))
            out[i, 3] = bfloat16_as_int16(ru(x[i]))

    info = np.iinfo(src) if src != "float32" else None
    if info is not None:
        vals = [v for v in INT64S if info.min <= v <= info.max] + [info.max, info.min]
        vals += list(RNG.integers(info.min, info.max, 40, dtype=src, endpoint=True))
        x = np.array(vals, dtype=src)
        refs = [int(v) for v in x]
    else:
        x = np.concatenate([np.array(FLOAT64S, np.float32),
                            RNG.normal(0, 1e3, 40).astype(np.float32)])
        refs = [float(v) for v in x]
    out = np.zeros((x.size, 4), np.int16)
    with np.errstate(over="ignore"):
        k[1, 1](x, out)
    for col, mode in enumerate(("rn", "rz", "rd", "ru")):
        assert_bits(out[:, col], refs, mode)


@pytest.mark.parametrize("dst", ["int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_conversions_to_integers_by_mode(backend, dst):
    fns = [getattr(bf16, f"bfloat16_to_{dst}_{m}") for m in ("rn", "rz", "rd", "ru")]
    rn, rz, rd, ru = fns

    @cuda.jit
    def k(bits, out):
        for i in range(bits.size):
            b = int16_as_bfloat16(bits[i])
            out[i, 0] = rn(b)
            out[i, 1] = rz(b)
            out[i, 2] = rd(b)
            out[i, 3] = ru(b)

    vals = [1.5, 2.5, -1.5, -2.5, 0.75, -0.75, 3.140625, 100.5, 1e30, -1e30, float("nan"), 0.0]
    bits = bf(vals)
    out = np.zeros((len(vals), 4), dst)
    k[1, 1](bits, out)
    info = np.iinfo(dst)
    for i, v in enumerate(vals):
        x = value_of(bits.view(np.uint16)[i])
        for col, f in enumerate((lambda t: float(np.rint(t)), math.trunc, math.floor, math.ceil)):
            want = 0 if math.isnan(x) else min(max(f(x), info.min), info.max)
            assert out[i, col] == want, (dst, v, col, out[i])


def test_8bit_and_float_conversions(backend):
    @cuda.jit
    def k(bits, i1, u1, f4, f8, h, o):
        b = int16_as_bfloat16(bits[0])
        i1[0] = bf16.bfloat16_to_int8_rz(b)
        u1[0] = bf16.bfloat16_to_uint8_rz(b)
        f4[0] = bf16.bfloat16_to_float32(b)
        f4[1] = float32(b)
        f8[0] = float64(b)
        f8[1] = b  # stored with a conversion
        h[0] = float16(b)
        o[0] = bfloat16_as_int16(bf16.float64_to_bfloat16(1 + 2 ** -8 + 2 ** -40))
        o[1] = bfloat16_as_int16(bf16.float32_to_bfloat16(np.float32(2.5)))
        o[2] = bfloat16_as_int16(bfloat16(h[0]))  # float16 → bfloat16

    bits = bf([-1.5 - 1.0 / 8])  # -1.625
    i1, u1 = np.zeros(1, np.int8), np.zeros(1, np.uint8)
    f4, f8, h = np.zeros(2, np.float32), np.zeros(2), np.zeros(1, np.float16)
    o = np.zeros(3, np.int16)
    k[1, 1](bits, i1, u1, f4, f8, h, o)
    assert i1[0] == -1 and u1[0] == 0
    assert list(f4) == [-1.625, -1.625] and list(f8) == [-1.625, -1.625]
    assert h[0] == np.float16(-1.625)
    assert_bits(o, [1.0 + 2 ** -7, 2.5, -1.625])


def test_bit_reinterpretation(backend):
    @cuda.jit
    def k(test_val, i2, u2):
        i2[0] = int16_as_bfloat16(bfloat16_as_int16(test_val))
        u2[0] = bf16.uint16_as_bfloat16(bfloat16_as_uint16(test_val))
        i2[1] = bfloat16_as_int16(int16_as_bfloat16(test_val))

    i2, u2 = np.zeros(2, np.int16), np.zeros(1, np.uint16)
    k[1, 1](np.int16(0x3FC0), i2, u2)  # numba-cuda's test: 1.5's bits
    assert i2[0] == 0x3FC0 and u2[0] == 0x3FC0 and i2[1] == 0x3FC0


# ---- arithmetic, comparisons, promotion -----------------------------------------------------

OPS = [operator.add, operator.sub, operator.mul, operator.truediv]


def _randbits(n, lo=-8.0, hi=8.0):
    return bf(list(RNG.uniform(lo, hi, n)))


def _binary_body(a, b, out):
    for i in range(a.size):
        out[i] = bfloat16_as_int16(OP(int16_as_bfloat16(a[i]), int16_as_bfloat16(b[i])))  # noqa


_DEVICE_OPS = {
    operator.add: cuda.jit(device=True)(lambda a, b: a + b),
    operator.sub: cuda.jit(device=True)(lambda a, b: a - b),
    operator.mul: cuda.jit(device=True)(lambda a, b: a * b),
    operator.truediv: cuda.jit(device=True)(lambda a, b: a / b),
}


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
def test_binary_operators_round_once(backend, op):
    import types as pytypes

    g = dict(_binary_body.__globals__, OP=_DEVICE_OPS[op])
    k = cuda.jit(pytypes.FunctionType(_binary_body.__code__, g, "binary"))
    a, b = _randbits(64), _randbits(64)
    out = np.zeros(64, np.int16)
    k[1, 1](a, b, out)
    ua, ub = a.view(np.uint16), b.view(np.uint16)
    assert_bits(out, [op(Fraction(value_of(x)), Fraction(value_of(y))) for x, y in zip(ua, ub)])


def test_intrinsics_arithmetic(backend):
    @cuda.jit
    def k(bits, out):
        a = int16_as_bfloat16(bits[0])
        b = int16_as_bfloat16(bits[1])
        c = int16_as_bfloat16(bits[2])
        r = (bf16.hadd(a, b), bf16.hsub(a, b), bf16.hmul(a, b), bf16.hdiv(a, b),
             bf16.hadd_rn(a, b), bf16.hsub_rn(a, b), bf16.hmul_rn(a, b), bf16.hneg(a),
             bf16.habs(b), bf16.hfma(a, b, c), bf16.hadd_sat(a, b), bf16.hsub_sat(b, a),
             bf16.hmul_sat(a, b), bf16.hfma_sat(a, b, c), bf16.hfma_relu(a, b, c),
             bf16.hfma_relu(bf16.hneg(a), b, c))
        for i in range(len(r)):
            out[i] = bfloat16_as_int16(r[i])

    for a, b, c in [(1.25, -2.5, 0.0), (3.0, 0.375, -1.0), (0.5, 0.75, 0.125)]:
        out = np.zeros(16, np.int16)
        k[1, 1](bf([a, b, c]), out)
        A, B, C = Fraction(a), Fraction(b), Fraction(c)
        sat = lambda v: min(max(v, 0), 1)  # noqa: E731
        assert_bits(out, [A + B, A - B, A * B, A / B, A + B, A - B, A * B, -A, abs(B),
                          A * B + C, sat(A + B), sat(B - A), sat(A * B),
                          sat(ref_value(A * B + C)), max(ref_value(A * B + C), 0),
                          max(ref_value(-A * B + C), 0)])


def ref_value(q):
    return Fraction(value_of(ref_bits(q)))


def test_fma_rounds_once(backend):
    # 5 * 77 = 385 is the midpoint of the bfloat16s 384 and 386; a tiny c decides the rounding,
    # which a float32 fma followed by a rounding to bfloat16 would lose.
    @cuda.jit
    def k(bits, out):
        for i in range(out.size):
            a = int16_as_bfloat16(bits[3 * i])
            b = int16_as_bfloat16(bits[3 * i + 1])
            c = int16_as_bfloat16(bits[3 * i + 2])
            out[i] = bfloat16_as_int16(bf16.hfma(a, b, c))

    cases = [(5, 77, 2.0 ** -60), (5, 77, -2.0 ** -60), (5, 77, 0.0), (1.5, -2.0, 0.25),
             (3.0, 3.0, 2.0 ** -30)]
    out = np.zeros(len(cases), np.int16)
    k[1, 1](bf([v for case in cases for v in case]), out)
    assert_bits(out, [Fraction(a) * Fraction(b) + Fraction(c) for a, b, c in cases])


def test_comparisons_and_nan_rules(backend):
    @cuda.jit
    def k(bits, flags, vals, inf):
        a = int16_as_bfloat16(bits[0])
        b = int16_as_bfloat16(bits[1])
        flags[0] = bf16.heq(a, b)
        flags[1] = bf16.hne(a, b)
        flags[2] = bf16.hge(a, b)
        flags[3] = bf16.hgt(a, b)
        flags[4] = bf16.hle(a, b)
        flags[5] = bf16.hlt(a, b)
        flags[6] = bf16.hequ(a, b)
        flags[7] = bf16.hneu(a, b)
        flags[8] = bf16.hltu(a, b)
        flags[9] = bf16.hisnan(a)
        flags[10] = a < b
        flags[11] = a != b
        vals[0] = bfloat16_as_int16(bf16.hmax(a, b))
        vals[1] = bfloat16_as_int16(bf16.hmin(a, b))
        vals[2] = bfloat16_as_int16(bf16.hmax_nan(a, b))
        vals[3] = bfloat16_as_int16(bf16.hmin_nan(a, b))
        inf[0] = bf16.hisinf(a)
        inf[1] = bf16.hisinf(b)

    nan = float("nan")
    for a, b in [(3.0, 4.0), (4.0, 3.0), (3.0, 3.0), (nan, 2.0), (float("-inf"), float("inf"))]:
        flags, vals, inf = np.zeros(12, np.bool_), np.zeros(4, np.int16), np.zeros(2, np.int32)
        k[1, 1](bf([a, b]), flags, vals, inf)
        un = math.isnan(a) or math.isnan(b)
        want = [a == b, (a != b) and not un, a >= b, a > b, a <= b, a < b, un or a == b,
                a != b, un or a < b, math.isnan(a), a < b, a != b]
        assert list(flags) == want, (a, b, list(flags))
        if un:
            assert_bits(vals, [b, b, nan, nan])  # hmax/hmin: the other operand
        else:
            assert_bits(vals, [max(a, b), min(a, b), max(a, b), min(a, b)])
        assert list(inf) == [(-1 if a < 0 else 1) if math.isinf(a) else 0,
                             (-1 if b < 0 else 1) if math.isinf(b) else 0]


@pytest.mark.parametrize("other,result", [(int8, bfloat16), (types.uint8, bfloat16),
                                          (int16, float32), (float16, float32),
                                          (float32, float32), (types.int32, float64),
                                          (float64, float64), (bfloat16, bfloat16),
                                          (types.complex64, types.complex64)])
def test_promotion(other, result):
    _, restype = cuda.compile_ptx(lambda a, b: a + b, (bfloat16, other), device=True)
    assert restype == result
    _, restype = cuda.compile_ptx(lambda a: a * 2 + 0.5, (bfloat16,), device=True)
    assert restype == bfloat16  # Python literals adopt bfloat16


def test_mixed_arithmetic_and_inplace(backend):
    @cuda.jit
    def k(bits, i8, out32, out16):
        a = int16_as_bfloat16(bits[0])
        x = a + i8[0]  # bfloat16
        x *= 2
        x -= 0.5
        out16[0] = bfloat16_as_int16(x)
        out32[0] = a + np.float32(0.1)  # float32
        out32[1] = -a
        out32[2] = +a

    bits = bf([1.5])
    out32, out16 = np.zeros(3, np.float32), np.zeros(1, np.int16)
    k[1, 1](bits, np.array([3], np.int8), out32, out16)
    assert_bits(out16, [(Fraction(1.5) + 3) * 2 - Fraction(1, 2)])
    assert out32[0] == np.float32(1.5) + np.float32(0.1)
    assert list(out32[1:]) == [-1.5, 1.5]


# ---- math -----------------------------------------------------------------------------------

MATH = [("htrunc", math.trunc, math.trunc), ("hceil", math.ceil, math.ceil),
        ("hfloor", math.floor, math.floor), ("hrint", None, round), ("hsqrt", math.sqrt, math.sqrt),
        ("hlog", math.log, math.log), ("hlog2", math.log2, math.log2),
        ("hlog10", math.log10, math.log10), ("hcos", math.cos, math.cos),
        ("hsin", math.sin, math.sin), ("htanh", math.tanh, math.tanh),
        ("hexp", math.exp, math.exp), ("hexp2", None, lambda x: 2.0 ** x),
        ("hexp10", None, lambda x: 10.0 ** x), ("hrsqrt", None, lambda x: 1 / math.sqrt(x)),
        ("hrcp", None, lambda x: 1 / x), ("htanh_approx", None, math.tanh)]


@pytest.mark.parametrize("name,pyfn,ref", MATH, ids=[m[0] for m in MATH])
def test_math_functions(backend, name, pyfn, ref):
    fn = getattr(bf16, name)
    if pyfn is None:
        @cuda.jit
        def k(bits, out):
            for i in range(bits.size):
                out[i, 0] = bfloat16_as_int16(fn(int16_as_bfloat16(bits[i])))
                out[i, 1] = out[i, 0]
    else:
        @cuda.jit
        def k(bits, out):
            for i in range(bits.size):
                x = int16_as_bfloat16(bits[i])
                out[i, 0] = bfloat16_as_int16(fn(x))
                out[i, 1] = bfloat16_as_int16(pyfn(x))  # numba-cuda's overload: bfloat16

    vals = [3.14, 0.5, 1.0, 2.75, 7.5, 0.0625]
    bits = bf(vals)
    out = np.zeros((len(vals), 2), np.int16)
    k[1, 1](bits, out)
    for i, b in enumerate(bits.view(np.uint16)):
        x = value_of(b)
        want = ref_bits(float(ref(x)))
        for col in (0, 1):
            got = int(out[i, col]) & 0xffff
            # one rounding of float32's result: within a unit of the exact value's rounding
            # (approximate tanh: a few units)
            tol = 3 if name == "htanh_approx" else 1
            assert abs(got - want) <= tol, (name, x, hex(got), hex(want))
            if name in ("htrunc", "hceil", "hfloor", "hrint", "hsqrt", "hrcp"):
                assert got == want  # exact, or correctly rounded


# ---- print, arrays in memory ------------------------------------------------------------------


def test_print_bfloat16(backend, capfd):
    @cuda.jit
    def k():
        a = cuda.bfloat16(0.9375)
        print(a, a, a)

    k[1, 1]()
    cuda.synchronize()
    assert "0.937500 0.937500 0.937500" in capfd.readouterr().out


def test_shared_and_local_arrays(backend):
    @cuda.jit
    def k(out):
        s = cuda.shared.array(32, dtype=bfloat16)
        loc = cuda.local.array(2, dtype=bfloat16)
        i = cuda.threadIdx.x
        s[i] = bfloat16(i) * bfloat16(0.5)
        loc[0] = s[i]
        cuda.syncthreads()
        out[i] = bfloat16_as_int16(loc[0] + s[31 - i])

    out = np.zeros(32, np.int16)
    k[1, 32](out)
    assert_bits(out, [15.5] * 32)


# ---- errors ---------------------------------------------------------------------------------


def test_errors(cpu):
    with pytest.raises(errors.TypingError, match=r"cuda\.bf16\.hadd.*takes 2 arguments"):
        @cuda.jit("void(int16[:], bfloat16)")
        def k(out, a):
            out[0] = bfloat16_as_int16(bf16.hadd(a))

    with pytest.raises(errors.TypingError, match=r"cuda\.bf16\.hneg.*real numbers"):
        @cuda.jit("void(int16[:], int16[:])")
        def k2(out, a):
            out[0] = bfloat16_as_int16(bf16.hneg(a))


# ---- PTX ------------------------------------------------------------------------------------


def _ptx(fn, sig, cc=None):
    return cuda.compile_ptx(fn, sig, device=True, cc=cc)[0]


@pytest.mark.parametrize("op,sm90,sm80", [
    (lambda a, b: a + b, "add.bf16", "cvt.rn.bf16.f32"),
    (lambda a, b: a - b, "sub.bf16", "cvt.rn.bf16.f32"),
    (lambda a, b: a * b, "mul.bf16", "cvt.rn.bf16.f32"),
    (lambda a, b: a < b, r"setp\.(lt|gt)\.bf16", r"setp\.(lt|gt)\.f32"),
], ids=["add", "sub", "mul", "lt"])
def test_ptx_native_instructions(op, sm90, sm80):
    # numba-cuda's test_bf16_intrinsics_used_in_lto looks for add.bf16 ... on sm_90
    assert re.search(sm90, _ptx(op, (bfloat16, bfloat16), cc=(9, 0)))
    assert re.search(sm80, _ptx(op, (bfloat16, bfloat16), cc=(8, 0)))


def test_ptx_intrinsics():
    assert "fma.rn.bf16" in _ptx(lambda a, b, c: bf16.hfma(a, b, c), (bfloat16,) * 3, cc=(8, 0))
    assert "add.rn.bf16" in _ptx(lambda a, b: bf16.hadd_rn(a, b), (bfloat16,) * 2, cc=(9, 0))
    assert "fma.rn.bf16" in _ptx(lambda a, b: bf16.hadd_rn(a, b), (bfloat16,) * 2, cc=(8, 0))
    assert "max.NaN.bf16" in _ptx(lambda a, b: bf16.hmax_nan(a, b), (bfloat16,) * 2, cc=(8, 0))
    assert "max.bf16" in _ptx(lambda a, b: bf16.hmax(a, b), (bfloat16,) * 2, cc=(8, 0))
    assert "abs.bf16" in _ptx(lambda a: bf16.habs(a), (bfloat16,), cc=(8, 0))
    assert "tanh.approx.bf16" in _ptx(lambda a: bf16.htanh_approx(a), (bfloat16,), cc=(9, 0))
    assert "cvt.rn.bf16.f32" in _ptx(lambda a: bfloat16(a), (float32,), cc=(8, 0))
    assert "div.approx.f32" in _ptx(lambda a, b: a / b, (bfloat16,) * 2, cc=(9, 0))  # as CUDA
    assert "cvt.rn.bf16.f64" in _ptx(lambda a: bfloat16(a), (float64,), cc=(9, 0))
    assert "add.rn.f16" in _ptx(lambda a, b: cuda.fp16.__hadd_rn(a, b), (float16,) * 2)


def test_ptx_16_bit_atomics():
    def k(a, v):
        cuda.atomic.add(a, 0, v)

    ptx = cuda.compile_ptx(k, (float16[:], float16), cc=(7, 0))[0]
    assert "atom.global.add.noftz.f16" in ptx or "atom.add.noftz.f16" in ptx
    ptx = cuda.compile_ptx(k, (bfloat16[:], bfloat16), cc=(9, 0))[0]
    assert "add.noftz.bf16" in ptx


# ---- ml_dtypes arrays and scalars (where ml_dtypes is installed) --------------------------


def test_ml_dtypes_arrays_and_scalars(backend):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    mbf = ml_dtypes.bfloat16

    @cuda.jit
    def k(a, b, out, s):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = 2 * a[i] + 4 * b[i] + mbf(3.0) + s

    a = np.asarray([1, 2, 3, 4, 5], dtype=mbf)
    b = np.arange(5)
    out = np.zeros(5, dtype=mbf)
    k[1, 32](a, b, out, mbf(0.5))
    np.testing.assert_array_equal(out.astype(np.float32),
                                  (2 * a.astype(np.float32) + 4 * b + 3.5).astype(np.float32))
    d = cuda.to_device(a)
    dout = cuda.device_array(5, dtype=mbf)
    k[1, 32](d, b, dout, mbf(0.5))
    assert dout.dtype == np.dtype(mbf)
    np.testing.assert_array_equal(dout.copy_to_host(), out)
    assert bfloat16(1.5) == mbf(1.5) and bfloat16.dtype == np.dtype(mbf)
    assert types.from_dtype(np.dtype(mbf)) is bfloat16
