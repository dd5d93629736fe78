"""Array views (fewer indices than dimensions) and iteration over arrays, on both backends."""
import numpy as np

from ptxjit import cuda


def test_row_views_of_2d_and_3d_arrays(backend):
    @cuda.jit
    def k(a, b):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            row = a[i]
            row[j] = i * 10 + j + row.size * 0.5
            b[i][j][1] = b[i, j][0] + len(b[i][j])

    a = np.zeros((3, 4))
    b = np.ones((3, 4, 2), dtype=np.int32)
    k[(1, 1), (4, 4)](a, b)
    i, j = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
    np.testing.assert_array_equal(a, i * 10 + j + 2.0)
    np.testing.assert_array_equal(b[:, :, 1], 3)
    np.testing.assert_array_equal(b[:, :, 0], 1)


def test_views_of_fortran_arrays_follow_strides(backend):
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            r = a[i]
            s = 0.0
            for j in range(r.size):
                s += r[j] * (j + 1)
            out[i] = s

    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    out = np.zeros(3)
    k[1, 32](a, out)
    np.testing.assert_allclose(out, a @ np.arange(1.0, 5.0))


def test_for_over_arrays_and_rows(backend):
    @cuda.jit
    def k(a, m, out):
        s = 0.0
        for v in a:
            s += v
        out[0] = s
        t = 0
        for row in m:
            for v in row:
                t = t * 10 + v
        out[1] = t

    out = np.zeros(2)
    k[1, 1](np.arange(5.0), np.array([[1, 2], [3, 4]], dtype=np.int32), out)
    assert list(out) == [10.0, 1234.0]
