"""Warp functions on both backends: lane ids, shuffles of 32- and 64-bit ints and floats,
votes, matches, masks and syncwarp, with blocks of several warps and partial warps."""
import re

import numpy as np
import pytest

from ptxjit import cuda, errors, float32, float64, int32, int64, uint32

FULL = 0xFFFFFFFF
DTYPES = [np.int32, np.int64, np.uint32, np.float32, np.float64]


@cuda.jit
def lane_kernel(out):
    t = cuda.threadIdx.x
    out[0, t] = cuda.laneid
    out[1, t] = cuda.warpsize
    out[2, t] = cuda.lanemask_lt()
    out[3, t] = cuda.activemask()


def test_lane_ids_and_masks(backend):
    out = np.zeros((4, 48), np.int64)
    lane_kernel[2, 48](out)   # the second warp has 16 lanes
    lane = np.arange(48) % 32
    np.testing.assert_array_equal(out[0], lane)
    np.testing.assert_array_equal(out[1], 32)
    np.testing.assert_array_equal(out[2], (1 << lane) - 1)
    np.testing.assert_array_equal(out[3], np.where(np.arange(48) < 32, 0xFFFFFFFF, 0xFFFF))


@cuda.jit
def shuffle_kernel(x, out):
    t = cuda.threadIdx.x
    v = x[t]
    out[0, t] = cuda.shfl_sync(FULL, v, 3)          # broadcast lane 3
    out[1, t] = cuda.shfl_sync(FULL, v, 35)         # lane 35 % 32 == 3
    out[2, t] = cuda.shfl_up_sync(FULL, v, 1)       # lane 0 keeps its own
    out[3, t] = cuda.shfl_down_sync(FULL, v, 2)     # lanes 30, 31 keep their own
    out[4, t] = cuda.shfl_xor_sync(FULL, v, 1)      # swap neighbours


@pytest.mark.parametrize("dtype", DTYPES)
def test_shuffles(backend, dtype):
    x = (np.arange(64) * 3 + 1).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        x = x + dtype(0.25)
    elif dtype == np.int64:
        x = x + (np.int64(1) << 40)      # needs both 32-bit halves
    out = np.zeros((5, 64), dtype)
    shuffle_kernel[1, 64](x, out)
    t = np.arange(64)
    lane, base = t % 32, t - t % 32
    np.testing.assert_array_equal(out[0], x[base + 3])
    np.testing.assert_array_equal(out[1], x[base + 3])
    np.testing.assert_array_equal(out[2], x[np.where(lane >= 1, t - 1, t)])
    np.testing.assert_array_equal(out[3], x[np.where(lane < 30, t + 2, t)])
    np.testing.assert_array_equal(out[4], x[t ^ 1])


@cuda.jit
def warp_sum_kernel(x, out):
    t = cuda.grid(1)
    v = x[t]
    offset = 16
    while offset > 0:
        v += cuda.shfl_xor_sync(FULL, v, offset)
        offset //= 2
    out[t] = v


def test_butterfly_reduction_gives_every_lane_the_warp_sum(backend):
    x = np.arange(128, dtype=np.float64) ** 2
    out = np.zeros(128)
    warp_sum_kernel[2, 64](x, out)
    np.testing.assert_array_equal(out, np.repeat(x.reshape(4, 32).sum(axis=1), 32))


@cuda.jit
def vote_kernel(x, out):
    t = cuda.threadIdx.x
    p = x[t] > 0
    out[0, t] = cuda.all_sync(FULL, p)
    out[1, t] = cuda.any_sync(FULL, p)
    out[2, t] = cuda.eq_sync(FULL, p)
    out[3, t] = cuda.ballot_sync(FULL, p)


def test_votes(backend):
    x = np.zeros(96, np.int32)
    x[0:32] = 1               # warp 0: all true
    x[40] = x[45] = 1         # warp 1: two lanes
    out = np.zeros((4, 96), np.int64)   # warp 2: none
    vote_kernel[1, 96](x, out)
    per_warp = lambda vals: np.repeat(np.array(vals), 32)
    np.testing.assert_array_equal(out[0], per_warp([1, 0, 0]))
    np.testing.assert_array_equal(out[1], per_warp([1, 1, 0]))
    np.testing.assert_array_equal(out[2], per_warp([1, 0, 1]))
    # ballot_sync is int32 as in Numba: the full mask reads -1.
    np.testing.assert_array_equal(out[3], per_warp([-1, (1 << 8) | (1 << 13), 0]))


@cuda.jit
def match_kernel(x, out):
    t = cuda.threadIdx.x
    out[0, t] = cuda.match_any_sync(FULL, x[t])
    m, p = cuda.match_all_sync(FULL, x[t])
    out[1, t] = m
    out[2, t] = p


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_matches(backend, dtype):
    x = np.zeros(64, dtype)
    x[:32] = np.arange(32) % 4 + (2**40 if dtype == np.int64 else 0)
    x[32:] = 7      # the second warp agrees everywhere
    out = np.zeros((3, 64), np.int64)
    match_kernel[1, 64](x, out)
    lane = np.arange(32)
    same = [sum(1 << k for k in range(32) if k % 4 == l % 4) for l in lane]
    np.testing.assert_array_equal(out[0, :32] & 0xFFFFFFFF, same)
    np.testing.assert_array_equal(out[0, 32:], -1)
    np.testing.assert_array_equal(out[1], np.r_[np.zeros(32), np.full(32, -1)])
    np.testing.assert_array_equal(out[2], np.r_[np.zeros(32), np.ones(32)])


