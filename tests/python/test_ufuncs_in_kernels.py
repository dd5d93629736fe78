"""NumPy ufuncs called in kernels and device functions (`np.sin(x, out)`, `np.add(a, b, out=c)`,
`np.equal(i, j)`), against NumPy: the loop tables, loop selection (integer inputs of float
ufuncs, Python scalars, output casting), broadcasting over 1-3 d outputs in C, F and strided
layouts, out=, the value of the call, the ufuncs that are not math functions (comparisons,
logical, min/max, bitwise, arithmetic), numba-cuda's test_ufuncs.py matrix, and the errors."""
import itertools
import operator
import warnings

import numpy as np
import pytest

from ptxjit import _core, cuda, errors, types

NP_VERSION = tuple(int(p) for p in np.__version__.split(".")[:2])

# NumPy type characters ptxjit has ('l'/'L' are C long: int64/uint64 on Linux, as 'q'/'Q').
SUPPORTED_CHARS = set("?bBhHiIlLqQefdFD")


def normalized_loops(ufunc):
    """NumPy's loops of `ufunc` over ptxjit's types, l/L spelled q/Q, each once."""
    out = []
    for t in ufunc.types:
        if not set(t.replace("->", "")) <= SUPPORTED_CHARS:
            continue
        t = t.replace("l", "q").replace("L", "Q")
        if t not in out:
            out.append(t)
    return out


COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def test_loop_tables_are_numpys():
    """ir/typing/NumpyUfuncs.def holds NumPy's own loop lists (over ptxjit's types), in NumPy's
    order, which decides the loop a call takes. The comparisons also have NumPy 1.25's exact
    int64/uint64 loops right after QQ->?, as NumPy >= 1.25 does."""
    table = _core._numpy_ufunc_loops()
    assert len(table) >= 60
    for name, loops in table.items():
        expected = normalized_loops(getattr(np, name))
        if name in COMPARISONS:
            i = loops.index("QQ->?")
            assert loops[i + 1:i + 3] == ["qQ->?", "Qq->?"], name
            if NP_VERSION < (1, 25):  # older NumPy computes int64 with uint64 in float64
                loops = [l for l in loops if l not in ("qQ->?", "Qq->?")]
        if name in ("floor", "ceil", "trunc") and "b->b" not in getattr(np, name).types:
            loops = [l for l in loops if l[0] in "efd"]  # NumPy 2 added integer loops
        assert loops == expected, name


# --------------------------------------------------------------------------------------------
# numba-cuda's tests/cudapy/test_ufuncs.py, ported: `np.<ufunc>(a0, ..., out)` with a scalar or
# an array input and an output array, compared with NumPy.
# --------------------------------------------------------------------------------------------

def _make_usecase(ufunc):
    args = ",".join(f"a{i}" for i in range(ufunc.nargs))
    ns = {}
    exec(f"def fn({args}):\n    np.{ufunc.__name__}({args})", {"np": np}, ns)
    return ns["fn"]


SCALARS = [np.uint8(1), np.int8(-1), np.uint16(1), np.int16(-1), np.uint32(1), np.int32(-1),
           np.uint64(1), np.int64(-1), np.float32(-0.5), np.float64(0.5),
           np.complex64(-0.5 - 0.5j), np.complex128(0.5 + 0.5j)]
ARRAYS = [np.array([0, 1], dtype=d) for d in ("u1", "i1", "u2", "i2", "u4", "u8")] + [
    np.array([-1, 0, 1], dtype="i4"), np.array([-1, 0, 1], dtype="i8"),
    np.array([-0.5, 0.0, 0.5], dtype="f4"), np.array([-0.5, 0.0, 0.5], dtype="f8"),
    np.array([-0.5 - 0.5j, 0.0, 0.5 + 0.5j], dtype="c8"),
    np.array([-0.5 - 0.5j, 0.0, 0.5 + 0.5j], dtype="c16"),
    np.linspace(0, 1).reshape((5, -1)),
    np.linspace(0, 1).reshape((2, 5, -1)),
    np.linspace(0, 1 + 1j).reshape(5, -1),
    np.asfortranarray(np.linspace(0, 1).reshape((5, -1))),
]


def _ptx_type(value):
    if isinstance(value, np.ndarray):
        layout = "C" if value.flags.c_contiguous else "F"
        return types.Array(getattr(types, value.dtype.name), value.ndim, layout)
    return getattr(types, value.dtype.name)


