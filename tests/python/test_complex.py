"""Complex numbers in kernels: complex64/complex128 scalars and arrays as arguments, literals,
complex(), arithmetic with ints and floats, **, abs, ==/!=, .real/.imag/.conjugate(), and the
cmath functions against Python's cmath (few ULP, signed zeros included) on the CPU backend;
on CUDA (gpu marker) the same checks with the same bound."""
import cmath
import math

import numpy as np
import pytest

from ptxjit import cuda

ZS = [1 + 2j, -1.5 + 0.5j, 0.3 - 0.7j, -2 - 3j, 0.5j, -0.5j, 2.0 + 0j, 2.0 - 0.0j, -2.0 + 0j,
      -2.0 - 0.0j, 0j, -0.0 + 0j, complex(0.0, -0.0), complex(-0.0, -0.0), 1e-10 + 1e-10j,
      1e-310 + 1e-310j, 1e300 + 1e300j, -1e300 + 1e-300j, 700 + 1j, -710 - 2j, 1 + 0j, -1 + 0j,
      0.999 + 0.001j, 1.001 - 0.001j, 20 + 1j, -20 - 1j, 3 + 1e-20j, 1e8 - 1e8j]


def _ulps(x, y, is32):
    """ULP distance of two floats (signed zeros and nan compared exactly)."""
    if math.isnan(x) and math.isnan(y):
        return 0.0
    if x == y and math.copysign(1, x) == math.copysign(1, y):
        return 0.0
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y) or x == y:
        return math.inf
    if is32:
        u = float(np.spacing(np.float32(abs(y))))
    else:
        u = math.ulp(y)
    return abs(x - y) / u


def _kernel(expr, nargs=1):
    params = "a, out" if nargs == 1 else "a, b, out"
    src = (f"def k({params}):\n    i = cuda.grid(1)\n    if i < out.size:\n"
           f"        z = a[i]\n" + ("        w = b[i]\n" if nargs == 2 else "") +
           f"        out[i] = {expr}\n")
    g = {"cmath": cmath, "math": math, "cuda": cuda, "np": np}
    exec(compile(src, f"<{expr}>", "exec"), g)
    return cuda.jit(g["k"])


def _compare(out, want, is32, bound, what):
    bad = []
    for k, (o, e) in enumerate(zip(out, want)):
        if e is None:
            continue
        d = max(_ulps(float(o.real), e.real, is32), _ulps(float(o.imag), e.imag, is32))
        if d > bound:
            bad.append((what[k], complex(o), e, d))
    assert not bad, bad


CMATH = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
         "cosh", "tanh", "asinh", "acosh", "atanh"]


@pytest.mark.parametrize("name", CMATH)
def test_cmath_complex128(backend, name):
    a = np.array(ZS, dtype=np.complex128)
    out = np.zeros_like(a)
    _kernel(f"cmath.{name}(z)")[1, 64](a, out)
    want = []
    for z in ZS:
        try:
            want.append(getattr(cmath, name)(z))
        except (ValueError, OverflowError):
            want.append(None)  # Python raises; the kernel gives inf/nan like Numba
    _compare(out, want, False, 4 if backend == "cpu" else 16, ZS)


@pytest.mark.parametrize("name", CMATH)
def test_cmath_complex64(backend, name):
    zs = [z for z in ZS if abs(z.real) < 1e30 and abs(z.imag) < 1e30 and
          (z == 0 or abs(z) > 1e-30) and abs(z.real) < 80]
    a = np.array(zs, dtype=np.complex64)
    out = np.zeros_like(a)
    _kernel(f"cmath.{name}(z)")[1, 64](a, out)
    assert out.dtype == np.complex64
    want = []
    for z in a:
        try:
            e = getattr(cmath, name)(complex(z))
            want.append(complex(np.complex64(e)))
        except (ValueError, OverflowError):
            want.append(None)
    # float32 routines on float32 parts; cancellation in a few formulas costs some ULP.
    _compare(out, want, True, 16, list(a))


