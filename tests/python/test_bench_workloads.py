"""The benchmark suite's workloads (bench/workloads.py, issue 20) compile and compute right:
each at tiny sizes on the CPU backend, checked against NumPy by the case's own check (the same
check bench/run.py makes at full size on the GPU)."""
import numpy as np
import pytest
import workloads

from ptxjit import cuda


@pytest.mark.parametrize("name", sorted(workloads.SUITE_SIZES))
def test_workload_computes_right(cpu, name):
    case = workloads.make_case(name, cuda, workloads.SUITE_SIZES[name][1])
    case.check()
    case.run()  # a timed unit runs too (the benchmark's loop)
    cuda.synchronize()


# What each kernel's PTX must contain: the feature the workload exists to measure.
PTX_FEATURES = {
    "reduce": ["shfl.sync.down", ".shared", "bar.sync", ".global.add.f32"],
    "matmul": [".shared", "bar.sync"],
    "histogram": [".shared.add.u32", ".global.add.u32", "bar.sync"],
    "transpose": [".shared", "bar.sync"],
    "jacobi": ["ld.global.f64"],
    "nbody": [".shared", "sqrt.rn.f32", "rcp.rn.f32"],  # 1 / sqrt: IEEE, no rsqrt.approx
    "pi": ["shfl.sync.down", ".global.add.u64"],
}


@pytest.mark.parametrize("name", sorted(workloads.SUITE_KERNELS))
def test_workload_compiles_to_ptx(name):
    source, fn, sig = workloads.SUITE_KERNELS[name]
    kernel = workloads.build(getattr(workloads, source), cuda, fn)
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig)
    assert ".target sm_90" in ptx
    missing = [f for f in PTX_FEATURES[name] if f not in ptx]
    assert not missing, f"{name}: {missing} not in the PTX"


def test_pi_reference_matches_a_scalar_xoroshiro():
    # the vectorized NumPy reference against a plain Python transcription of xoroshiro128+ and
    # numba-cuda's float32 draw, from the states cuda.random makes
    from ptxjit.cuda import random as cuda_random

    states = np.empty(3, cuda_random.xoroshiro128p_dtype)
    cuda_random.init_xoroshiro128p_states_cpu(states, workloads.PI_SEED, 0)
    mask, hits = (1 << 64) - 1, 0

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & mask

    for s0, s1 in zip(states["s0"].tolist(), states["s1"].tolist()):
        for _ in range(5):
            pts = []
            for _ in range(2):
                out = (s0 + s1) & mask
                s1 ^= s0
                s0 = rotl(s0, 55) ^ s1 ^ ((s1 << 14) & mask)
                s1 = rotl(s1, 36)
                pts.append(np.float32((out >> 11) * 2.0 ** -53))
            hits += int(pts[0] * pts[0] + pts[1] * pts[1] <= np.float32(1.0))
    assert workloads.xoroshiro_pi_reference(states, 5) == hits
    assert 0 < hits < 15


# Kernels the checks must catch: a "transpose" that copies, and a Monte Carlo kernel that
# draws y from the next thread's generator (the exact check compares with the stream of the
# states the kernel was given).
WRONG_KERNELS = {
    "transpose": ("TRANSPOSE", "tile[ty + j, tx] = a[y + j, x]", "tile[tx, ty + j] = a[y + j, x]"),
    "pi": ("MONTE_CARLO_PI", "y = uniform_float32(states, i)",
           "y = uniform_float32(states, i ^ 1)"),
}


@pytest.mark.parametrize("name", sorted(WRONG_KERNELS))
def test_a_wrong_kernel_fails_the_check(cpu, monkeypatch, name):
    source, right, wrong = WRONG_KERNELS[name]
    text = getattr(workloads, source).replace(right, wrong)
    assert text != getattr(workloads, source)
    monkeypatch.setattr(workloads, source, text)
    case = workloads.make_case(name, cuda, workloads.SUITE_SIZES[name][1])
    with pytest.raises(AssertionError):
        case.check()
