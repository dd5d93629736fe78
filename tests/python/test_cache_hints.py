"""Loads and stores with PTX cache operators (numba-cuda's cuda.ldca/ldcg/ldcs/ldlu/ldcv and
cuda.stcg/stcs/stwb/stwt; docs/cooperation.md#cache-hints): on arrays (an index per dimension)
and typed pointers, numba-cuda's argument checks and messages, and the PTX instructions. The CPU
backend has no caches: plain loads and stores."""
import numpy as np
import pytest

from ptxjit import cuda, errors, types

LOADS = {"ldca": "ca", "ldcg": "cg", "ldcs": "cs", "ldlu": "lu", "ldcv": "cv"}
STORES = {"stcg": "cg", "stcs": "cs", "stwb": "wb", "stwt": "wt"}
TABLE = np.arange(4, dtype=np.float32)
DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64]


def _load_kernels(op):
    @cuda.jit
    def k1(r, x):
        for i in range(len(r)):
            r[i] = op(x, i - len(r))  # negative indices wrap, as a[i] does

    @cuda.jit
    def k2(r, x):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                r[i, j] = op(x, (i, j))
    return k1, k2


def _store_kernels(op):
    @cuda.jit
    def k1(r, x):
        for i in range(len(r)):
            op(r, i - len(r), x[i])

    @cuda.jit
    def k2(r, x):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                op(r, (i, j), x[i, j])
    return k1, k2


@pytest.mark.parametrize("name", list(LOADS) + list(STORES))
def test_copies_1d_2d_and_negative_indices(backend, name):
    op = getattr(cuda, name)
    k1, k2 = _load_kernels(op) if name in LOADS else _store_kernels(op)

    for dt in (np.int8, np.uint16, np.float16, np.float32, np.int64):
        x = np.arange(5).astype(dt)
        r = np.zeros_like(x)
        k1[1, 1](r, x)
        np.testing.assert_array_equal(r, x)
        x2 = np.arange(12).reshape(3, 4).astype(dt)
        r2 = np.zeros_like(x2)
        k2[1, 1](r2, x2)
        np.testing.assert_array_equal(r2, x2)


def test_stores_convert_the_value(backend):
    @cuda.jit
    def k(r, x):
        cuda.stcs(r, 0, x)        # float64 -> int32, truncated
        cuda.stwt(r, 1, True)
        r[2] = cuda.ldcg(r, 0) + 1

    r = np.zeros(3, np.int32)
    k[1, 1](r, 7.9)
    assert r.tolist() == [7, 1, 8]


@pytest.mark.parametrize("dt", DTYPES)
def test_ptx_has_the_cache_operators(dt):
    bits = np.dtype(dt).itemsize * 8
    ty = types.from_dtype(np.dtype(dt))
    for name, mod in LOADS.items():
        op = getattr(cuda, name)

        def f(r, x):
            for i in range(len(r)):
                r[i] = op(x, i)

        def f_ptr(p, r, n):
            for i in range(n):
                r[i] = op(p, i)

        ptx, _ = cuda.compile_ptx(f, (ty[::1], ty[::1]))
        assert f"ld.global.{mod}.b{bits}" in ptx
        ptx, _ = cuda.compile_ptx(f_ptr, (types.CPointer(ty), ty[::1], types.intp))
        assert f"ld.global.{mod}.b{bits}" in ptx
    for name, mod in STORES.items():
        op = getattr(cuda, name)

        def g(r, x):
            for i in range(x.shape[0]):
                for j in range(x.shape[1]):
                    op(r, (i, j), x[i, j])

        ptx, _ = cuda.compile_ptx(g, (ty[:, ::1], ty[:, ::1]))
        assert f"st.global.{mod}.b{bits}" in ptx


def test_argument_errors_have_numba_cuda_messages(cpu):
    def float_index(x):
        cuda.ldcs(x, 1.0)

    def too_long(x):
        cuda.ldcs(x, (1, 2))

    def scalar_for_2d(x):
        cuda.ldcs(x, 1)

    def short_tuple(x):
        cuda.ldcs(x, (1,))

    def complex_load(r, x):
        r[0] = cuda.ldcs(x, 0)

    def not_an_array(x):
        cuda.stcg(x[0], 0, 1)

    def readonly(x):
        cuda.stwb(TABLE, 0, 1)  # a global array: constant memory

    f32_1d, f32_2d = types.float32[::1], types.float32[:, ::1]
    c64 = types.complex64[::1]
    cases = [
        (float_index, (f32_1d,), "float64 is not a valid index"),
        (too_long, (f32_1d,), "Expected 1 indices, got 2"),
        (scalar_for_2d, (f32_2d,), "Expected 2 indices, got a scalar"),
        (short_tuple, (f32_2d,), "Expected 2 indices, got 1"),
        (complex_load, (c64, c64), "ldcs requires array of integer or float type, got complex64"),
        (not_an_array, (f32_1d,), "stcg operates on arrays or pointers. Got type float32"),
        (readonly, (f32_1d,), "read-only"),
    ]
    for fn, sig, msg in cases:
        with pytest.raises(errors.TypingError, match=msg) as e:
            cuda.compile_ptx(fn, sig)
        assert e.value.lineno is not None  # located at the call
