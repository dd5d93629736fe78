"""math and numpy scalar functions in kernels: results against Python's math module (few ULP,
identical special values) on the CPU backend, float32 variants with float32 arrays, NumPy
casts, constants, and errors for unsupported calls. On CUDA (gpu marker) the same checks run
against the host values with a looser ULP bound."""
import math

import numpy as np
import pytest

from ptxjit import cuda, float32

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324, -5e-324, 1e-300]
ORDINARY = [0.1, 0.5, 0.75, 1.0, 1.5, 2.0, 3.25, 10.0, 123.456, -0.3, -0.9, -2.5, -77.0, 1e-8,
            1e10, -1e10, 0.999999, 700.0, -700.0]


def _compile(expr, nargs, out_dtype=None):
    """A kernel out[i] = <expr> over input arrays a (and b)."""
    params = "a, out" if nargs == 1 else "a, b, out"
    src = (f"def k({params}):\n"
           f"    i = cuda.grid(1)\n"
           f"    if i < out.size:\n"
           f"        x = a[i]\n" + ("        y = b[i]\n" if nargs == 2 else "") +
           f"        out[i] = {expr}\n")
    g = {"math": math, "cuda": cuda, "np": np}
    exec(compile(src, f"<{expr}>", "exec"), g)
    return cuda.jit(g["k"])


def _ulps(a, b, dtype):
    """Distance in units in the last place between arrays a and b (nan==nan, inf==inf)."""
    a = np.asarray(a, dtype=dtype)
    b = np.asarray(b, dtype=dtype)
    it = np.int64 if dtype == np.float64 else np.int32
    mask = np.int64(0x7FFFFFFFFFFFFFFF if dtype == np.float64 else 0x7FFFFFFF)
    ma = a.view(it).astype(np.int64) & mask  # magnitudes as ordered integers
    mb = b.view(it).astype(np.int64) & mask
    same_sign = np.signbit(a) == np.signbit(b)
    d = np.where(same_sign, np.abs(ma - mb).astype(np.float64),
                 ma.astype(np.float64) + mb.astype(np.float64) + 1)
    both_nan = np.isnan(a) & np.isnan(b)
    same = (a == b) & (np.signbit(a) == np.signbit(b))
    d = np.where(both_nan | same, 0.0, d)
    d = np.where(np.isnan(a) ^ np.isnan(b), np.inf, d)
    return d


def _expected(pyfn, xs, ys=None):
    out = []
    for k, x in enumerate(xs):
        try:
            r = pyfn(x) if ys is None else pyfn(x, ys[k])
        except (ValueError, OverflowError, ZeroDivisionError):
            r = None  # Python raises: the kernel gives nan/inf like Numba; not compared
        out.append(r)
    return out


def _check(kernel, pyfn, xs, ys=None, dtype=np.float64, max_ulps=4, backend="cpu"):
    a = np.array(xs, dtype=dtype)
    args = [a] if ys is None else [a, np.array(ys, dtype=dtype)]
    out = np.zeros(len(xs), dtype=dtype)
    kernel[1, 64](*args, out)
    conv = (lambda v: v) if dtype == np.float64 else (lambda v: float(np.float32(v)))
    exp = _expected(pyfn, [conv(v) for v in a], None if ys is None else [conv(v) for v in args[1]])
    mask = np.array([e is not None for e in exp])
    e = np.array([(e if e is not None else 0.0) for e in exp], dtype=np.float64)
    with np.errstate(over="ignore"):
        e = e.astype(dtype)
    d = _ulps(out[mask], e[mask], dtype)
    # libdevice's documented bounds are a few ULP larger than glibc's for some functions.
    bound = max_ulps if backend == "cpu" else max(max_ulps, 8)
    bad = d > bound
    assert not bad.any(), list(zip(a[mask][bad], out[mask][bad], e[mask][bad], d[bad]))
    return out