def _basic_ufunc_test(ufunc, kinds="ifc", ints_only=False):
    pyfunc = _make_usecase(ufunc)
    kernels = {}
    for operand in SCALARS + ARRAYS:
        if operand.dtype.kind not in kinds or (ints_only and operand.dtype.kind != "i"
                                               and operand.dtype.kind != "u"):
            continue
        args = (operand,) * ufunc.nin
        shape = operand.shape if isinstance(operand, np.ndarray) else (1,)
        # numba's rule: the output has the input's dtype (and ndim).
        out_type = types.Array(getattr(types, operand.dtype.name), len(shape), "C")
        argtys = (_ptx_type(operand),) * ufunc.nin + (out_type,)
        if str(argtys) not in kernels:
            kernels[str(argtys)] = cuda.jit(argtys)(pyfunc)
        kernel = kernels[str(argtys)]
        result = np.zeros(shape, dtype=operand.dtype)
        expected = np.zeros(shape, dtype=operand.dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            pyfunc(*args, expected)
        kernel[1, 1](*args, result)
        np.testing.assert_array_almost_equal(expected, result, decimal=5,
                                             err_msg=f"{ufunc.__name__}{argtys}")


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
                                  "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "log",
                                  "log2", "log10"])
def test_numba_float_and_complex_ufuncs(name, backend):
    _basic_ufunc_test(getattr(np, name), kinds="cf")


@pytest.mark.parametrize("name", ["arctan2", "hypot", "deg2rad", "rad2deg", "degrees",
                                  "radians"])
def test_numba_float_ufuncs(name, backend):
    _basic_ufunc_test(getattr(np, name), kinds="f")


@pytest.mark.parametrize("name", COMPARISONS + ["logical_and", "logical_or", "logical_xor",
                                                "logical_not", "maximum", "minimum", "fmax",
                                                "fmin"])
def test_numba_ufuncs_of_every_kind(name, backend):
    _basic_ufunc_test(getattr(np, name))


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "invert",
                                  "bitwise_not"])
def test_numba_bitwise_ufuncs(name, backend):
    _basic_ufunc_test(getattr(np, name), ints_only=True)


