"""@guvectorize end to end against NumPy."""
import numpy as np
import pytest

from ptxjit import cuda, float64, guvectorize, int64, void


def make_dot(target="cuda"):
    # int64 first: int64 inputs would cast safely to the float64 loop (NumPy's first match).
    @guvectorize(["void(int64[:], int64[:], int64[:])",
                  "void(float64[:], float64[:], float64[:])"], "(n),(n)->()", target=target)
    def dot(a, b, out):
        s = 0
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        out[0] = s

    return dot


def test_inner_product_with_loop_broadcasting(backend):
    dot = make_dot()
    rng = np.random.default_rng(0)
    a, b = rng.random((4, 3, 5)), rng.random((3, 5))
    np.testing.assert_allclose(dot(a, b), np.einsum("...n,...n->...", a, b))
    assert dot(np.arange(4), np.arange(4)) == 14
    r = dot(np.arange(6).reshape(2, 3), np.arange(3))
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, np.arange(6).reshape(2, 3) @ np.arange(3))
    np.testing.assert_allclose(dot(np.asfortranarray(a[0]), b[:, ::-1]),
                               np.einsum("...n,...n->...", a[0], b[:, ::-1]))
    assert dot.signature == "(n),(n)->()" and dot.nin == 2 and dot.nout == 1


def test_matmul_with_out_and_device_arrays(backend):
    @guvectorize([void(float64[:, :], float64[:, :], float64[:, :])], "(m,n),(n,p)->(m,p)",
                 target="cuda")
    def matmul(a, b, c):
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                s = 0.0
                for k in range(a.shape[1]):
                    s += a[i, k] * b[k, j]
                c[i, j] = s

    rng = np.random.default_rng(1)
    a, b = rng.random((5, 3, 4)), rng.random((4, 2))
    np.testing.assert_allclose(matmul(a, b), a @ b)
    out = np.zeros((5, 3, 2))
    assert matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, a @ b)
    out2 = np.zeros((5, 3, 2))
    matmul(a, b, out2)
    np.testing.assert_allclose(out2, a @ b)
    d = matmul(cuda.to_device(a), cuda.to_device(b))
    assert isinstance(d, cuda.DeviceNDArray)
    np.testing.assert_allclose(d.copy_to_host(), a @ b)
    # int inputs are cast to the float64 loop on the host.
    np.testing.assert_allclose(matmul(np.ones((2, 2), np.int32), np.eye(2)), np.ones((2, 2)))


def test_scalar_core_argument_and_two_outputs(backend):
    @guvectorize([(float64[:], float64, float64[:], float64[:])], "(n),()->(n),()",
                 target="cuda")
    def scale_sum(x, k, y, total):
        t = 0.0
        for i in range(x.shape[0]):
            y[i] = x[i] * k
            t += y[i]
        total[0] = t

    x = np.arange(12.0).reshape(3, 4)
    y, total = scale_sum(x, 2.0)
    np.testing.assert_array_equal(y, x * 2)
    np.testing.assert_array_equal(total, (x * 2).sum(axis=1))
    y2, t2 = scale_sum(x, np.array([1.0, 2.0, 3.0])[:, None][:, 0])
    np.testing.assert_array_equal(y2, x * np.array([[1.0], [2.0], [3.0]]))


def test_lazy_gufunc(backend):
    @guvectorize("(n)->(n)", target="cuda")
    def cumsum(x, out):
        acc = x[0] - x[0]
        for i in range(x.shape[0]):
            acc += x[i]
            out[i] = acc

    x = np.arange(10, dtype=np.int32).reshape(2, 5)
    r = cumsum(x)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, np.cumsum(x, axis=1))
    np.testing.assert_allclose(cumsum(np.linspace(0, 1, 6)), np.cumsum(np.linspace(0, 1, 6)))


@pytest.mark.parametrize("target", ["cpu", "parallel"])
def test_cpu_targets(target):
    dot = make_dot(target)
    a = np.random.default_rng(2).random((20000, 3))
    np.testing.assert_allclose(dot(a, a), (a * a).sum(axis=1))


def test_errors(backend):
    dot = make_dot()
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        dot(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        make_dot()(np.float64(1.0), np.zeros(3))
    with pytest.raises(ValueError, match="could not be broadcast"):
        dot(np.zeros((2, 3)), np.zeros((4, 3)))
    with pytest.raises(TypeError, match="no loop"):
        dot(np.zeros(3, np.complex128), np.zeros(3))
    for bad in ["(n)", "(n),(n)->", "(n,)->()", "n->()"]:
        with pytest.raises(ValueError, match="not a valid gufunc signature"):
            guvectorize(["void(float64[:], float64[:])"], bad)(lambda a, b: None)
    with pytest.raises(TypeError, match="gives it 1 core dimension"):
        guvectorize(["void(float64[:,:], float64[:])"], "(n)->()")(lambda a, b: None)
    with pytest.raises(TypeError, match="must be an array"):
        guvectorize(["void(float64[:], float64)"], "(n)->()")(lambda a, b: None)

    @guvectorize("(n)->(m)", target="cuda")
    def unbound(x, out):
        out[0] = x[0]

    with pytest.raises(ValueError, match="no input binds"):
        unbound(np.zeros(3))
    out = np.zeros(2)
    unbound(np.ones(3), out=out)
    assert out[0] == 1.0