UNARY = [
    ("acos", [x / 10 for x in range(-10, 11)] + [math.nan]),
    ("asin", [x / 10 for x in range(-10, 11)] + [-0.0, math.nan]),
    ("atan", SPECIAL + ORDINARY),
    ("acosh", [1.0, 1.5, 10.0, 1e300, math.inf, math.nan]),
    ("asinh", SPECIAL + ORDINARY),
    ("atanh", [-0.99, -0.5, -0.0, 0.0, 0.3, 0.999999, math.nan]),
    ("cos", SPECIAL[:2] + SPECIAL[4:5] + ORDINARY),
    ("sin", SPECIAL[:2] + SPECIAL[4:5] + ORDINARY),
    ("tan", SPECIAL[:2] + SPECIAL[4:5] + ORDINARY),
    ("cosh", SPECIAL + ORDINARY),
    ("sinh", SPECIAL + ORDINARY),
    ("tanh", SPECIAL + ORDINARY),
    ("erf", SPECIAL + ORDINARY),
    ("erfc", SPECIAL + ORDINARY),
    ("exp", SPECIAL + ORDINARY),
    ("exp2", SPECIAL + ORDINARY),
    ("expm1", SPECIAL + ORDINARY),
    ("fabs", SPECIAL + ORDINARY),
    ("log", [v for v in SPECIAL + ORDINARY if not (v < 0) and v != 0]),
    ("log2", [v for v in SPECIAL + ORDINARY if not (v < 0) and v != 0]),
    ("log10", [v for v in SPECIAL + ORDINARY if not (v < 0) and v != 0]),
    ("log1p", [v for v in SPECIAL + ORDINARY if not (v <= -1)]),
    ("sqrt", [v for v in SPECIAL + ORDINARY if not (v < 0)]),
    ("degrees", SPECIAL + ORDINARY),
    ("radians", SPECIAL + ORDINARY),
]


@pytest.mark.parametrize("name,xs", UNARY, ids=[u[0] for u in UNARY])
def test_unary_float64(backend, name, xs):
    _check(_compile(f"math.{name}(x)", 1), getattr(math, name), xs, backend=backend)


@pytest.mark.parametrize("name,xs", UNARY, ids=[u[0] for u in UNARY])
def test_unary_float32(backend, name, xs):
    # float32 in, float32 routine out: compare with Python's double result rounded to float32.
    k = _compile(f"math.{name}(x)", 1)
    xs32 = [v for v in xs if abs(v) < 3e38 or not math.isfinite(v)]
    _check(k, getattr(math, name), xs32, dtype=np.float32, max_ulps=4, backend=backend)


def test_gamma_lgamma(backend):
    xs = [0.5, 1.0, 1.5, 2.0, 3.7, 10.0, 20.5, 170.5, -0.5, -1.5, -2.5, 1e-8, math.inf, math.nan]
    # glibc/libdevice and CPython use different gamma algorithms: a few ULP apart.
    _check(_compile("math.gamma(x)", 1), math.gamma, xs, max_ulps=16, backend=backend)
    # lgamma is 0 at 1 and 2 and near -2.457: relative error there measures cancellation only.
    xl = [v for v in xs if v not in (1.0, 2.0, -2.5)]
    _check(_compile("math.lgamma(x)", 1), math.lgamma, xl, max_ulps=16, backend=backend)


BINARY = [
    ("atan2", [(1.0, 2.0), (-1.0, -2.0), (0.0, -0.0), (-0.0, -0.0), (0.0, 0.0), (math.inf, math.inf),
               (-math.inf, 1.0), (1.0, math.inf), (1.0, -math.inf), (math.nan, 1.0), (3.0, -4.0)]),
    ("hypot", [(3.0, 4.0), (1e300, 1e300), (1e-320, 1e-320), (math.inf, math.nan),
               (math.nan, -math.inf), (-5.0, 12.0), (0.0, -0.0)]),
    ("copysign", [(1.0, -0.0), (-2.0, 0.0), (math.inf, -1.0), (3.0, math.nan), (0.0, -5.0)]),
    ("fmod", [(5.5, 2.0), (-5.5, 2.0), (5.5, -2.0), (1e300, 3.0), (0.0, 1.0), (-0.0, 1.0),
              (1.0, math.inf)]),
    ("pow", [(2.0, 10.0), (2.0, 0.5), (-2.0, 3.0), (0.0, 0.0), (math.nan, 0.0), (1.0, math.nan),
             (-1.0, math.inf), (10.0, -300.0), (1.5, 1000.0), (0.5, -1.5)]),
    ("nextafter", [(1.0, 2.0), (1.0, 0.0), (0.0, -1.0), (-0.0, 1.0), (math.inf, 0.0),
                   (1.0, 1.0), (math.nan, 1.0), (5e-324, 0.0)]),
    ("remainder", [(5.5, 2.0), (-5.5, 2.0), (7.0, 2.0), (5.0, 2.0), (1e300, 3.0), (-0.0, 1.0),
                   (1.0, math.inf)]),
    ("log", [(8.0, 2.0), (100.0, 10.0), (2.0, 0.5), (1e300, 7.0)]),
]