@pytest.mark.parametrize("name", COMPARISONS)
def test_signed_unsigned_comparisons_are_exact(name, backend):
    """int64 with uint64 compares the mathematical values (NumPy >= 1.25's loops), also where
    float64 would round: 2**63 - 1 against 2**63, -1 against 2**64 - 1."""
    op = {"equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
          "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge}[name]
    pyfunc = _make_usecase(getattr(np, name))
    i64 = [-2**63, -1, 0, 1, 2**62, 2**63 - 1]
    u64 = [0, 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1]
    for a_vals, b_vals in ((i64, u64), (u64, i64)):
        a = np.array([x for x in a_vals for _ in b_vals], dtype="i8" if a_vals is i64 else "u8")
        b = np.array([y for _ in a_vals for y in b_vals], dtype="u8" if a_vals is i64 else "i8")
        out = np.zeros(a.shape, dtype=np.bool_)
        cuda.jit(pyfunc)[1, 1](a, b, out)
        expected = [op(int(x), int(y)) for x, y in zip(a, b)]
        assert out.tolist() == expected
        # Scalars too (the int64/uint64 kernel argument types).
        k = cuda.jit((_ptx_type(a[0]), _ptx_type(b[0]), types.bool_[::1]))(pyfunc)
        one = np.zeros(1, dtype=np.bool_)
        for x, y in zip(a[:12], b[:12]):
            k[1, 1](x, y, one)
            assert one[0] == op(int(x), int(y)), (name, x, y)


# --------------------------------------------------------------------------------------------
# Loop selection, output casting, Python scalars
# --------------------------------------------------------------------------------------------

@cuda.jit
def sin_out(x, out):
    np.sin(x, out)


@cuda.jit
def add_out_kw(a, b, out):
    np.add(a, b, out=out)


def test_integer_inputs_of_float_ufuncs_use_numpys_loop(backend):
    """np.sin(int32) computes in float64 (the first loop int32 casts to safely); int16 and
    uint16 in float32, int8 and uint8 in float16, as NumPy (Numba computes int8 in float32)."""
    x = np.arange(-5, 6, dtype=np.int32)
    out = np.zeros(x.shape)
    sin_out[1, 1](x, out)
    # float64 accuracy (libm's sin, which may differ from NumPy's own by an ulp or two)
    assert np.allclose(out, np.sin(x.astype(np.float64)), rtol=1e-15, atol=0)
    assert not np.array_equal(out.astype(np.float32).astype(np.float64), out)
    for dt, ft, tol in ((np.int16, np.float32, 1e-6), (np.uint16, np.float32, 1e-6),
                        (np.int8, np.float16, 1e-3), (np.uint8, np.float16, 1e-3)):
        x = np.arange(0, 100, 7).astype(dt)
        out = np.zeros(x.shape)
        sin_out[1, 1](x, out)
        # computed in `ft`: every value is an `ft` rounding, within its accuracy
        assert np.array_equal(out.astype(ft).astype(np.float64), out)
        assert np.allclose(out, np.sin(x.astype(np.float64)), rtol=tol, atol=tol)
        assert not np.array_equal(out, np.sin(x.astype(np.float64)))


def test_out_casts_same_kind(backend):
    """The loop's result is cast to the output's dtype: float64 into float32, int64 into int8
    (wrapping), bool into float64, as NumPy's out= does under 'same_kind'."""
    a = np.linspace(0, 3, 7)
    out32 = np.zeros(7, np.float32)
    sin_out[1, 1](a, out32)
    assert np.array_equal(out32, np.sin(a).astype(np.float32))
    i = np.array([100, 200, 300], np.int64)
    out8 = np.zeros(3, np.int8)
    add_out_kw[1, 1](i, i, out8)
    assert np.array_equal(out8, np.add(i, i, out=np.zeros(3, np.int8), casting="same_kind"))

    @cuda.jit
    def less_f(a, b, out):
        np.less(a, b, out)

    outf = np.full(4, 7.0)
    less_f[1, 1](np.arange(4.0), np.full(4, 1.5), outf)
    assert outf.tolist() == [1.0, 1.0, 0.0, 0.0]


def test_mixed_input_types_and_python_scalars(backend):
    """Mixed dtypes take NumPy's loop (int8 with float32: float32); Python scalars are weak
    (NEP 50): float32 array + 0.1 stays float32, int32 array * 2.5 is float64."""
    a = np.arange(5, dtype=np.int8)
    b = np.linspace(0, 1, 5, dtype=np.float32)
    out = np.zeros(5)
    add_out_kw[1, 1](a, b, out)
    assert np.array_equal(out, (a.astype(np.float32) + b).astype(np.float64))

    @cuda.jit
    def add_tenth(x, out):
        np.add(x, 0.1, out)

    @cuda.jit
    def times(x, out):
        np.multiply(x, 2.5, out=out)

    x = np.linspace(0, 1, 5, dtype=np.float32)
    add_tenth[1, 1](x, out)
    assert np.array_equal(out, (x + np.float32(0.1)).astype(np.float64))
    i = np.arange(5, dtype=np.int32)
    times[1, 1](i, out)
    assert np.array_equal(out, i * 2.5)
    # Python scalar kernel arguments are weak too.
    add_out_kw[1, 1](x, 0.1, out)
    assert np.array_equal(out, (x + np.float32(0.1)).astype(np.float64))


def test_true_divide_of_integers_is_float64(backend):
    """NumPy divides integers in float64 (not in the first float loop int8 casts to)."""

    @cuda.jit
    def div(a, b, out):
        np.divide(a, b, out)

    a = np.array([1, 7, -7], np.int8)
    b = np.array([3, 2, 2], np.int8)
    out = np.zeros(3)
    div[1, 1](a, b, out)
    assert np.array_equal(out, a / b)
    assert out[0] != np.float32(1) / np.float32(3)


# --------------------------------------------------------------------------------------------
# Broadcasting, layouts, the value of the call
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shapes", [((3,), (3,), (3,)), ((2, 3), (3,), (2, 3)),
                                    ((3, 1), (1, 4), (3, 4)), ((2, 3, 4), (3, 1), (2, 3, 4)),
                                    ((4,), (), (2, 3, 4)), ((1, 1), (2, 1, 5), (2, 3, 5))])
