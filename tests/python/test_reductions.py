"""NumPy's array reductions in kernels (np.sum(a), a.sum(), np.nanmin(a), ...): NumPy's values,
result types, NaN semantics and empty arrays, for arrays of any ndim, dtype and layout (arguments,
views made in the kernel, frozen globals), on both backends."""
import math

import numpy as np
import pytest

import ptxjit
from ptxjit import cuda, errors, types

NAN = float("nan")

# Small arrays (at most 8 elements: NumPy sums those sequentially, as kernels do).
ARRAYS = {
    "f8": np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5]),
    "f8-nan": np.float64([NAN, -1.5, 2.5, NAN, 3.0]),
    "f8-inf": np.float64([-1.5, 2.5, float("inf"), -float("inf")]),
    "f8-allnan": np.float64([NAN, NAN]),
    "f8-2d": np.float64([[1.0, 1.5, -2.0], [4.0, NAN, 0.25]]),
    "f8-2d-F": np.asfortranarray(np.float64([[1.0, 1.5, -2.0], [4.0, 3.0, 0.25]])),
    "f8-3d": np.arange(8.0).reshape(2, 2, 2) - 3.5,
    "f8-0d": np.array(2.5),
    "f4": np.float32([0.1, 0.2, 0.3, -4.0, 7.5]),
    "i4": np.int32([3, -7, 2, 9, 9, -7]),
    "u1": np.uint8([200, 100, 7, 0]),
    "b1": np.array([True, False, True]),
    "c16": np.complex128([1 + 2j, -3 + 0.5j, 1 + 2j, 2 - 1j]),
    "f2": np.float16([0.5, 1.25, -3.0, 2.0]),
}

FUNCS = ["sum", "prod", "mean", "var", "std", "min", "max", "amin", "amax", "ptp", "argmin",
         "argmax", "all", "any", "count_nonzero", "average", "nansum", "nanprod", "nanmean",
         "nanvar", "nanstd", "nanmin", "nanmax", "nanargmin", "nanargmax"]


def _kernel(name):
    src = f"def k(a, out):\n    out[0] = np.{name}(a)\n"
    g = {"np": np}
    exec(compile(src, f"<reduce {name}>", "exec"), g)
    return cuda.jit(g["k"])


KERNELS = {}


def _expected(name, a):
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(np, name)(a)


def _applicable(name, key, a):
    if a.size == 0:
        return False
    if name == "ptp" and a.dtype == np.bool_:
        return False
    if name in ("nanargmin", "nanargmax") and np.isnan(a.astype(np.complex128)).all():
        return False
    return True


