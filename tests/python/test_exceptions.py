"""Exceptions raised in kernels (docs/language.md, Exceptions): `raise`, `assert` and, with
debug=True, division by zero. numba-cuda's semantics: the raising thread ends; with debug=True
the first raising thread's exception is raised on the host after the launch, with numba-cuda's
message ("In function 'k', file ..., line N, tid=[z, y, x] ctaid=[z, y, x]: <message>").

PYTEST_DONT_REWRITE: the kernels' own `assert` statements must stay Python's."""
import os
import re
import warnings

import numpy as np
import pytest

from ptxjit import cuda, errors, types


class MyError(Exception):
    pass


class MyValueError(ValueError):
    pass


def debug_jit(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cuda.jit(*args, debug=True, opt=False, **kw)


def _raise_on(x, out):
    i = cuda.grid(1)
    if i == x:
        raise MyError("thread", 7)
    out[i] = i + 1


def test_user_exception_reaches_the_host_with_numbas_message(backend):
    k = debug_jit(_raise_on)
    # A device array: as in numba-cuda, a launch that raises copies no host array back.
    out = cuda.to_device(np.zeros(8, np.int64))
    k[2, 4](-1, out)  # nobody raises
    assert out.copy_to_host().tolist() == list(range(1, 9))
    out = cuda.to_device(np.zeros(8, np.int64))
    with pytest.raises(MyError) as info:
        k[2, 4](5, out)
    msg = str(info.value.args[0])
    line = _raise_on.__code__.co_firstlineno + 3
    assert msg == (f"In function '_raise_on', file {os.path.abspath(__file__)}, line {line}, "
                   "tid=[0, 0, 1] ctaid=[0, 0, 1]: thread")
    assert info.value.args[1:] == (7,)
    # The raising thread ended before its store; the others ran.
    assert out.copy_to_host().tolist() == [1, 2, 3, 4, 5, 0, 7, 8]
    k[2, 4](-1, out)  # the record was cleared: the next launch is clean


def test_exception_without_arguments_and_subclasses(backend):
    @debug_jit("void(int32)")
    def test_exc(x):
        if x == 1:
            raise MyError
        elif x == 2:
            raise MyValueError("foo")

    test_exc[1, 1](0)
    with pytest.raises(MyError) as info:
        test_exc[1, 1](1)
    assert re.fullmatch(r"In function 'test_exc', file .+, line \d+, "
                        r"tid=\[0, 0, 0\] ctaid=\[0, 0, 0\]", str(info.value))
    with pytest.raises(ValueError, match=r"tid=\[0, 0, 0\] ctaid=\[0, 0, 0\]: foo$") as info:
        test_exc[1, 1](2)
    assert type(info.value) is MyValueError


def test_builtin_exceptions_and_assert(backend):
    @debug_jit
    def k(x):
        assert x[0] > 0, "x must be positive"
        if x[0] > 10:
            raise IndexError
        assert x[0] < 5

    k[1, 1](np.array([3]))
    with pytest.raises(AssertionError, match=r"ctaid=\[0, 0, 0\]: x must be positive$"):
        k[1, 1](np.array([-1]))
    with pytest.raises(IndexError, match=r"tid=\[0, 0, 0\] ctaid=\[0, 0, 0\]$"):
        k[1, 1](np.array([11]))
    with pytest.raises(AssertionError):
        k[1, 1](np.array([7]))


@cuda.jit(device=True)
def _check_positive(v):
    if v < 0:
        raise ValueError("negative value")
    return v * 2


def test_raise_in_a_device_function_names_it(backend):
    # numba-cuda reports these wrongly (its test_raise_in_device_function is an expected
    # failure); ptxjit raises the device function's exception, naming the device function.
    @debug_jit
    def k(x, out):
        i = cuda.grid(1)
        out[i] = _check_positive(x[i])

    x = np.array([1.0, 2.0, -3.0, 4.0])
    out = cuda.to_device(np.zeros(4))
    with pytest.raises(ValueError, match=r"In function '_check_positive', .*"
                                         r"tid=\[0, 0, 2\] ctaid=\[0, 0, 0\]: negative value"):
        k[1, 4](x, out)
    assert out.copy_to_host().tolist() == [2.0, 4.0, 0.0, 8.0]


def test_a_launch_that_raises_copies_no_host_array_back(backend):
    # numba-cuda raises before it writes auto-transferred arrays back; so does ptxjit on CUDA.
    # On the CPU backend the kernel works on the host array itself.
    k = debug_jit(_raise_on)
    out = np.zeros(8, np.int64)
    with pytest.raises(MyError):
        k[2, 4](5, out)
    expected = [0] * 8 if backend == "cuda" else [1, 2, 3, 4, 5, 0, 7, 8]
    assert out.tolist() == expected


def test_without_debug_a_raise_ends_the_thread_silently(backend):
    k = cuda.jit(_raise_on)
    out = np.zeros(8, np.int64)
    k[2, 4](5, out)  # no exception, as numba-cuda
    assert out.tolist() == [1, 2, 3, 4, 5, 0, 7, 8]

    @cuda.jit
    def deep(x, out):
        i = cuda.grid(1)
        out[i] = _check_positive(x[i])  # the thread ends inside the device function
        out[i] += 1

    x = np.array([1.0, -2.0, 3.0])
    out = np.zeros(3)
    deep[1, 3](x, out)
    assert out.tolist() == [3.0, 0.0, 7.0]


def test_raise_with_barriers_on_the_cpu(cpu):
    # A thread that raised counts as arrived at later barriers (as an exited GPU thread).
    @debug_jit
    def k(out):
        s = cuda.shared.array(4, types.int64)
        t = cuda.threadIdx.x
        if t == 1:
            raise MyError("left early")
        s[t] = t
        cuda.syncthreads()
        out[t] = s[(t + 1) % 4]

    out = np.full(4, -1, np.int64)
    with pytest.raises(MyError, match="left early"):
        k[1, 4](out)
    # Thread 0 read s[1], never written (shared memory starts as 0xff bytes on the CPU).
    assert out.tolist() == [-1, -1, 3, 0]


def test_zero_division_error_with_debug(backend):
    def f(r, x, y):
        r[0] = y[0] / x[0]
        r[1] = y[0]

    r = np.zeros(2)
    x = np.zeros(1)
    y = np.ones(1)
    cuda.jit(f)[1, 1](r, x, y)  # NumPy's model: inf, and execution goes on
    assert np.isinf(r[0]) and r[1] == 1.0

    r[:] = 0
    with pytest.raises(ZeroDivisionError, match=r"ctaid=\[0, 0, 0\]: division by zero$"):
        debug_jit(f)[1, 1](r, x, y)
    assert r.tolist() == [0.0, 0.0]  # stopped at the division


def test_integer_division_and_modulo_by_zero(backend):
    @debug_jit
    def k(a, b, out):
        out[0] = a // b
        out[1] = a % b

    out = np.zeros(2, np.int64)
    k[1, 1](7, 2, out)
    assert out.tolist() == [3, 1]
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        k[1, 1](7, 0, out)

    @debug_jit
    def m(a, b, out):
        out[0] = a % b

    with pytest.raises(ZeroDivisionError, match="integer modulo by zero"):
        m[1, 1](7, 0, out)


def test_fastmath_division_does_not_raise(backend):
    def f10(r, x, y):
        r[0] = x / y

    sig = (types.float32[::1], types.float32, types.float32)
    ary = np.empty(10, dtype=np.float32)
    with pytest.raises(ZeroDivisionError):
        debug_jit(sig)(f10)[1, 10](ary, 10.0, 0.0)
    debug_jit(sig, fastmath=True)(f10)[1, 10](ary, 10.0, 0.0)
    assert np.isinf(ary[0])


def test_non_constant_arguments_and_bare_raise_are_rejected(cpu):
    @cuda.jit
    def k(x):
        raise ValueError(x[0])

    with pytest.raises(errors.UnsupportedError, match="non-constant exception argument"):
        k[1, 1](np.zeros(1))

    @cuda.jit
    def bare(x):
        if x[0]:
            raise

    with pytest.raises(errors.UnsupportedError, match="bare raise statement"):
        bare[1, 1](np.zeros(1))

    @cuda.jit
    def not_exc(x):
        raise x

    with pytest.raises(errors.UnsupportedError, match="raising a value other than"):
        not_exc[1, 1](np.zeros(1))


def test_kernels_that_cannot_raise_have_no_record(cpu):
    # Launch-path cost: no raise site, no record, nothing to read after the launch.
    sig = (types.float64[::1], types.float64[::1])

    def plain(x, out):
        out[0] = x[0] * 2.0

    def raising(x, out):
        if x[0] < 0:
            raise ValueError("negative")
        out[0] = x[0] * 2.0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain_ptx = cuda.jit(debug=True, opt=False, boundscheck=False)(plain).inspect_ptx(sig)
        raising_ptx = cuda.jit(debug=True, opt=False, boundscheck=False)(raising).inspect_ptx(sig)
        quiet_ptx = cuda.jit(raising).inspect_ptx(sig)
    assert "__bounds" not in plain_ptx
    assert "__bounds" in raising_ptx and "exit;" in raising_ptx
    assert "__bounds" not in quiet_ptx and "exit;" in quiet_ptx  # without debug: just `exit`


def test_ptx_of_raising_kernels_compiles():
    # CUDA codegen: the record, the compare-and-swap and `exit` (checked by ptxas when present).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptx, _ = cuda.compile_ptx(_raise_on, (types.int64, types.int64[::1]), debug=True,
                                  opt=False)
    assert "atom" in ptx and "cas" in ptx and "exit;" in ptx


