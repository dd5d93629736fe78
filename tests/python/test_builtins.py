"""The builtins divmod, round and pow in kernels and device functions, compared with Python on
each backend: divmod as (a // b, a % b) with floor semantics, round half to even with CPython's
results for ndigits, pow as ** and modular pow with Python's signs; and their typing errors."""
import math
import random

import numpy as np
import pytest

from ptxjit import cuda, errors, float32, float64, int8, int32, int64, types, uint64


def same_float(x, y):
    """Equal floats, the sign of zero included; nan equals nan."""
    x, y = float(x), float(y)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1, x) == math.copysign(1, y)


# --------------------------------------------------------------------------------------------
# divmod
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.uint64])
def test_divmod_ints(backend, dtype):
    @cuda.jit
    def k(a, b, q, r):
        i = cuda.grid(1)
        if i < a.size:
            q[i], r[i] = divmod(a[i], b[i])

    info = np.iinfo(dtype)
    vals = [v for v in (0, 1, 2, 3, 7, 100, -1, -2, -7, -100, info.min, info.max)
            if info.min <= v <= info.max]
    pairs = [(x, y) for x in vals for y in vals]
    a = np.array([x for x, _ in pairs], dtype)
    b = np.array([y for _, y in pairs], dtype)
    q, r = np.zeros_like(a), np.zeros_like(a)
    k[4, 64](a, b, q, r)
    for j, (x, y) in enumerate(pairs):
        if y == 0:
            want = (0, 0)  # by zero: 0, like // and %
        else:
            qq, rr = divmod(x, y)
            want = ((qq - info.min) % 2**info.bits + info.min, rr)  # min // -1 wraps
        assert (int(q[j]), int(r[j])) == want, (x, y, q[j], r[j])


def test_divmod_floats_match_python(backend):
    @cuda.jit
    def k(a, b, q, r):
        i = cuda.grid(1)
        if i < a.size:
            t = divmod(a[i], b[i])
            q[i] = t[0]
            r[i] = t[1]

    vals = [7.5, -7.5, 2.0, -2.0, 0.1, -0.1, 1e300, -1e-300, 3.0, 0.0, -0.0, math.inf, -math.inf,
            5e-324, 0.3]
    pairs = [(x, y) for x in vals for y in vals if y != 0]
    a = np.array([x for x, _ in pairs])
    b = np.array([y for _, y in pairs])
    q, r = np.zeros_like(a), np.zeros_like(a)
    k[4, 64](a, b, q, r)
    for j, (x, y) in enumerate(pairs):
        wq, wr = divmod(x, y)
        assert same_float(q[j], wq) and same_float(r[j], wr), (x, y, q[j], r[j], wq, wr)


def test_divmod_by_zero_and_mixed_types(backend):
    @cuda.jit
    def k(f, i32, out, outi):
        q, r = divmod(f[0], 0.0)  # like f // 0.0 and f % 0.0: (inf, nan)
        out[0] = q
        out[1] = r
        q2, r2 = divmod(i32[0], 4)  # weak literal: int32 result
        outi[0] = q2
        outi[1] = r2
        q3, r3 = divmod(i32[0], 2.5)  # int32 with a float: float64
        out[2] = q3
        out[3] = r3
        q4, r4 = divmod(True, 2)
        outi[2] = q4 + r4

    out = np.zeros(4)
    outi = np.zeros(3, np.int64)
    k[1, 1](np.array([3.0]), np.array([-7], np.int32), out, outi)
    assert out[0] == math.inf and math.isnan(out[1])
    assert list(outi) == [-2, 1, 1]
    assert (out[2], out[3]) == divmod(-7, 2.5)


def test_divmod_types(needs_libdevice):
    def f(a, b):
        return divmod(a, b)

    assert str(cuda.compile_ptx(f, (int32, int32), device=True)[1]) == "UniTuple(int32 x 2)"
    assert str(cuda.compile_ptx(f, (float32, int8), device=True)[1]) == "UniTuple(float32 x 2)"
    assert str(cuda.compile_ptx(f, (int32, float64), device=True)[1]) == "UniTuple(float64 x 2)"


# --------------------------------------------------------------------------------------------
# round
# --------------------------------------------------------------------------------------------

