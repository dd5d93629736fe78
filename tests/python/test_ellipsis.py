"""`...` (Ellipsis) in array indexes in kernels, NumPy's basic indexing as Numba types it:
docs/language.md, "Indexing"."""
import numpy as np
import pytest

from ptxjit import cuda, types
from ptxjit.errors import TypingError


def test_ellipsis_reads_views_and_elements(backend):
    @cuda.jit
    def k(img, flat, out, scalars):
        y = cuda.grid(1)
        if y < img.shape[0]:
            red = img[..., 0]  # (h, w): the last index, every other dimension whole
            row = img[y, ...]  # (w, 3)
            whole = img[...]  # the array itself
            for x in range(img.shape[1]):
                out[y, x] = red[y, x] + 10 * row[x, 1] + 100 * whole[y, x, 2] + 1000 * img[y, ..., 1][x]
        if y == 0:
            scalars[0] = flat[..., 2]  # all dimensions indexed: the element, as Numba gives it
            scalars[1] = flat[1, ...]
            scalars[2] = img[1, 2, ..., 0]

    img = np.arange(4 * 5 * 3, dtype=np.float64).reshape(4, 5, 3)
    flat = np.array([3.0, 4.0, 5.0])
    out = np.zeros((4, 5))
    scalars = np.zeros(3)
    k[1, 8](img, flat, out, scalars)
    want = img[..., 0] + 10 * img[..., 1] + 100 * img[..., 2] + 1000 * img[..., 1]
    np.testing.assert_array_equal(out, want)
    assert list(scalars) == [5.0, 4.0, img[1, 2, 0]]


def test_ellipsis_stores_fill_and_copy(backend):
    @cuda.jit
    def k(a, b):
        a[..., 0] = 7.0  # a scalar into every element of the view
        a[1, ...] = b[...]  # an array into a view
        b[...] = 0.5

    a = np.zeros((3, 2))
    b = np.array([1.0, 2.0])
    k[1, 1](a, b)
    np.testing.assert_array_equal(a, [[7.0, 0.0], [1.0, 2.0], [7.0, 0.0]])
    np.testing.assert_array_equal(b, [0.5, 0.5])


def test_views_through_an_ellipsis_keep_numbas_layouts():
    def f(a, out):
        first = a[0, ...]  # C: the integers come first
        last = a[..., 0]  # strided
        whole = a[...]
        out[0] = first[0, 0] + last[0, 0] + whole[0, 0, 0]

    k = cuda.jit(f)
    a = np.zeros((2, 3, 4))
    k[1, 1](a, np.zeros(1))
    (sig,) = k.overloads
    typemap = k.overloads[sig]._type_annotation.typemap
    assert typemap["first"] == types.float64[:, ::1]
    assert typemap["last"] == types.float64[:, :]
    assert typemap["whole"] == types.float64[:, :, ::1]


def test_two_ellipses_are_a_typing_error():
    @cuda.jit
    def k(a):
        a[..., 0, ...] = 1.0

    with pytest.raises(TypingError, match=r"only have a single ellipsis"):
        k[1, 1](np.zeros((2, 2)))


def test_too_many_indices_around_an_ellipsis_are_a_typing_error():
    @cuda.jit
    def k(a, out):
        out[0] = a[0, ..., 1, 2]

    with pytest.raises(TypingError, match=r"too many indices"):
        k[1, 1](np.zeros((2, 2)), np.zeros(1))


ALL = ...


def test_a_global_ellipsis_indexes_as_the_literal(backend):
    @cuda.jit
    def k(a, out):
        out[0] = a[ALL, 1][0] + a[0, ALL][2]

    a = np.arange(6.0).reshape(2, 3)
    out = np.zeros(1)
    k[1, 1](a, out)
    assert out[0] == a[..., 1][0] + a[0, ...][2]
