"""`None` / `np.newaxis` in array indexes in kernels (NumPy's basic indexing, typed as Numba
types it): docs/language.md, "Slices and views"."""
import numpy as np
import pytest

from ptxjit import cuda, types
from ptxjit.errors import TypingError

NEW = None


def test_new_axes_read_views_of_the_right_shape(backend):
    @cuda.jit
    def k(a, out):
        v = a[None]  # (1, 5, 4)
        w = a[:, np.newaxis, 1:]  # (5, 1, 3)
        z = a[..., None]  # (5, 4, 1)
        u = a[1, None]  # (1, 4)
        t = a[NEW, 2, NEW]  # (1, 1, 4): a global None is the literal
        out[0] = v.ndim * 1000 + v.shape[0] * 100 + v.shape[1] * 10 + v.shape[2]
        out[1] = w.ndim * 1000 + w.shape[0] * 100 + w.shape[1] * 10 + w.shape[2]
        out[2] = z.ndim * 1000 + z.shape[0] * 100 + z.shape[1] * 10 + z.shape[2]
        out[3] = u.ndim * 100 + u.shape[0] * 10 + u.shape[1]
        out[4] = t.ndim * 1000 + t.shape[0] * 100 + t.shape[1] * 10 + t.shape[2]
        out[5] = w[2, 0, 1] + 100 * u[0, 3] + 10000 * z[2, 3, 0] + 1000000 * t[0, 0, 1]

    a = np.arange(20.0).reshape(5, 4)
    out = np.zeros(6)
    k[1, 1](a, out)

    def code(x):
        return x.ndim * 10 ** len(x.shape) + sum(n * 10 ** (len(x.shape) - 1 - i)
                                                 for i, n in enumerate(x.shape))

    want = [code(a[None]), code(a[:, None, 1:]), code(a[..., None]), code(a[1, None]),
            code(a[None, 2, None]),
            a[:, None, 1:][2, 0, 1] + 100 * a[1, None][0, 3] + 10000 * a[..., None][2, 3, 0]
            + 1000000 * a[None, 2, None][0, 0, 1]]
    assert list(out) == want


def test_an_outer_product_through_new_axes(backend):
    @cuda.jit
    def outer(x, y, out):
        i = cuda.grid(1)
        xs = x[:, None]
        ys = y[None, :]
        if i < out.shape[0]:
            for j in range(out.shape[1]):
                out[i, j] = xs[i, 0] * ys[0, j]

    x = np.arange(3.0) + 1
    y = np.arange(4.0) - 1
    out = np.zeros((3, 4))
    outer[1, 8](x, y, out)
    np.testing.assert_array_equal(out, np.outer(x, y))


def test_stores_through_new_axes(backend):
    @cuda.jit
    def k(a, b):
        a[None, 1] = 7.0  # a scalar into the (1, 3) view of row 1
        a[:, None, 2][0, 0] = b[0]  # an element through a view
        v = a[None]
        v[0, 2, 0] = 5.0

    a = np.zeros((3, 3))
    k[1, 1](a, np.array([9.0]))
    np.testing.assert_array_equal(a, [[0, 0, 9], [7, 7, 7], [5, 0, 0]])


def test_new_axis_views_are_strided_as_numba_types_them():
    def f(a, out):
        first = a[None]
        last = a[..., None]
        row = a[0, None]
        out[0] = first[0, 0, 0] + last[0, 0, 0] + row[0, 0]

    k = cuda.jit(f)
    k[1, 1](np.zeros((2, 3)), np.zeros(1))
    (sig,) = k.overloads
    typemap = k.overloads[sig]._type_annotation.typemap
    # Numba's rule: None never keeps contiguity (numba.core.typing.arraydecl).
    assert typemap["first"] == types.float64[:, :, :]
    assert typemap["last"] == types.float64[:, :, :]
    assert typemap["row"] == types.float64[:, :]


def test_new_axes_do_not_count_as_indices():
    @cuda.jit
    def ok(a, out):
        out[0] = a[None, 1, None, 2, None][0, 0, 0]

    @cuda.jit
    def too_many(a, out):
        out[0] = a[None, 1, 2, 3]

    out = np.zeros(1)
    ok[1, 1](np.arange(12.0).reshape(3, 4), out)
    assert out[0] == 6.0
    with pytest.raises(TypingError, match=r"too many indices"):
        too_many[1, 1](np.zeros((2, 2)), out)


def test_new_axis_views_are_bounds_checked(cpu):
    @cuda.jit
    def k(a, i):
        row = a[None, i]
        row[0, 0] = 1.0

    a = np.zeros((2, 3))
    with pytest.raises(IndexError, match=r"index 2 is out of bounds for axis 0 with size 2"):
        k[1, 1](a, 2)
    assert (a == 0).all()


def test_new_axes_compile_to_ptx():
    def f(a, out):
        out[0] = a[:, None][1, 0] + a[None, :][0, 2]

    ptx, _ = cuda.compile_ptx(f, (types.float64[::1], types.float64[::1]))
    assert ".visible .entry" in ptx