def test_broadcasting_and_layouts(shapes, order, backend):
    sa, sb, so = shapes
    rng = np.random.default_rng(1)
    a = np.asarray(rng.standard_normal(sa), order=order)
    b = np.float32(1.5) if sb == () else np.asarray(rng.standard_normal(sb), order=order)
    out = np.zeros(so, order=order)
    add_out_kw[1, 1](a, b, out)
    assert np.array_equal(out, np.add(a, b, out=np.zeros(so)))
    out = np.zeros(so, order=order)

    @cuda.jit
    def hyp(a, b, out):
        np.hypot(a, b, out)

    hyp[1, 1](a, b, out)
    assert np.allclose(out, np.hypot(a, b) * np.ones(so), rtol=1e-15)


def test_strided_views_made_in_kernels(backend):
    """Views (layout A) as inputs and output: every other element, a reversed row, a column."""

    @cuda.jit
    def k(x, out):
        np.cos(x[::2, ::-1], out[1::2, 1:7])
        np.negative(x[:, 1], out=out[0, :4])

    x = np.arange(24.0).reshape(4, 6)
    out = np.zeros((4, 8))
    k[1, 1](x, out)
    expected = np.zeros((4, 8))
    np.cos(x[::2, ::-1], expected[1::2, 1:7])
    np.negative(x[:, 1], out=expected[0, :4])
    assert np.allclose(out, expected, rtol=1e-15)


def test_the_call_returns_the_output_array(backend):
    @cuda.jit
    def k(x, out):
        r = np.sqrt(x, out=out)
        r[0] = -1.0
        s = np.multiply(r, 2.0, r)
        out[1] += s.shape[0]

    x = np.array([4.0, 9.0, 16.0])
    out = np.zeros(3)
    k[1, 1](x, out)
    assert out.tolist() == [-2.0, 9.0, 8.0]


def test_scalar_inputs_fill_the_output(backend):
    @cuda.jit
    def k(v, out):
        np.exp(v, out)
        np.maximum(v, 2, out[0])

    out = np.zeros((2, 3), np.float32)
    k[1, 1](np.float32(1.0), out)
    assert out[0].tolist() == [2.0] * 3
    assert out.dtype == np.float32
    assert np.allclose(out[1], np.exp(np.float32(1.0)), rtol=2e-7, atol=0)


def test_in_device_functions(backend):
    @cuda.jit(device=True)
    def scaled_log(x, out):
        return np.log(np.multiply(x, 2.0, out), out)

    @cuda.jit
    def k(x, out):
        r = scaled_log(x, out)
        r[0] = 42.0

    x = np.array([1.0, 2.0, 3.0])
    out = np.zeros(3)
    k[1, 1](x, out)
    assert out[0] == 42.0
    assert np.allclose(out[1:], np.log(2 * x[1:]), rtol=1e-15)


def test_local_array_as_a_temporary(backend):
    """A cuda.local.array holds an intermediate result (a kernel cannot allocate one)."""

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            tmp = cuda.local.array(4, np.float32)
            np.multiply(x[i], 0.5, tmp)
            np.add(tmp, x[i], out[i])

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros((3, 4), np.float32)
    k[1, 3](x, out)
    assert np.array_equal(out, x * np.float32(1.5))


def test_mismatched_shapes_compute_the_overlap(backend):
    """NumPy raises ValueError; a kernel computes where every operand has elements and leaves
    the rest of the output as it was (docs/language.md)."""
    a = np.arange(5.0)
    b = np.arange(3.0)
    out = np.full(5, -1.0)
    add_out_kw[1, 1](a, b, out)
    assert out.tolist() == [0.0, 2.0, 4.0, -1.0, -1.0]
    out2 = np.full((2, 4), -1.0)
    add_out_kw[1, 1](np.ones((2, 3)), np.ones(3), out2)
    assert out2.tolist() == [[2.0, 2.0, 2.0, -1.0]] * 2


def test_shifted_in_place_calls_match_numpy(backend):
    @cuda.jit
    def up(a):
        np.add(a[:-1], 1.0, a[1:])

    @cuda.jit
    def down(a):
        np.add(a[1:], 1.0, a[:-1])

    @cuda.jit
    def same(a):
        np.sin(a, a)

    for k, f in ((up, lambda a: np.add(a[:-1], 1.0, a[1:])),
                 (down, lambda a: np.add(a[1:], 1.0, a[:-1])), (same, lambda a: np.sin(a, a))):
        a = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
        e = a.copy()
        f(e)
        k[1, 1](a)
        assert np.allclose(a, e, rtol=1e-15, atol=0)


