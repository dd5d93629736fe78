"""cuda.atomic.* on global and shared arrays, on both backends: results, returned old values,
index forms, NaN rules of the float min/max variants, and the compile-time errors."""
import re

import numpy as np
import pytest

from ptxjit import cuda, errors, float32, float64, int32, int64, uint32, uint64

ALL = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
INTS = [np.int32, np.uint32, np.int64, np.uint64]


@cuda.jit
def add_kernel(counter, olds):
    i = cuda.grid(1)
    olds[i] = cuda.atomic.add(counter, 0, 1)


@pytest.mark.parametrize("dtype", ALL)
def test_add_counts_and_returns_distinct_old_values(backend, dtype):
    counter = np.zeros(1, dtype)
    olds = np.zeros(512, dtype)
    add_kernel[8, 64](counter, olds)
    assert counter[0] == 512
    # Every thread saw a different old value: 0, 1, ..., 511 in some order.
    np.testing.assert_array_equal(np.sort(olds), np.arange(512, dtype=dtype))


@cuda.jit
def sub_kernel(a, olds):
    i = cuda.grid(1)
    olds[i] = cuda.atomic.sub(a, i % 2, 2)


@pytest.mark.parametrize("dtype", ALL)
def test_sub(backend, dtype):
    a = np.array([1000, 2000], dtype)
    olds = np.zeros(256, dtype)
    sub_kernel[4, 64](a, olds)
    np.testing.assert_array_equal(a, np.array([1000 - 256, 2000 - 256], dtype))
    np.testing.assert_array_equal(np.sort(olds[0::2]), np.arange(1000 - 254, 1001, 2, dtype=dtype))


@cuda.jit
def bits_kernel(a, vals):
    i = cuda.grid(1)
    cuda.atomic.and_(a, 0, vals[i])
    cuda.atomic.or_(a, 1, vals[i])
    cuda.atomic.xor(a, 2, vals[i])


@pytest.mark.parametrize("dtype", INTS)
def test_and_or_xor(backend, dtype):
    rng = np.random.default_rng(1)
    vals = rng.integers(0, 2**31, 300).astype(dtype) | dtype(1 << 20)
    a = np.array([~dtype(0), 0, 0x5A5A], dtype)
    bits_kernel[3, 100](a, vals)
    np.testing.assert_array_equal(a, [np.bitwise_and.reduce(vals), np.bitwise_or.reduce(vals),
                                      dtype(0x5A5A) ^ np.bitwise_xor.reduce(vals)])


@cuda.jit
def inc_dec_kernel(a, olds):
    i = cuda.grid(1)
    olds[0, i] = cuda.atomic.inc(a, 0, 9)     # wraps to 0 after 9
    olds[1, i] = cuda.atomic.dec(a, 1, 9)     # wraps from 0 (or > 9) to 9


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_inc_dec_wrap_like_cuda(backend, dtype):
    a = np.array([0, 3], dtype)
    olds = np.zeros((2, 25), dtype)
    inc_dec_kernel[1, 25](a, olds)
    assert a[0] == 25 % 10
    assert a[1] == (3 - 25) % 10
    np.testing.assert_array_equal(np.sort(olds[0]), np.sort(np.arange(25) % 10).astype(dtype))
    np.testing.assert_array_equal(np.sort(olds[1]),
                                  np.sort((3 - np.arange(25)) % 10).astype(dtype))


@cuda.jit
def exch_kernel(a, olds):
    i = cuda.grid(1)
    olds[i] = cuda.atomic.exch(a, 0, i + 1)


@pytest.mark.parametrize("dtype", ALL)
def test_exch_is_a_permutation(backend, dtype):
    a = np.zeros(1, dtype)
    olds = np.zeros(64, dtype)
    exch_kernel[2, 32](a, olds)
    # The old values and the final value together are 0..64, each once.
    np.testing.assert_array_equal(np.sort(np.append(olds, a[0])), np.arange(65, dtype=dtype))


@cuda.jit
def minmax_kernel(a, vals, olds):
    i = cuda.grid(1)
    olds[0, i] = cuda.atomic.max(a, 0, vals[i])
    olds[1, i] = cuda.atomic.min(a, 1, vals[i])
    cuda.atomic.nanmax(a, 2, vals[i])
    cuda.atomic.nanmin(a, 3, vals[i])


