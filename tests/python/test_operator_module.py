"""The `operator` module's functions in kernels (as numba-cuda): operator.add(a, b) compiles as
a + b, whether the function is a global, a closure value or read from the module."""
import operator

import numpy as np
import pytest

from ptxjit import cuda, errors

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.iadd, operator.imul, operator.lt, operator.le,
          operator.eq, operator.ne, operator.gt, operator.ge]


@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.__name__)
def test_binary_functions_from_a_closure(backend, op):
    @cuda.jit
    def k(a, b):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = op(a[i], b[i])

    a = np.array([3.0, -7.5, 2.0])
    b = np.array([2.0, 2.0, 0.5])
    res = a.copy()
    k[1, 3](res, b)
    # (libdevice's pow may differ from the host's by an ulp)
    np.testing.assert_allclose(res, op(a, b), rtol=1e-15)


def test_module_attribute_unary_and_bitwise(backend):
    @cuda.jit
    def k(out, x, n):
        out[0] = operator.neg(x)
        out[1] = operator.pos(x)
        out[2] = operator.not_(x)
        out[3] = operator.truth(x)
        out[4] = operator.invert(n)
        out[5] = operator.and_(n, 6)
        out[6] = operator.xor(n, 6)
        out[7] = operator.lshift(n, 2)

    out = np.zeros(8)
    k[1, 1](out, 2.5, 5)
    np.testing.assert_array_equal(out, [-2.5, 2.5, 0, 1, ~5, 5 & 6, 5 ^ 6, 5 << 2])


def test_typing_as_the_operator(cpu):
    @cuda.jit
    def k(out, a, b):
        out[0] = operator.add(a, b)

    out = np.zeros(1, np.float32)
    k[1, 1](out, np.float32(1.5), np.int8(2))
    assert out[0] == np.float32(3.5)
    with pytest.raises(errors.TypingError, match=r"\+"):
        k[1, 1](out, np.zeros(2), (1, 2))


def test_unsupported_operator_functions_are_errors(cpu):
    @cuda.jit
    def k(out, x):
        out[0] = operator.contains(x, 1.0)

    with pytest.raises(errors.UnsupportedError, match=r"operator\.contains"):
        k[1, 1](np.zeros(1), np.zeros(2))
