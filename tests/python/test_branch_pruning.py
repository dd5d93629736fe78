"""Branches a specialization decides before typing are pruned, as Numba's dead-branch pruning:
optional parameters tested against None, constants and constant flags. The untaken path is not
typed, so it may hold code that only fits the other specializations."""
import numpy as np
import pytest

from ptxjit import cuda
from ptxjit.errors import TypingError

DEBUG = False
SCALE = None


@cuda.jit(device=True)
def scaled(x, factor=None):
    if factor is None:
        return x * 2.0  # `x * factor` would not type with factor None
    return x * factor


@cuda.jit(device=True)
def with_default(x, y=None):
    if y is None:
        y = 0.5  # a new version of y (the parameter's is None)
    return x + y


@cuda.jit(device=True)
def negated(x, y=None):
    if not (y is not None):
        return -x
    if y != None:  # noqa: E711 (Numba's spelling in the wild)
        return x - y
    return x


def test_optional_parameter_tested_against_none():
    @cuda.jit
    def k(out):
        out[0] = scaled(1.5)
        out[1] = scaled(1.5, 3.0)
        out[2] = scaled(1.5, None)
        out[3] = with_default(1.0)
        out[4] = with_default(1.0, 2.0)
        out[5] = negated(4.0)
        out[6] = negated(4.0, 1.0)

    out = np.zeros(7)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [3.0, 4.5, 3.0, 1.5, 3.0, -4.0, 3.0])


def test_constant_flags_and_locals():
    @cuda.jit
    def k(out):
        if DEBUG:
            print(undefined_name)  # noqa: F821 never typed: DEBUG is False
        s = SCALE
        if s is None:
            out[0] = 1.0
        else:
            out[0] = s * 2.0
        if not DEBUG:
            out[1] = 2.0

    out = np.zeros(2)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [1.0, 2.0])


def test_undecided_branches_are_typed_as_before():
    @cuda.jit(device=True)
    def maybe(x, y=None):
        if x > 0:  # a run-time condition: both paths are typed
            y = 1.0
        return x * y

    @cuda.jit
    def k(out):
        out[0] = maybe(2.0)

    with pytest.raises(TypingError, match="variable 'y' has incompatible types none and"):
        k[1, 1](np.zeros(1))


def test_arrays_compared_with_none_by_equality_are_not_folded():
    @cuda.jit
    def k(a, out):
        if a is not None:
            out[0] = 1.0
        if a != None:  # noqa: E711 elementwise in NumPy: not decided before typing
            out[1] = 1.0

    with pytest.raises(TypingError):
        k[1, 1](np.zeros(2), np.zeros(2))