@pytest.mark.gpu
def test_cuda_exception_from_the_gpu(cuda_target):
    k = debug_jit(_raise_on)
    out = cuda.to_device(np.zeros(64, np.int64))
    with pytest.raises(MyError, match=r"tid=\[0, 0, 5\] ctaid=\[0, 0, 1\]: thread"):
        k[2, 32](37, out)
    k[2, 32](-1, out)  # cleared


def test_raise_in_a_ufunc_body_is_rejected(cpu):
    from ptxjit import vectorize

    @vectorize(["float64(float64)"], target="cuda")
    def v(x):
        if x < 0:
            raise ValueError("negative")
        return x + 1

    with pytest.raises(errors.UnsupportedError, match="raise or assert in a @vectorize"):
        v(np.array([1.0, -1.0]))


def test_exception_arguments_from_globals(backend):
    @debug_jit
    def k(x):
        if x[0]:
            raise MyError(MESSAGE, LIMIT)

    k[1, 1](np.zeros(1))
    with pytest.raises(MyError) as info:
        k[1, 1](np.ones(1))
    assert info.value.args[0].endswith("ctaid=[0, 0, 0]: from a global")
    assert info.value.args[1] == 3


MESSAGE = "from a global"
LIMIT = 3


def test_tuple_index_out_of_range_raises_index_error(backend):
    # numba-cuda's test_exception: a run-time index into a tuple of one type.
    def foo(ary, out):
        x = cuda.threadIdx.x
        out[x] = ary.shape[-x] if x < 2 else 0
        if x == 2:
            ary.shape[-x]

    out = np.zeros(3, np.int64)
    cuda.jit(foo)[1, 3](np.array([0, 1]), out)  # the raising thread just ends
    assert out.tolist() == [2, 2, 0]
    with pytest.raises(IndexError, match="tuple index out of range"):
        debug_jit(foo)[1, 3](np.array([0, 1]), out)

    @cuda.jit
    def pick(t, i, out):
        out[0] = (t[0], t[1], t[2])[i]

    pick[1, 1]((4, 5, 6), -1, out)
    assert out[0] == 6
