"""DeviceNDArray as numba-cuda's: indexing and slicing into views that share memory, assignment
on the device, reshapes, dtype views, transposes, contiguity flags, streams, pickling and the
CUDA array interface (runtime/ArrayGeometry.h, bindings/DeviceArray.cpp, ptxjit/_devicearray.py).
Each test runs on the CPU backend and, with a GPU, on CUDA."""
import pickle

import numpy as np
import pytest

from ptxjit import cuda


@cuda.jit
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] *= factor


@cuda.jit
def fill_rows(m):
    i, j = cuda.grid(2)
    if i < m.shape[0] and j < m.shape[1]:
        m[i, j] = 100 * i + j


def test_element_indexing_copies_a_scalar_back(backend):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cuda.to_device(a)
    assert d[1, 2] == a[1, 2] and isinstance(d[1, 2], np.float32)
    assert d[-1, -1] == 11
    assert d[2][3] == 11  # a row view, then an element
    assert d[np.int64(1), np.int32(0)] == 4
    z = cuda.to_device(np.array(7, dtype=np.int16))
    assert z[()] == 7 and z[...].shape == ()
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        d[0, 4]
    with pytest.raises(IndexError, match="too many indices"):
        d[0, 0, 0]
    with pytest.raises(IndexError, match="valid indices"):
        d[[0, 1]]
    with pytest.raises(IndexError, match="valid indices"):
        d[True]


@pytest.mark.parametrize("key", [
    np.s_[1:], np.s_[::2], np.s_[1:8:3], np.s_[::-1], np.s_[-2:-9:-3], np.s_[5:2],
    np.s_[:, 1], np.s_[1, :], np.s_[::2, ::-2], np.s_[..., 3], np.s_[None, 2:], np.s_[:, None, 1],
    np.s_[1, ...], np.s_[-100:100],
])
def test_slices_are_views_like_numpy(backend, key):
    a = np.arange(60, dtype=np.int64).reshape(6, 10)
    d = cuda.to_device(a)
    v = d[key]
    expect = a[key]
    assert v.shape == expect.shape and v.strides == expect.strides
    assert v.flags == {"C_CONTIGUOUS": expect.flags.c_contiguous,
                       "F_CONTIGUOUS": expect.flags.f_contiguous}
    if any(st < 0 and n > 1 for st, n in zip(v.strides, v.shape)):
        with pytest.raises(NotImplementedError, match="negative strides"):
            v.copy_to_host()
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(v)).copy_to_host(), expect)
    else:
        np.testing.assert_array_equal(v.copy_to_host(), expect)


def test_views_share_memory_with_kernels(backend):
    a = np.arange(10, dtype=np.float64)
    d = cuda.to_device(a)
    scale[1, 32](d[::2], 10.0)  # a strided view is a kernel argument (layout A)
    scale[1, 32](d[::-3], -1.0)  # negative strides too
    expect = a.copy()
    expect[::2] *= 10
    expect[::-3] *= -1
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    assert "A" in str(scale.signatures[0][0])
    m = cuda.device_array((4, 6), dtype=np.int32)
    m[:] = 0
    fill_rows[(1, 1), (8, 8)](m[1:3, ::2])
    host = np.zeros((4, 6), dtype=np.int32)
    host[1:3, ::2] = 100 * np.arange(2)[:, None] + np.arange(3)
    np.testing.assert_array_equal(m.copy_to_host(), host)


