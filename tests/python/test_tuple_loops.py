"""Loops over tuples in kernels: run-time iteration of tuples whose elements share one type
(for, enumerate, zip), and unrolled loops (literal_unroll, tuples of elements of different
types), with global and closure tuples of arrays, NumPy scalars, types and device functions
frozen as numba freezes them; on both backends."""
import numpy as np
import pytest

import ptxjit
from ptxjit import cuda, errors

GLOBAL_ARRAYS = (np.arange(3.0), np.arange(6, dtype=np.int32).reshape(2, 3), np.array(7))
GLOBAL_NESTED = ((1, 2.5), (np.float32(1.5), (np.arange(4),)))


def test_literal_unroll_is_numba_cuda_s():
    assert ptxjit.literal_unroll is cuda.literal_unroll
    t = (1, "a")
    assert ptxjit.literal_unroll(t) is t  # the identity in Python, as numba's


def test_for_enumerate_zip_over_uniform_tuples(backend):
    tup = (1.0, 2.5, 3.0)
    t1 = (1, 2, 3)
    t2 = (4.5, 5.6, 6.7)

    @cuda.jit
    def k(a, n):
        for i, v in enumerate(tup):
            a[i] = v
        c = 0.0
        for i, j in zip(t1, t2):
            c += i + j
        a[3] = c
        s = 0
        for x in (n, n * 2, n * 3):  # a tuple built at run time
            s += x
        a[4] = s
        for i, (p, q) in enumerate(zip(t1, (3, 2, 1))):
            a[5 + i] = p * 10 + q

    a = np.zeros(8)
    k[1, 1](a, 4)
    c = 0.0
    for i, j in zip(t1, t2):
        c += i + j
    np.testing.assert_array_equal(a, [1.0, 2.5, 3.0, c, 24, 13, 22, 31])


def test_uniform_tuple_loop_with_break_and_runtime_values(backend):
    @cuda.jit
    def k(x, out):
        t = (x[0], x[1], x[2], x[3])
        n = 0
        for v in t:
            if v < 0:
                break
            out[n] = v
            n += 1
        out[4] = n

    out = np.zeros(5)
    k[1, 1](np.array([3.0, 4.0, -1.0, 5.0]), out)
    np.testing.assert_array_equal(out, [3.0, 4.0, 0.0, 0.0, 2.0])


def test_literal_unroll_over_closure_tuple_of_arrays(backend):
    cases = (
        np.float64([1.0, 2.0, 3.0]),
        np.float64([[1.0, 1.5], [4.0, -1.0]]),
        np.int32([5, 6, 7, 8])[::-1],
        np.array([True, False, True]),
        np.array(4.5),
        np.float64([]),
    )

    @cuda.jit
    def k(out):
        i = 0
        for a in ptxjit.literal_unroll(cases):
            out[i] = a.size + a.ndim * 100
            i += 1

    out = np.zeros(len(cases), dtype=np.int64)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [a.size + a.ndim * 100 for a in cases])


def test_unrolled_body_variables_take_each_element_s_type(backend):
    things = (np.int32([1, 2, 3]), np.float32([0.5, 0.25]), np.complex128([1 + 2j]))

    @cuda.jit
    def k(out):
        i = 0
        for a in cuda.literal_unroll(things):
            first = a[0]  # int32, float32, complex128: one variable per copy of the body
            total = first * 2
            out[i] = abs(total)
            i += 1

    out = np.zeros(3)
    k[1, 1](out)
    np.testing.assert_allclose(out, [2.0, 1.0, abs((1 + 2j) * 2)])


def test_heterogeneous_tuples_unroll_without_literal_unroll(backend):
    @cuda.jit
    def k(x, out):
        i = 0
        for v in (1, 2.5, np.float32(0.25), True):  # int64, float64, float32, bool
            out[i] = v
            i += 1
        for a in (x, x[::2], x.reshape(2, 2)):  # arrays of different layouts and ndims
            out[i] = a.sum()
            i += 1

    x = np.arange(4.0)
    out = np.zeros(7)
    k[1, 1](x, out)
    np.testing.assert_array_equal(out, [1, 2.5, 0.25, 1, 6.0, 2.0, 6.0])


def test_unroll_continue_break_else_and_empty(backend):
    @cuda.jit
    def k(out, stop):
        n = 0
        for v in ptxjit.literal_unroll((1, 2.5, 3, 4.5)):
            if v == 2.5:
                continue
            if v == stop:
                break
            out[n] = v
            n += 1
        else:
            out[7] = 99
        for v in ptxjit.literal_unroll(()):
            out[6] = v
        out[5] = n

    out = np.zeros(8)
    k[1, 1](out, 4.5)
    np.testing.assert_array_equal(out, [1, 3, 0, 0, 0, 2, 0, 0])
    out = np.zeros(8)
    k[1, 1](out, 100.0)
    np.testing.assert_array_equal(out, [1, 3, 4.5, 0, 0, 3, 0, 99])


def test_nested_unrolled_loops_and_tuples_of_tuples(backend):
    @cuda.jit
    def k(out):
        i = 0
        for pair in ptxjit.literal_unroll(GLOBAL_NESTED):
            for v in ptxjit.literal_unroll(pair):
                out[i] = i * 10
                i += 1
        out[i] = GLOBAL_NESTED[0][1]

    out = np.zeros(5)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [0, 10, 20, 30, 2.5])


