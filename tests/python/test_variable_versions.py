"""A local may hold values of different types in different parts of a function, as numba's SSA
reconstruction allows (ir/SplitVariables.h; docs/language.md#variables): each assignment starts a
new version of the variable, and only the versions that meet at a use through a control-flow
merge (both branches of an if, a loop's back edge) must unify."""
import numpy as np
import pytest

import ptxjit
from ptxjit import cuda, errors, float64, int32, int64, types
from ptxjit._vector_types import vector_types


def test_straight_line_scalar_then_tuple(backend):
    @cuda.jit
    def k(out):
        x = 1.5
        out[0] = x
        x = (1, 2)
        out[1] = x[0] + x[1]

    out = np.zeros(2)
    k[1, 1](out)
    assert out.tolist() == [1.5, 3.0]


def test_straight_line_1d_then_2d_array(backend):
    @cuda.jit
    def k(a1, a2, out):
        t = a1
        out[0] = t[1]
        t = a2
        out[1] = t[1, 1] + t.shape[0]

    out = np.zeros(2)
    k[1, 1](np.array([5.0, 6.0]), np.arange(6.0).reshape(3, 2), out)
    assert out.tolist() == [6.0, 6.0]


def test_straight_line_float_then_int_keeps_each_type(backend):
    @cuda.jit
    def k(out):
        x = 7.5
        out[0] = x // 2
        x = 7
        out[1] = x // 2
        out[2] = x / 2

    out = np.zeros(3)
    k[1, 1](out)
    assert out.tolist() == [3.0, 3.0, 3.5]
    typemap = next(iter(k.overloads.values()))._type_annotation.typemap
    assert typemap["x"] == float64 and typemap["x.1"] == int64


def test_parameter_reassigned_with_another_type(backend):
    @cuda.jit
    def k(a, out):
        out[0] = a[0]
        a = (a[1], 10)
        out[1] = a[0] + a[1]

    out = np.zeros(2, np.int32)
    k[1, 1](np.array([3, 4], np.int32), out)
    assert out.tolist() == [3, 14]


def test_successive_loops_over_tuples_of_vectors(backend):
    # The loops of numba-cuda's test_fancy_creation_readout: one loop variable over 2-component
    # vectors, then over 3-component ones.
    @cuda.jit
    def k(res):
        a2 = cuda.int8x2(1, 2)
        b2 = cuda.int8x2(3, 4)
        a3 = cuda.int8x3(5, 6, 7)
        b3 = cuda.int8x3(8, 9, 10)
        j = 0
        for v in (a2, b2):
            res[j] = v.x + v.y
            j += 1
        for v in (a3, b3, a3):
            res[j] = v.z
            j += 1

    res = np.zeros(5, np.int8)
    k[1, 1](res)
    assert res.tolist() == [3, 7, 7, 10, 7]


def test_successive_loops_over_heterogeneous_tuples(backend):
    # Unrolled loops (elements of different types) after a run-time one, one loop variable.
    @cuda.jit
    def k(arr, out):
        j = 0
        for v in (1.5, 2.5):
            out[j] = v
            j += 1
        for v in (arr, (1, 2), (3, 4.5, 6)):
            out[j] = len(v) + v[1]
            j += 1

    out = np.zeros(5)
    k[1, 1](np.arange(3.0), out)
    assert out.tolist() == [1.5, 2.5, 4.0, 4.0, 7.5]


def test_retyped_in_a_loop_body_dead_at_the_head(backend):
    @cuda.jit
    def k(n, out, out2):
        for i in range(n):
            t = i * 2
            out[i] = t
            t = (t, 0.5)
            out2[i] = t[0] + t[1]

    out = np.zeros(3, np.int64)
    out2 = np.zeros(3)
    k[1, 1](3, out, out2)
    assert out.tolist() == [0, 2, 4] and out2.tolist() == [0.5, 2.5, 4.5]


