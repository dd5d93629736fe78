"""@vectorize end to end against NumPy: signatures and lazy typing, broadcasting, orders and
strides, out=, device arrays, streams, scalars, targets, and the errors."""
import math
import warnings

import numpy as np
import pytest

from ptxjit import cuda, float32, float64, int32, int64, vectorize
from ptxjit import errors


def make_add(target="cuda"):
    @vectorize(["float32(float32, float32)", "float64(float64, float64)",
                "int64(int64, int64)"], target=target)
    def add(a, b):
        return a + b

    return add


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_signatures_for_each_dtype(backend, dtype):
    add = make_add()
    x = (np.arange(1000) % 97).astype(dtype)
    y = (np.arange(1000) * 3 % 31).astype(dtype)
    r = add(x, y)
    # int64 casts safely to float64, whose loop comes first (NumPy's rule: the first loop).
    assert isinstance(r, np.ndarray) and r.dtype == (np.float64 if dtype == np.int64 else dtype)
    np.testing.assert_array_equal(r, x + y)


def test_type_resolution_is_numpys(backend):
    add = make_add()
    assert add(np.arange(4, dtype=np.int16), np.arange(4, dtype=np.int16)).dtype == np.float32
    assert add(np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int32)).dtype == np.float64
    # NEP 50: a Python float next to float32 keeps float32; all-Python inputs default.
    assert add(np.arange(4, dtype=np.float32), 2.5).dtype == np.float32
    r = add(2.0, 3.0)
    assert r == 5.0 and isinstance(r, np.float64)
    assert add.ntypes == 3


def test_haversine_with_broadcast_scalars(backend):
    @vectorize([float64(float64, float64, float64, float64, float64)], target="cuda")
    def hav(lat1, lon1, lat2, lon2, s):
        a = (math.sin(0.008726645 * (lat2 - lat1)) ** 2 + math.cos(0.01745329 * lat1)
             * math.cos(0.01745329 * lat2) * math.sin(0.008726645 * (lon2 - lon1)) ** 2)
        return math.atan2(a, 1 - a) * s

    rng = np.random.default_rng(0)
    X, Y = rng.uniform(-90, 90, 500), rng.uniform(-180, 180, 500)
    a = (np.sin(0.008726645 * (30.0 - X)) ** 2 + np.cos(0.01745329 * X)
         * np.cos(0.01745329 * 30.0) * np.sin(0.008726645 * (101.0 - Y)) ** 2)
    expected = np.arctan2(a, 1 - a) * 2.0
    np.testing.assert_allclose(hav(X, Y, 30.0, 101.0, 2.0), expected, rtol=1e-12)
    dZ = hav(cuda.to_device(X), cuda.to_device(Y), 30.0, 101.0, 2.0)
    assert isinstance(dZ, cuda.DeviceNDArray)
    np.testing.assert_allclose(dZ.copy_to_host(), expected, rtol=1e-12)


def test_lazy_compiles_per_input_types(backend):
    @vectorize(target="cuda")
    def f(a, b):
        return a * b + 1

    np.testing.assert_array_equal(f(np.arange(5, dtype=np.int32), 3), np.arange(5) * 3 + 1)
    assert f(np.arange(5, dtype=np.int32), 3).dtype == np.int32
    assert f(np.arange(3, dtype=np.float32), 2.5).dtype == np.float32
    assert f(np.arange(3, dtype=np.int32), 2.5).dtype == np.float64
    c = f(np.array([1 + 2j]), 2)
    assert c.dtype == np.complex128 and c[0] == (1 + 2j) * 2 + 1
    assert f.ntypes == 4


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 1), (1, 5)), ((2, 1, 4), (3, 1)),
                                    ((5,), ()), ((0, 3), (3,)), ((), ())])
def test_broadcasting(backend, shapes):
    add = make_add()
    a = np.arange(int(np.prod(shapes[0])), dtype=np.float64).reshape(shapes[0])
    b = (np.arange(int(np.prod(shapes[1])), dtype=np.float64) * 10).reshape(shapes[1])
    r = add(a, b)
    np.testing.assert_array_equal(r, a + b)
    assert np.shape(r) == np.broadcast_shapes(shapes[0], shapes[1])


