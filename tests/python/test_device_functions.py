"""Device functions returning tuples and complex numbers, inline=True, truthy flags, several
assignment targets and min/max of several values, on both backends."""
import re

import numpy as np
import pytest

from ptxjit import cuda, errors


@cuda.jit(device="true")  # a truthy flag value, as Numba accepts
def polar_pair(x, y):
    return x * x + y * y, complex(x, -y)


@cuda.jit(device=True, inline=True)
def add_one(v):
    return v + 1


def test_device_functions_return_tuples_and_complex(backend):
    @cuda.jit
    def k(xs, out):
        i = cuda.grid(1)
        if i < xs.size:
            r2, z = polar_pair(xs[i], 2.0)
            out[i, 0] = r2
            out[i, 1] = z.imag
            out[i, 2] = add_one(z.real)

    xs = np.array([1.0, -3.0, 0.5])
    out = np.zeros((3, 3))
    k[1, 32](xs, out)
    np.testing.assert_array_equal(out[:, 0], xs * xs + 4.0)
    np.testing.assert_array_equal(out[:, 1], -2.0)
    np.testing.assert_array_equal(out[:, 2], xs + 1)


def test_several_targets_and_min_max_of_several(backend):
    @cuda.jit
    def k(out):
        a = b = 2
        x, y = 1, 3
        x, y = y, x
        out[0] = a + b + x * 10 + y
        out[1] = min(3, 1.5, 2)
        out[2] = max(1, 2, 7, -4)

    out = np.zeros(3)
    k[1, 1](out)
    assert list(out) == [35.0, 1.5, 7.0]


@cuda.jit
def set_zero(a):
    a[0] = 0


@cuda.jit
def zero_then_one(a):
    set_zero(a)  # a kernel called from device code is compiled as a device function (Numba)
    a[1] = 1


def test_a_kernel_called_from_a_kernel_is_a_device_function(backend):
    a = np.full(2, 5, np.int64)
    zero_then_one[1, 1](a)
    assert a.tolist() == [0, 1]
    b = np.full(1, 5, np.int64)
    set_zero[1, 1](b)  # and is still a kernel
    assert b[0] == 0


@cuda.jit("int32(float64)", device=True)
def scaled(x):
    return x * 1.5


@cuda.jit
def use_scaled(out, x):
    out[0] = scaled(x[0])  # float64 in, int32 out: the declared signature (Numba's rule)
    out[1] = scaled(3)  # an int converts to the declared float64 parameter


def test_device_function_signatures_convert_arguments_and_result(backend):
    out = np.zeros(2, np.float64)
    use_scaled[1, 1](out, np.array([2.5]))
    assert out.tolist() == [3.0, 4.0]  # int32(3.75), int32(4.5)
    ptx, ret = cuda.compile_ptx(scaled.py_func, "int32(float64)", device=True)
    assert str(ret) == "int32"


def test_device_function_signatures_reject_other_types(cpu):
    import pytest
    from ptxjit import errors

    @cuda.jit
    def complex_arg(out):
        out[0] = scaled(1j)

    with pytest.raises(errors.TypingError, match=r"scaled' cannot be called with \(complex128\)"
                                                 r".*int32"):
        complex_arg[1, 1](np.zeros(1))
    with pytest.raises(errors.TypingError, match="returns UniTuple.*declared return type int32"):
        cuda.jit("int32(float64)", device=True)(lambda x: (x, x))