def test_loop_carried_variable_unifies(backend):
    @cuda.jit
    def k(n, out):
        x = 0
        for i in range(n):
            x = x + 0.5
        out[0] = x

    out = np.zeros(1)
    k[1, 1](3, out)
    assert out[0] == 1.5
    assert next(iter(k.overloads.values()))._type_annotation.typemap["x"] == float64


def test_read_before_assigned_in_the_loop_joins_the_back_edge(backend):
    @cuda.jit
    def k(out):
        for i in range(4):
            if i > 0:
                out[i] = prev
            prev = i * 1.5

    out = np.zeros(4)
    k[1, 1](out)
    assert out.tolist() == [0.0, 0.0, 1.5, 3.0]


def test_merge_of_branches_unifies(backend):
    @cuda.jit
    def k(c, out):
        if c > 0:
            x = int32(1)
        else:
            x = 2.5
        out[0] = x

    out = np.zeros(1)
    k[1, 1](1, out)
    assert out[0] == 1.0
    k[1, 1](0, out)
    assert out[0] == 2.5
    typemap = next(iter(k.overloads.values()))._type_annotation.typemap
    assert typemap["x"] == float64 and "x.1" not in typemap


def test_merge_of_incompatible_types_is_refused(cpu):
    @cuda.jit
    def k(c, out):
        if c > 0:
            x = c
        else:
            x = (1, 2)
        out[0] = x

    with pytest.raises(errors.TypingError) as info:
        k[1, 1](1, np.zeros(1))
    msg = str(info.value)
    assert "variable 'x' has incompatible types int64 and UniTuple(int64 x 2)" in msg
    line = k.py_func.__code__.co_firstlineno + 5
    assert f"test_variable_versions.py:{line}" in msg and "x = (1, 2)" in msg


def test_versions_keep_constant_shapes(backend):
    # A local assigned once per version still gives a constant shape (ir/ConstantOf.h).
    @cuda.jit
    def k(out):
        n = 4
        loc = cuda.local.array(n, int32)
        for i in range(n):
            loc[i] = i
        out[0] = loc[3]
        n = 0.5
        out[1] = n

    out = np.zeros(2)
    k[1, 1](out)
    assert out.tolist() == [3.0, 0.5]


def test_type_annotation_lists_each_version(backend):
    @cuda.jit
    def k(a, out):
        x = a[0]
        out[0] = x
        x = (x, x)
        out[1] = x[1]

    k[1, 1](np.ones(1, np.int32), np.zeros(2))
    typemap = next(iter(k.overloads.values()))._type_annotation.typemap
    assert typemap["x"] == int32 and typemap["x.1"] == types.UniTuple(int32, 2)


# ---- numba-cuda's test_vector_type.py::TestCudaVectorType::test_fancy_creation_readout, ----
# ported: its kernel unchanged (BSD-2-Clause, numba-cuda), the vector types and base types
# taken from ptxjit (numba's `vector_types` table has `.name` and `.base_type`).


