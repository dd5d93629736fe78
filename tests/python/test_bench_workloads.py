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


def test_pi_reference_matches_a_scalar_xorshift():
    # the vectorized NumPy reference against a plain Python transcription of the generator
    mask, hits = (1 << 64) - 1, 0
    for t in range(3):
        s = ((t + 1) * 0x9E3779B97F4A7C15) & mask
        for _ in range(5):
            pts = []
            for _ in range(2):
                s ^= (s << 13) & mask
                s ^= s >> 7
                s ^= (s << 17) & mask
                pts.append(np.float32(s >> 40) * np.float32(1.0 / (1 << 24)))
            hits += int(pts[0] * pts[0] + pts[1] * pts[1] <= np.float32(1.0))
    assert workloads.xorshift_pi_reference(3, 5) == hits


def test_a_wrong_kernel_fails_the_check(cpu, monkeypatch):
    # the checks can fail: a "transpose" that copies is caught
    copy = workloads.TRANSPOSE.replace("tile[ty + j, tx] = a[y + j, x]",
                                       "tile[tx, ty + j] = a[y + j, x]")
    assert copy != workloads.TRANSPOSE
    monkeypatch.setattr(workloads, "TRANSPOSE", copy)
    case = workloads.make_case("transpose", cuda, workloads.SUITE_SIZES["transpose"][1])
    with pytest.raises(AssertionError):
        case.check()