# --------------------------------------------------------------------------------------------
# The ufuncs that are not math functions, on scalars (results typed by NumPy's loops)
# --------------------------------------------------------------------------------------------

NAN = float("nan")


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_min_max_nan_semantics(name, backend):
    """maximum/minimum propagate nan, fmax/fmin ignore it; complex numbers order by real part,
    then imaginary part, and a nan in either part counts as nan (NumPy's loops)."""
    f = getattr(np, name)
    code = f"def k(a, b, out):\n    out[0] = np.{name}(a[0], b[0])\n"
    ns = {}
    exec(code, {"np": np}, ns)
    kernel = cuda.jit(ns["k"])
    reals = [1.0, -2.0, NAN, 0.5]
    for x, y in itertools.product(reals, reals):
        for dt in (np.float32, np.float64):
            out = np.zeros(1, dt)
            kernel[1, 1](np.array([x], dt), np.array([y], dt), out)
            np.testing.assert_equal(out[0], f(dt(x), dt(y)))
    cplx = [1 + 1j, 1 + 2j, 2 - 1j, complex(NAN, 0), complex(0, NAN), complex(1, NAN)]
    for x, y in itertools.product(cplx, cplx):
        out = np.zeros(1, np.complex128)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = f(np.complex128(x), np.complex128(y))
        kernel[1, 1](np.array([x]), np.array([y]), out)
        np.testing.assert_equal(out[0], expected, err_msg=f"{name}({x}, {y})")
    for x, y in itertools.product([-3, 0, 7, 2**63 - 1], [-3, 0, 7]):
        out = np.zeros(1, np.int64)
        kernel[1, 1](np.array([x]), np.array([y]), out)
        assert out[0] == f(np.int64(x), np.int64(y))
    out = np.zeros(1, np.uint64)
    kernel[1, 1](np.array([2**64 - 1], np.uint64), np.array([1], np.uint64), out)
    assert out[0] == f(np.uint64(2**64 - 1), np.uint64(1))


def test_scalar_calls_take_numpys_result_types(backend):
    """On scalars these ufuncs give NumPy's loop output: bool for comparisons and logical ones,
    the promoted type for maximum (int8 with uint8: int16), float64 for true_divide of ints."""

    @cuda.jit
    def k(i8, u8, f4, out_b, out_i, out_f):
        out_b[0] = np.equal(i8, u8)
        out_b[1] = np.logical_xor(i8, f4)
        out_b[2] = np.logical_not(f4)
        out_b[3] = np.greater_equal(f4, 0.5)
        out_i[0] = np.maximum(i8, u8)
        out_i[1] = np.bitwise_and(u8, 0x0F)
        out_i[2] = np.invert(i8)
        out_i[3] = np.floor_divide(i8, 2)
        out_i[4] = np.remainder(i8, 3)
        out_i[5] = np.subtract(u8, 1)
        out_f[0] = np.true_divide(i8, 2)
        out_f[1] = np.negative(f4)
        out_f[2] = np.add(f4, 0.25)
        out_f[3] = np.fmod(i8, 3)

    ob, oi, of = np.zeros(4, bool), np.zeros(6, np.int64), np.zeros(4)
    i8, u8, f4 = np.int8(-7), np.uint8(200), np.float32(0.5)
    k[1, 1](i8, u8, f4, ob, oi, of)
    assert ob.tolist() == [False, False, False, True]
    assert oi.tolist() == [200, 8, 6, -4, 2, 199]
    assert of.tolist() == [-3.5, -0.5, 0.75, -1.0]
    def maximum(a, b):
        return np.maximum(a, b)

    def equal(a, b):
        return np.equal(a, b)

    def true_divide(a, b):
        return np.true_divide(a, b)

    def add(a, b):
        return np.add(a, b)

    def bitwise_xor(a, b):
        return np.bitwise_xor(a, b)

    for f, expected in ((maximum, "int16"), (equal, "bool"), (true_divide, "float64"),
                        (add, "int16"), (bitwise_xor, "int16")):
        assert str(cuda.compile_ptx(f, (types.int8, types.uint8), device=True)[1]) == expected


