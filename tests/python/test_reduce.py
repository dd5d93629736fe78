"""ufunc.reduce and cuda.reduce against NumPy."""
import numpy as np
import pytest

from ptxjit import cuda, vectorize


def make(target="cuda"):
    @vectorize(["int64(int64, int64)", "float64(float64, float64)"], target=target, identity=0)
    def add(a, b):
        return a + b

    return add


@pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 2), (1, 2), None])
def test_reduce_axes(backend, axis):
    add = make()
    a = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
    np.testing.assert_allclose(add.reduce(a, axis=axis), np.add.reduce(a, axis=axis))
    np.testing.assert_allclose(add.reduce(a, axis=axis, keepdims=True),
                               np.add.reduce(a, axis=axis, keepdims=True))


def test_reduce_large_orders_and_strides(backend):
    add = make()
    rng = np.random.default_rng(1)
    big = rng.integers(-1000, 1000, size=300_000)
    assert add.reduce(big) == big.sum()
    m = rng.random((513, 77))
    np.testing.assert_allclose(add.reduce(m, axis=0), m.sum(axis=0))
    np.testing.assert_allclose(add.reduce(np.asfortranarray(m), axis=1), m.sum(axis=1))
    np.testing.assert_allclose(add.reduce(m[::3, ::2], axis=None), m[::3, ::2].sum())
    np.testing.assert_allclose(add.reduce(m[:, ::-1], axis=1), m.sum(axis=1))
    assert add.reduce(np.arange(10, dtype=np.int32)).dtype == np.int64


def test_reduce_out_device_and_empty(backend):
    add = make()
    m = np.arange(12.0).reshape(3, 4)
    out = np.zeros(4)
    assert add.reduce(m, axis=0, out=out) is out
    np.testing.assert_array_equal(out, m.sum(axis=0))
    d = add.reduce(cuda.to_device(m), axis=1)
    assert isinstance(d, cuda.DeviceNDArray)
    np.testing.assert_array_equal(d.copy_to_host(), m.sum(axis=1))
    assert add.reduce(cuda.to_device(m), axis=None) == 66.0
    np.testing.assert_array_equal(add.reduce(np.zeros((0, 3)), axis=0), np.zeros(3))
    assert add.reduce(np.zeros(0)) == 0


def test_reduce_non_commutative_on_cpu():
    @vectorize(["int64(int64, int64)"], target="cpu")
    def digits(a, b):
        return a * 10 + b

    assert digits.reduce(np.array([1, 2, 3, 4])) == 1234
    np.testing.assert_array_equal(digits.reduce(np.array([[1, 2], [3, 4]]), axis=1), [12, 34])


@pytest.mark.parametrize("target", ["cpu", "parallel"])
def test_reduce_cpu_targets(target):
    add = make(target)
    x = np.arange(1_000_000, dtype=np.int64)
    assert add.reduce(x) == x.sum()
    np.testing.assert_array_equal(add.reduce(x.reshape(1000, 1000), axis=0),
                                  x.reshape(1000, 1000).sum(axis=0))


def test_reduce_lazy_and_max(backend):
    @vectorize(target="cuda")
    def biggest(a, b):
        return a if a > b else b

    x = np.random.default_rng(2).random(10_001).astype(np.float32)
    r = biggest.reduce(x)
    assert r == x.max() and r.dtype == np.float32


def test_reduce_errors(backend):
    add = make()
    with pytest.raises(getattr(np, "exceptions", np).AxisError, match="axis 2 is out of bounds"):
        add.reduce(np.zeros((2, 2)), axis=2)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        add.reduce(np.zeros((2, 2)), axis=(0, -2))
    with pytest.raises(ValueError, match="output parameter has shape"):
        add.reduce(np.zeros((2, 3)), axis=0, out=np.zeros(2))

    @vectorize(["float64(float64, float64)"], target="cuda")
    def mul(a, b):
        return a * b

    with pytest.raises(ValueError, match="zero-size array to reduction operation mul which has no identity"):
        mul.reduce(np.zeros(0))
    with pytest.raises(TypeError, match="needs an array"):
        mul.reduce(3.0)
    with pytest.raises(TypeError, match="no loop"):
        mul.reduce(np.zeros(3, np.complex128))

    @vectorize(["float64(float64)"], target="cuda")
    def neg(a):
        return -a

    with pytest.raises(TypeError, match="only supports binary ufuncs"):
        neg.reduce(np.zeros(3))


def test_cuda_reduce(backend):
    sum_reduce = cuda.reduce(lambda a, b: a + b)
    a = np.arange(1, 1001, dtype=np.float64)
    assert sum_reduce(a) == a.sum()
    assert sum_reduce(a, init=10) == a.sum() + 10
    assert sum_reduce(a, size=10) == a[:10].sum()
    d = cuda.to_device(a)
    assert sum_reduce(d) == a.sum()
    res = cuda.device_array(2)
    assert sum_reduce(d, res=res) is None
    assert res.copy_to_host()[0] == a.sum()
    assert sum_reduce(np.zeros(0), init=7) == 7

    @cuda.reduce
    def max_reduce(a, b):
        return max(a, b)

    x = np.random.default_rng(3).integers(-50, 50, 5000).astype(np.int32)
    r = max_reduce(x, init=-100)
    assert r == x.max() and r.dtype == np.int32
    with pytest.raises(TypeError, match="two arguments"):
        cuda.reduce(lambda a: a)
    prod = cuda.Reduce(lambda a, b: a * b)  # numba-cuda's class name
    assert isinstance(prod, cuda.Reduce) and prod(np.arange(1, 6, dtype=np.int64), init=1) == 120