ROUND_VALUES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.4, -0.4, 0.6, 2.675, 1.005, 0.125, 0.375,
                -68.255, 1234.5678, 1e-5, 123456.789, -0.0, 0.0, 5.015, 0.285, 1e300, -1e-300,
                2.0**52 + 0.5, 12345678901234.5, 1.25e-7, 999.9999]


def test_round_float_to_int(backend):
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = round(a[i])

    vals = [v for v in ROUND_VALUES if abs(v) < 2**62] + [3.5, 4.5, -3.5, 1e15 + 0.5]
    a = np.array(vals)
    out = np.zeros(len(vals), np.int64)
    k[1, 64](a, out)
    assert [int(v) for v in out] == [round(v) for v in vals]


def test_round_nan_inf_to_int(backend):
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = round(a[i])

    # Python raises; kernels give 0 for nan and saturate for ±inf.
    out = np.zeros(3, np.int64)
    k[1, 4](np.array([math.nan, math.inf, -math.inf]), out)
    assert list(out) == [0, 2**63 - 1, -2**63]


@pytest.mark.parametrize("ndigits", [-3, -2, -1, 0, 1, 2, 3, 5, 8, 15, 22, 25, 300, 400, -308,
                                     -400])
def test_round_ndigits_matches_cpython(backend, ndigits):
    @cuda.jit
    def k(a, n, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = round(a[i], n)

    rng = random.Random(ndigits)
    vals = ROUND_VALUES + [math.inf, -math.inf, math.nan]
    vals += [rng.uniform(-1000, 1000) for _ in range(200)]
    vals += [round(rng.uniform(-100, 100), 3) for _ in range(200)]  # decimal ties
    a = np.array(vals)
    out = np.zeros_like(a)
    k[4, 128](a, ndigits, out)
    bad = [(x, o, round(x, ndigits)) for x, o in zip(vals, out)
           if not same_float(o, round(x, ndigits))]
    assert not bad, bad[:5]


def test_round_float32_and_int_ndigits(backend):
    @cuda.jit
    def k(x32, i32, u64, out32, outi, outu):
        i = cuda.grid(1)
        if i < x32.size:
            out32[i] = round(x32[i], 2)
        if i < i32.size:
            outi[i] = round(i32[i], -1)
        if i < u64.size:
            outu[i] = round(u64[i], -2)

    x32 = np.array([2.675, 0.125, -1.005, 3.14159, 1e6 + 0.5], np.float32)
    i32 = np.array([15, 25, -15, -25, 14, 16, 0, 2**31 - 1], np.int32)
    u64 = np.array([150, 250, 249, 2**64 - 1, 12345678901234567], np.uint64)
    out32 = np.zeros(8, np.float32)
    outi = np.zeros(8, np.int32)
    outu = np.zeros(5, np.uint64)
    k[1, 8](x32, i32, u64, out32, outi, outu)
    assert [float(v) for v in out32[:5]] == [float(np.float32(round(float(v), 2))) for v in x32]
    # int32 wraps like all integer arithmetic: round(2**31 - 1, -1) = 2**31 does not fit.
    assert [int(v) for v in outi] == [20, 20, -20, -20, 10, 20, 0, 2147483650 - 2**32]
    assert [int(v) for v in outu[:3]] == [200, 200, 200]
    assert int(outu[4]) == round(12345678901234567, -2)


def test_round_ints_bools_and_none(backend):
    @cuda.jit
    def k(i8, out):
        out[0] = round(i8[0])
        out[1] = round(True)
        out[2] = round(i8[0], None)
        out[3] = round(7, 3)
        out[4] = round(-1234, -2)
        out[5] = round(2.5, None)
        out[6] = round(123, -400)

    out = np.zeros(7, np.int64)
    k[1, 1](np.array([-5], np.int8), out)
    assert list(out) == [-5, 1, -5, 7, round(-1234, -2), 2, 0]


def test_round_types(needs_libdevice):
    def r1(x):
        return round(x)

    def r2(x, n):
        return round(x, n)

    assert str(cuda.compile_ptx(r1, (float32,), device=True)[1]) == "int64"
    assert str(cuda.compile_ptx(r1, (int8,), device=True)[1]) == "int8"
    assert str(cuda.compile_ptx(r2, (float32, int32), device=True)[1]) == "float32"
    assert str(cuda.compile_ptx(r2, (int32, int64), device=True)[1]) == "int32"


def k_round_complex(z, out):
    out[0] = round(z[0])


def k_round_float_digits(x, out):
    out[0] = round(x[0], 1.5)


def k_pow3_float(x, out):
    out[0] = pow(x[0], 2, 5)


def k_divmod_complex(z, out):
    q, r = divmod(z[0], 2)
    out[0] = q


@pytest.mark.parametrize("func, arg, words", [
    (k_round_complex, np.zeros(1, np.complex128), "round cannot be called with (complex128)"),
    (k_round_float_digits, np.zeros(1), "round cannot be called with (float64, Literal[float])"),
    (k_pow3_float, np.zeros(1), "pow cannot be called with (float64, Literal[int], Literal[int])"),
    (k_divmod_complex, np.zeros(1, np.complex128), "divmod cannot be called with (complex128"),
])
def test_typing_errors(cpu, func, arg, words):
    with pytest.raises(errors.TypingError) as info:
        cuda.jit(func)[1, 1](arg, np.zeros(1))
    err = info.value
    assert words in str(err), str(err)
    assert err.filename == __file__
    assert err.lineno == func.__code__.co_firstlineno + 1


# --------------------------------------------------------------------------------------------
# pow
# --------------------------------------------------------------------------------------------

def test_pow_two_args_is_the_operator(backend):
    @cuda.jit
    def k(a, b, i, j, out, outi, outc):
        out[0] = pow(a[0], b[0])
        out[1] = a[0] ** b[0]
        out[2] = pow(a[0], 3)
        out[3] = a[0] ** 3
        out[4] = pow(a[0], -2)
        out[5] = a[0] ** -2
        outi[0] = pow(i[0], j[0])
        outi[1] = i[0] ** j[0]
        outi[2] = pow(i[0], -1)
        outi[3] = pow(2, 10)
        outc[0] = pow(1.5 + 0.5j, b[0])
        outc[1] = (1.5 + 0.5j) ** b[0]

    out = np.zeros(6)
    outi = np.zeros(4, np.int64)
    outc = np.zeros(2, np.complex128)
    k[1, 1](np.array([1.7]), np.array([2.3]), np.array([-3]), np.array([5]), out, outi, outc)
    assert out[0] == out[1] and out[2] == out[3] and out[4] == out[5]
    assert out[0] == pytest.approx(1.7 ** 2.3, rel=1e-15)
    assert list(outi) == [-243, -243, 0, 1024]
    assert outc[0] == outc[1]


def test_pow_modular_matches_python(backend):
    @cuda.jit
    def k(a, b, m, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = pow(a[i], b[i], m[i])

    rng = random.Random(3)
    cases = [(x, y, z) for x in (-20, -7, -1, 0, 1, 2, 3, 10, 19) for y in (0, 1, 2, 5, 17)
             for z in (-13, -7, -1, 1, 2, 7, 1000000007)]
    cases += [(x, -1, z) for x in (2, 3, -4, 5) for z in (7, -7, 11)]  # modular inverses
    cases += [(x, -3, 1000000007) for x in (2, -5, 123456789)]
    cases += [(rng.randrange(-2**63, 2**63), rng.randrange(0, 2**63), rng.randrange(1, 2**63))
              for _ in range(50)]
    cases += [(2**62 + 1, 2**40, -(2**61 - 1)), (-2**63, 3, 2**63 - 1), (5, 3, -2**63)]
    a = np.array([c[0] for c in cases], np.int64)
    b = np.array([c[1] for c in cases], np.int64)
    m = np.array([c[2] for c in cases], np.int64)
    out = np.zeros(len(cases), np.int64)
    k[(len(cases) + 127) // 128, 128](a, b, m, out)
    bad = [(c, int(o), pow(*c)) for c, o in zip(cases, out) if int(o) != pow(*c)]
    assert not bad, bad[:5]


def test_pow_modular_edge_cases(backend):
    @cuda.jit
    def k(a, u, out, outu):
        out[0] = pow(a[0], 5, 0)  # Python raises ValueError; kernels give 0
        out[1] = pow(4, -1, 8)  # not invertible: Python raises; kernels give 0
        out[2] = pow(a[0], 0, 1)
        out[3] = pow(True, 2, 3)
        outu[0] = pow(u[0], u[1], u[2])

    out = np.zeros(4, np.int64)
    outu = np.zeros(1, np.uint64)
    u = np.array([2**63 + 5, 10**18, 2**64 - 59], np.uint64)
    k[1, 1](np.array([3], np.int64), u, out, outu)
    assert list(out) == [0, 0, 0, 1]
    assert int(outu[0]) == pow(2**63 + 5, 10**18, 2**64 - 59)


def test_pow_types(needs_libdevice):
    def p2(a, b):
        return pow(a, b)

    def p3(a, b, m):
        return pow(a, b, m)

    assert str(cuda.compile_ptx(p2, (float32, int32), device=True)[1]) == "float64"
    assert str(cuda.compile_ptx(p2, (int8, int8), device=True)[1]) == "int8"
    assert str(cuda.compile_ptx(p3, (int8, int32, int8), device=True)[1]) == "int32"
    assert str(cuda.compile_ptx(p3, (uint64, uint64, uint64), device=True)[1]) == "uint64"
    with pytest.raises(errors.TypingError, match="pow cannot be called with"):
        cuda.compile_ptx(p3, (int64, uint64, int64), device=True)  # promotes to float64


# --------------------------------------------------------------------------------------------
# In device functions
# --------------------------------------------------------------------------------------------

@cuda.jit(device=True)
def _digits(x, n):
    q, r = divmod(x, 10)
    return round(x / 7.0, n), q, r, pow(x, 3, 11)


def test_builtins_in_device_functions(backend):
    @cuda.jit
    def k(xs, f, q, r, p):
        i = cuda.grid(1)
        if i < xs.size:
            f[i], q[i], r[i], p[i] = _digits(xs[i], 3)

    xs = np.array([-123, 0, 7, 45, 99999], np.int64)
    f = np.zeros(5)
    q, r, p = (np.zeros(5, np.int64) for _ in range(3))
    k[1, 8](xs, f, q, r, p)
    for j, x in enumerate(xs.tolist()):
        assert f[j] == round(x / 7.0, 3)
        assert (q[j], r[j]) == divmod(x, 10)
        assert p[j] == pow(x, 3, 11)


def test_int_bit_count(backend):
    """i.bit_count(): the ones of abs(i), as Python's int.bit_count (numba-cuda's cuda.popc
    agrees except for negative values), in the integer's own type."""

    @cuda.jit
    def k(out, a, b, c, d):
        out[0] = a.bit_count()
        out[1] = b.bit_count()
        out[2] = c.bit_count()
        out[3] = d.bit_count()

    out = np.zeros(4, np.int64)
    k[1, 1](out, np.uint8(0xFF), np.int32(-7), 12345678901, np.uint64(2**64 - 1))
    assert list(out) == [8, 3, (12345678901).bit_count(), 64]
    assert k.signatures[0][1:] == (types.uint8, types.int32, types.int64, types.uint64)


def test_bit_count_of_a_float_is_an_error(cpu):
    @cuda.jit
    def k(out, x):
        out[0] = x.bit_count()

    with pytest.raises(errors.UnsupportedError, match="bit_count"):
        k[1, 1](np.zeros(1), 1.5)


def test_float_of_constant_strings(backend):
    # numba-cuda's tests write float("nan") and float("inf"); Python's grammar for the string.
    @cuda.jit
    def k(out):
        out[0] = float("nan")
        out[1] = float(" -Infinity ")
        out[2] = float("1_000.5e-1")
        out[3] = float("+inf")
        s = ".25"
        out[4] = float(s)

    out = np.zeros(5)
    k[1, 1](out)
    assert math.isnan(out[0]) and list(out[1:]) == [-math.inf, 100.05, math.inf, 0.25]

    for bad in ("abc", "1__0", "1e", "_1", "nan1"):
        def kb(out):
            out[0] = float(BAD)  # noqa: F821

        g = dict(kb.__globals__, BAD=bad)
        import types as pytypes

        kernel = cuda.jit(pytypes.FunctionType(kb.__code__, g, "kb"))
        with pytest.raises(errors.TypingError, match="could not convert string to float"):
            kernel[1, 1](out)

    @cuda.jit
    def kv(out, a):
        out[0] = float("1" if a[0] else "2")

    with pytest.raises(errors.TypingError, match="(only as a constant|cannot be called)"):
        kv[1, 1](out, np.zeros(1))