def test_bool_loops(backend):
    @cuda.jit
    def k(a, b, out):
        out[0, :] = np.add(a, b, out[0, :])
        np.multiply(a, b, out[1, :])
        np.bitwise_xor(a, b, out[2, :])
        np.invert(a, out[3, :])
        np.maximum(a, b, out[4, :])
        np.minimum(a, b, out[5, :])
        np.logical_or(a, b, out[6, :])
        np.absolute(a, out[7, :])

    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    out = np.zeros((8, 4), bool)
    k[1, 1](a, b, out)
    expected = [np.add(a, b), np.multiply(a, b), np.bitwise_xor(a, b), np.invert(a),
                np.maximum(a, b), np.minimum(a, b), np.logical_or(a, b), np.absolute(a)]
    assert out.tolist() == [e.tolist() for e in expected]


def test_complex_comparisons_and_logical_ufuncs(backend):
    @cuda.jit
    def k(a, b, out):
        np.less(a, b, out[0])
        np.less_equal(a, b, out[1])
        np.greater(a, b, out[2])
        np.greater_equal(a, b, out[3])
        np.equal(a, b, out[4])
        np.not_equal(a, b, out[5])
        np.logical_and(a, b, out[6])
        np.logical_not(a, out[7])

    vals = [0j, 1 + 1j, 1 + 2j, 2 - 1j, complex(NAN, 0), complex(1, NAN), 1j]
    pairs = list(itertools.product(vals, vals))
    a = np.array([p[0] for p in pairs], np.complex64)
    b = np.array([p[1] for p in pairs], np.complex64)
    out = np.zeros((8, len(pairs)), bool)
    k[1, 1](a, b, out)
    fs = [np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
          np.logical_and]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for row, f in zip(out, fs):
            assert row.tolist() == f(a, b).tolist(), f.__name__
        assert out[7].tolist() == np.logical_not(a).tolist()


def test_math_ufuncs_with_complex_and_integer_loops(backend):
    """Complex loops of the math ufuncs (sqrt, exp, expm1, log1p, exp2, rint, power, absolute),
    integer loops (power, fmod, absolute, isnan/isinf/isfinite), on arrays."""

    @cuda.jit
    def k(z, out):
        np.sqrt(z, out[0])
        np.exp(z, out[1])
        np.expm1(z, out[2])
        np.log1p(z, out[3])
        np.exp2(z, out[4])
        np.rint(z, out[5])
        np.power(z, z, out[6])
        np.absolute(z, out[7])

    z = np.array([0.5 + 0.25j, -1.5 + 2j, 3 - 0.5j, 0.1j], np.complex128)
    out = np.zeros((8, 4), np.complex128)
    k[1, 1](z, out)
    expected = [np.sqrt(z), np.exp(z), np.expm1(z), np.log1p(z), np.exp2(z), np.rint(z),
                np.power(z, z), np.absolute(z)]
    for row, e in zip(out, expected):
        assert np.allclose(row, e, rtol=1e-13, atol=1e-15)

    @cuda.jit
    def ints(a, b, p, out, flags):
        np.power(a, p, out[0])
        np.fmod(a, b, out[1])
        np.absolute(a, out[2])
        np.isnan(a, flags[0])
        np.isinf(a, flags[1])
        np.isfinite(a, flags[2])

    a = np.array([-7, 7, 3, -2, 5], np.int32)
    b = np.array([3, -3, 0, 5, 0], np.int32)
    p = np.array([3, 2, 0, 5, 1], np.int32)
    out = np.zeros((3, 5), np.int32)
    flags = np.zeros((3, 5), bool)
    ints[1, 1](a, b, p, out, flags)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert out[0].tolist() == np.power(a, p).tolist()
        assert out[1].tolist() == np.fmod(a, b).tolist()  # by zero: 0, as NumPy
    assert out[2].tolist() == np.absolute(a).tolist()
    assert flags.tolist() == [[False] * 5, [False] * 5, [True] * 5]


def test_scalar_math_calls_keep_their_typing(backend, needs_libdevice):
    """Math functions on real scalars are typed as before (float64 for integers), and complex
    scalars now take NumPy's complex loops."""
    def sin(x):
        return np.sin(x)

    def absolute(x):
        return np.abs(x)

    for f, arg, expected in ((sin, types.int16, "float64"), (sin, types.float32, "float32"),
                             (sin, types.complex64, "complex64"),
                             (absolute, types.complex64, "float32")):
        assert str(cuda.compile_ptx(f, (arg,), device=True)[1]) == expected

    @cuda.jit
    def k(z, out):
        out[0] = np.log10(z[0])
        out[1] = np.arctanh(z[1])

    z = np.array([0.5 + 2j, 0.25 - 0.5j])
    out = np.zeros(2, np.complex128)
    k[1, 1](z, out)
    assert np.allclose(out, [np.log10(z[0]), np.arctanh(z[1])], rtol=1e-14)