@cuda.jit
def syncwarp_kernel(out):
    s = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    s[t] = t * 10
    cuda.syncwarp()
    out[t] = s[t ^ 1]          # a neighbour's value: needs the warp barrier
    cuda.syncwarp(FULL)


def test_syncwarp_orders_shared_memory_within_a_warp(backend):
    out = np.zeros(64, np.int32)
    syncwarp_kernel[1, 64](out)
    np.testing.assert_array_equal(out, (np.arange(64) ^ 1) * 10)


@cuda.jit
def partial_mask_kernel(x, out):
    t = cuda.threadIdx.x
    out[t] = -1
    if cuda.laneid < 16:
        out[t] = cuda.shfl_xor_sync(0xFFFF, x[t], 8)


def test_partial_masks(backend):
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    partial_mask_kernel[1, 64](x, out)
    t = np.arange(64)
    np.testing.assert_array_equal(out, np.where(t % 32 < 16, t ^ 8, -1))


@cuda.jit
def lane_returns_kernel(x, out):
    t = cuda.threadIdx.x
    if t == 5:
        return
    out[t] = cuda.shfl_sync(FULL, x[t], 0)


def test_missing_lane_is_an_error_on_the_cpu(cpu):
    with pytest.raises(RuntimeError, match=r"cuda.shfl_sync\(\) with mask 0xffffffff .*lane 5 "
                                           r"\(thread \(5, 0, 0\)\) returned without calling it"):
        lane_returns_kernel[1, 32](np.zeros(32, np.int32), np.zeros(32, np.int32))


@cuda.jit
def warp_vs_barrier_kernel(out):
    t = cuda.threadIdx.x
    if t == 0:
        cuda.syncthreads()
    else:
        out[t] = cuda.shfl_sync(FULL, t, 0)


def test_deadlock_is_an_error_on_the_cpu(cpu):
    with pytest.raises(RuntimeError, match="deadlock in block"):
        warp_vs_barrier_kernel[1, 32](np.zeros(32, np.int64))


def test_warp_function_argument_errors(cpu):
    @cuda.jit
    def complex_value(out):
        out[0] = cuda.shfl_sync(FULL, 1j, 0).real

    @cuda.jit
    def float_mask(out):
        out[0] = cuda.shfl_sync(1.5, out[0], 0)

    @cuda.jit
    def int8_value(out):
        out[0] = cuda.match_any_sync(FULL, out[0])

    @cuda.jit
    def missing_arg(out):
        out[0] = cuda.ballot_sync(FULL)

    cases = [
        (complex_value, np.zeros(1, np.float64),
         r"cuda.shfl_sync does not support a value of type complex128; it supports int32, "
         r"int64, uint32, uint64, float32 and float64 values"),
        (float_mask, np.zeros(1, np.float64), "the mask must be an integer"),
        (int8_value, np.zeros(1, np.int8), "does not support a value of type int8"),
        (missing_arg, np.zeros(1, np.int32), r"expected \(mask, predicate\)"),
    ]
    for k, arg, msg in cases:
        with pytest.raises(errors.TypingError, match=msg) as e:
            k[1, 1](arg)
        assert "test_warp.py" in str(e.value)


def test_vote_argument_types_are_numba_cudas(cpu):
    # An integer mask (not a bool or a float), an integer or bool predicate (not a float), with
    # numba-cuda's messages inside the located error.
    def vote(mask, predicate, result):
        i = cuda.grid(1)
        if i < result.shape[0]:
            result[i] = cuda.all_sync(mask[i], predicate[i])

    bad = [("void(float32[:], int32[:], int32[:])", "Mask type must be an integer. Got float32"),
           ("void(boolean[:], int32[:], int32[:])", "Mask type must be an integer. Got bool"),
           ("void(int32[:], float64[:], int32[:])",
            "Predicate must be an integer or boolean. Got float64")]
    for sig, msg in bad:
        with pytest.raises(errors.TypingError, match=msg) as e:
            cuda.jit(sig)(vote)
        assert "test_warp.py" in str(e.value) and "cuda.all_sync cannot be called" in str(e.value)
    for sig in ["void(uint64[:], boolean[:], int32[:])", "void(int64[:], int64[:], int32[:])"]:
        cuda.jit(sig)(vote)


def test_ptx_of_warp_functions():
    def k(f32, f64, i32, i64):
        t = cuda.threadIdx.x
        a = cuda.shfl_sync(FULL, f32[t], 0) + cuda.shfl_up_sync(FULL, f64[t], 1)
        b = cuda.shfl_down_sync(FULL, i32[t], 2) + cuda.shfl_xor_sync(FULL, i64[t], 4)
        c = cuda.all_sync(FULL, t > 3) + cuda.any_sync(FULL, t > 3) + cuda.eq_sync(FULL, t > 3)
        d = cuda.ballot_sync(FULL, t > 3) + cuda.match_any_sync(FULL, i32[t])
        m, p = cuda.match_all_sync(FULL, i64[t])
        cuda.syncwarp()
        f64[t] = a + b + c + d + m + p + cuda.activemask() + cuda.lanemask_lt() + cuda.laneid
    ptx, _ = cuda.compile_ptx(k, (float32[::1], float64[::1], int32[::1], int64[::1]))
    text = re.sub(r"\s+", " ", ptx)
    for needle in ["shfl.sync.idx.b32", "shfl.sync.up.b32", "shfl.sync.down.b32",
                   "shfl.sync.bfly.b32", "vote.sync.all.pred", "vote.sync.any.pred",
                   "vote.sync.uni.pred", "vote.sync.ballot.b32", "match.any.sync.b32",
                   "match.all.sync.b64", "activemask.b32", "bar.warp.sync", "%lanemask_lt",
                   "%laneid"]:
        assert needle in text, needle
