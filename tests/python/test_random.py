"""ptxjit.cuda.random: numba-cuda's xoroshiro128+ generator. The states and the streams of
numbers are checked exactly against an independent reference written here from the algorithm
(Blackman and Vigna's xoroshiro128+ and SplitMix64 with numba-cuda's constants), and, where
numba-cuda is installed, against numba-cuda's own functions (run by numba on the CPU)."""
import math
import subprocess
import sys

import numpy as np
import pytest

from ptxjit import cuda
from ptxjit.cuda import random as curand
from ptxjit.cuda.random import (
    xoroshiro128p_dtype, xoroshiro128p_jump, xoroshiro128p_next, xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64, xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64,
    init_xoroshiro128p_state)

M64 = (1 << 64) - 1


# ---- the reference, in Python integers ----

def ref_seed(seed):
    z = (seed + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    return [z, z]


def ref_rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


def ref_next(s):
    s0, s1 = s
    result = (s0 + s1) & M64
    s1 ^= s0
    s[0] = ref_rotl(s0, 55) ^ s1 ^ ((s1 << 14) & M64)
    s[1] = ref_rotl(s1, 36)
    return result


def ref_jump(s):
    a = b = 0
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for bit in range(64):
            if word >> bit & 1:
                a ^= s[0]
                b ^= s[1]
            ref_next(s)
    s[0], s[1] = a, b


def ref_states(n, seed, start=0):
    s = ref_seed(seed % (1 << 64))
    for _ in range(start):
        ref_jump(s)
    out = []
    for _ in range(n):
        out.append(list(s))
        ref_jump(s)
    return out


def ref_uniform64(x):
    return float(x >> 11) * (1.0 / float(1 << 53))


def as_pairs(states):
    return [[int(r["s0"]), int(r["s1"])] for r in states]


# ---- state initialization ----

def test_dtype_is_numbas():
    assert xoroshiro128p_dtype == np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
    assert xoroshiro128p_dtype.itemsize == 16
    assert curand.xoroshiro128p_type.name.startswith("Record(s0[type=uint64;offset=0]")


@pytest.mark.parametrize("seed,start", [(1, 0), (0, 0), (12345, 3), (-1, 1), (2**64 - 5, 0)])
def test_create_matches_reference(backend, seed, start):
    states = cuda.random.create_xoroshiro128p_states(6, seed=seed, subsequence_start=start)
    assert states.dtype == xoroshiro128p_dtype and states.shape == (6,)
    assert as_pairs(states.copy_to_host()) == ref_states(6, seed, start)


def test_create_properties(backend):
    s1 = cuda.random.create_xoroshiro128p_states(10, seed=1).copy_to_host()
    assert len(np.unique(s1)) == 10
    s2 = cuda.random.create_xoroshiro128p_states(10, seed=1, subsequence_start=3).copy_to_host()
    np.testing.assert_array_equal(s1[3:], s2[:-3])
    stream = cuda.stream()
    s3 = cuda.random.create_xoroshiro128p_states(10, seed=1, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(s3.copy_to_host(), s1)
    assert cuda.random.create_xoroshiro128p_states(0, seed=1).shape == (0,)


def test_init_states_into_existing_array(backend):
    d = cuda.device_array(4, dtype=xoroshiro128p_dtype)
    curand.init_xoroshiro128p_states(d, 7)
    assert as_pairs(d.copy_to_host()) == ref_states(4, 7)


def test_init_states_errors(backend):
    with pytest.raises(TypeError, match="xoroshiro128p_dtype"):
        curand.init_xoroshiro128p_states(cuda.device_array(4, dtype=np.uint64), 1)
    d = cuda.device_array(4, dtype=xoroshiro128p_dtype)
    with pytest.raises(TypeError, match="seed must be an integer"):
        curand.init_xoroshiro128p_states(d, 1.5)
    with pytest.raises(ValueError, match="subsequence_start"):
        curand.init_xoroshiro128p_states(d, 1, subsequence_start=-1)


# ---- the device functions ----

@cuda.jit
def draw_all(states, u32, u64, n32, n64, raw, count):
    tid = cuda.grid(1)
    if tid >= states.shape[0]:
        return
    for i in range(count):
        u32[tid, i] = xoroshiro128p_uniform_float32(states, tid)
        u64[tid, i] = xoroshiro128p_uniform_float64(states, tid)
        n32[tid, i] = xoroshiro128p_normal_float32(states, tid)
        n64[tid, i] = xoroshiro128p_normal_float64(states, tid)
        raw[tid, i] = xoroshiro128p_next(states, tid)


def run_draws(nstates, count, seed):
    states = cuda.random.create_xoroshiro128p_states(nstates, seed=seed)
    u32 = np.zeros((nstates, count), np.float32)
    u64 = np.zeros((nstates, count), np.float64)
    n32 = np.zeros((nstates, count), np.float32)
    n64 = np.zeros((nstates, count), np.float64)
    raw = np.zeros((nstates, count), np.uint64)
    draw_all[(nstates + 31) // 32, 32](states, u32, u64, n32, n64, raw, count)
    return states, u32, u64, n32, n64, raw


def test_streams_match_reference(backend):
    nstates, count = 5, 8
    states, u32, u64, n32, n64, raw = run_draws(nstates, count, seed=42)
    refs = ref_states(nstates, 42)
    for t in range(nstates):
        s = refs[t]
        for i in range(count):
            assert u32[t, i] == np.float32(ref_uniform64(ref_next(s)))
            assert u64[t, i] == ref_uniform64(ref_next(s))
            a = np.float32(ref_uniform64(ref_next(s)))
            b = np.float32(ref_uniform64(ref_next(s)))
            # Box-Muller in float32 (numba-cuda's); the libm/libdevice functions may differ
            # from NumPy's in the last bit.
            z32 = np.sqrt(np.float32(-2.0) * np.log(a)) * np.cos(np.float32(2 * math.pi) * b)
            assert n32[t, i] == pytest.approx(z32, rel=1e-5, abs=1e-6)
            a = np.float32(ref_uniform64(ref_next(s)))
            b = np.float32(ref_uniform64(ref_next(s)))
            z64 = math.sqrt(-2.0 * float(np.log(a))) * math.cos(2 * math.pi * float(b))
            assert n64[t, i] == pytest.approx(z64, rel=1e-6, abs=1e-7)
            assert int(raw[t, i]) == ref_next(s)
        # the generator's state after the draws, written back into the device array
        assert as_pairs(states.copy_to_host())[t] == s


def test_distributions(backend):
    # numba-cuda's test_random statistics: 2 x 32 generators, 32 draws each.
    _, u32, u64, n32, n64, _ = run_draws(64, 32, seed=1)
    for u in (u32, u64):
        assert u.min() >= 0.0 and u.max() <= 1.0
        assert abs(u.mean() - 0.5) < 1.5e-2
        assert abs(u.std() - 1.0 / (2 * math.sqrt(3))) < 6e-3
    for z in (n32, n64):
        assert abs(z.mean()) < 4e-2 and abs(z.std() - 1.0) < 4e-2


@cuda.jit
def jump_and_seed(states, out):
    i = cuda.grid(1)
    if i == 0:
        init_xoroshiro128p_state(states, 0, 99)
        out[0] = states[0]["s0"]
        xoroshiro128p_jump(states, 0)
        out[1] = states[0]["s0"]
        out[2] = states[0]["s1"]


def test_jump_and_seed_in_kernel(backend):
    states = np.zeros(1, dtype=xoroshiro128p_dtype)
    out = np.zeros(3, np.uint64)
    jump_and_seed[1, 1](states, out)
    s = ref_seed(99)
    assert int(out[0]) == s[0]
    ref_jump(s)
    assert [int(out[1]), int(out[2])] == s


def test_compiles_to_ptx():
    for k in (draw_all, jump_and_seed):
        for sig in k.signatures:
            assert ".visible .entry" in k.inspect_ptx(sig)


def test_lazy_import(subprocess_env):
    # `import ptxjit` stays cheap: the random module (and with it the extension) loads at its
    # first use, and `import ptxjit.cuda.random` works.
    code = ("import sys, ptxjit\n"
            "assert 'ptxjit._core' not in sys.modules\n"
            "import ptxjit.cuda.random as r\n"
            "from ptxjit.cuda.random import xoroshiro128p_uniform_float32\n"
            "assert r is ptxjit.cuda.random\n"
            "assert r.xoroshiro128p_dtype.itemsize == 16\n")
    subprocess.run([sys.executable, "-c", code], env=subprocess_env, check=True)


def test_same_as_numba_cuda(backend):
    # numba-cuda's own initialization and functions, run by numba on the CPU (no GPU needed).
    nrand = pytest.importorskip("numba.cuda.random")
    for seed, start in ((1, 0), (987654321, 2)):
        expect = np.empty(5, dtype=nrand.xoroshiro128p_dtype)
        nrand.init_xoroshiro128p_states_cpu(expect, seed, start)
        got = cuda.random.create_xoroshiro128p_states(5, seed, start).copy_to_host()
        assert as_pairs(got) == as_pairs(expect)
    states, u32, u64, _, _, raw = run_draws(3, 4, seed=5)
    ref = np.empty(3, dtype=nrand.xoroshiro128p_dtype)
    nrand.init_xoroshiro128p_states_cpu(ref, 5, 0)
    for t in range(3):
        for i in range(4):
            assert u32[t, i] == nrand.xoroshiro128p_uniform_float32(ref, t)
            assert u64[t, i] == nrand.xoroshiro128p_uniform_float64(ref, t)
            nrand.xoroshiro128p_normal_float32(ref, t)
            nrand.xoroshiro128p_normal_float64(ref, t)
            assert raw[t, i] == nrand.xoroshiro128p_next(ref, t)


def test_init_states_cpu_host_array():
    host = np.empty(3, dtype=xoroshiro128p_dtype)
    curand.init_xoroshiro128p_states_cpu(host, 11, 1)
    assert as_pairs(host) == ref_states(3, 11, 1)
    with pytest.raises(TypeError, match="C-contiguous"):
        curand.init_xoroshiro128p_states_cpu(np.empty(6, dtype=xoroshiro128p_dtype)[::2], 1, 0)


@pytest.mark.gpu
def test_same_streams_as_numba_cuda_on_gpu(cuda_target, monkeypatch):
    # The same kernel under numba-cuda and under ptxjit, from the same seed: bit-identical
    # uniform and normal variates (both use libdevice on the GPU).
    if "row_stack" not in np.__dict__:
        # numba-cuda 0.30.4 uses np.row_stack, which NumPy 2.5 removed, when it compiles.
        monkeypatch.setattr(np, "row_stack", np.vstack, raising=False)
    ncuda = pytest.importorskip("numba.cuda")
    nrand = pytest.importorskip("numba.cuda.random")
    if not ncuda.is_available():
        pytest.skip("numba-cuda has no GPU here")

    nstates, count = 64, 16

    def outputs():
        return (np.zeros((nstates, count), np.float32), np.zeros((nstates, count), np.float64),
                np.zeros((nstates, count), np.float32), np.zeros((nstates, count), np.float64))

    @ncuda.jit
    def numba_kernel(states, u32, u64, n32, n64):
        tid = ncuda.grid(1)
        if tid < states.shape[0]:
            for i in range(u32.shape[1]):
                u32[tid, i] = nrand.xoroshiro128p_uniform_float32(states, tid)
                u64[tid, i] = nrand.xoroshiro128p_uniform_float64(states, tid)
                n32[tid, i] = nrand.xoroshiro128p_normal_float32(states, tid)
                n64[tid, i] = nrand.xoroshiro128p_normal_float64(states, tid)

    @cuda.jit
    def ptxjit_kernel(states, u32, u64, n32, n64):
        tid = cuda.grid(1)
        if tid < states.shape[0]:
            for i in range(u32.shape[1]):
                u32[tid, i] = xoroshiro128p_uniform_float32(states, tid)
                u64[tid, i] = xoroshiro128p_uniform_float64(states, tid)
                n32[tid, i] = xoroshiro128p_normal_float32(states, tid)
                n64[tid, i] = xoroshiro128p_normal_float64(states, tid)

    expect = outputs()
    numba_kernel[2, 32](nrand.create_xoroshiro128p_states(nstates, seed=3), *expect)
    got = outputs()
    ptxjit_kernel[2, 32](cuda.random.create_xoroshiro128p_states(nstates, seed=3), *got)
    for e, g in zip(expect, got):
        np.testing.assert_array_equal(g, e)