def test_compiles_to_ptx(needs_libdevice):
    """The same calls compile for CUDA (libdevice's functions, NVPTX)."""

    def k(x, y, out):
        np.add(np.sin(x, out), y, out=out)
        np.less(x, y, out)

    ptx, _ = cuda.compile_ptx(k, (types.float32[:, ::1], types.float32[::1],
                                  types.float32[::1, :]))
    assert ".visible .entry" in ptx and "setp.lt.f32" in ptx

    def c(z, out):
        np.arctanh(z, out)
        np.maximum(z, z[0, 0], out)

    ptx, _ = cuda.compile_ptx(c, (types.complex64[:, :], types.complex64[:, ::1]))
    assert ".visible .entry" in ptx


# --------------------------------------------------------------------------------------------
# Errors: TypingError naming the call, the types and why, at the call's line
# --------------------------------------------------------------------------------------------

def _typing_error(func, *args):
    with pytest.raises(errors.TypingError) as e:
        cuda.jit(func)[1, 1](*args)
    return str(e.value)


def test_errors_name_the_call_types_and_line():
    x = np.zeros(3)

    def no_out(x):
        np.sin(x)

    msg = _typing_error(no_out, x)
    assert "numpy.sin cannot be called with (array(float64, 1d, C))" in msg
    assert "a kernel cannot allocate the result array" in msg
    assert "test_ufuncs_in_kernels.py" in msg and "np.sin(x)" in msg

    def int_out(x, out):
        np.sin(x, out)

    msg = _typing_error(int_out, np.zeros(3, np.int32), np.zeros(3, np.int32))
    assert "ufunc 'sin' output cannot be cast from float64 to int32 with casting rule " \
           "'same_kind'" in msg

    def bitwise_float(x, out):
        np.bitwise_and(x, x, out)

    msg = _typing_error(bitwise_float, x, x)
    assert "ufunc 'bitwise_and' is not supported for the input types (float64, float64)" in msg

    def too_many_dims(x, out):
        np.cos(x, out=out)

    msg = _typing_error(too_many_dims, np.zeros((2, 3)), np.zeros(3))
    assert "input 0 has 2 dimensions, more than the output array's 1" in msg

    def where(x, out):
        np.cos(x, out=out, where=x)

    assert "keyword argument 'where' is not supported" in _typing_error(where, x, x)

    def twice(x, out):
        np.cos(x, out, out=out)

    assert "cannot specify 'out' as both" in _typing_error(twice, x, x)

    def scalar_out(x):
        np.cos(x, 1.0)

    assert "the output must be an array, not" in _typing_error(scalar_out, x)

    def bool_sub(a, b, out):
        np.subtract(a, b, out)

    b = np.zeros(3, bool)
    assert "numpy boolean subtract is not supported" in _typing_error(bool_sub, b, b, b)

    def tuple_input(x, out):
        np.cos((1.0, 2.0), out)

    msg = _typing_error(tuple_input, x, x)
    assert "input 0 is UniTuple" in msg and "not a number or an array" in msg

    def read_only(x, out):
        np.cos(x, out)

    ro = np.zeros(3)
    ro.setflags(write=False)
    assert "is read-only" in _typing_error(read_only, x, ro)

    def wrong_arity(x, out):
        np.equal(x)

    assert "numpy.equal cannot be called with (array(float64, 1d, C))" in \
        _typing_error(wrong_arity, x, x)


def test_floor_ceil_trunc_keep_integers_as_numpy2(backend):
    @cuda.jit
    def k(out, i, b, f, x, o):
        out[0] = np.floor(i)
        out[1] = np.ceil(b)
        out[2] = np.trunc(f)
        np.floor(x, o)

    out = np.zeros(3)
    x, o = np.array([-3, 4], np.int16), np.zeros(2, np.int16)
    k[1, 1](out, np.int32(-3), True, -2.5, x, o)
    np.testing.assert_array_equal(out, [-3, 1, -2])
    np.testing.assert_array_equal(o, x)
    ptx_type = cuda.compile_ptx(lambda v: np.floor(v), (types.int32,), device=True)[1]
    assert ptx_type == types.int32
