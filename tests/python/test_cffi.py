"""numba's cffi support in kernels: `ffi.from_buffer(array)` gives the array's data pointer
(a CPointer), for foreign device functions that take pointers and for `carray`."""
import numpy as np
import pytest

from ptxjit import carray, cuda, errors, types

cffi = pytest.importorskip("cffi")

ffi = cffi.FFI()


@cuda.jit
def doubled_through_pointers(x, out):
    i = cuda.grid(1)
    if i < x.size:
        p = ffi.from_buffer(x[i:])  # a C-contiguous view: its first element is x[i]
        out[i] = carray(p, 1)[0] * 2


def test_from_buffer_gives_the_data_pointer(backend):
    x = np.arange(10, dtype=np.int32)
    out = np.zeros_like(x)
    doubled_through_pointers[1, 16](x, out)
    np.testing.assert_equal(out, x * 2)
    local = cffi.FFI()  # a closure variable too

    @cuda.jit
    def store(a):
        carray(local.from_buffer(a), a.size)[1] = 7.5

    a = np.zeros(3, dtype=np.float32)
    store[1, 1](a)
    np.testing.assert_equal(a, [0, 7.5, 0])


def test_from_buffer_misuse_is_a_located_error(cpu):
    x = np.zeros(4, dtype=np.int32)
    cases = [("ffi.from_buffer(x[::2])", errors.TypingError, "non-contiguous buffers"),
             ("ffi.from_buffer(x, x)", errors.TypingError, "it takes one array"),
             ("ffi.from_buffer(1)", errors.TypingError, "it takes one array"),
             ("ffi.new('int *')", errors.UnsupportedError, r"attribute 'new' of cffi.FFI")]
    for source, cls, message in cases:
        ns = {"ffi": ffi, "cuda": cuda}
        exec(f"def bad(x):\n    p = {source}\n", ns)
        with pytest.raises(cls, match=message):
            cuda.jit(ns["bad"])[1, 1](x)


@pytest.mark.gpu
def test_from_buffer_passes_pointers_to_foreign_code(cuda_target):
    consume = cuda.declare_device("consume", types.void(types.CPointer(types.int32)), abi="c",
                                  link=cuda.CUSource('extern "C" __device__ void consume(int *p)'
                                                     ' { *p = 42; }'))

    @cuda.jit
    def kernel(x):
        i = cuda.grid(1)
        if i < len(x):
            consume(ffi.from_buffer(x[i:]))

    x = np.zeros(10, dtype=np.int32)
    kernel[1, 32](x)
    np.testing.assert_equal(x, 42)