def test_setitem_scalars_arrays_and_device_arrays(backend):
    d = cuda.to_device(np.zeros((4, 5), dtype=np.float32))
    expect = np.zeros((4, 5), dtype=np.float32)
    d[1, 2] = 7
    expect[1, 2] = 7
    d[0] = 1.5  # a row, broadcast scalar
    expect[0] = 1.5
    d[:, 4] = np.arange(4)  # a strided column from a host array (converted to float32)
    expect[:, 4] = np.arange(4)
    d[2:, :2] = cuda.to_device(np.array([[9, 8]], dtype=np.int64))  # broadcast rows, int64
    expect[2:, :2] = [[9, 8]]
    d[::-1, 3] = np.arange(4)
    expect[::-1, 3] = np.arange(4)
    d[...] = d[...]  # the same memory: read before written
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    d[1:, :] = d[:-1, :]  # overlapping: as NumPy, the source is read first
    expect[1:, :] = expect[:-1, :].copy()
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    with pytest.raises(ValueError, match="Can't copy sequence with size 3 to array axis 0 with dimension 5"):
        d[0] = np.arange(3)
    with pytest.raises(ValueError, match="Can't assign 2-D array to 1-D self"):
        d[0] = np.zeros((1, 5))
    empty = cuda.device_array(0)
    empty[:] = cuda.to_device(np.arange(0.0))  # nothing to copy (numba-cuda issue #5017)


def test_reshape_ravel_squeeze_view_split(backend):
    a = np.arange(24, dtype=np.int32)
    d = cuda.to_device(a)
    r = d.reshape(2, 3, 4)
    assert r.shape == (2, 3, 4) and r.strides == (48, 16, 4)
    assert d.reshape((4, -1)).shape == (4, 6)
    f = d.reshape(4, 6, order="F")
    assert f.is_f_contiguous() and not f.is_c_contiguous()
    np.testing.assert_array_equal(f.copy_to_host(), a.reshape(4, 6, order="F"))
    strided = r[:, 1:2].reshape(2, 4)  # not contiguous, yet no copy is needed
    assert strided.strides == (48, 4)
    np.testing.assert_array_equal(strided.copy_to_host(), a.reshape(2, 3, 4)[:, 1])
    with pytest.raises(NotImplementedError, match="requires copying"):
        r[:, ::2].reshape(16)
    with pytest.raises(ValueError, match="cannot reshape array of size 24"):
        d.reshape(5, 5)
    assert r.ravel().shape == (24,) and f.ravel(order="F").shape == (24,)
    with pytest.raises(NotImplementedError, match="non-contiguous"):
        d[::2].ravel()
    s = d.reshape(1, 24, 1).squeeze()
    assert s.shape == (24,)
    assert d.reshape(1, 24, 1).squeeze(axis=2).shape == (1, 24)
    with pytest.raises(ValueError, match="size not equal to one"):
        d.reshape(1, 24).squeeze(axis=1)
    u = d.view(np.uint8)
    assert u.shape == (96,) and u.dtype == np.uint8
    np.testing.assert_array_equal(u.copy_to_host(), a.view(np.uint8))
    assert d.view(np.float32).shape == (24,)
    assert d.view(np.int64).shape == (12,)
    with pytest.raises(ValueError, match="C-contiguous"):
        d[::2].view(np.int64)
    parts = list(d.split(10))
    assert [p.shape for p in parts] == [(10,), (10,), (4,)]
    np.testing.assert_array_equal(parts[2].copy_to_host(), a[20:])
    parts[1][0] = -1  # views: writes reach the array
    assert d[10] == -1
    with pytest.raises(ValueError, match="1d"):
        r.split(2)


def test_transpose_is_a_contiguous_copy(backend):
    # numba-cuda's transpose: a new C-contiguous array made on the device.
    a = np.arange(120, dtype=np.int64).reshape(10, 12)
    d = cuda.to_device(a)
    t = d[::2, ::2].T
    assert t.shape == (6, 5) and t.strides == (40, 8)
    np.testing.assert_array_equal(t.copy_to_host(), a[::2, ::2].T)
    np.testing.assert_array_equal(d.transpose((1, 0)).copy_to_host(), a.T)
    assert d.transpose((0, 1)) is d
    with pytest.raises(NotImplementedError, match="non-2D"):
        cuda.device_array((2, 3, 4)).T
    with pytest.raises(ValueError, match="invalid axes"):
        d.transpose((0, 2))


