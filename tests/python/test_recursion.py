"""Recursive device functions (numba's rules): self- and mutual recursion with eager signatures
or inferred ones (typed from the returns that do not recurse), and the clear errors for
recursion numba cannot type either (runaway recursion, a return type that does not converge)."""
import numpy as np
import pytest

from ptxjit import cuda, errors


# Compiled while the decorator runs: `fib_sig` is not bound yet when its body is typed.
@cuda.jit("i8(i8)", device=True)
def fib_sig(n):
    if n < 2:
        return n
    return fib_sig(n - 1) + fib_sig(n - 2)


@cuda.jit(device=True)
def fib_lazy(n):
    if n < 2:
        return n
    return fib_lazy(n - 1) + fib_lazy(n - 2)


def make_inner_fib():
    # A closure cell that is still empty while the eager signature compiles.
    @cuda.jit("int64(int64)", device=True)
    def fib_inner(n):
        if n < 2:
            return n
        return fib_inner(n - 1) + fib_inner(n - 2)

    return fib_inner


fib_inner = make_inner_fib()


@cuda.jit(device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@cuda.jit(device=True)
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@cuda.jit(device=True)
def halves(n):
    # The first pass types the result as int64 (from `return 1`); the recursive call then gives
    # float64, and the type settles there.
    if n <= 0:
        return 1
    return halves(n - 1) * 0.5


@cuda.jit(device=True)
def fill_down(a, n):
    # A recursive procedure (returns nothing).
    if n < 0:
        return
    a[n] = n * n
    fill_down(a, n - 1)


def run_fib(fn, backend, n=10):
    @cuda.jit
    def k(r, x):
        r[0] = fn(x[0])

    x = np.array([n], dtype=np.int64)
    r = np.zeros_like(x)
    k[1, 1](r, x)
    return r[0]


@pytest.mark.parametrize("fn", [fib_sig, fib_lazy, fib_inner], ids=["sig", "lazy", "inner"])
def test_self_recursion(backend, fn):
    assert run_fib(fn, backend) == 55
    assert run_fib(fn, backend, 20) == 6765


def test_mutual_recursion(backend):
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = is_even(i)

    out = np.zeros(9, dtype=np.bool_)
    k[1, 32](out)
    np.testing.assert_array_equal(out, np.arange(9) % 2 == 0)


def test_return_type_widened_by_recursion(backend):
    @cuda.jit
    def k(out):
        out[0] = halves(3)

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 0.125


def test_recursive_procedure(backend):
    @cuda.jit
    def k(a):
        fill_down(a, a.size - 1)

    a = np.zeros(6, dtype=np.int64)
    k[1, 1](a)
    np.testing.assert_array_equal(a, np.arange(6) ** 2)


def test_recursion_in_many_threads(backend):
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = fib_lazy(i % 16)

    out = np.zeros(64, dtype=np.int64)
    k[2, 32](out)
    fib = [0, 1]
    while len(fib) < 16:
        fib.append(fib[-1] + fib[-2])
    np.testing.assert_array_equal(out, [fib[i % 16] for i in range(64)])


def test_runaway_recursion_is_a_typing_error(cpu):
    @cuda.jit(device=True)
    def runaway(x):
        return runaway(x)

    with pytest.raises(errors.TypingError) as info:
        @cuda.jit("void()")
        def k():
            runaway(1)

    msg = str(info.value)
    assert "cannot type infer runaway recursion" in msg
    assert "runaway" in msg and "return runaway(x)" in msg  # located at the recursive call


def test_mutual_runaway_recursion_is_a_typing_error(cpu):
    @cuda.jit(device=True)
    def ping(x):
        return pong(x)

    @cuda.jit(device=True)
    def pong(x):
        return ping(x)

    globals()["ping"], globals()["pong"] = ping, pong
    try:
        @cuda.jit
        def k(out):
            out[0] = ping(1)

        with pytest.raises(errors.TypingError, match="cannot type infer runaway recursion"):
            k[1, 1](np.zeros(1))
    finally:
        del globals()["ping"], globals()["pong"]


def test_growing_return_type_does_not_converge(cpu):
    @cuda.jit(device=True)
    def make_list(n):
        if n <= 0:
            return None
        return (n, make_list(n - 1))

    with pytest.raises(errors.TypingError) as info:
        @cuda.jit("void()")
        def k():
            make_list(100)

    msg = str(info.value)
    assert "Return type of recursive function does not converge" in msg
    assert "make_list" in msg


def test_argument_types_growing_without_bound_are_refused(cpu):
    @cuda.jit(device=True)
    def nest(x, n):
        if n == 0:
            return 0
        return nest((x, x), n - 1)

    @cuda.jit
    def k(out):
        out[0] = nest(1, 3)

    with pytest.raises(errors.UnsupportedError, match="argument types keep changing"):
        k[1, 1](np.zeros(1))


def test_kernels_called_from_device_code_recurse_as_device_functions(backend):
    # numba-cuda compiles a @cuda.jit function called from device code as a device function,
    # which may return a value and call itself.
    @cuda.jit
    def countdown(a, n):
        if n >= 0:
            a[n] = n + 1
            countdown(a, n - 1)

    @cuda.jit
    def total(n):
        if n == 0:
            return 0
        return n + total(n - 1)

    @cuda.jit
    def k(a, out):
        out[0] = total(4)

    a = np.zeros(5, dtype=np.int64)
    countdown[1, 1](a, 4)
    np.testing.assert_array_equal(a, [1, 2, 3, 4, 5])
    out = np.zeros(1, dtype=np.int64)
    k[1, 1](a, out)
    assert out[0] == 10


def test_raise_through_recursion(cpu):
    @cuda.jit(device=True)
    def raise_self(x):
        if x == 1:
            raise ValueError("raise_self")
        elif x > 0:
            return raise_self(x - 1)
        else:
            return 1

    @cuda.jit(debug=True, opt=False)
    def k(x):
        raise_self(x)

    with pytest.raises(ValueError, match="raise_self"):
        k[1, 1](3)
    k[1, 1](0)  # no raise


@pytest.mark.gpu
def test_recursive_call_in_ptx(cuda_target):
    @cuda.jit
    def k(r, x):
        r[0] = fib_lazy(x[0])

    x = np.array([10], dtype=np.int64)
    r = np.zeros_like(x)
    k[1, 1](r, x)
    assert r[0] == 55
    ptx = next(iter(k.inspect_asm().values()))
    # The device function is a .func that calls itself (not unrolled into the kernel).
    funcs = [line for line in ptx.splitlines() if ".func" in line and "fib_lazy" in line]
    assert funcs, ptx