def make_fancy_creation_kernel(name, base_type):
    v1 = getattr(cuda, f"{name[:-1]}1")
    v2 = getattr(cuda, f"{name[:-1]}2")
    v3 = getattr(cuda, f"{name[:-1]}3")
    v4 = getattr(cuda, f"{name[:-1]}4")

    def kernel(res):
        one = base_type(1.0)
        two = base_type(2.0)
        three = base_type(3.0)
        four = base_type(4.0)

        j = 0  # index of the result array

        f1_1 = v1(one)  # 1
        f1_2 = v1(f1_1)  # 1

        res[0] = f1_1.x
        res[1] = f1_2.x
        j += 2

        f2_1 = v2(two, three)  # 2 3
        f2_2 = v2(f1_1, three)  # 1 3
        f2_3 = v2(two, f1_1)  # 2 1
        f2_4 = v2(f1_1, f1_1)  # 1 1
        f2_5 = v2(f2_1)  # 2 3

        for v in (f2_1, f2_2, f2_3, f2_4, f2_5):
            res[j] = v.x
            res[j + 1] = v.y
            j += 2

        f3_1 = v3(f2_1, one)  # 2 3 1
        f3_2 = v3(f2_1, f1_1)  # 2 3 1
        f3_3 = v3(one, f2_1)  # 1 2 3
        f3_4 = v3(f1_1, f2_1)  # 1 2 3

        f3_5 = v3(one, two, three)  # 1 2 3
        f3_6 = v3(f1_1, two, three)  # 1 2 3
        f3_7 = v3(one, f1_1, three)  # 1 1 3
        f3_8 = v3(one, two, f1_1)  # 1 2 1
        f3_9 = v3(f1_1, f1_1, three)  # 1 1 3
        f3_10 = v3(one, f1_1, f1_1)  # 1 1 1
        f3_11 = v3(f1_1, two, f1_1)  # 1 2 1
        f3_12 = v3(f1_1, f1_1, f1_1)  # 1 1 1

        f3_13 = v3(f3_1)  # 2 3 1

        for v in (f3_1, f3_2, f3_3, f3_4, f3_5, f3_6, f3_7, f3_8, f3_9, f3_10, f3_11, f3_12,
                  f3_13):
            res[j] = v.x
            res[j + 1] = v.y
            res[j + 2] = v.z
            j += 3

        f4_1 = v4(one, two, three, four)  # 1 2 3 4
        f4_2 = v4(f1_1, two, three, four)  # 1 2 3 4
        f4_3 = v4(one, f1_1, three, four)  # 1 1 3 4
        f4_4 = v4(one, two, f1_1, four)  # 1 2 1 4
        f4_5 = v4(one, two, three, f1_1)  # 1 2 3 1
        f4_6 = v4(f1_1, f1_1, three, four)  # 1 1 3 4
        f4_7 = v4(f1_1, two, f1_1, four)  # 1 2 1 4
        f4_8 = v4(f1_1, two, three, f1_1)  # 1 2 3 1
        f4_9 = v4(one, f1_1, f1_1, four)  # 1 1 1 4
        f4_10 = v4(one, f1_1, three, f1_1)  # 1 1 3 1
        f4_11 = v4(one, two, f1_1, f1_1)  # 1 2 1 1
        f4_12 = v4(f1_1, f1_1, f1_1, four)  # 1 1 1 4
        f4_13 = v4(f1_1, f1_1, three, f1_1)  # 1 1 3 1
        f4_14 = v4(f1_1, two, f1_1, f1_1)  # 1 2 1 1
        f4_15 = v4(one, f1_1, f1_1, f1_1)  # 1 1 1 1
        f4_16 = v4(f1_1, f1_1, f1_1, f1_1)  # 1 1 1 1

        f4_17 = v4(f2_1, two, three)  # 2 3 2 3
        f4_18 = v4(f2_1, f1_1, three)  # 2 3 1 3
        f4_19 = v4(f2_1, two, f1_1)  # 2 3 2 1
        f4_20 = v4(f2_1, f1_1, f1_1)  # 2 3 1 1
        f4_21 = v4(one, f2_1, three)  # 1 2 3 3
        f4_22 = v4(f1_1, f2_1, three)  # 1 2 3 3
        f4_23 = v4(one, f2_1, f1_1)  # 1 2 3 1
        f4_24 = v4(f1_1, f2_1, f1_1)  # 1 2 3 1
        f4_25 = v4(one, four, f2_1)  # 1 4 2 3
        f4_26 = v4(f1_1, four, f2_1)  # 1 4 2 3
        f4_27 = v4(one, f1_1, f2_1)  # 1 1 2 3
        f4_28 = v4(f1_1, f1_1, f2_1)  # 1 1 2 3

        f4_29 = v4(f2_1, f2_1)  # 2 3 2 3
        f4_30 = v4(f3_1, four)  # 2 3 1 4
        f4_31 = v4(f3_1, f1_1)  # 2 3 1 1
        f4_32 = v4(four, f3_1)  # 4 2 3 1
        f4_33 = v4(f1_1, f3_1)  # 1 2 3 1

        f4_34 = v4(f4_1)  # 1 2 3 4

        for v in tuple((f4_1, f4_2, f4_3, f4_4, f4_5, f4_6, f4_7, f4_8, f4_9, f4_10, f4_11, f4_12,
                        f4_13, f4_14, f4_15, f4_16, f4_17, f4_18, f4_19, f4_20, f4_21, f4_22,
                        f4_23, f4_24, f4_25, f4_26, f4_27, f4_28, f4_29, f4_30, f4_31, f4_32,
                        f4_33, f4_34)):
            res[j] = v.x
            res[j + 1] = v.y
            res[j + 2] = v.z
            res[j + 3] = v.w
            j += 4

    return cuda.jit(kernel)