def test_cmath_special_values_and_predicates(backend):
    inf, nan = math.inf, math.nan
    zs = [complex(inf, 0.0), complex(-inf, 1.0), complex(nan, 0.0), complex(0.0, nan),
          complex(1.0, inf), 1 + 1j, 0j]
    a = np.array(zs, dtype=np.complex128)
    out = np.zeros((len(zs), 3), dtype=np.bool_)

    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i, 0] = cmath.isnan(a[i])
            out[i, 1] = cmath.isinf(a[i])
            out[i, 2] = cmath.isfinite(a[i])

    k[1, 8](a, out)
    for j, z in enumerate(zs):
        assert list(out[j]) == [cmath.isnan(z), cmath.isinf(z), cmath.isfinite(z)]
    # exp of an infinite real part with zero imaginary part stays real (CPython's table).
    e = np.zeros(2, dtype=np.complex128)
    _kernel("cmath.exp(z)")[1, 2](np.array([complex(inf, 0.0), complex(-inf, 0.0)]), e)
    assert e[0] == complex(inf, 0.0) and e[1] == 0j


def test_phase_polar_rect_log_base(backend):
    @cuda.jit
    def k(a, ph, pol, rect, lg):
        i = cuda.grid(1)
        if i < a.size:
            z = a[i]
            ph[i] = cmath.phase(z)
            r, p = cmath.polar(z)
            pol[i, 0] = r
            pol[i, 1] = p
            rect[i] = cmath.rect(r, p)
            lg[i] = cmath.log(z, 2 + 1j)

    zs = [z for z in ZS if z != 0]
    a = np.array(zs)
    ph = np.zeros(len(zs))
    pol = np.zeros((len(zs), 2))
    rect = np.zeros(len(zs), np.complex128)
    lg = np.zeros(len(zs), np.complex128)
    k[1, 64](a, ph, pol, rect, lg)
    # Exact on the host (the same libm as Python); libdevice may differ by an ULP or two.
    ulp = 0 if backend == "cpu" else 2
    for j, z in enumerate(zs):
        r, p = cmath.polar(z)
        assert _ulps(ph[j], cmath.phase(z), False) <= ulp
        assert _ulps(pol[j, 0], r, False) <= ulp and _ulps(pol[j, 1], p, False) <= ulp
        # rect is checked on the kernel's own (r, p): near p = ±pi an ULP of p changes
        # r * sin(p) by tens of ULP, which says nothing about rect.
        _compare([rect[j]], [cmath.rect(pol[j, 0], pol[j, 1])], False, 2 * ulp, [z])
        # log(z, b) = log(z) / log(b): a complex division, whose small real part can lose
        # tens of ULP to fma contraction on the GPU (38 seen for -2-3j on an H100).
        _compare([lg[j]], [cmath.log(z, 2 + 1j)], False, 4 if backend == "cpu" else 128, [z])


def test_arguments_literals_and_arithmetic(backend):
    @cuda.jit
    def k(a, c, x, n, out):
        i = cuda.grid(1)
        if i < a.size:
            z = a[i]
            out[i, 0] = z * c + 1j
            out[i, 1] = z / c - n
            out[i, 2] = z + x * 0.5j
            out[i, 3] = complex(x, n) - z
            out[i, 4] = complex(n) * 2
            out[i, 5] = z.conjugate()
            out[i, 6] = complex(z.real * 2, z.imag - 1)
            out[i, 7] = abs(z) + 0j
            out[i, 8] = (z == c) + 2 * (z != c) + 0.0j

    a = np.array([1 + 2j, 3 - 1j, 2 + 0.5j])
    c, x, n = 2 + 0.5j, 1.25, 3
    out = np.zeros((3, 9), np.complex128)
    k[1, 4](a, c, x, n, out)
    for j, z in enumerate(a):
        z = complex(z)
        want = [z * c + 1j, z / c - n, z + x * 0.5j, complex(x, n) - z, complex(n) * 2,
                z.conjugate(), complex(z.real * 2, z.imag - 1), abs(z) + 0j,
                (z == c) + 2 * (z != c) + 0j]
        _compare(out[j], want, False, 1, list(range(9)))