@pytest.mark.parametrize("dtype", ALL)
def test_max_min(backend, dtype):
    rng = np.random.default_rng(2)
    vals = rng.integers(1, 10**6, 256).astype(dtype)
    start = np.array([500000, 500000, 500000, 500000], dtype)
    a = start.copy()
    olds = np.zeros((2, 256), dtype)
    minmax_kernel[4, 64](a, vals, olds)
    np.testing.assert_array_equal(a, [max(start[0], vals.max()), min(start[1], vals.min()),
                                      max(start[2], vals.max()), min(start[3], vals.min())])
    # Old values are values the location held: the start or one of the values.
    assert set(olds[0]) <= set(vals) | {start[0]}
    assert olds[0].max() <= a[0] and olds[1].min() >= a[1]


@cuda.jit
def nan_kernel(a, v):
    cuda.atomic.max(a, 0, v[0])
    cuda.atomic.min(a, 1, v[0])
    cuda.atomic.nanmax(a, 2, v[0])
    cuda.atomic.nanmin(a, 3, v[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_min_max_nan_rules_match_numba(backend, dtype):
    # A NaN value changes nothing.
    a = np.array([1, 1, 1, 1], dtype)
    nan_kernel[1, 1](a, np.array([np.nan], dtype))
    np.testing.assert_array_equal(a, [1, 1, 1, 1])
    # A NaN in memory stays for max/min and is replaced by nanmax/nanmin.
    a = np.full(4, np.nan, dtype)
    nan_kernel[1, 1](a, np.array([2], dtype))
    np.testing.assert_array_equal(a, [np.nan, np.nan, 2, 2])


@cuda.jit
def cas_kernel(a, b, olds):
    i = cuda.grid(1)
    # Only the thread that finds the expected value swaps: a ticket lock of sorts.
    olds[0, i] = cuda.atomic.compare_and_swap(a, 0, i + 1)
    olds[1, i] = cuda.atomic.cas(b, (1, 2), 7, 100 + i)


@pytest.mark.parametrize("dtype", INTS)
def test_compare_and_swap_and_cas(backend, dtype):
    a = np.zeros(1, dtype)
    b = np.zeros((2, 3), dtype)
    b[1, 2] = 7
    olds = np.zeros((2, 64), dtype)
    cas_kernel[2, 32](a, b, olds)
    winner = int(a[0]) - 1
    assert 0 <= winner < 64
    assert olds[0, winner] == 0 and np.all(np.delete(olds[0], winner) == a[0])
    w2 = int(b[1, 2]) - 100
    assert 0 <= w2 < 64 and olds[1, w2] == 7
    assert np.all(np.delete(olds[1], w2) == b[1, 2])


@cuda.jit
def index_forms_kernel(a2, a1):
    i = cuda.threadIdx.x
    cuda.atomic.add(a2, (i % 3, i % 2), 1.0)
    cuda.atomic.add(a1, -1, 1)           # negative indices wrap, as in indexing
    cuda.atomic.add(a1, np.int32(0), 2)


def test_tuple_and_negative_indices(backend):
    a2 = np.zeros((3, 2))
    a1 = np.zeros(4, np.int64)
    index_forms_kernel[1, 60](a2, a1)
    np.testing.assert_array_equal(a2, np.full((3, 2), 10.0))
    np.testing.assert_array_equal(a1, [120, 0, 0, 60])


def test_float_and_bool_indices_are_truncated(backend):
    # numba-cuda converts every atomic index to intp: a float truncates toward zero, as int()
    # does (a tuple whose type unified to floats, an index computed in floats).
    @cuda.jit
    def k(a2, a1, b, flag):
        t = cuda.threadIdx.x
        i = (t % 2, uint64(t % 3))
        if flag:
            i = (i[0] % a2.shape[0], i[1] % a2.shape[1])  # uint64 % int64: float64
        cuda.atomic.add(a2, i, 1.0)
        cuda.atomic.add(a1, t / 2.5, 1)  # 0.0, 0.4, ... 11.6: indices 0 .. 11
        cuda.atomic.max(b, True, t)      # index 1

    a2, a1, b = np.zeros((2, 3)), np.zeros(12, np.int64), np.zeros(2, np.int32)
    k[1, 30](a2, a1, b, False)
    np.testing.assert_array_equal(a2, [[5, 5, 5], [5, 5, 5]])
    assert a1.tolist() == [3, 2] * 6 and b.tolist() == [0, 29]
    a2[:] = 0
    k[1, 30](a2, a1, b, True)
    np.testing.assert_array_equal(a2, [[5, 5, 5], [5, 5, 5]])


@cuda.jit
def shared_atomics_kernel(x, out):
    hist = cuda.shared.array(8, int32)
    fsum = cuda.shared.array(1, float32)
    t = cuda.threadIdx.x
    if t < 8:
        hist[t] = 0
    if t == 0:
        fsum[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(hist, x[cuda.grid(1)] % 8, 1)
    cuda.atomic.add(fsum, 0, 0.5)
    cuda.syncthreads()
    if t < 8:
        cuda.atomic.add(out, t, hist[t])
    if t == 0:
        cuda.atomic.add(out, 8, int32(fsum[0]))


def test_atomics_on_shared_arrays(backend):
    x = np.arange(4 * 128, dtype=np.int32) * 7
    out = np.zeros(9, np.int32)
    shared_atomics_kernel[4, 128](x, out)
    np.testing.assert_array_equal(out[:8], np.bincount(x % 8, minlength=8))
    assert out[8] == 4 * 64


def test_atomic_errors(cpu):
    @cuda.jit
    def and_float(a):
        cuda.atomic.and_(a, 0, 1)

    @cuda.jit
    def inc_signed(a):
        cuda.atomic.inc(a, 0, 1)

    @cuda.jit
    def add_int8(a):
        cuda.atomic.add(a, 0, 1)

    @cuda.jit
    def wrong_index(a):
        cuda.atomic.add(a, 0, 1)

    @cuda.jit
    def on_scalar(a):
        cuda.atomic.add(a, 0, 1)

    @cuda.jit
    def cas_float(a):
        cuda.atomic.cas(a, 0, 1.0, 2.0)

    cases = [
        (and_float, np.zeros(1, np.float32), errors.TypingError,
         r"cuda.atomic.and_ does not support an array of float32; it supports int32, uint32, "
         r"int64 and uint64 arrays"),
        (inc_signed, np.zeros(1, np.int32), errors.TypingError, "uint32 and uint64 arrays"),
        (add_int8, np.zeros(1, np.int8), errors.TypingError, "does not support an array of int8"),
        (wrong_index, np.zeros((2, 2), np.int32), errors.TypingError,
         "one index per dimension"),
        (on_scalar, 3, errors.TypingError, "the first argument must be an array"),
        (cas_float, np.zeros(1, np.float32), errors.TypingError, "does not support"),
    ]
    for k, arg, exc, msg in cases:
        with pytest.raises(exc, match=msg) as e:
            k[1, 1](arg)
        assert "test_atomics.py" in str(e.value)


TABLE = np.arange(4, dtype=np.int32)


def test_atomic_on_a_constant_array_is_an_error(cpu):
    @cuda.jit
    def k(out):
        c = cuda.const.array_like(TABLE)
        out[0] = cuda.atomic.add(c, 0, 1)
    with pytest.raises(errors.TypingError, match="read-only"):
        k[1, 1](np.zeros(1, np.int32))


def test_ptx_of_atomics():
    def k(f32, f64, i32, u32, i64, u64):
        s = cuda.shared.array(4, float32)
        si = cuda.shared.array(4, int32)
        cuda.atomic.add(f32, 0, 1.0)
        cuda.atomic.add(f64, 0, 1.0)
        cuda.atomic.add(s, 0, 1.0)
        cuda.atomic.add(si, 1, 1)
        cuda.atomic.sub(i32, 0, 1)
        cuda.atomic.max(i32, 0, 1)
        cuda.atomic.min(u32, 0, 1)
        cuda.atomic.max(u64, 0, 1)
        cuda.atomic.and_(i64, 0, 1)
        cuda.atomic.or_(u32, 0, 1)
        cuda.atomic.xor(i32, 0, 1)
        cuda.atomic.inc(u32, 0, 5)
        cuda.atomic.dec(u32, 0, 5)
        cuda.atomic.exch(i32, 0, 5)
        cuda.atomic.cas(i64, 0, 1, 2)
        cuda.atomic.max(f32, 0, 1.0)
        f32[1] = s[0] + si[1]
    ptx, _ = cuda.compile_ptx(k, (float32[::1], float64[::1], int32[::1], uint32[::1],
                                  int64[::1], uint64[::1]))
    text = re.sub(r"\s+", " ", ptx)
    for needle in ["atom.global.add.f32", "atom.global.add.f64", "atom.shared.add.f32",
                   "atom.shared.add.u32", "atom.global.max.s32", "atom.global.min.u32",
                   "atom.global.max.u64", "atom.global.and.b64", "atom.global.or.b32",
                   "atom.global.xor.b32", "atom.inc.u32", "atom.dec.u32",
                   "atom.global.exch.b32", "atom.global.cas.b64", "atom.global.cas.b32"]:
        assert needle in text, needle