def test_copies_between_layouts(backend):
    a = np.arange(12.0).reshape(3, 4)
    d = cuda.to_device(a)
    f = np.zeros((3, 4), order="F")
    d.copy_to_host(f)  # into an F-order host array
    np.testing.assert_array_equal(f, a)
    hs = np.zeros((6, 8))[::2, ::2]
    d.copy_to_host(hs)  # into a strided host array
    np.testing.assert_array_equal(hs, a)
    fd = cuda.device_array((3, 4), order="F")
    fd.copy_to_device(d)  # C device array into an F one: copied on the device
    np.testing.assert_array_equal(fd.copy_to_host(), a)
    big = cuda.to_device(np.zeros((6, 8)))
    big[::2, ::2].copy_to_device(a)  # a strided destination: its gaps are left alone
    expect = np.zeros((6, 8))
    expect[::2, ::2] = a
    np.testing.assert_array_equal(big.copy_to_host(), expect)
    d.copy_to_device(np.ones((1, 3, 4)))  # shapes equal but for axes of length 1
    np.testing.assert_array_equal(d.copy_to_host(), np.ones((3, 4)))
    with pytest.raises(TypeError, match="incompatible dtype"):
        d.copy_to_device(np.ones((3, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="incompatible shape"):
        d.copy_to_host(np.ones((4, 3)))


def test_device_array_like_of_views(backend):
    for order in "CF":
        view = np.zeros((10, 12), order=order)[::2, ::2]
        like = cuda.device_array_like(cuda.device_array((10, 12), order=order)[::2, ::2])
        assert like.strides == np.zeros_like(view).strides
    like = cuda.device_array_like(cuda.device_array((10, 12))[::2, ::2].T)
    assert like.strides == (40, 8) and like.flags["C_CONTIGUOUS"]


def test_attributes(backend):
    d = cuda.to_device(np.arange(10, dtype=np.float64))
    v = d[2:8:2]
    assert len(v) == 3 and v.size == 3 and v.nbytes == 24
    assert v.alloc_size == 40  # the bytes its elements span
    assert v.device_ctypes_pointer.value == d.device_ctypes_pointer.value + 16
    assert cuda.device_array(0).device_ctypes_pointer.value is None
    np.testing.assert_array_equal(np.asarray(v), [2.0, 4.0, 6.0])
    with pytest.raises(ValueError, match="copy=False"):
        v.__array__(copy=False)
    with pytest.raises(TypeError):
        len(cuda.device_array(()))
    assert cuda.is_cuda_array(d) and not cuda.is_cuda_array(np.zeros(2))


def test_streams_of_views_and_bind(backend):
    s = cuda.stream()
    d = cuda.device_array(8, stream=s)
    assert d[2:].stream is s and d.reshape(2, 4).stream is s
    b = cuda.to_device(np.arange(8.0)).bind(s)
    assert b.stream is s
    assert b.getitem(3, stream=s) == 3.0
    b.setitem(slice(0, 2), 5.0, stream=s)
    s.synchronize()
    assert b.copy_to_host(stream=s)[:3].tolist() == [5.0, 5.0, 2.0]
    assert b.bind().stream == 0


def test_pickling_round_trips_through_the_host(backend):
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    d = cuda.to_device(a)
    back = pickle.loads(pickle.dumps(d))
    assert isinstance(back, cuda.DeviceNDArray) and back.backend == d.backend
    np.testing.assert_array_equal(back.copy_to_host(), a)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(d[:, ::2])).copy_to_host(), a[:, ::2])


def test_as_cuda_array_shares_memory(backend):
    d = cuda.to_device(np.arange(10.0))
    w = cuda.as_cuda_array(d)
    assert w.device_ctypes_pointer.value == d.device_ctypes_pointer.value
    w[:5] = np.pi
    assert d[0] == np.pi
    np.testing.assert_array_equal(cuda.as_cuda_array(d[::2]).copy_to_host(), d.copy_to_host()[::2])
    with pytest.raises(TypeError, match="cuda array interface"):
        cuda.as_cuda_array(np.zeros(3))


