"""The kernels-people-write part of the benchmark suite (issue 20), run by bench/run.py: the
seven workloads of bench/workloads.py (SUITE_SIZES) timed with CUDA events in ptxjit's and
numba-cuda's workers, and their CUDA C++ twins (bench/cuda/suite.cu, a shared library loaded
with ctypes) timed inside ptxjit's worker, interleaved sample by sample with ptxjit's.

Each sample is one CUDA-event interval around `inner` timed units (workloads.Case); a figure
is the median of SAMPLES samples (ms per unit). Against CUDA C++ the reported ratio is the
median of the per-round ratios (one ptxjit sample and one C++ sample per round, which goes
first alternating: run.interleave_rounds); against numba-cuda, which runs in a process of its
own, the ratio of the medians. The bandwidth-bound workloads also report their fraction of
the device-to-device copy bandwidth the C++ library measures in the same process.
"""
import ctypes
import os
import shutil
import statistics

import workloads

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = 21

# metric name -> workload; the order of the report
METRIC_OF = {
    "reduce": "reduce_2^26_f32_kernel",
    "matmul": "matmul_4096^2_f32_kernel",
    "histogram": "histogram_2^26_u8_kernel",
    "transpose": "transpose_8192^2_f32_kernel",
    "jacobi": "jacobi_8192^2_f64_100steps",
    "nbody": "nbody_65536_f32_kernel",
    "pi": "monte_carlo_pi_2^28_kernel",
}
TARGET = "≤ 1.03× CUDA C++ (median of round ratios)"
METRICS = [(m, "ms", TARGET, "cuda_cpp", 1.03) for m in METRIC_OF.values()]