FANCY_EXPECTED = [
    # 1-component vectors
    1, 1,
    # 2-component vectors
    2, 3, 1, 3, 2, 1, 1, 1, 2, 3,
    # 3-component vectors
    2, 3, 1, 2, 3, 1, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 1, 3, 1, 2, 1,
    1, 1, 3, 1, 1, 1, 1, 2, 1, 1, 1, 1, 2, 3, 1,
    # 4-component vectors
    1, 2, 3, 4, 1, 2, 3, 4, 1, 1, 3, 4, 1, 2, 1, 4, 1, 2, 3, 1, 1, 1, 3, 4,
    1, 2, 1, 4, 1, 2, 3, 1, 1, 1, 1, 4, 1, 1, 3, 1, 1, 2, 1, 1, 1, 1, 1, 4,
    1, 1, 3, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 2, 3, 2, 3, 1, 3,
    2, 3, 2, 1, 2, 3, 1, 1, 1, 2, 3, 3, 1, 2, 3, 3, 1, 2, 3, 1, 1, 2, 3, 1,
    1, 4, 2, 3, 1, 4, 2, 3, 1, 1, 2, 3, 1, 1, 2, 3, 2, 3, 2, 3, 2, 3, 1, 4,
    2, 3, 1, 1, 4, 2, 3, 1, 1, 2, 3, 1, 1, 2, 3, 4,
]


@pytest.mark.parametrize("base", sorted({v.base for v in vector_types.values()}))
def test_fancy_creation_readout(backend, base):
    # numba's test builds this kernel for each of the 4 vector types of a base type: the same
    # kernel (only the base type's name and the base type matter).
    kernel = make_fancy_creation_kernel(f"{base}x4", getattr(ptxjit, base))
    arr = np.zeros(len(FANCY_EXPECTED))
    kernel[1, 1](arr)
    np.testing.assert_almost_equal(arr, np.array(FANCY_EXPECTED))


def test_locals_assigned_once_or_many_times_keep_python_semantics(backend):
    """The lowering keeps a local whose one assignment dominates its reads as a value and the
    others in memory (ir/Dominators.h singleValueVariables): each kind here, read where Python
    reads it (a loop's variable and a variable of the body read after the loop, a variable of
    both branches, a parameter reassigned in the loop and read before it in the body)."""
    @cuda.jit
    def k(out, n, flag, p):
        t = n * 2  # one assignment
        if flag:
            u = 1
        else:
            u = 2
        acc = 0
        for i in range(n):
            w = i + t
            acc += w + p  # reads the parameter before the loop's next assignment of it
            p = i
        out[0] = t
        out[1] = u
        out[2] = i
        out[3] = w
        out[4] = acc
        out[5] = p

    out = np.zeros(6, np.int64)
    k[1, 1](out, 3, True, 100)
    assert out.tolist() == [6, 1, 2, 8, 6 + 100 + 7 + 0 + 8 + 1, 2]
    k[1, 1](out, 1, False, 5)
    assert out.tolist() == [2, 2, 0, 2, 2 + 5, 0]