def test_orders_and_strides(backend):
    add = make_add()
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    f = np.asfortranarray(base)
    r = add(f, f)
    np.testing.assert_array_equal(r, base * 2)
    assert r.flags.f_contiguous
    s = base[::2, 1::3]
    np.testing.assert_array_equal(add(s, s.T.T), s * 2)
    np.testing.assert_array_equal(add(base.T, 1.0), base.T + 1)
    rev = base[:, ::-1]
    np.testing.assert_array_equal(add(rev, base), rev + base)
    np.testing.assert_array_equal(add(base[..., None], np.arange(3.0)),
                                  base[..., None] + np.arange(3.0))


def test_out_argument(backend):
    add = make_add()
    x = np.arange(10, dtype=np.float64)
    out = np.zeros(10, dtype=np.float64)
    assert add(x, x, out=out) is out
    np.testing.assert_array_equal(out, 2 * x)
    out32 = np.zeros(10, dtype=np.float32)
    add(x, 1.0, out32)  # positional out, same_kind cast
    np.testing.assert_array_equal(out32, x + 1)
    big = np.zeros((3, 10))
    add(x, x, out=big)
    np.testing.assert_array_equal(big, np.broadcast_to(2 * x, (3, 10)))
    strided = np.zeros(20)
    add(x, x, out=strided[::2])
    np.testing.assert_array_equal(strided[::2], 2 * x)
    assert not strided[1::2].any()
    d_out = cuda.device_array(10)
    assert add(cuda.to_device(x), x, out=d_out) is d_out
    np.testing.assert_array_equal(d_out.copy_to_host(), 2 * x)


def test_contiguous_loops_cover_every_element_in_place_too(backend):
    # A CUDA loop over contiguous operands takes four elements per trip, then one at a time:
    # every count around the multiples of the launch's threads, and an output that is an input.
    @vectorize(["float32(float32, float32)", "int8(int8, int8)", "boolean(boolean, boolean)"],
               target="cuda")
    def combine(a, b):
        return a * b + a

    @vectorize(["boolean(boolean, boolean)"], target="cuda")
    def either(a, b):
        return a or b

    for n in (1, 2, 3, 4, 5, 7, 1000, 4097, 65535, (1 << 20) + 3, 3 * (1 << 20) + 1):
        x = (np.arange(n) % 97).astype(np.float32)
        y = (np.arange(n) % 5).astype(np.float32)
        np.testing.assert_array_equal(combine(x, y), x * y + x)
        d = cuda.to_device(x)
        combine(d, cuda.to_device(y), out=d)  # in place: each element read before written
        np.testing.assert_array_equal(d.copy_to_host(), x * y + x)
    i8 = (np.arange(4099) % 7).astype(np.int8)
    np.testing.assert_array_equal(combine(i8, i8), (i8 * i8 + i8).astype(np.int8))
    flags = np.arange(4099) % 3 == 0
    np.testing.assert_array_equal(either(flags, ~flags), np.ones(4099, bool))


def test_device_arrays_and_streams(backend):
    add = make_add()
    x = np.arange(100, dtype=np.float32)
    s = cuda.stream()
    dx = cuda.to_device(x, stream=s)
    dr = add(dx, dx, stream=s)
    s.synchronize()
    assert isinstance(dr, cuda.DeviceNDArray) and dr.dtype == np.float32
    np.testing.assert_array_equal(dr.copy_to_host(), 2 * x)
    # Mixed host and device inputs give a device result.
    dm = add(x, dx)
    assert isinstance(dm, cuda.DeviceNDArray)
    np.testing.assert_array_equal(dm.copy_to_host(), 2 * x)
    np.testing.assert_array_equal(add(x, x, stream=s), 2 * x)


def test_scalars_of_all_kinds(backend):
    @vectorize(["float64(float64, int64, boolean)"], target="cuda")
    def pick(x, k, flag):
        return x * k if flag else x

    x = np.linspace(0, 1, 7)
    np.testing.assert_allclose(pick(x, 3, True), x * 3)
    np.testing.assert_allclose(pick(x, np.int16(3), np.bool_(False)), x)
    np.testing.assert_allclose(pick(x, np.arange(7), np.arange(7) % 2 == 0),
                               np.where(np.arange(7) % 2 == 0, x * np.arange(7), x))
    assert pick(2.0, 3, True) == 6.0
    np.testing.assert_allclose(pick([1.0, 2.0], 2, True), [2.0, 4.0])  # lists