@pytest.mark.parametrize("name,pairs", BINARY, ids=[b[0] for b in BINARY])
def test_binary_float64(backend, name, pairs):
    xs = [p[0] for p in pairs]
    ys = [p[1] for p in pairs]
    _check(_compile(f"math.{name}(x, y)", 2), getattr(math, name), xs, ys, backend=backend)


@pytest.mark.parametrize("name,pairs", BINARY, ids=[b[0] for b in BINARY])
def test_binary_float32(backend, name, pairs):
    pairs = [p for p in pairs if all(abs(v) < 3e38 or not math.isfinite(v) for v in p)]
    if name == "nextafter":  # float32 steps are not float64 steps
        pyfn = lambda x, y: float(np.nextafter(np.float32(x), np.float32(y)))
    else:
        pyfn = getattr(math, name)
    _check(_compile(f"math.{name}(x, y)", 2), pyfn, [p[0] for p in pairs],
           [p[1] for p in pairs], dtype=np.float32, backend=backend)


def test_float32_stays_float32_and_ints_become_float64():
    @cuda.jit
    def k(a32, i64, o32, o64):
        o32[0] = math.sin(a32[0]) * math.pi
        o64[0] = math.sqrt(i64[0])
        o64[1] = math.pi
        o64[2] = math.tau + math.e
        o64[3] = math.inf
        o64[4] = math.nan

    a32 = np.array([0.5], dtype=np.float32)
    o32 = np.zeros(1, dtype=np.float32)
    o64 = np.zeros(5)
    k[1, 1](a32, np.array([2], dtype=np.int64), o32, o64)
    assert o32[0] == np.float32(np.sin(np.float32(0.5))) * np.float32(math.pi)
    assert o64[0] == math.sqrt(2)
    assert o64[1] == math.pi and o64[2] == math.tau + math.e
    assert o64[3] == math.inf and math.isnan(o64[4])
    sig = [s for s in k.signatures]
    assert sig