def test_global_tuple_of_arrays_indexed_and_unpacked(backend):
    @cuda.jit
    def k(out):
        a, b, c = GLOBAL_ARRAYS
        out[0] = a[2]
        out[1] = b[1, 2]
        out[2] = c[()]
        out[3] = GLOBAL_ARRAYS[1].shape[1]
        out[4] = GLOBAL_NESTED[1][1][0][3] + GLOBAL_NESTED[1][0]

    out = np.zeros(5)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [2.0, 5.0, 7.0, 3.0, 4.5])


def test_tuple_of_device_functions_and_types(backend):
    @cuda.jit(device=True)
    def inc(x):
        return x + 1

    @cuda.jit(device=True)
    def dbl(x):
        return x * 2

    funcs = (inc, dbl, inc)
    dtypes = (np.int8, np.float32, np.uint16)

    @cuda.jit
    def k(out):
        x = 5
        for f in ptxjit.literal_unroll(funcs):
            x = f(x)
        out[0] = x
        i = 1
        for dt in ptxjit.literal_unroll(dtypes):
            out[i] = dt(300.75)
            i += 1

    out = np.zeros(4)
    k[1, 1](out)
    # float -> int conversions saturate in kernels (docs/language.md)
    np.testing.assert_array_equal(out, [13, 127, np.float32(300.75), 300])


def test_unrolled_strings_are_compile_time_constants(backend):
    ops = ("add", "mul", "sub")

    @cuda.jit
    def k(x, out):
        i = 0
        for op in ptxjit.literal_unroll(ops):
            if op == "add":
                out[i] = x[0] + x[1]
            elif op == "mul":
                out[i] = x[0] * x[1]
            else:
                out[i] = x[0] - x[1]
            i += 1

    out = np.zeros(3)
    k[1, 1](np.array([3.0, 4.0]), out)
    np.testing.assert_array_equal(out, [7.0, 12.0, -1.0])


def test_literal_unroll_in_device_function_over_argument_tuple(backend):
    @cuda.jit(device=True)
    def total(t):
        s = 0.0
        for a in ptxjit.literal_unroll(t):
            s += a.sum()
        return s

    @cuda.jit
    def k(x, y, out):
        out[0] = total((x, y, x[1:]))

    out = np.zeros(1)
    x = np.arange(4.0)
    y = np.arange(6, dtype=np.int16).reshape(2, 3)
    k[1, 1](x, y, out)
    assert out[0] == x.sum() + y.sum() + x[1:].sum()


def test_literal_unroll_of_non_tuple_is_the_identity(backend):
    @cuda.jit
    def k(x, out):
        for v in ptxjit.literal_unroll(x):
            out[0] += v
        for i in ptxjit.literal_unroll(range(3)):
            out[1] += i

    out = np.zeros(2)
    k[1, 1](np.arange(5.0), out)
    np.testing.assert_array_equal(out, [10.0, 3.0])


def test_heterogeneous_tuple_outside_a_for_loop_is_an_error(cpu):
    @cuda.jit
    def k(out):
        for i, v in enumerate((1, 2.5)):
            out[i] = v

    with pytest.raises(errors.TypingError, match="different types can only be iterated by a for"):
        k[1, 1](np.zeros(2))


def test_variable_read_after_unrolled_loop_is_the_last_element(backend):
    # Only the last copy's value reaches the read after the loop (ir/SplitVariables.h).
    @cuda.jit
    def k(x, out):
        for v in (x, 1.5):
            pass
        out[0] = v

    out = np.zeros(1)
    k[1, 1](np.zeros(2), out)
    assert out[0] == 1.5


def test_variable_read_after_unrolled_loop_with_break_must_unify(cpu):
    # A break leaves with any copy's value: those meet after the loop.
    @cuda.jit
    def k(x, out):
        for v in (x, 1.5):
            if x[0] > 0:
                break
        out[0] = v

    with pytest.raises(errors.TypingError, match="variable 'v' has incompatible types"):
        k[1, 1](np.zeros(2), np.zeros(1))


def test_unsupported_tuple_element_is_named(cpu):
    bad = (np.zeros(2), object())

    @cuda.jit
    def k(out):
        for a in ptxjit.literal_unroll(bad):
            out[0] = 1

    with pytest.raises(errors.TypingError, match="tuple whose element 1 is of type object"):
        k[1, 1](np.zeros(1))


def test_tuple_of_a_tuple_is_the_tuple(backend):
    # numba's tuple(): of a tuple (uniform or not, looped over or kept), and tuple() empty.
    @cuda.jit
    def k(x, out):
        t = tuple((x[0], x[1], x[2]))
        out[0] = t[0] + t[2]
        j = 1
        for v in tuple((1.5, 2, x[0])):
            out[j] = v
            j += 1
        for v in tuple((x[1], x[2])):
            out[j] = v
            j += 1
        out[j] = len(tuple())

    out = np.zeros(7)
    k[1, 1](np.array([1.0, 2.0, 3.0]), out)
    assert out.tolist() == [4.0, 1.5, 2.0, 1.0, 2.0, 3.0, 0.0]


def test_tuple_of_an_array_is_an_error(cpu):
    @cuda.jit
    def k(x):
        t = tuple(x)
        x[0] = t[0]

    with pytest.raises(errors.TypingError,
                       match=r"tuple cannot be called with \(array\(float64, 1d, C\)\)"):
        k[1, 1](np.zeros(2))
