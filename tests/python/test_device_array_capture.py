"""Device arrays captured by kernels as globals or closure variables: taken by reference (their
address, shape and strides are baked into the code, as numba-cuda does), so kernels read and
write the array itself; such code is never disk-cached. NumPy arrays stay frozen constants."""
import numpy as np
import pytest

from ptxjit import cuda, errors

captured = None  # set by the tests: a module global the kernels below read


def test_global_device_array_is_read_and_written_in_place(backend):
    global captured
    captured = cuda.to_device(np.arange(5, dtype=np.float32))

    @cuda.jit(device=True)
    def read(i):
        return captured[i]

    @cuda.jit
    def kernel(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = read(i) * 2
            captured[i] = -1

    out = cuda.device_array(5, dtype=np.float32)
    kernel[1, 5](out)
    np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(5))
    np.testing.assert_array_equal(captured.copy_to_host(), np.full(5, -1))


def test_closure_arrays_of_any_layout_and_rank(backend):
    m = cuda.to_device(np.arange(6, dtype=np.int64).reshape(2, 3))
    f = cuda.to_device(np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3)))
    rev = cuda.to_device(np.arange(10, dtype=np.int64))[::-2]
    zero = cuda.to_device(np.array(42.0, dtype=np.float32))

    @cuda.jit
    def kernel(out, scalar_out):
        i = cuda.grid(1)
        if i < 6:
            out[i] = m[i // 3, i % 3] + 10 * f[i // 3, i % 3] + 100 * rev[i % 5]
        if i == 0:
            scalar_out[()] = zero[()] * 2.0

    out = cuda.device_array(6, dtype=np.int64)
    scalar_out = cuda.device_array((), dtype=np.float32)
    kernel[1, 8](out, scalar_out)
    flat = np.arange(6)
    np.testing.assert_array_equal(out.copy_to_host(),
                                  flat * 11 + 100 * np.arange(10)[::-2][flat % 5])
    assert scalar_out.copy_to_host() == 84.0
    ptx, _ = cuda.compile_ptx(kernel.py_func, "void(int64[:], float32[::1])")
    assert ".entry" in ptx


def test_whole_array_index_with_an_empty_tuple(backend):
    @cuda.jit
    def kernel(a):
        whole = a[()]
        whole[1] = 7

    a = cuda.to_device(np.zeros(3))
    kernel[1, 1](a)
    assert a.copy_to_host().tolist() == [0.0, 7.0, 0.0]


def test_captured_arrays_are_not_disk_cached(backend, tmp_path, monkeypatch):
    monkeypatch.setenv("PTXJIT_CACHE_DIR", str(tmp_path))
    arr = cuda.to_device(np.ones(4))

    @cuda.jit(cache=True)
    def kernel(out):
        i = cuda.grid(1)
        if i < 4:
            out[i] = arr[i] + 1

    @cuda.jit(cache=True)
    def plain(out):
        i = cuda.grid(1)
        if i < 4:
            out[i] = 1

    out = cuda.device_array(4)
    kernel[1, 4](out)
    assert out.copy_to_host().tolist() == [2.0] * 4
    assert not any(p.is_file() for p in tmp_path.rglob("*"))
    plain[1, 4](out)  # the same file, without a captured array: cached
    assert any(p.is_file() for p in tmp_path.rglob("*"))


def test_foreign_gpu_arrays_cannot_be_captured_on_cpu(cpu):
    class Foreign:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (0x1000, False),
                                    "version": 3, "strides": None}

    foreign = Foreign()

    @cuda.jit
    def kernel(out):
        out[0] = foreign[0]

    with pytest.raises(errors.TypingError, match="CPU backend cannot use"):
        kernel[1, 1](np.zeros(1))


@pytest.mark.gpu
def test_foreign_arrays_are_captured_by_reference(cuda_target):
    d = cuda.to_device(np.arange(4.0))

    class Foreign:
        def __init__(self, arr):
            self.arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    foreign = Foreign(d)

    @cuda.jit
    def kernel(out):
        i = cuda.grid(1)
        if i < 4:
            out[i] = foreign[i]
            foreign[i] = 0

    out = cuda.device_array(4)
    kernel[1, 4](out)
    assert out.copy_to_host().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert d.copy_to_host().tolist() == [0.0] * 4
