"""Device arrays, copies and streams (host memory on the CPU backend, GPU memory on CUDA)."""
import gc

import numpy as np
import pytest

from ptxjit import cuda, errors


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_to_device_round_trip(backend):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cuda.to_device(a)
    assert d.shape == (3, 4) and d.ndim == 2 and d.size == 12 and len(d) == 3
    assert d.dtype == np.float32 and d.nbytes == 48 and d.strides == (16, 4)
    assert d.is_c_contiguous() and not d.is_f_contiguous()
    h = d.copy_to_host()
    assert isinstance(h, np.ndarray) and h.dtype == np.float32
    np.testing.assert_array_equal(h, a)
    assert not np.shares_memory(h, a)
    assert d.backend == backend
    assert "DeviceNDArray" in repr(d)


def test_to_host_copies_back_into_the_original(backend):
    a = np.zeros(8, dtype=np.int32)
    d = cuda.to_device(a)
    add_one[1, 8](d)
    assert (a == 0).all()  # device arrays are used in place, the host array is untouched
    back = d.to_host()
    assert back is a
    assert (a == 1).all()


def test_copy_to_host_into_given_array(backend):
    d = cuda.to_device(np.arange(6.0))
    out = np.empty(6)
    assert d.copy_to_host(out) is out
    assert out.tolist() == list(range(6))
    strided = np.zeros(12)[::2]
    d.copy_to_host(strided)
    assert strided.tolist() == list(range(6))
    with pytest.raises(ValueError, match="shape"):
        d.copy_to_host(np.empty(5))
    with pytest.raises(TypeError, match="dtype"):
        d.copy_to_host(np.empty(6, dtype=np.float32))


def test_copy_to_device(backend):
    d = cuda.device_array(5, dtype=np.int64)
    d.copy_to_device(np.arange(5))
    assert d.copy_to_host().tolist() == [0, 1, 2, 3, 4]
    d.copy_to_device(np.arange(10)[::2])  # non-contiguous source
    assert d.copy_to_host().tolist() == [0, 2, 4, 6, 8]
    d.copy_to_device([5, 6, 7, 8, 9])  # array-likes
    assert d.copy_to_host().tolist() == [5, 6, 7, 8, 9]
    other = cuda.to_device(np.full(5, 3, dtype=np.int64))
    d.copy_to_device(other)  # device to device
    assert d.copy_to_host().tolist() == [3] * 5
    with pytest.raises(ValueError):
        d.copy_to_device(np.arange(4))
    to = cuda.device_array(5, dtype=np.int64)
    assert cuda.to_device(np.arange(5), to=to) is to
    assert to.copy_to_host().tolist() == [0, 1, 2, 3, 4]


def test_device_array_and_like(backend):
    d = cuda.device_array((4, 3))
    assert d.shape == (4, 3) and d.dtype == np.float64 and d.strides == (24, 8)
    f = cuda.device_array((4, 3), dtype=np.float32, order="F")
    assert f.strides == (4, 16) and f.is_f_contiguous() and not f.is_c_contiguous()
    like = cuda.device_array_like(np.zeros((2, 5), dtype=np.int16, order="F"))
    assert like.shape == (2, 5) and like.dtype == np.int16 and like.is_f_contiguous()
    like2 = cuda.device_array_like(d)
    assert like2.shape == d.shape and like2.dtype == d.dtype
    e = cuda.device_array(0)
    assert e.size == 0 and e.copy_to_host().shape == (0,)
    one = cuda.device_array(7, dtype=np.uint8)
    assert one.shape == (7,)
    with pytest.raises(ValueError):
        cuda.device_array(-1)
    with pytest.raises(TypeError, match="dtype object are not supported"):
        cuda.device_array(3, dtype="O")
    with pytest.raises(TypeError, match=r"datetime64\[2s\] are not supported"):
        cuda.device_array(3, dtype="M8[2s]")  # multiples of a unit: numba has none either
    assert cuda.device_array(3, dtype="M8[s]").dtype == np.dtype("M8[s]")


def test_fortran_order_round_trip_and_kernel(backend):
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    d = cuda.to_device(a)
    assert d.is_f_contiguous()
    h = d.copy_to_host()
    np.testing.assert_array_equal(h, a)
    assert h.flags.f_contiguous

    @cuda.jit
    def k(m):
        i, j = cuda.grid(2)
        if i < m.shape[0] and j < m.shape[1]:
            m[i, j] = m[i, j] * 10 + i

    k[(1, 1), (4, 4)](d)
    np.testing.assert_array_equal(d.copy_to_host(), a * 10 + np.arange(3)[:, None])
    assert str(k.signatures[0][0]) == "array(float64, 2d, F)"


def test_non_contiguous_host_array_to_device(backend):
    a = np.arange(20.0).reshape(4, 5)[:, 1:4]
    d = cuda.to_device(a)
    assert d.is_c_contiguous()
    np.testing.assert_array_equal(d.copy_to_host(), a)
    d.to_host()  # back into the strided original


def test_reshape_ravel_transpose(backend):
    d = cuda.to_device(np.arange(6.0))
    r = d.reshape(2, 3)
    assert r.shape == (2, 3)
    np.testing.assert_array_equal(r.copy_to_host(), np.arange(6.0).reshape(2, 3))
    assert d.reshape((3, -1)).shape == (3, 2)
    assert r.ravel().shape == (6,)
    t = r.T  # numba-cuda's transpose: a C-contiguous copy made on the device
    assert t.shape == (3, 2) and t.is_c_contiguous()
    np.testing.assert_array_equal(t.copy_to_host(), np.arange(6.0).reshape(2, 3).T)
    with pytest.raises(ValueError):
        d.reshape(4, 2)
    with pytest.raises(NotImplementedError, match="copying"):
        r[:, ::2].reshape(4)


