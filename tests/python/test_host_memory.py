"""Pinned, mapped and managed host memory (cuda.pinned_array, cuda.pinned, cuda.mapped_array,
cuda.managed_array): runtime/HostMemory.h, bindings/HostMemory.cpp, ptxjit/_hostarrays.py. On
the CPU backend they are plain host memory behind the same API."""
import gc

import numpy as np
import pytest

from ptxjit import cuda


@cuda.jit
def add_index(x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] += i


def test_pinned_arrays_and_async_copies(backend):
    h = cuda.pinned_array((4, 5), dtype=np.float32)
    assert isinstance(h, np.ndarray) and h.shape == (4, 5) and h.dtype == np.float32
    assert h.flags.c_contiguous
    f = cuda.pinned_array((4, 5), order="F")
    assert f.flags.f_contiguous and f.dtype == np.float64
    h[:] = np.arange(20).reshape(4, 5)
    s = cuda.stream()
    d = cuda.to_device(h, stream=s)
    out = cuda.pinned_array_like(h)
    d.copy_to_host(out, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, h)
    like = cuda.pinned_array_like(np.zeros((10, 12))[::2, ::2])
    assert like.shape == (5, 6) and like.flags.c_contiguous
    assert cuda.pinned_array(0).shape == (0,)
    with pytest.raises(ValueError):
        cuda.pinned_array(3, order="X")


def test_pinned_context_manager(backend):
    a = np.arange(1000, dtype=np.float64)
    b = np.zeros(1000)
    with cuda.pinned(a, b[::-1], np.zeros(0)):
        s = cuda.stream()
        d = cuda.to_device(a, stream=s)
        add_index[4, 256, s](d)
        d.copy_to_host(b, stream=s)
        s.synchronize()
    np.testing.assert_array_equal(b, 2 * a)
    with cuda.pinned(a):  # registered again after the first block ended
        pass
    with pytest.raises(TypeError, match="NumPy arrays"):
        with cuda.pinned([1, 2]):
            pass


@pytest.mark.parametrize("make", [cuda.mapped_array, cuda.managed_array])
def test_device_visible_host_arrays_work_in_place(backend, make):
    m = make(64, dtype=np.int64)
    assert isinstance(m, np.ndarray)
    m[:] = 1
    add_index[1, 64](m)
    cuda.synchronize()
    np.testing.assert_array_equal(m, 1 + np.arange(64))
    v = m[::2]  # a view stays device-visible
    add_index[1, 64](v)
    cuda.synchronize()
    expect = 1 + np.arange(64)
    expect[::2] += np.arange(32)
    np.testing.assert_array_equal(m, expect)
    assert (m + 1).sum() == expect.sum() + 64  # arithmetic gives ordinary arrays
    like = cuda.mapped_array_like(np.zeros((3, 4), order="F"))
    assert like.shape == (3, 4) and like.flags.f_contiguous
    del m, v
    gc.collect()


def test_cpu_host_arrays_offer_no_cuda_interface(cpu):
    m = cuda.mapped_array(4)
    assert not hasattr(m, "__cuda_array_interface__")


@pytest.mark.gpu
def test_mapped_and_managed_interfaces(cuda_target):
    s = cuda.stream()
    for make in (cuda.mapped_array, cuda.managed_array):
        m = make(10, stream=s)
        iface = m.__cuda_array_interface__
        assert iface["stream"] == s.handle and iface["data"][0] != 0
        assert make(10).__cuda_array_interface__["stream"] is None
        assert m[2:].__cuda_array_interface__["data"][0] == iface["data"][0] + 16
        assert not hasattr(m + 1, "__cuda_array_interface__")