def test_device_function_calls_and_identity(backend):
    @cuda.jit(device=True)
    def sq(v):
        return v * v

    @vectorize(["float32(float32, float32)"], target="cuda", identity=0)
    def sqsum(a, b):
        return sq(a) + sq(b)

    a = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(sqsum(a, a), 2 * a * a)
    assert sqsum.identity == 0 and sqsum.nin == 2 and sqsum.nout == 1
    assert sqsum.__name__ == "sqsum"


@pytest.mark.parametrize("target", ["cpu", "parallel"])
def test_cpu_targets(target):
    add = make_add(target)
    x = np.arange(100_000, dtype=np.float64)
    np.testing.assert_array_equal(add(x, x[::-1]), x + x[::-1])
    np.testing.assert_array_equal(add(x.reshape(100, 1000), 1.0), x.reshape(100, 1000) + 1)
    assert add.target == target
    from ptxjit import _core
    if _core.current_target() == "cpu":
        d = cuda.to_device(x)
        np.testing.assert_array_equal(add(d, d).copy_to_host(), 2 * x)


def test_cuda_vectorize_defaults_to_cuda():
    @cuda.vectorize(["float64(float64)"])
    def inc(v):
        return v + 1

    assert inc.target == "cuda"

    @vectorize(["float64(float64)"])
    def inc2(v):
        return v + 1

    assert inc2.target == "cpu"


def test_errors(backend):
    add = make_add()
    with pytest.raises(TypeError, match=r"complex128, float64\).*signatures are"):
        add(np.zeros(3, np.complex128), np.zeros(3))
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(3,\) \(4,\)"):
        add(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="non-broadcastable output operand with shape"):
        add(np.zeros(3), np.zeros(3), out=np.zeros(4))
    with pytest.raises(TypeError, match=r"ufunc 'add' output \(dtype float64\) could not be "
                                        r"coerced to provided output parameter \(dtype int32\)"):
        add(np.zeros(3), np.zeros(3), out=np.zeros(3, np.int32))
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        add(np.zeros(3), np.zeros(3), out=ro)
    with pytest.raises(TypeError, match="accepts 2 positional arguments"):
        add(np.zeros(3))
    with pytest.raises(TypeError, match="unsupported keyword"):
        add(np.zeros(3), np.zeros(3), where=True)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        vectorize(["int32(int32, int32)"], target="cuda")(lambda a, b: a + b)(
            np.zeros(2, np.int32), 2**40)
    with pytest.raises(TypeError, match="must return a scalar"):
        @vectorize(["float64(float64)"], target="cuda")
        def nothing(v):
            pass
    with pytest.raises(TypeError, match="take scalars"):
        vectorize(["float64(float64[:])"])(lambda v: v)
    with pytest.raises(ValueError, match="unsupported vectorize target"):
        vectorize(["float64(float64)"], target="roc")
    with pytest.raises(errors.UnsupportedError, match="attribute 'nope'"):
        vectorize(["float64(float64)"])(lambda v: v.nope)


def test_loop_kernels_take_the_fast_path(backend):
    add = make_add()
    x = np.arange(16, dtype=np.float32)
    add(x, x)
    add(x, 1.0)
    add(x.reshape(4, 4), x[:4])
    texts = add._kernel_texts()
    assert len(texts) == 3
    # The strided loop divides the flat index by the shape. On the GPU, LLVM's DivRemPairs pass
    # rewrites the remainder as a multiply-subtract (NVPTX has no combined div/rem), so look for
    # the division; the two contiguous fast paths need none on the GPU (host kernels also divide
    # to cut the iteration space into chunks).
    dividing = [t for t in texts if "udiv" in t[1]]
    assert dividing
    if backend == "cuda":
        assert len(dividing) == 1


class _ForeignGpuArray:
    """A GPU array of another library, seen only through __cuda_array_interface__ (it keeps the
    memory it describes alive)."""

    def __init__(self, owner):
        self._owner = owner
        self.__cuda_array_interface__ = owner.__cuda_array_interface__