@pytest.mark.parametrize("name", FUNCS)
def test_reductions_match_numpy(backend, name):
    if name not in KERNELS:
        KERNELS[name] = _kernel(name)
    k = KERNELS[name]
    for key, a in ARRAYS.items():
        if not _applicable(name, key, a):
            continue
        exp = np.asarray(_expected(name, a))
        out = np.zeros(1, dtype=exp.dtype)
        k[1, 1](a, out)
        got = out[0]
        if exp.dtype.kind in "fc":
            tol = {2: 1e-3, 4: 1e-6, 8: 1e-14}[exp.dtype.itemsize if exp.dtype.kind == "f"
                                                 else exp.dtype.itemsize // 2]
            np.testing.assert_allclose(got, exp, rtol=tol, atol=0, equal_nan=True,
                                       err_msg=f"np.{name} of {key}")
        else:
            assert got == exp, f"np.{name} of {key}: {got} != {exp}"


@pytest.mark.parametrize("name", ["sum", "mean", "std", "min", "max", "nanmin", "nanmax",
                                  "argmax", "nanmean", "count_nonzero", "prod", "var"])
def test_reductions_of_views_made_in_the_kernel(backend, name):
    src = f"""
def k(a, out):
    out[0] = np.{name}(a[::-1])
    out[1] = np.{name}(a[1:, ::2])
    out[2] = np.{name}(a.T if False else a[:, 1])
    out[3] = np.{name}(a[0])
"""
    g = {"np": np}
    exec(compile(src, f"<views {name}>", "exec"), g)
    k = cuda.jit(g["k"])
    a = np.float64([[1.0, NAN, 3.0, -2.0], [0.5, 7.0, -1.0, 2.0], [4.0, 4.0, 0.0, -0.0]])
    out = np.zeros(4)
    k[1, 1](a, out)
    with np.errstate(all="ignore"):
        exp = [getattr(np, name)(v) for v in (a[::-1], a[1:, ::2], a[:, 1], a[0])]
    np.testing.assert_allclose(out, exp, rtol=1e-14, equal_nan=True)


def test_methods_and_keywords(backend):
    @cuda.jit
    def k(a, b, out):
        out[0] = a.sum()
        out[1] = a.prod()
        out[2] = a.mean()
        out[3] = a.var()
        out[4] = a.std()
        out[5] = a.min()
        out[6] = a.max()
        out[7] = a.argmin()
        out[8] = a.argmax()
        out[9] = a.all()
        out[10] = a.any()
        out[11] = np.sum(b, dtype=np.float32)  # int8 elements summed as float32
        out[12] = np.var(a, ddof=1)
        out[13] = a.std(ddof=2)
        out[14] = np.sum(a, axis=None)
        out[15] = np.max(a[0], axis=0)
        out[16] = np.mean(b, dtype=np.float64)
        out[17] = np.amax(b)

    a = np.float64([[1.0, 2.5, -3.0], [4.0, 0.5, 6.0]])
    b = np.int8([100, 100, 100, -7])
    out = np.zeros(18)
    k[1, 1](a, b, out)
    exp = [a.sum(), a.prod(), a.mean(), a.var(), a.std(), a.min(), a.max(), a.argmin(),
           a.argmax(), a.all(), a.any(), np.sum(b, dtype=np.float32), np.var(a, ddof=1),
           a.std(ddof=2), a.sum(), a[0].max(), b.mean(dtype=np.float64), b.max()]
    np.testing.assert_allclose(out, exp, rtol=1e-14)


def test_result_types_are_numpy_s(cpu):
    def check(name, arg, expected):
        src = f"def f(a):\n    return np.{name}(a)\n"
        g = {"np": np}
        exec(compile(src, f"<type {name}>", "exec"), g)
        _, resty = cuda.compile_ptx(g["f"], (arg,), device=True)
        assert str(resty) == expected, (name, arg, resty)

    check("sum", types.int32[:], "int64")
    check("sum", types.uint8[:], "uint64")
    check("sum", types.boolean[:], "int64")
    check("sum", types.float32[:, :], "float32")
    check("prod", types.int16[:], "int64")
    check("mean", types.int32[:], "float64")
    check("mean", types.float32[:], "float32")
    check("mean", types.float16[:], "float16")
    check("var", types.complex64[:], "float32")
    check("std", types.int8[:], "float64")
    check("min", types.uint16[:], "uint16")
    check("nanmax", types.float32[:], "float32")
    check("argmin", types.float64[:, :], "int64")
    check("count_nonzero", types.boolean[:], "int64")
    check("all", types.float64[:], "bool")
    check("nanmean", types.int64[:], "float64")
    check("nansum", types.int8[:], "int64")


def test_nan_and_empty_semantics(backend):
    @cuda.jit
    def k(e, allnan, out):
        out[0] = np.sum(e)
        out[1] = np.prod(e)
        out[2] = np.mean(e)
        out[3] = np.nansum(allnan)
        out[4] = np.nanprod(allnan)
        out[5] = np.nanmean(allnan)
        out[6] = np.nanmin(allnan)
        out[7] = np.nanmax(allnan)
        out[8] = np.all(e)
        out[9] = np.any(e)
        out[10] = np.count_nonzero(e)
        out[11] = np.var(e)
        out[12] = np.nanvar(allnan)
        out[13] = np.min(allnan)

    out = np.zeros(14)
    k[1, 1](np.zeros(0), np.float64([NAN, NAN, NAN]), out)
    np.testing.assert_array_equal(out, [0, 1, NAN, 0, 1, NAN, NAN, NAN, 1, 0, 0, NAN, NAN, NAN])


def test_min_max_ties_and_signed_zeros_match_numpy(backend):
    @cuda.jit
    def k(a, out):
        out[0] = np.min(a)
        out[1] = np.max(a)
        out[2] = np.nanmin(a)
        out[3] = np.nanmax(a)

    for arr in ([-0.0, 0.0], [0.0, -0.0], [1.0, -0.0, 0.0], [NAN, 0.0, -0.0]):
        a = np.array(arr)
        out = np.zeros(4)
        k[1, 1](a, out)
        with np.errstate(all="ignore"):
            exp = np.array([np.min(a), np.max(a), np.nanmin(a), np.nanmax(a)])
        np.testing.assert_array_equal(np.signbit(out), np.signbit(exp), err_msg=str(arr))
        np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("name,message", [
    ("min", "zero-size array to reduction operation minimum which has no identity"),
    ("max", "zero-size array to reduction operation maximum which has no identity"),
    ("nanmin", "zero-size array to reduction operation fmin which has no identity"),
    ("argmax", "attempt to get argmax of an empty sequence"),
])
def test_empty_min_max_raise_value_error_with_debug(backend, name, message):
    src = f"def k(a, out):\n    out[0] = np.{name}(a)\n"
    g = {"np": np}
    exec(compile(src, f"<empty {name}>", "exec"), g)
    k = cuda.jit(debug=True, opt=False)(g["k"])
    with pytest.raises(ValueError, match=message):
        k[1, 1](np.zeros(0), np.zeros(1))
    out = np.full(1, 5.0)
    cuda.jit(g["k"])[1, 1](np.zeros(0), out)  # without debug the thread just ends
    assert out[0] == 5.0


def test_reductions_of_frozen_globals_and_numpy_function_values(backend):
    glob = np.float64([[3.0, -1.0], [2.0, 8.0]])
    npmax = np.max  # a NumPy function held in a variable of the enclosing scope

    @cuda.jit
    def k(out):
        out[0] = glob.sum()
        out[1] = npmax(glob)
        out[2] = np.argmin(glob)

    out = np.zeros(3)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [12.0, 8.0, 1.0])