def test_masked_interfaces_are_refused(backend):
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        cuda.from_cuda_array_interface({"shape": (2,), "typestr": "<f8", "data": (0, False),
                                        "version": 3, "mask": object()})


def test_events_time_work(backend):
    start, stop = cuda.event(), cuda.event()
    d = cuda.to_device(np.ones(1024))
    start.record()
    scale[4, 256](d, 2.0)
    stop.record()
    stop.synchronize()
    assert stop.query()
    ms = cuda.event_elapsed_time(start, stop)
    assert ms >= 0 and start.elapsed_time(stop) == ms
    s = cuda.stream()
    stop.wait(s)  # later work on s waits for stop
    scale[4, 256, s](d, 2.0)
    s.synchronize()
    assert d[0] == 4.0
    untimed = cuda.event(timing=False)
    untimed.record()
    from ptxjit import errors

    with pytest.raises(errors.CudaDriverError, match="CUDA_ERROR_INVALID_HANDLE"):
        cuda.event_elapsed_time(untimed, stop)
    with pytest.raises(errors.CudaDriverError, match="CUDA_ERROR_INVALID_HANDLE"):
        cuda.event_elapsed_time(cuda.event(), stop)  # never recorded


@pytest.mark.gpu
def test_cuda_array_interface_v3(cuda_target):
    s = cuda.stream()
    d = cuda.device_array((2, 3, 4), stream=s)
    iface = d.__cuda_array_interface__
    assert iface["strides"] is None and iface["stream"] == s.handle and iface["version"] == 3
    assert d[:, 1, :].__cuda_array_interface__["strides"] == (96, 8)
    r = cuda.to_device(np.arange(10.0))
    base = r.__cuda_array_interface__["data"][0]
    rev = r[::-1].__cuda_array_interface__
    assert rev["data"][0] - base == 72 and rev["strides"] == (-8,)
    assert cuda.device_array(0).__cuda_array_interface__["data"][0] == 0
    assert cuda.device_array(3).__cuda_array_interface__["stream"] is None

    class Foreign:
        def __init__(self, arr):
            self.arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    w = cuda.as_cuda_array(Foreign(d))
    assert w.stream.external and w.stream.handle == s.handle
    assert w.device_ctypes_pointer.value == d.device_ctypes_pointer.value
    face = r.__cuda_array_interface__
    face["strides"] = (8,)
    np.testing.assert_array_equal(cuda.from_cuda_array_interface(face).copy_to_host(),
                                  np.arange(10.0))


def test_stream_kinds(backend):
    for s in (cuda.stream(), cuda.default_stream(), cuda.legacy_default_stream(),
              cuda.per_thread_default_stream()):
        s.synchronize()
        d = cuda.to_device(np.arange(4.0), stream=s)
        assert d.copy_to_host(stream=s).tolist() == [0.0, 1.0, 2.0, 3.0]
    ext = cuda.external_stream(0x12345678)
    assert ext.external and not cuda.stream().external
    if backend == "cuda":
        assert int(ext.handle) == 0x12345678
        assert cuda.per_thread_default_stream().handle == 2  # CU_STREAM_PER_THREAD


def test_numba_devicearray_helpers(backend):
    import ptxjit.cuda.cudadrv.devicearray as devicearray

    assert devicearray is cuda.devicearray is cuda.cudadrv.devicearray
    assert devicearray.DeviceNDArray is cuda.DeviceNDArray
    d, converted = devicearray.auto_device(2)
    assert converted and d.copy_to_host() == 2
    same, converted = devicearray.auto_device(d)
    assert same is d and not converted
    with pytest.raises(ValueError, match="non-contiguous"):
        devicearray.auto_device(np.arange(10.0)[:-1:2])
    bcast = np.broadcast_to(np.arange(3.0), (4, 3))  # broadcast axes do not count
    devicearray.sentry_contiguous(bcast)
    like = devicearray.from_array_like(np.zeros((3, 4), order="F"))
    assert like.strides == (8, 24)
    assert devicearray.is_cuda_ndarray(d) and not devicearray.is_cuda_ndarray(np.zeros(1))