def test_complex64_arrays_and_scalars_stay_complex64(backend):
    @cuda.jit
    def k(a, c, out, re):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i] * c + 1j  # a weak literal keeps complex64
            re[i] = a[i].real + a[i].imag

    a = np.array([1 + 2j, 3 - 1j], dtype=np.complex64)
    out = np.zeros(2, np.complex64)
    re = np.zeros(2, np.float32)
    k[1, 2](a, np.complex64(2 + 0.5j), out, re)
    np.testing.assert_array_equal(out, a * np.complex64(2 + 0.5j) + np.complex64(1j))
    np.testing.assert_array_equal(re, a.real + a.imag)


def test_complex_power(backend):
    pairs = [(1 + 2j, 2), (1 + 2j, -3), (0.5 - 1.5j, 0.5), (2 + 0j, 1j), (1 + 1j, 1 + 1j),
             (-1 + 0j, 0.5), (3 - 4j, 0), (0j, 2), (1.1 + 0.1j, 100), (1.1 + 0.1j, 101),
             (2 + 3j, 2.0), (-2 - 1j, -2.5 + 0.5j)]
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs], dtype=np.complex128)
    out = np.zeros_like(a)
    _kernel("z ** w", 2)[1, 16](a, b, out)
    want = [complex(p[0]) ** complex(p[1]) for p in pairs]
    # z ** 100 is computed by repeated squaring, as CPython does; on the GPU each product is
    # contracted into fma, so the error grows with the exponent (about 130 ULP at 101).
    _compare(out, want, False, 4 if backend == "cpu" else 256, pairs)

    @cuda.jit
    def k(a, out):
        out[0] = a[0] ** 2
        out[1] = a[0] ** 0.5
        out[2] = 2 ** a[0]

    o = np.zeros(3, np.complex128)
    k[1, 1](np.array([1 + 2j]), o)
    _compare(o, [(1 + 2j) ** 2, (1 + 2j) ** 0.5, 2 ** (1 + 2j)], False, 4, range(3))


def test_real_imag_of_real_numbers(backend):
    @cuda.jit
    def k(x, n, out):
        out[0] = x.real + x.imag
        out[1] = n.real * 10 + n.imag + n.conjugate()

    out = np.zeros(2)
    k[1, 1](2.5, 7, out)
    assert list(out) == [2.5, 77.0]


def test_cmath_on_real_arguments(backend):
    @cuda.jit
    def k(x, out):
        out[0] = cmath.sqrt(x)
        out[1] = cmath.log(x)
        out[2] = cmath.exp(x)

    out = np.zeros(3, np.complex128)
    k[1, 1](-4.0, out)
    _compare(out, [cmath.sqrt(-4.0), cmath.log(-4.0), cmath.exp(-4.0)], False, 1, range(3))


def test_complex_ordering_is_an_error():
    from ptxjit.errors import CompileError

    @cuda.jit
    def k(a, out):
        out[0] = a[0] < a[1]

    with pytest.raises(CompileError):
        k[1, 1](np.array([1j, 2j]), np.zeros(1, np.bool_))


def test_complex_scalar_abi_is_two_floats():
    def k(c, a, out):
        out[0] = a[0] * c

    ptx, _ = cuda.compile_ptx(k, "void(complex64, complex128[:], complex128[:])")
    params = [line.split()[1] for line in ptx.splitlines() if line.strip().startswith(".param")]
    # complex64 scalar: two f32 (real, imag); each 1-d array: data pointer, shape, stride.
    assert params[:2] == [".f32", ".f32"] and params[2:8] == [".u64"] * 6, params


@cuda.jit(device=True)
def _twice(z):
    return z * 2, z.imag


def test_unary_ops_inplace_truth_loops_and_device_functions(backend):
    @cuda.jit
    def k(a, out, b):
        z = a[0]
        out[0] = -z
        out[1] = +z
        w = z
        w += 1j
        out[2] = w
        b[0] = z == 1
        b[1] = (z + 0) != 1
        if z:
            b[2] = True
        if a[3]:
            b[3] = True
        t, im = _twice(z)
        out[3] = t + im
        acc = 0j
        for i in range(3):
            acc += a[i]
        out[4] = acc

    out = np.zeros(5, np.complex128)
    b = np.zeros(4, np.bool_)
    a = np.array([1 + 2j, 3, 4j, 0j])
    k[1, 1](a, out, b)
    assert list(out) == [-1 - 2j, 1 + 2j, 1 + 3j, 4 + 4j, 4 + 6j]
    assert list(b) == [False, True, True, False]