class SuiteLib:
    """The CUDA C++ twins (libcuda_suite.so), loaded into this process."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        lib.suite_open.restype = ctypes.c_void_p
        lib.suite_open.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_long]
        lib.suite_sample_ms.restype = ctypes.c_double
        lib.suite_sample_ms.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.suite_checksum.restype = ctypes.c_double
        lib.suite_checksum.argtypes = [ctypes.c_void_p]
        lib.suite_copy_gbs.restype = ctypes.c_double
        lib.suite_copy_gbs.argtypes = [ctypes.c_long, ctypes.c_int]
        lib.suite_close.argtypes = [ctypes.c_void_p]
        lib.suite_last_error.restype = ctypes.c_char_p
        self.lib = lib

    def error(self):
        return self.lib.suite_last_error().decode(errors="replace")

    def open(self, name, sizes):
        """A handle on the twin of workload `name` with `sizes` (a SUITE_SIZES dict)."""
        n = sizes.get("n", sizes.get("threads"))
        param = sizes.get("steps", sizes.get("samples", 0))
        h = self.lib.suite_open(name.encode(), n, param)
        if not h:
            raise RuntimeError(f"suite_open({name}): {self.error()}")
        return h

    def sample(self, h, inner):
        ms = self.lib.suite_sample_ms(h, inner)
        if ms < 0:
            raise RuntimeError(f"suite_sample_ms: {self.error()}")
        return ms

    def copy_gbs(self, nbytes):
        gbs = self.lib.suite_copy_gbs(nbytes, 20)
        if gbs < 0:
            raise RuntimeError(f"suite_copy_gbs: {self.error()}")
        return gbs


def build_lib(build_dir, cc, compile_if_stale):
    """Builds bench/cuda/suite.cu into build_dir/libcuda_suite.so with nvcc for sm_<cc>;
    (path, None) or (None, why not)."""
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    nvcc = shutil.which("nvcc") or os.path.join(cuda_home, "bin", "nvcc")
    if not os.path.exists(nvcc):
        return None, "no nvcc"
    os.makedirs(build_dir, exist_ok=True)
    out, src = os.path.join(build_dir, "libcuda_suite.so"), os.path.join(HERE, "cuda", "suite.cu")
    # The pi twin's generator states come from ptxjit's own host initialization (numba-cuda's).
    root = os.path.dirname(HERE)
    xoroshiro = os.path.join(root, "runtime", "Xoroshiro.cpp")
    err = compile_if_stale([nvcc, "-O3", f"-arch=sm_{cc}", "-std=c++17", "-Xcompiler", "-fPIC",
                            "-shared", f"-I{root}", src, xoroshiro, "-o", out], out,
                           [src, xoroshiro, os.path.join(root, "runtime", "Xoroshiro.h")])
    return (out, None) if err is None else (None, "nvcc failed: " + err[-200:])


def event_sample(cuda, case):
    """Milliseconds per unit of one sample: `case.inner` units between two CUDA events."""
    start, stop = cuda.event(), cuda.event()
    start.record()
    for _ in range(case.inner):
        case.run()
    stop.record()
    stop.synchronize()
    return cuda.event_elapsed_time(start, stop) / case.inner


def worker_suite(impl, cuda, dry, interleave_rounds, lib_path=None):
    """Runs every workload with `impl` ('ptxjit' or 'numba', whose `cuda` module this is): check
    against NumPy, warm-up,
    SAMPLES event-timed samples (interleaved with the C++ twin's when `lib_path` loads).
    Returns {metric: ms, ...} with details under "suite"; a workload that fails is recorded
    under "suite_errors" and the others still run."""
    lib, lib_error = None, None
    if lib_path:
        try:
            lib = SuiteLib(lib_path)
        except OSError as e:
            lib_error = f"cannot load {lib_path}: {e}"[:300]
    res, details, errors = {}, {}, {}
    samples = 2 if dry else SAMPLES
    copy_gbs = None
    if lib is not None:
        try:
            copy_gbs = lib.copy_gbs(4 << 26)
            details["copy_gbs"] = copy_gbs
        except RuntimeError as e:
            errors["copy"] = str(e)[:300]
    for name, metric in METRIC_OF.items():
        sizes = workloads.SUITE_SIZES[name][1 if dry else 0]
        try:
            case = workloads.make_case(name, cuda, sizes)
            case.check()
            for _ in range(2):
                event_sample(cuda, case)
            runs = {impl: lambda: event_sample(cuda, case)}
            h = None
            info = {"sizes": sizes, "inner": case.inner}
            if lib is not None:
                try:
                    h = lib.open(name, sizes)
                    if case.result is not None:
                        # the twin's first unit, from its fresh inputs, against check()'s
                        lib.sample(h, 1)
                        mine, theirs = case.result(), lib.lib.suite_checksum(h)
                        theirs = int(theirs) if float(theirs).is_integer() else theirs
                        info["same_result_as_cuda_cpp"] = mine == theirs
                        info["result"] = {impl: mine, "cuda_cpp": theirs}
                    lib.sample(h, case.inner)  # warm-up
                    runs["cuda_cpp"] = lambda: lib.sample(h, case.inner)
                except RuntimeError as e:
                    info["cuda_cpp_error"] = str(e)[:300]
            try:
                figs, order = interleave_rounds(runs, samples)
            finally:
                if h is not None:
                    info["cuda_cpp_checksum"] = lib.lib.suite_checksum(h)
                    lib.lib.suite_close(h)
            case.check()  # still right after the timed runs
            res[metric] = statistics.median(figs[impl])
            info[f"{impl}_ms"] = figs[impl]
            if "cuda_cpp" in figs:
                info["cuda_cpp_ms"] = figs["cuda_cpp"]
                info["cuda_cpp_median"] = statistics.median(figs["cuda_cpp"])
                info["median_of_round_ratios"] = statistics.median(
                    a / b for a, b in zip(figs[impl], figs["cuda_cpp"]) if b > 0)
            if case.bytes and copy_gbs:
                info["gbs"] = case.bytes / (res[metric] * 1e6)
                info["fraction_of_copy_bandwidth"] = info["gbs"] / copy_gbs
            details[name] = info
        except Exception as e:  # reported in the table, the next workload still runs
            errors[metric] = f"{type(e).__name__}: {e}"[:300]
    if lib_error:
        errors["cuda_cpp"] = lib_error
    res["suite"] = details
    res["suite_errors"] = errors
    return res


def record(impl, results, figures, missing, extra):
    """Moves a worker's suite results into the report's tables: ptxjit's C++ twin figures
    become the cuda_cpp peer (its median), the details go to extra[impl.suite]."""
    details = results.pop("suite", {})
    errors = results.pop("suite_errors", {})
    extra[f"{impl}.suite"] = details
    for metric in METRIC_OF.values():
        if metric in errors:
            missing[metric][impl] = errors[metric]
    for name, metric in METRIC_OF.items():
        info = details.get(name, {})
        if impl != "ptxjit":
            continue
        if "cuda_cpp_median" in info:
            figures[metric]["cuda_cpp"] = info["cuda_cpp_median"]
        else:
            missing[metric]["cuda_cpp"] = info.get("cuda_cpp_error") or errors.get(
                "cuda_cpp", errors.get(metric, "not measured"))


def judge(metric, ratios, extra):
    """Whether `metric` meets its target: the median of the round ratios against the C++ twin
    (None when it was not measured)."""
    for name, m in METRIC_OF.items():
        if m == metric:
            r = extra.get("ptxjit.suite", {}).get(name, {}).get("median_of_round_ratios")
            return None if r is None else r <= 1.03
    return None


def notes(report):
    """Lines for the Markdown report: the round-ratio medians and the bandwidth fractions."""
    details = report["extra"].get("ptxjit.suite", {})
    lines = []
    rr = [f"{k} {v['median_of_round_ratios']:.3f}" for k, v in details.items()
          if isinstance(v, dict) and "median_of_round_ratios" in v]
    if rr:
        lines.append("\nSuite, ptxjit / CUDA C++ (median of per-round ratios, interleaved in "
                     f"ptxjit's process, {SAMPLES} rounds): " + ", ".join(rr) + ".")
    same = [f"{k} {'yes' if v['same_result_as_cuda_cpp'] else 'NO'} ({v['result']})"
            for k, v in details.items()
            if isinstance(v, dict) and "same_result_as_cuda_cpp" in v]
    if same:
        lines.append("\nSuite, the CUDA C++ twin's first unit computes the same result as "
                     "ptxjit's check from the same inputs: " + ", ".join(same) + ".")
    bw = [f"{k} {v['fraction_of_copy_bandwidth'] * 100:.1f}%" for k, v in details.items()
          if isinstance(v, dict) and "fraction_of_copy_bandwidth" in v]
    if bw:
        lines.append(f"\nSuite, fraction of the D2D copy bandwidth "
                     f"({details.get('copy_gbs', 0):.0f} GB/s, same process): " +
                     ", ".join(bw) + ".")
    for impl in ("ptxjit", "cupy"):
        g = report["extra"].get(f"{impl}.graphs")
        if g:
            lines.append(f"\nCUDA graphs, {impl}: one replay of {GRAPH_LAUNCHES} captured launches "
                         f"/ the same {GRAPH_LAUNCHES} launched directly (median of per-round "
                         f"ratios, interleaved, host time to the stream's synchronize): "
                         f"{g['median_of_round_ratios']:.3f}.")
    return lines


# ---------------------------------------------------------------------------------------------
# CUDA graphs: 100 small launches captured once and replayed, beside the same 100 launched
# directly (and CuPy's stream capture of the same kernel, where CuPy is installed)
# ---------------------------------------------------------------------------------------------

GRAPH_LAUNCHES = 100
GRAPH_METRICS = [
    ("graph_direct_100_launches", "µs", "(the reference of the graph replay)", None, None),
    ("graph_replay_100_launches", "µs", "≤ 0.3× 100 direct launches", None, 0.3),
]

# The kernel of the graph case, as CUDA C for CuPy's RawKernel (the same as AXPB below).
AXPB_CUDA = r'''
extern "C" __global__ void axpb(float *x, float a, float b, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = a * x[i] + b;
}
'''

AXPB = '''
@cuda.jit
def axpb(x, a, b):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = a * x[i] + b
'''


def _graph_rounds(direct, replay, sync, rounds, interleave_rounds):
    """Interleaved rounds of `direct` (100 launches) and `replay` (one graph launch), each
    followed by sync(); microseconds of each, per round. Returns (direct median, replay median,
    details)."""
    import time

    def timed(fn):
        def run():
            t0 = time.perf_counter()
            fn()
            sync()
            return (time.perf_counter() - t0) * 1e6
        return run

    for fn in (direct, replay):  # warm-up
        fn()
        sync()
    figs, _ = interleave_rounds({"direct": timed(direct), "replay": timed(replay)}, rounds)
    d, r = statistics.median(figs["direct"]), statistics.median(figs["replay"])
    ratios = [b / a for a, b in zip(figs["direct"], figs["replay"]) if a > 0]
    return d, r, {"direct_us": figs["direct"], "replay_us": figs["replay"],
                  "median_of_round_ratios": statistics.median(ratios)}


def worker_graphs(impl, dry, interleave_rounds):
    """The graph case for `impl` ('ptxjit' or 'cupy'): {metric: µs, "graphs": details}. One
    replay (100 steps of x = a x + b on 256 floats) is checked against NumPy first."""
    import numpy as np

    rounds = 3 if dry else 15
    host = np.linspace(0.5, 1.5, 256, dtype=np.float32)
    a, b = np.float32(1.0001), np.float32(0.5)
    if impl == "ptxjit":
        from ptxjit import cuda

        s = cuda.stream()
        x = cuda.to_device(host)
        cfg = workloads.build(AXPB, cuda, "axpb")[1, 256, s]
        cfg(x, a, b)  # compiled before the capture

        def direct():
            for _ in range(GRAPH_LAUNCHES):
                cfg(x, a, b)

        with cuda.graph(s) as g:
            direct()
        replay, sync, to_host = g.replay, s.synchronize, x.copy_to_host
        reset = lambda: x.copy_to_device(host)  # noqa: E731
    else:
        import cupy as cp

        s = cp.cuda.Stream(non_blocking=True)
        kern = cp.RawKernel(AXPB_CUDA, "axpb")
        x = cp.asarray(host)
        args = (x, a, b, np.int64(host.size))

        def direct():
            with s:
                for _ in range(GRAPH_LAUNCHES):
                    kern((1,), (256,), args)

        direct()  # compiled before the capture
        with s:
            s.begin_capture()
            for _ in range(GRAPH_LAUNCHES):
                kern((1,), (256,), args)
            g = s.end_capture()
        replay, sync = (lambda: g.launch(s)), s.synchronize  # noqa: E731

        def to_host():
            return cp.asnumpy(x)

        def reset():
            x.set(host)
            cp.cuda.Device().synchronize()
    want = host.copy()
    for _ in range(GRAPH_LAUNCHES):
        want = a * want + b
    reset()
    replay()
    sync()
    np.testing.assert_allclose(to_host(), want, rtol=1e-5)
    d, r, details = _graph_rounds(direct, replay, sync, rounds, interleave_rounds)
    return {"graph_direct_100_launches": d, "graph_replay_100_launches": r, "graphs": details}


def judge_graph(extra):
    """Whether the ptxjit graph replay meets ≤ 0.3× its own 100 direct launches (the median of
    the per-round ratios), or None."""
    r = extra.get("ptxjit.graphs", {}).get("median_of_round_ratios")
    return None if r is None else r <= 0.3