def test_ceil_floor_trunc_return_int(backend):
    @cuda.jit
    def k(x, out, ints):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = math.ceil(x[i])
            out[i, 1] = math.floor(x[i])
            out[i, 2] = math.trunc(x[i])
            out[i, 3] = math.floor(ints[i]) + 2**40
            out[i, 4] = math.floor(x[i]) // 2  # integer floor division: an int result

    xs = np.array([1.5, -1.5, 2.0, -0.2, 1e15 + 0.5, 3.999], dtype=np.float64)
    ints = np.arange(6, dtype=np.int64) - 3
    out = np.zeros((6, 5), dtype=np.int64)
    k[1, 8](xs, out, ints)
    for j, v in enumerate(xs):
        assert list(out[j]) == [math.ceil(v), math.floor(v), math.trunc(v),
                                int(ints[j]) + 2**40, math.floor(v) // 2]


def test_predicates(backend):
    @cuda.jit
    def k(x, out, n):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = math.isnan(x[i])
            out[i, 1] = math.isinf(x[i])
            out[i, 2] = math.isfinite(x[i])
            out[i, 3] = np.isnan(x[i])
            out[i, 4] = np.isinf(x[i])
            out[i, 5] = np.isfinite(x[i])
            out[i, 6] = math.isfinite(n)
            out[i, 7] = math.isnan(n)

    xs = np.array([0.0, -0.0, math.inf, -math.inf, math.nan, 1e308, 5e-324])
    for dt in (np.float64, np.float32):
        out = np.zeros((xs.size, 8), dtype=np.bool_)
        with np.errstate(over="ignore", under="ignore"):
            xd = xs.astype(dt)  # 1e308 -> inf in float32
        k[1, 8](xd, out, 3)
        for j, v in enumerate(xd):
            f = float(v)
            assert list(out[j]) == [math.isnan(f), math.isinf(f), math.isfinite(f)] * 2 + [True, False]


def test_frexp_ldexp_modf(backend):
    @cuda.jit
    def k(x, m, e, fr, ip, ld):
        i = cuda.grid(1)
        if i < x.size:
            mm, ee = math.frexp(x[i])
            m[i] = mm
            e[i] = ee
            f, w = math.modf(x[i])
            fr[i] = f
            ip[i] = w
            ld[i] = math.ldexp(x[i], ee + 3)

    xs = [1.0, 0.75, -12.5, 1e300, 5e-324, 0.0, -0.0, math.inf, -math.inf, math.nan, 3.75, -0.5]
    for dt in (np.float64, np.float32):
        with np.errstate(over="ignore", under="ignore"):
            x = np.array(xs, dtype=dt)
        m, fr, ip, ld = (np.zeros(len(xs), dtype=dt) for _ in range(4))
        e = np.zeros(len(xs), dtype=np.int64)
        k[1, 16](x, m, e, fr, ip, ld)
        for j, v in enumerate(x):
            v = float(v)
            em, ee = math.frexp(v)
            assert _ulps([m[j]], [em], dt)[0] == 0 and (e[j] == ee or not math.isfinite(v))
            ef, ei = math.modf(v)
            assert _ulps([fr[j], ip[j]], [ef, ei], dt).max() == 0, (v, fr[j], ip[j])
            if math.isfinite(v):
                try:
                    want = math.ldexp(v, ee + 3)
                except OverflowError:
                    want = math.copysign(math.inf, v)
                with np.errstate(over="ignore"):
                    assert _ulps([ld[j]], [want], dt)[0] == 0


def test_ldexp_huge_exponent_gives_inf_and_zero():
    @cuda.jit
    def k(out):
        out[0] = math.ldexp(1.0, 10**12)
        out[1] = math.ldexp(1.0, -(10**12))

    out = np.zeros(2)
    k[1, 1](out)
    assert out[0] == math.inf and out[1] == 0.0


NUMPY = [("sqrt", math.sqrt), ("exp", math.exp), ("sin", math.sin), ("arcsin", math.asin),
         ("arccos", math.acos), ("arctan", math.atan), ("arcsinh", math.asinh),
         ("tanh", math.tanh), ("log", math.log), ("log2", math.log2), ("log10", math.log10),
         ("log1p", math.log1p), ("expm1", math.expm1), ("floor", lambda v: float(math.floor(v))),
         ("ceil", lambda v: float(math.ceil(v))), ("trunc", lambda v: float(math.trunc(v))),
         ("abs", abs), ("absolute", abs), ("fabs", math.fabs), ("degrees", math.degrees),
         ("radians", math.radians), ("rad2deg", math.degrees), ("deg2rad", math.radians),
         ("cbrt", lambda v: float(np.cbrt(v)))]


@pytest.mark.parametrize("name,pyfn", NUMPY, ids=[n[0] for n in NUMPY])
def test_numpy_functions(backend, name, pyfn):
    xs = [0.1, 0.5, 0.9, 1.0, 1.5, 2.5, 7.0, 0.0, -0.0]
    _check(_compile(f"np.{name}(x)", 1), pyfn, xs, backend=backend)
    _check(_compile(f"np.{name}(x)", 1), pyfn, xs, dtype=np.float32, backend=backend)


def test_numpy_binary_and_constants(backend):
    @cuda.jit
    def k(x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = np.arctan2(x[i], y[i])
            out[i, 1] = np.hypot(x[i], y[i])
            out[i, 2] = np.copysign(x[i], y[i])
            out[i, 3] = np.pi + np.e
            out[i, 4] = np.inf
            out[i, 5] = np.floor(7)

    x = np.array([1.0, -3.0, 0.0])
    y = np.array([2.0, 4.0, -1.0])
    out = np.zeros((3, 6))
    k[1, 4](x, y, out)
    # The host's libm is what Python uses; libdevice may differ by an ULP.
    ulp = 0 if backend == "cpu" else 2
    for j in range(3):
        assert _ulps(out[j, 0], math.atan2(x[j], y[j]), np.float64) <= ulp
        assert _ulps(out[j, 1], math.hypot(x[j], y[j]), np.float64) <= ulp
        assert out[j, 2] == math.copysign(x[j], y[j])
        assert out[j, 3] == np.pi + np.e and out[j, 4] == np.inf and out[j, 5] == 7.0


def test_numpy_int_abs_stays_int(backend):
    @cuda.jit
    def k(a, out):
        out[0] = np.abs(a[0])
        out[1] = np.absolute(a[1])

    out = np.zeros(2, dtype=np.int32)
    k[1, 1](np.array([-5, 7], dtype=np.int32), out)
    assert list(out) == [5, 7]


def test_numpy_scalar_casts(backend):
    @cuda.jit
    def k(x, i, o8, o32, of32, of64, oc):
        o8[0] = np.uint8(i[0])
        o32[0] = np.int32(x[0])
        of32[0] = np.float32(x[0]) * 3  # float32 arithmetic: rounds to float32
        of32[1] = float32(x[0])
        of64[0] = np.float64(np.float32(x[0]))
        oc[0] = np.complex128(x[0])
        oc[1] = np.complex64(i[0])

    x = np.array([1.1])
    i = np.array([300], dtype=np.int64)
    o8 = np.zeros(1, np.uint8)
    o32 = np.zeros(1, np.int32)
    of32 = np.zeros(2, np.float32)
    of64 = np.zeros(1)
    oc = np.zeros(2, np.complex128)
    k[1, 1](x, i, o8, o32, of32, of64, oc)
    assert o8[0] == 300 % 256 and o32[0] == 1
    assert of32[0] == np.float32(1.1) * np.float32(3) and of32[1] == np.float32(1.1)
    assert of64[0] == float(np.float32(1.1))
    assert oc[0] == 1.1 and oc[1] == 300


def test_from_math_import(backend):
    from math import sin, pi  # noqa: F401  (resolved by the snapshot as math.sin and a float)
    g = {"cuda": cuda, "sin": sin, "pi": pi}
    exec("def k(out):\n    out[0] = sin(pi / 6)\n", g)
    k = cuda.jit(g["k"])
    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == math.sin(math.pi / 6)


def test_unsupported_math_call_is_an_error():
    from ptxjit.errors import UnsupportedError

    @cuda.jit
    def k(out):
        out[0] = math.factorial(5)

    with pytest.raises(UnsupportedError) as e:
        k[1, 1](np.zeros(1))
    msg = str(e.value)
    assert "math.factorial" in msg and "test_math.py:" in msg


def test_string_method_is_an_error():
    from ptxjit.errors import UnsupportedError

    @cuda.jit
    def k(out):
        out[0] = len("abc".upper())

    with pytest.raises(UnsupportedError) as e:
        k[1, 1](np.zeros(1))
    assert "upper" in str(e.value) and "test_math.py:" in str(e.value)


def test_bad_math_arguments_are_typing_errors():
    from ptxjit.errors import TypingError

    @cuda.jit
    def k(out):
        out[0] = math.sin(1.0, 2.0)

    with pytest.raises(TypingError) as e:
        k[1, 1](np.zeros(1))
    assert "math.sin" in str(e.value)


def _fm_kernel(x, out):
    i = cuda.grid(1)
    out[i] = math.sin(x[i]) / x[i + 1] + math.sqrt(x[i]) + x[i] * x[i + 2]


def test_fastmath_ptx_uses_approximate_instructions(needs_libdevice):
    plain, _ = cuda.compile_ptx(_fm_kernel, "void(float32[:], float32[:])")
    fast, _ = cuda.compile_ptx(_fm_kernel, "void(float32[:], float32[:])", fastmath=True)
    for word in ("div.approx", "sin.approx", "sqrt.approx", "div.approx.ftz.f32", "add.ftz.f32"):
        assert word in fast, word
        assert word not in plain, word
    assert "div.rn.f32" in plain and "sqrt.rn.f32" in plain and "add.f32" in plain
    assert ".ftz" not in plain
    # The kernel body is inlined into the entry with fastmath as without.
    assert "call.uni" not in fast and "call.uni" not in plain


def test_fastmath_float64_keeps_libdevice_accuracy(needs_libdevice):
    fast, _ = cuda.compile_ptx(_fm_kernel, "void(float64[:], float64[:])", fastmath=True)
    assert "sin.approx" not in fast and "div.rn.f64" in fast


def test_fastmath_host_results_close(backend):
    k = cuda.jit(fastmath=True)(_fm_kernel)
    x = np.array([0.5, 1.5, 2.5, 3.5], dtype=np.float32)
    out = np.zeros(2, dtype=np.float32)
    k[1, 2](x, out)
    for i in range(2):
        want = math.sin(x[i]) / x[i + 1] + math.sqrt(x[i]) + x[i] * x[i + 2]
        assert abs(out[i] - want) <= 1e-5 * abs(want)


def _all_math(x, y, out, n):
    i = cuda.grid(1)
    v = x[i]
    w = y[i]
    m, e = math.frexp(v)
    f, ip = math.modf(w)
    out[i] = (math.acos(v) + math.asin(v) + math.atan(v) + math.acosh(v) + math.asinh(v)
              + math.atanh(v) + math.cos(v) + math.sin(v) + math.tan(v) + math.cosh(v)
              + math.sinh(v) + math.tanh(v) + math.atan2(v, w) + math.hypot(v, w) + math.erf(v)
              + math.erfc(v) + math.exp(v) + math.exp2(v) + math.expm1(v) + math.fabs(v)
              + math.ldexp(m, e) + f + ip + math.gamma(v) + math.lgamma(v) + math.log(v)
              + math.log(v, w) + math.log2(v) + math.log10(v) + math.log1p(v)
              + math.nextafter(v, w) + math.sqrt(v) + math.remainder(v, w) + math.pow(v, w)
              + math.ceil(v) + math.floor(v) + math.trunc(v) + math.copysign(v, w)
              + math.fmod(v, w) + math.isnan(v) + math.isinf(v) + math.isfinite(v)
              + math.degrees(v) + math.radians(v) + np.arctan2(v, w) + np.cbrt(v) + np.rint(v)
              + np.power(v, w) + np.abs(v) + math.sqrt(n) + np.float32(n) + math.pi)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fastmath", [False, True])
def test_every_math_function_compiles_to_valid_ptx(dtype, fastmath, tmp_path, needs_libdevice):
    import shutil
    import subprocess

    ptx, _ = cuda.compile_ptx(_all_math, f"void({dtype}[:], {dtype}[:], {dtype}[:], int32)",
                              fastmath=fastmath)
    assert "__nv_" not in ptx  # libdevice linked and inlined: no unresolved calls
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not shutil.which(ptxas) and not __import__("os").path.exists(ptxas):
        pytest.skip("no ptxas")
    f = tmp_path / "k.ptx"
    f.write_text(ptx)
    r = subprocess.run([ptxas, "-arch=sm_90", str(f), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


GPU_VS_HOST = ["sin", "cos", "tan", "exp", "log", "sqrt", "atan", "tanh", "erf", "log1p",
               "expm1", "asinh", "cbrt", "gamma", "lgamma"]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_matches_host(dtype):
    """The same kernel on the GPU (libdevice) and on the host (libm): a few ULP apart."""
    from ptxjit import _core

    xs = np.array([0.1, 0.5, 0.9, 1.3, 2.5, 7.0, 33.3, 1e-5, 0.0, -0.0, np.inf, np.nan], dtype=dtype)
    for name in GPU_VS_HOST:
        results = {}
        for target in ("cpu", "cuda"):
            _core.select_target(target)
            try:
                out = np.zeros_like(xs)
                _compile(f"math.{name}(x)", 1)[1, 16](xs, out)
                results[target] = out
            finally:
                _core.select_target("cpu")
        d = _ulps(results["cuda"], results["cpu"], dtype)
        assert d.max() <= (16 if "gamma" in name else 8), (name, xs, results, d)


def test_where_python_raises_kernels_give_nan_or_inf(backend):
    @cuda.jit
    def k(out):
        out[0] = math.sqrt(-1.0)
        out[1] = math.log(0.0)
        out[2] = math.log(-1.0)
        out[3] = math.acos(2.0)
        out[4] = math.exp(1000.0)
        out[5] = math.fmod(math.inf, 1.0)
        out[6] = math.atanh(1.0)
        out[7] = math.pow(0.0, -1.0)

    out = np.zeros(8)
    k[1, 1](out)
    assert np.isnan(out[[0, 2, 3, 5]]).all()
    assert out[1] == -math.inf and out[4] == math.inf and out[6] == math.inf
    assert out[7] == math.inf


@pytest.mark.parametrize("fastmath", [False, True])
@pytest.mark.parametrize("edtype", [np.int32, np.int64, np.uint8])
def test_float_power_of_runtime_int(backend, fastmath, edtype):
    """float ** int with an exponent known only at run time (not unrolled): llvm.powi on the
    host once failed to link (__powidf2), and fastmath may rewrite pow into it."""

    @cuda.jit(fastmath=fastmath)
    def k(x, e, out, out32):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] ** e[i]
            out32[i] = np.float32(x[i]) ** e[i]

    x = np.array([1.5, -2.0, 0.5, 3.0, -1.25, 10.0, 2.0, 0.9], np.float64)
    e = np.array([3, 5, 7, 0, 9, 12, 100, 20], edtype)
    if np.issubdtype(edtype, np.signedinteger):
        e[[1, 4, 7]] *= -1
    out = np.zeros_like(x)
    out32 = np.zeros(x.size, np.float32)
    k[1, 32](x, e, out, out32)
    expected = np.array([float(a) ** int(b) for a, b in zip(x, e)])
    np.testing.assert_allclose(out, expected, rtol=1e-14 if not fastmath else 1e-12)
    np.testing.assert_allclose(out32, expected.astype(np.float32), rtol=2e-6)


def test_float32_math_of_constants_is_the_c_librarys_value(cpu):
    # LLVM folded a float32 library call with constant arguments by computing it in double and
    # rounding, one ULP from glibc's atan2f that runs when the arguments are not constants
    # (difftest seed 702181): the same expression gave two values on the CPU backend.
    @cuda.jit
    def k(x, out):
        out[0] = math.atan2(np.float32(65535.0), np.float32(-0.001))
        out[1] = math.atan2(x[0], x[1])
        out[2] = math.sin(np.float32(1e6)) + math.exp(np.float32(-3.25)) + math.log(np.float32(7))
        out[3] = math.sin(x[2]) + math.exp(x[3]) + math.log(x[4])

    x = np.array([65535.0, -0.001, 1e6, -3.25, 7.0], np.float32)
    out = np.zeros(4, np.float32)
    k[1, 1](x, out)
    assert out[0] == out[1] and out[2] == out[3], out


def test_pow_of_a_power_of_two_is_the_c_librarys_pow(cpu):
    # LLVM rewrote pow(2**n, x) as exp2(n * x) on the CPU backend, without fastmath, rounding
    # n * x first: math.pow(8.0, 7.3577) was off CPython's (the C library's) pow (issue 19).
    @cuda.jit
    def k(out, x):
        out[0] = 4294967296.0 ** x[0]
        out[1] = math.pow(8.0, x[0])
        out[2] = math.pow(0.25, x[1])
        out[3] = 2.0 ** x[1]

    x = np.array([math.hypot(2.5, -6.92), 3.3])
    out = np.zeros(4)
    k[1, 1](out, x)
    assert out.tolist() == [4294967296.0 ** x[0], math.pow(8.0, x[0]), math.pow(0.25, x[1]),
                            2.0 ** x[1]]