def test_int_literals_reach_device_functions_as_constants(backend):
    """A Python int constant passed to a device function keeps its value (Numba's
    IntegerLiteral): the callee may size shared and local arrays with it; types and functions
    pass through as compile-time values (numba-cuda's atomics tests do all three)."""

    @cuda.jit(device=True)
    def count(ary, n, dt, op, cast, init):
        tid = cuda.threadIdx.x
        sm = cuda.shared.array(n, dt)
        lm = cuda.local.array(n, dtype=dt)
        sm[tid] = init
        lm[0] = 0
        cuda.syncthreads()
        op(sm, cast(tid % n), 1)
        cuda.syncthreads()
        ary[tid] = sm[tid] + lm[0]

    @cuda.jit(device=True)
    def same(x):
        return x

    @cuda.jit(device=True)
    def forward(ary, n):  # a literal parameter passed on stays a constant
        count(ary, n, np.uint32, cuda.atomic.add, same, 0)

    @cuda.jit
    def k(ary):
        forward(ary, 16)

    a = np.zeros(16, np.uint32)
    k[1, 16](a)
    np.testing.assert_array_equal(a, 1)  # each thread adds 1 to its slot of the 16

    @cuda.jit(device=True)
    def grid2(ary, dt, shape, op):  # a constant tuple: a 2-d shape
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        sm = cuda.shared.array(shape, dt)
        sm[tx, ty] = ary[tx, ty]
        cuda.syncthreads()
        op(sm, (tx, ty), 1)
        cuda.syncthreads()
        ary[tx, ty] = sm[tx, ty]

    @cuda.jit
    def k3(ary):
        grid2(ary, np.uint64, (4, 8), cuda.atomic.add)

    b = np.zeros((4, 8), np.uint64)
    k3[1, (4, 8)](b)
    np.testing.assert_array_equal(b, 1)

    @cuda.jit(device=True)
    def wrap(i, shape):  # the constants stay Python ints: uint64 % 8 is uint64 (NEP 50)
        return i % shape[1]

    @cuda.jit
    def k4(out, i):
        out[0] = wrap(i, (4, 8))

    o = np.zeros(1, np.uint64)
    k4[1, 1](o, np.uint64(2**63 + 11))
    assert o[0] == (2**63 + 11) % 8

    @cuda.jit(device=True)
    def scaled(n):
        m = n * 2  # arithmetic on the parameter: an ordinary int64, no longer a constant
        return m + n

    @cuda.jit
    def k2(out):
        out[0] = scaled(5)
        out[1] = scaled(7)

    out = np.zeros(2, np.int64)
    k2[1, 1](out)
    assert list(out) == [15, 21]


def test_a_runtime_int_is_not_a_constant(cpu):
    @cuda.jit(device=True)
    def make(n):
        s = cuda.shared.array(n, np.float32)
        s[0] = 1

    @cuda.jit
    def k(n):
        make(n)

    with pytest.raises(errors.TypingError, match="compile-time constant"):
        k[1, 1](4)


def test_string_constants_passed_to_device_functions_are_literals(backend):
    # numba-cuda's Literal[str]: the callee is specialized per value and compares it at compile
    # time (numba-cuda issue 755: this must compile quickly).
    @cuda.jit(device=True)
    def apply(op, a, b):
        if op == "add":
            return a + b
        elif op != "mul":
            return a - b
        return a * b

    @cuda.jit
    def k(out, a, b):
        out[0] = apply("add", a, b)
        out[1] = apply("mul", a, b)
        op = "sub"
        out[2] = apply(op, a, b)

    out = np.zeros(3)
    k[1, 1](out, 6.0, 3.0)
    assert out.tolist() == [9.0, 18.0, 3.0]

    @cuda.jit
    def bad(out, a):
        out[0] = a == "x"

    with pytest.raises(errors.TypingError, match=r"operator == is not defined for .* and unicode_type"):
        bad[1, 1](out, 1.0)


@pytest.mark.parametrize("opt", [True, False])
def test_compile_time_arguments_and_empty_results_unoptimized(backend, opt):
    # An intrinsic passed to a device function, and an empty tuple, have no bits: they are not
    # LLVM parameters or results. Unoptimized (nothing inlined), NVPTX used to abort the process
    # on the empty parameter types ("Empty parameter types are not supported").
    @cuda.jit(device=True)
    def apply(f, a, i):
        f(a, i, 1)
        return ()

    def k(a):
        t = apply(cuda.atomic.add, a, 0)
        a[1] = len(t) + 5

    a = np.zeros(2, np.int32)
    cuda.jit(opt=opt)(k)[1, 1](a)
    assert a.tolist() == [1, 5]
    ptx, _ = cuda.compile_ptx(k, "void(int32[:])", opt=opt)
    assert re.search(r"(atom|red)(\.global)?\.add", ptx)


