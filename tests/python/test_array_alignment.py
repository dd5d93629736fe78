"""The alignment= keyword of cuda.local.array and cuda.shared.array (numba-cuda's): the arrays'
addresses (a.ctypes.data) really aligned on both backends, the alignment in the generated code,
and numba-cuda's checks of the value."""
import re

import numpy as np
import pytest

from ptxjit import cuda, errors

RECORD = np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)], align=False)


@pytest.mark.parametrize("dtype", [np.uint8, np.float64, RECORD])
@pytest.mark.parametrize("alignment", [None, 8, 16, 64, 256, 1024])
@pytest.mark.parametrize("shape", [1, 50, (2, 3)])
def test_local_and_shared_arrays_are_aligned(backend, dtype, alignment, shape):
    @cuda.jit
    def k(out):
        loc = cuda.local.array(shape, dtype, alignment=alignment)
        # A second shared array first, so that the aligned one does not start the block's memory.
        pad = cuda.shared.array(3, np.uint8)
        shr = cuda.shared.array(shape=shape, dtype=dtype, alignment=alignment)
        pad[0] = 1
        if cuda.threadIdx.x == 0:
            out[0] = loc.ctypes.data
            out[1] = shr.ctypes.data
            out[2] = pad.ctypes.data

    out = np.zeros(3, dtype=np.uint64)
    k[2, 4](out)
    assert out[0] != 0 and out[1] != 0
    if alignment is not None:
        assert out[0] % alignment == 0
        assert out[1] % alignment == 0
    else:  # the default: at least the element's alignment
        assert out[1] % 8 == 0


def test_dynamic_shared_arrays_are_aligned_together(backend):
    @cuda.jit
    def k(out):
        s = cuda.shared.array(3, np.uint8)
        d = cuda.shared.array(0, np.float32, alignment=256)
        e = cuda.shared.array(0, np.uint8)
        s[0] = 1
        out[0] = d.ctypes.data
        out[1] = e.ctypes.data
        out[2] = d.size
        out[3] = s.ctypes.data

    out = np.zeros(4, dtype=np.uint64)
    k[1, 1, 0, 64](out)
    assert out[0] % 256 == 0
    assert out[1] == out[0]  # every dynamic array aliases the same memory
    assert out[2] == 16
    assert out[3] != out[0]


def test_aligned_arrays_work_as_arrays(backend):
    @cuda.jit
    def k(x, out):
        i = cuda.threadIdx.x
        s = cuda.shared.array(32, np.float32, alignment=128)
        t = cuda.local.array((2, 4), np.int64, alignment=64)
        s[i] = x[i] * 2
        for r in range(2):
            for c in range(4):
                t[r, c] = r * 10 + c + i
        cuda.syncthreads()
        out[i] = s[31 - i] + t[1, 3]

    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, dtype=np.float32)
    k[1, 32](x, out)
    np.testing.assert_array_equal(out, x[::-1] * 2 + 13 + np.arange(32))


def test_alignment_in_the_llvm_ir(cpu):
    @cuda.jit
    def k(out):
        loc = cuda.local.array(5, np.uint8, alignment=256)
        shr = cuda.shared.array((2, 3), np.uint32, alignment=64)
        loc[0] = 1
        shr[0, 0] = 2
        out[0] = loc[0] + shr[0, 0]
        out[1] = loc.ctypes.data  # keeps the local array in memory

    out = np.zeros(2, dtype=np.uint64)
    k[1, 1](out)
    assert out[0] == 3
    llvm = k.inspect_llvm(k.signatures[0])  # the CUDA module's IR
    assert re.search(r"= alloca \[5 x i8\], align 256", llvm), llvm
    assert re.search(r"addrspace\(3\) global \[6 x i32\] undef, align 64", llvm), llvm


@pytest.mark.gpu
def test_alignment_in_ptx(cuda_target):
    @cuda.jit
    def k(out):
        shr = cuda.shared.array(7, np.uint8, alignment=128)
        loc = cuda.local.array(7, np.uint8, alignment=64)
        shr[cuda.threadIdx.x] = 1
        loc[cuda.threadIdx.x] = 2
        out[0] = shr.ctypes.data + loc.ctypes.data

    out = np.zeros(1, dtype=np.uint64)
    k[1, 1](out)
    ptx = k.inspect_asm(k.signatures[0])
    assert re.search(r"\.shared \.align 128 \.b8 \w+\[7\]", ptx), ptx
    assert re.search(r"\.local \.align 64 \.b8", ptx), ptx


@pytest.mark.parametrize("which", ["local", "shared"])
@pytest.mark.parametrize("alignment,message", [
    (-1, "Alignment must be positive"),
    (0, "Alignment must be positive"),
    (3, "Alignment must be a power of 2"),
    (48, "Alignment must be a power of 2"),
    (4, "Alignment must be a multiple of 8"),
])
def test_invalid_alignment_values_are_value_errors(cpu, which, alignment, message):
    @cuda.jit
    def k(out):
        if which == "local":
            a = cuda.local.array(4, np.uint8, alignment=alignment)
        else:
            a = cuda.shared.array(4, np.uint8, alignment=alignment)
        out[0] = a.ctypes.data

    with pytest.raises(ValueError, match=message) as info:
        k[1, 1](np.zeros(1, dtype=np.uint64))
    assert isinstance(info.value, errors.NumbaValueError)


@pytest.mark.parametrize("alignment", [1.0, "16", True])
def test_non_constant_alignment_is_a_typing_error(cpu, alignment):
    @cuda.jit
    def k(out):
        a = cuda.local.array(4, np.uint8, alignment=alignment)
        out[0] = a.ctypes.data

    with pytest.raises(errors.TypingError,
                       match=r"RequireLiteralValue: alignment must be a constant integer"):
        k[1, 1](np.zeros(1, dtype=np.uint64))


def test_run_time_alignment_is_a_typing_error(cpu):
    @cuda.jit
    def k(out, n):
        a = cuda.shared.array(4, np.uint8, alignment=n)
        out[0] = a[0]

    with pytest.raises(errors.TypingError, match="alignment must be a constant integer; got int64"):
        k[1, 1](np.zeros(1, dtype=np.uint8), 16)


def test_ctypes_data_is_the_array_address(backend):
    @cuda.jit
    def k(a, out):
        out[0] = a.ctypes.data
        out[1] = a[2:].ctypes.data

    a = cuda.to_device(np.zeros(5))
    out = np.zeros(2, dtype=np.uint64)
    k[1, 1](a, out)
    assert out[0] == a.__cuda_array_interface__["data"][0] if backend == "cuda" else out[0] != 0
    assert out[1] == out[0] + 16

    @cuda.jit
    def kept(a, out):
        c = a.ctypes
        out[0] = c.data

    with pytest.raises(errors.UnsupportedError, match=r"a.ctypes kept in a variable"):
        kept[1, 1](np.zeros(2), out)