@pytest.mark.gpu
def test_foreign_gpu_arrays_are_read_in_place():
    from ptxjit import _core

    _core.select_target("cuda")
    try:
        add = make_add()
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        y = np.linspace(0, 1, 4, dtype=np.float32)
        fx = _ForeignGpuArray(cuda.to_device(x))
        r = add(fx, cuda.to_device(y))  # broadcast (3, 4) with (4,)
        assert cuda.is_cuda_array(r)
        np.testing.assert_array_equal(r.copy_to_host(), x + y)
        np.testing.assert_array_equal(add(fx, 2.0).copy_to_host(), x + np.float32(2.0))
        out = cuda.device_array((3, 4), np.float32)
        add(fx, fx, out=_ForeignGpuArray(out))  # a foreign output is written in place
        np.testing.assert_array_equal(out.copy_to_host(), x + x)
        try:
            import cupy
        except ImportError:
            return
        c = cupy.asarray(x)
        np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(add(c, c))), x + x)
    finally:
        _core.select_target("cpu")


def test_foreign_gpu_arrays_are_refused_on_the_cpu(cpu):
    add = make_add(target="cpu")
    fake = _ForeignGpuArray(type("Owner", (), {"__cuda_array_interface__": {
        "shape": (4,), "typestr": "<f4", "data": (1 << 40, False), "version": 3,
        "strides": None}})())
    with pytest.raises(TypeError, match="__cuda_array_interface__"):
        add(fake, np.ones(4, np.float32))


# ---- numba-cuda's API: argument counts and target options, with its errors -------------------


def test_argument_counts_raise_numba_cudas_errors(backend):
    add = make_add()
    x = np.zeros(3)
    for args, got in [((x,), "Got 1 positional argument."),
                      ((x, x, x, x), "Got 4 positional arguments.")]:
        with pytest.raises(TypeError) as e:
            add(*args)
        assert str(e.value) == (
            "ufunc 'add': This ufunc accepts 2 positional arguments (when providing input only) "
            "or 3 positional arguments (when providing input and output). " + got)
    with pytest.raises(ValueError) as e:
        add(x, x, x, out=x)
    assert str(e.value) == "cannot specify argument 'out' as both positional and keyword"
    np.testing.assert_array_equal(add(x + 1, x, None), x + 1)  # None: allocated


def _vector_add(a, b):
    return a + b


def test_cuda_target_nopython_warns_once_as_numba_cuda(backend):
    a = np.array([2.0], dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = vectorize([float32(float32, float32)], target="cuda", nopython=True)(_vector_add)
        assert f(a, a)[0] == 4.0
        cuda.vectorize(["float32(float32, float32)"], nopython=True)(_vector_add)
    redundant = [w for w in caught if "nopython kwarg for cuda target is redundant"
                 in str(w.message)]
    assert len(redundant) == 2 and all(w.category is RuntimeWarning for w in redundant)
    assert redundant[0].filename == __file__
    with pytest.warns(RuntimeWarning, match="nopython kwarg for cuda target is redundant"):
        g = vectorize([float32(float32, float32)], target="cuda", nopython=False)(_vector_add)
    assert g(a, a)[0] == 4.0


def test_unknown_options_raise_numbas_key_error():
    sig = [float32(float32, float32)]
    with pytest.raises(KeyError, match="Unrecognized options. cuda vectorize target does not "
                                       "support option: 'nonexistent'"):
        vectorize(sig, target="cuda", nonexistent=2)(_vector_add)
    with pytest.raises(KeyError, match="Unrecognized options"):
        vectorize(sig, target="cuda", nogil=True)  # numba-cuda knows only nopython
    for target in ("cpu", "parallel"):
        with pytest.raises(KeyError, match=r"Unrecognized options: \{'nonexistent'\}"):
            vectorize(sig, target=target, nonexistent=2)(_vector_add)
        with pytest.raises(KeyError, match="Unrecognized options"):
            vectorize(sig, target=target, writable_args=(0,))  # a guvectorize option


def test_host_targets_take_numbas_cpu_options():
    a = np.arange(3, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = vectorize(["float32(float32, float32)"], target="cpu", nopython=True, nogil=True,
                      forceobj=False)(_vector_add)
    np.testing.assert_array_equal(f(a, a), a + a)
    with pytest.raises(TypeError, match="^nopython flag must be True$"):
        vectorize(["float32(float32, float32)"], target="cpu", nopython=False)
    with pytest.raises(TypeError, match="object mode"):
        vectorize(["float32(float32, float32)"], target="parallel", forceobj=True)