@cuda.jit(device=True)
def _sum33(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18,
           a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32):
    t = (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18,
         a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32)
    s = 0
    for k in range(33):
        s += t[k]
    return s


def test_calls_and_tuples_of_more_than_30_items(backend):
    # CPython builds these as a list (BUILD_LIST, LIST_APPEND, LIST_TO_TUPLE, CALL_FUNCTION_EX):
    # they compile as the plain call and tuple they stand for.
    @cuda.jit
    def k(r, out):
        out[0] = _sum33(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
                        r[12], r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20], r[21],
                        r[22], r[23], r[24], r[25], r[26], r[27], r[28], r[29], r[30], r[31], r[32])
        t = (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
             r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23], r[24],
             r[25], r[26], r[27], r[28], r[29], r[30], r[31], r[32], r[2])
        out[1] = len(t) + t[33]

    r = np.arange(33, dtype=np.int64)
    out = np.zeros(2, np.int64)
    k[1, 1](r, out)
    assert out.tolist() == [528, 36]


def test_long_list_literals_are_rejected_and_branches_in_long_calls_compile(cpu):
    def list_literal(r):
        x = [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
             r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23], r[24],
             r[25], r[26], r[27], r[28], r[29], r[30], r[31], r[32]]
        r[0] = len(x)

    def branch_in_argument(r):
        r[0] = _sum33(r[0] if r[1] else r[2], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8],
                      r[9], r[10], r[11], r[12], r[13], r[14], r[15], r[16], r[17], r[18], r[19],
                      r[20], r[21], r[22], r[23], r[24], r[25], r[26], r[27], r[28], r[29], r[30],
                      r[31], r[32])

    with pytest.raises(errors.UnsupportedError, match="list literal is not supported"):
        cuda.jit(list_literal)[1, 1](np.zeros(33, np.int64))
    # The argument list crosses the conditional expression's branches as a list display begun
    # before them (frontend/IRBuilderDisplays.cpp).
    for first in (0, 1):
        r = np.arange(33, dtype=np.int64)
        r[1] = first
        expected = (r[0] if r[1] else r[2]) + r[1:].sum()
        cuda.jit(branch_in_argument)[1, 1](r)
        assert r[0] == expected



def _body(x):
    return x * 1.5 + 0.25


def _call_twice(dev):
    # Unoptimized, so that only an alwaysinline mark inlines (LLVM's O3 inlines nearly every
    # device function on NVPTX by its own cost model)
    @cuda.jit("void(float64[::1])", opt=False)
    def k(a):
        a[0] = dev(a[0])
        a[1] = dev(a[1] + a[0])

    return k


def _calls(k):
    llvm = k.inspect_llvm(k.signatures[0])
    return re.findall(r"call [^@\n]*@ptxjit_dev_\w+", llvm), llvm


@pytest.mark.parametrize("options", [dict(inline="always"), dict(inline=True),
                                     dict(forceinline=True)])
def test_inline_always_and_forceinline_inline_every_call(options):
    default = _call_twice(cuda.jit(device=True)(_body))
    calls, _ = _calls(default)
    assert len(calls) == 2
    forced = _call_twice(cuda.jit(device=True, **options)(_body))
    calls, llvm = _calls(forced)
    assert not calls, llvm
    # the same results either way (CPU backend here; CUDA on the GPU machine)
    a, b = np.array([0.5, 2.0]), np.array([0.5, 2.0])
    default[1, 1](a)
    forced[1, 1](b)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(b, [1.0, (2.0 + 1.0) * 1.5 + 0.25])


@pytest.mark.parametrize("inline", ["never", False])
def test_inline_never_leaves_it_to_the_optimizer(inline):
    calls, _ = _calls(_call_twice(cuda.jit(device=True, inline=inline)(_body)))
    assert len(calls) == 2


def test_inline_options_that_cannot_be_honoured_are_refused():
    with pytest.raises(NotImplementedError, match="cost-model function"):
        cuda.jit(device=True, inline=lambda expr, caller, callee: True)
    with pytest.raises(ValueError, match="inline= must be 'always', 'never' or a bool"):
        cuda.jit(device=True, inline="sometimes")