def test_array_protocol(backend):
    d = cuda.to_device(np.arange(3, dtype=np.int32))
    assert np.asarray(d).tolist() == [0, 1, 2]
    assert np.asarray(d, dtype=np.float64).dtype == np.float64


def test_cpu_device_arrays_have_no_cuda_interface(cpu):
    d = cuda.to_device(np.zeros(3))
    assert cuda.is_cuda_array(d)  # a device array of the backend in use
    with pytest.raises(AttributeError):
        d.__cuda_array_interface__  # but its memory is host memory: not for GPU libraries


@pytest.mark.gpu
def test_cuda_array_interface():
    from ptxjit import _core

    _core.select_target("cuda")
    try:
        d = cuda.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
        iface = d.__cuda_array_interface__
        assert iface["version"] == 3
        assert iface["shape"] == (2, 3) and iface["strides"] is None
        assert iface["typestr"] == "<f4"
        assert isinstance(iface["data"][0], int) and iface["data"][0] != 0
        assert iface["data"][1] is False
        assert cuda.is_cuda_array(d)
    finally:
        _core.select_target("cpu")


def test_memory_is_released(backend):
    # Many large arrays in a row: without release this would exhaust memory.
    for _ in range(50):
        d = cuda.device_array(1 << 24, dtype=np.uint8)  # 16 MiB
        del d
    gc.collect()


def test_streams(backend):
    s = cuda.stream()
    a = np.arange(1000, dtype=np.float64)
    d = cuda.to_device(a, stream=s)
    add_one[4, 256, s](d)
    out = d.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, a + 1)
    assert d.stream is s
    with s.auto_synchronize():
        add_one[4, 256, s](d)
    np.testing.assert_array_equal(d.copy_to_host(), a + 2)
    ds = cuda.default_stream()
    ds.synchronize()
    add_one[4, 256, ds](d)
    cuda.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), a + 3)
    assert isinstance(s.handle, int)
    with pytest.raises(TypeError):
        cuda.to_device(a, stream="not a stream")
    with pytest.raises(TypeError):
        add_one[1, 1, "nope"]


def test_large_transfers_arrive_whole_and_in_stream_order(backend):
    """Host arrays of tens of MiB, which the GPU copies in waves through a pinned ring once it
    is ready (docs/api.md): to_device, copy_to_host (new or given array), copy_to_device and a
    launch on a host array give every byte back, after the work queued before them on the
    stream, on the legacy stream and on a cuda.stream(). Repeated, with pauses, so that later
    rounds find the ring ready (its set-up runs in the background)."""
    import time

    n = (5 << 20) + 12345  # float32: about 20 MiB, several waves and a short last one
    host = np.random.default_rng(3).random(n, dtype=np.float32)
    grid = (n + 255) // 256
    for rep in range(4):
        s = cuda.stream() if rep % 2 else cuda.default_stream()
        d = cuda.to_device(host, stream=s)
        add_one[grid, 256, s](d)
        out = np.zeros_like(host)
        d.copy_to_host(out, stream=s)
        s.synchronize()
        np.testing.assert_array_equal(out, host + 1)
        d.copy_to_device(host[::-1].copy(), stream=s)
        add_one[grid, 256, s](d)
        back = d.copy_to_host(stream=s)
        s.synchronize()
        np.testing.assert_array_equal(back, host[::-1] + 1)
        h = host.copy()
        add_one[grid, 256, s](h)  # staged in and back
        np.testing.assert_array_equal(h, host + 1)
        time.sleep(0.05)


def test_device_arrays_of_another_backend_are_refused(cpu):
    from ptxjit import _core

    d = cuda.to_device(np.zeros(4))
    if not cuda.is_available():
        pytest.skip("needs both backends")
    _core.select_target("cuda")
    try:
        with pytest.raises(TypeError, match="belongs to the cpu backend"):
            add_one[1, 4](d)
    finally:
        _core.select_target("cpu")


def test_impossible_sizes_raise_instead_of_crashing(backend):
    with pytest.raises((ValueError, OverflowError, TypeError)):
        cuda.device_array((2**62, 2**10))
    with pytest.raises((MemoryError, errors.CudaDriverError)):
        cuda.device_array(2**50, dtype=np.uint8)


@pytest.mark.gpu
def test_interoperates_with_cupy():
    cupy = pytest.importorskip("cupy")
    from ptxjit import _core

    _core.select_target("cuda")
    try:
        c = cupy.arange(10, dtype=cupy.float64)
        add_one[1, 32](c)  # a foreign GPU array, through __cuda_array_interface__
        assert cupy.asnumpy(c).tolist() == [float(v + 1) for v in range(10)]
        d = cuda.to_device(np.arange(6, dtype=np.int32))
        add_one[1, 32](d)
        view = cupy.asarray(d)  # our array, read by CuPy without a copy
        assert cupy.asnumpy(view).tolist() == [1, 2, 3, 4, 5, 6]
    finally:
        _core.select_target("cpu")


class FakeGpuArray:
    """Something that claims to live in GPU memory."""

    def __init__(self, typestr="<f8", shape=(4,)):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (0x1000, False), "strides": None, "version": 3}


def test_foreign_gpu_arrays_are_refused_on_cpu(cpu):
    with pytest.raises(TypeError, match="CPU backend"):
        add_one[1, 4](FakeGpuArray())
    with pytest.raises(TypeError, match="typestr"):
        add_one[1, 4](FakeGpuArray(typestr="<M8[2s]"))  # multiples of a unit