# --------------------------------------------------------------------------------------------
# Special values: CPython's results for every mix of ±inf, nan, ±0 and finite parts
# --------------------------------------------------------------------------------------------

SPECIAL = [-math.inf, -2.5, -0.0, 0.0, 2.5, math.inf, math.nan]
SPECIAL_ZS = [complex(x, y) for x in SPECIAL for y in SPECIAL]


def _python_results(fn, args, dtype):
    """fn(*a) for each a, rounded to dtype; None where Python raises (ValueError for the
    cases C99 Annex G flags as invalid or divide-by-zero, such as exp(1 + inf j), log(0),
    sin(inf + 0j)): a kernel cannot raise and returns the Annex G value, checked below."""
    want = []
    for a in args:
        try:
            e = fn(*a)
        except (ValueError, OverflowError):
            want.append(None)
            continue
        want.append(complex(dtype(e)) if dtype is np.complex64 else e)
    return want


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", CMATH)
def test_cmath_special_values(backend, name, dtype):
    a = np.array(SPECIAL_ZS, dtype=dtype)
    out = np.zeros_like(a)
    _kernel(f"cmath.{name}(z)")[1, 64](a, out)
    want = _python_results(getattr(cmath, name), [(z,) for z in SPECIAL_ZS], dtype)
    # Infinite, nan and zero parts must match exactly (signs of zeros and infinities included);
    # finite parts (from the finite inputs ±2.5) within a few ULP as in the tests above.
    is32 = dtype is np.complex64
    _compare(out, want, is32, 16 if is32 or backend != "cpu" else 4, SPECIAL_ZS)


def test_rect_polar_phase_special_values(backend):
    @cuda.jit
    def k(r, p, rect, pol, ph):
        i = cuda.grid(1)
        if i < r.size:
            rect[i] = cmath.rect(r[i], p[i])
            z = complex(r[i], p[i])
            m, a = cmath.polar(z)
            pol[i, 0] = m
            pol[i, 1] = a
            ph[i] = cmath.phase(z)

    pairs = [(x, y) for x in SPECIAL for y in SPECIAL]
    r = np.array([x for x, _ in pairs])
    p = np.array([y for _, y in pairs])
    rect = np.zeros(len(pairs), np.complex128)
    pol = np.zeros((len(pairs), 2))
    ph = np.zeros(len(pairs))
    k[1, 64](r, p, rect, pol, ph)
    ulp = 1 if backend == "cpu" else 2
    _compare(rect, _python_results(cmath.rect, pairs, np.complex128), False, ulp, pairs)
    for j, (x, y) in enumerate(pairs):
        m, a = cmath.polar(complex(x, y))
        assert _ulps(pol[j, 0], m, False) <= ulp and _ulps(pol[j, 1], a, False) <= ulp, (x, y)
        assert _ulps(ph[j], cmath.phase(complex(x, y)), False) <= ulp, (x, y)


def test_results_where_python_raises(backend):
    # C99 Annex G's values, which CPython computes and then turns into ValueError.
    cases = [("exp", complex(1.0, math.inf), (math.nan, math.nan)),
             ("exp", complex(math.inf, math.inf), (math.inf, math.nan)),
             ("log", complex(0.0, 0.0), (-math.inf, 0.0)),
             ("log", complex(-0.0, 0.0), (-math.inf, math.pi)),
             ("sqrt", complex(math.inf, math.nan), (math.inf, math.nan)),  # no raise: a check
             ("sin", complex(math.inf, 0.0), (math.nan, -0.0)),
             ("cosh", complex(0.0, math.inf), (math.nan, 0.0)),
             ("tan", complex(math.inf, 2.5), (math.nan, math.nan))]
    for name, z, (re, im) in cases:
        out = np.zeros(1, np.complex128)
        _kernel(f"cmath.{name}(z)")[1, 1](np.array([z]), out)
        assert _ulps(out[0].real, re, False) == 0 and _ulps(out[0].imag, im, False) == 0, \
            (name, z, out[0])