def test_bad_reduction_calls_are_typing_errors(cpu):
    @cuda.jit
    def axis(a, out):
        out[0] = np.sum(a, axis=1)

    with pytest.raises(errors.TypingError, match="cannot allocate"):
        axis[1, 1](np.zeros((2, 2)), np.zeros(1))

    @cuda.jit
    def scalar(x, out):
        out[0] = np.sum(x)

    with pytest.raises(errors.TypingError,
                       match="numpy.sum cannot be called with .*it takes an array in kernels, not float64"):
        scalar[1, 1](1.5, np.zeros(1))

    @cuda.jit
    def ptp_bool(a, out):
        out[0] = np.ptp(a)

    with pytest.raises(errors.TypingError, match="ptp of booleans"):
        ptp_bool[1, 1](np.zeros(2, dtype=np.bool_), np.zeros(1))

    @cuda.jit
    def dtype_var(a, out, dt):
        out[0] = np.sum(a, dtype=dt)

    with pytest.raises(errors.TypingError, match="dtype must be a compile-time number type"):
        dtype_var[1, 1](np.zeros(2), np.zeros(1), 3)


def _builtin_min_max(a, b, o):
    o[0] = min(a)
    o[1] = max(a)
    o[2] = max(a[1:])  # a view
    o[3] = min(b)


@pytest.mark.parametrize("values", [[3.0, math.nan, -1.0, 5.0], [math.nan, 1.0, -2.0],
                                    [2.0, 2.0, -0.0, 0.0]])
def test_builtin_min_max_of_a_1d_array_iterate_as_python(backend, values):
    # Python's semantics, not NumPy's: the first of equal values wins, a NaN only when first
    a = np.array(values)
    b = np.array([4, 2, 9], np.int32)
    o = np.zeros(4)
    cuda.jit(_builtin_min_max)[1, 1](a, b, o)
    expected = [min(values), max(values), max(values[1:]), 2]
    assert [repr(float(x)) for x in o] == [repr(float(x)) for x in expected]


def _min_of(a, o):
    o[0] = min(a)


def test_builtin_min_max_of_arrays_errors(cpu):
    with pytest.raises(ValueError, match=r"min\(\) arg is an empty sequence"):
        cuda.jit(debug=True, opt=False)(_min_of)[1, 1](np.zeros(0), np.zeros(1))
    with pytest.raises(errors.TypingError,
                       match=r"min cannot be called with \(array\(float64, 2d, C\)\)"):
        cuda.jit(_min_of)[1, 1](np.zeros((2, 2)), np.zeros(1))
    with pytest.raises(errors.TypingError, match=r"min cannot be called with \(array\(complex128"):
        cuda.jit(_min_of)[1, 1](np.zeros(2, np.complex128), np.zeros(1))


def _range_min_max(out, n, s):
    out[0] = min(range(n))
    out[1] = max(range(n))
    out[2] = min(range(3, n, s))
    out[3] = max(range(3, n, s))
    out[4] = max(range(n, -7, -3))
    out[5] = min(range(n, -7, -3))


def _min_of_range(o, n):
    o[0] = min(range(5, n))


@pytest.mark.parametrize("n,s", [(10, 2), (11, 4), (4, 9)])
def test_builtin_min_max_of_a_range(backend, n, s):
    # the first or last element by the step's sign, as iterating the range finds them
    o = np.zeros(6, np.int64)
    cuda.jit(_range_min_max)[1, 1](o, n, s)
    assert o.tolist() == [min(range(n)), max(range(n)), min(range(3, n, s)),
                          max(range(3, n, s)), max(range(n, -7, -3)), min(range(n, -7, -3))]


def test_builtin_min_max_of_an_empty_range_raises(cpu):
    with pytest.raises(ValueError, match=r"min\(\) arg is an empty sequence"):
        cuda.jit(debug=True, opt=False)(_min_of_range)[1, 1](np.zeros(1, np.int64), 5)
