"""Calls with `*args` (and `**{...}` keywords) and tuple displays with `*t`: the positional
arguments come from tuples whose length typing knows, so `f(*t)` is `f(t[0], t[1], ...)`;
what cannot be unpacked at compile time is a clear error."""
import cmath

import numpy as np
import pytest

from ptxjit import cuda, errors, float32

SHAPE = (4,)


@cuda.jit(device=True)
def add3(a, b, c):
    return a + 10 * b + 100 * c


@cuda.jit(device=True)
def pair(x):
    return x, 2 * x


def test_star_call_of_a_device_function(backend):
    @cuda.jit
    def k(x, out):
        t = (x[0], x[1], x[2])
        out[0] = add3(*t)               # f(*t)
        out[1] = add3(x[0], *pair(x[1]))  # f(a, *g(b))
        u = (x[2],)
        out[2] = add3(*u, *pair(x[0]))  # two tuples
        out[3] = add3(*(1, 2), x[2])    # a constant tuple, then a positional argument

    x = np.array([1, 2, 3], np.int64)
    out = np.zeros(4, np.int64)
    k[1, 1](x, out)
    assert out.tolist() == [321, 1 + 20 + 400, 3 + 10 + 200, 1 + 20 + 300]


def test_rect_of_polar(backend):
    # numba-cuda's cmath tests: cmath.rect(*cmath.polar(z)).
    @cuda.jit
    def k(z, out):
        i = cuda.grid(1)
        if i < z.size:
            out[i] = cmath.rect(*cmath.polar(z[i]))

    z = np.array([1 + 2j, -3 + 0.5j, 0j, -0.0 - 2j], np.complex128)
    out = np.zeros_like(z)
    k[1, 4](z, out)
    want = [cmath.rect(*cmath.polar(v)) for v in z]
    np.testing.assert_allclose(out, want, rtol=1e-15)


def test_star_arguments_of_builtins_with_keywords(backend):
    @cuda.jit
    def k(x, out):
        t = (x[0], x[1])
        out[0] = max(*t)
        out[1] = min(*t, x[2])
        s = cuda.local.array(*(4, float32))  # shape and dtype from one tuple
        m = cuda.local.array(*SHAPE, **{"dtype": float32})
        for j in range(4):
            s[j] = j
            m[j] = 2 * s[j]
        out[2] = m[3]

    x = np.array([5.0, 7.0, 1.0], np.float32)
    out = np.zeros(3, np.float32)
    k[1, 1](x, out)
    assert out.tolist() == [7.0, 1.0, 6.0]


def test_tuple_displays_with_star(backend):
    @cuda.jit
    def k(x, out):
        t = (x[0], x[1])
        u = (x[2], *t, *t, 9)
        out[0] = len(u)
        for j in range(len(u)):
            out[1 + j] = u[j]

    x = np.array([1, 2, 3], np.int64)
    out = np.zeros(7, np.int64)
    k[1, 1](x, out)
    assert out.tolist() == [6, 3, 1, 2, 1, 2, 9]


def test_star_call_through_a_conditional_expression(backend):
    # The argument list crosses a block edge: `*t` is collected before the branches.
    @cuda.jit
    def k(x, out, c):
        t = (x[0], x[1])
        out[0] = add3(*t, x[2] if c else -x[2])

    x = np.array([1, 2, 3], np.int64)
    out = np.zeros(1, np.int64)
    k[1, 1](x, out, True)
    assert out[0] == 321
    k[1, 1](x, out, False)
    assert out[0] == 21 - 300


def test_unpacking_a_non_tuple_is_an_error(cpu):
    @cuda.jit
    def k(x, out):
        out[0] = add3(*x)

    with pytest.raises(errors.TypingError, match=r"cannot unpack a value of type "
                                                 r"array\(int64, 1d, C\) with \* in a call's "
                                                 r"arguments") as e:
        k[1, 1](np.zeros(3, np.int64), np.zeros(1, np.int64))
    assert "add3(*x)" in str(e.value)


def test_star_call_with_the_wrong_count_is_an_error(cpu):
    @cuda.jit
    def k(x, out):
        t = (x[0], x[1])
        out[0] = add3(*t)

    with pytest.raises(errors.TypingError, match=r"add3\(\) takes 3 arguments but 2 were given"):
        k[1, 1](np.zeros(3, np.int64), np.zeros(1, np.int64))


def test_kwargs_of_unknown_keys_is_an_error(cpu):
    d = {"dtype": float32}

    @cuda.jit
    def k(out):
        s = cuda.local.array(4, **d)
        out[0] = s[0]

    with pytest.raises(errors.UnsupportedError, match=r"\*\*-unpacking of a value other than a "
                                                      r"dict display with constant string keys"):
        k[1, 1](np.zeros(1, np.float32))


def test_list_and_dict_literals_stay_errors(cpu):
    @cuda.jit
    def lst(x, out):
        v = [*x]
        out[0] = v[0]

    @cuda.jit
    def dct(x, out):
        v = {"a": x[0]}
        out[0] = v["a"]

    with pytest.raises(errors.UnsupportedError, match="list literal is not supported"):
        lst[1, 1](np.zeros(3), np.zeros(1))
    with pytest.raises(errors.UnsupportedError, match="dict literal is not supported"):
        dct[1, 1](np.zeros(3), np.zeros(1))


def test_a_list_passed_to_a_device_function_is_an_error(cpu):
    @cuda.jit
    def k(x, out):
        out[0] = add3([1, 2], x[0], x[1])

    with pytest.raises(errors.UnsupportedError, match=r"list literal is not supported in kernels "
                                                      r"\(kernels cannot allocate lists"):
        k[1, 1](np.zeros(3), np.zeros(1))
