"""bench/run.py: the benchmark suite's code paths, checked on the CPU backend.

`--dry-run` checks the structure of the report (every metric present, ptxjit measured on each,
peers either measured or listed as missing with a reason); it judges no timing. The bare C++
peers (bench/bare_*.cpp) are compiled here, and run against a fake CUDA driver built by these
tests (host memory as device memory), which checks their plumbing (arguments, layouts, JSON,
ctypes, the interleaved measurement and its fall-back), not any figure.
"""
import json
import os
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, BENCH)

import bare_native  # noqa: E402
import run as bench_run  # noqa: E402

METRIC_NAMES = ["launch_empty", "launch_saxpy_args", "launch_16_arrays", "launch_16_scalars",
                "first_compile_fresh_process", "first_launch_fresh_process",
                "compile_warm_saxpy", "compile_warm_mandelbrot", "import",
                "cache_warm_first_call", "cache_warm_first_ufunc_call", "saxpy_2^26_f32_kernel",
                "mandelbrot_4096^2_f64_256it_kernel", "black_scholes_2^24_f32_kernel",
                "vectorize_add_f32_1000", "vectorize_add_f32_1000_scalar",
                # ufuncs at scale (issue 20)
                "ufunc_add_f32_2^26", "ufunc_haversine_4x1M_f64_host",
                "ufunc_reduce_add_f32_2^26", "ufunc_guvectorize_rowdot_f32_2^20x64",
                "transfer_host_roundtrip_f32_2^24",
                # the kernels people write (bench/suite.py, issue 20)
                "reduce_2^26_f32_kernel", "matmul_4096^2_f32_kernel", "histogram_2^26_u8_kernel",
                "transpose_8192^2_f32_kernel", "jacobi_8192^2_f64_100steps",
                "nbody_65536_f32_kernel", "monte_carlo_pi_2^28_kernel",
                # CUDA graphs
                "graph_direct_100_launches", "graph_replay_100_launches"]
SUITE = METRIC_NAMES[21:28]
GRAPHS = METRIC_NAMES[28:]
LAUNCH = METRIC_NAMES[:4]
STARTUP = ["first_compile_fresh_process", "first_launch_fresh_process"]
HAVE_CXX = bool(shutil.which("g++") or shutil.which("c++"))
needs_cxx = pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")

# A fake CUDA driver: enough of the driver API for bench/'s bare peers. "Device" memory is host
# memory; the store kernel of bare_startup.cpp is simulated; a call needing a context fails
# with CUDA_ERROR_INVALID_CONTEXT unless the primary context is current on the calling thread.
FAKE_DRIVER = r"""#include <cstdlib>
#include <cstring>
#include <string>

namespace {
int gContext;                          // the primary context's identity
thread_local void *tCurrent = nullptr; // the calling thread's current context
int gRetained = 0;
long gLaunches = 0;
struct Module { std::string ptx; };
struct Function { std::string name; };
bool current() { return tCurrent == &gContext; }
} // namespace

extern "C" {
int cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }
int cuDeviceGet(int *dev, int ordinal) { if (ordinal != 0) return 101; *dev = 0; return 0; }
int cuDeviceGetAttribute(int *value, int attr, int) {
  *value = attr == 75 ? 9 : attr == 76 ? 0 : 1; // compute capability 9.0
  return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int) { ++gRetained; *ctx = &gContext; return 0; }
int cuDevicePrimaryCtxRelease_v2(int) { return gRetained-- > 0 ? 0 : 201; }
int cuCtxGetCurrent(void **ctx) { *ctx = tCurrent; return 0; }
int cuCtxSetCurrent(void *ctx) { tCurrent = ctx; return 0; }
int cuCtxSynchronize() { return current() ? 0 : 201; }
int cuModuleLoadData(void **mod, const void *image) {
  if (!current()) return 201;
  std::string ptx = static_cast<const char *>(image);
  if (ptx.find(".version") == std::string::npos || ptx.find(".entry") == std::string::npos)
    return 218; // CUDA_ERROR_INVALID_PTX
  *mod = new Module{ptx};
  return 0;
}
int cuModuleUnload(void *mod) { delete static_cast<Module *>(mod); return 0; }
int cuModuleGetFunction(void **fn, void *mod, const char *name) {
  if (static_cast<Module *>(mod)->ptx.find(std::string(".entry ") + name) == std::string::npos)
    return 500; // CUDA_ERROR_NOT_FOUND
  *fn = new Function{name}; // leaked, as the driver's own live as long as the module
  return 0;
}
int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned, void *, void **params, void **extra) {
  if (!current()) return 201;
  if (!fn || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024) return 1;
  if (extra) { // only a packed parameter buffer: POINTER, buffer, SIZE, &bytes (> 0), END
    if (params || extra[0] != (void *)1 || !extra[1] || extra[2] != (void *)2 || !extra[3] ||
        *static_cast<size_t *>(extra[3]) == 0 || extra[4] != nullptr)
      return 1;
  }
  if (static_cast<Function *>(fn)->name == "bare_startup_store") {
    if (!params) return 1;
    unsigned *p = *static_cast<unsigned **>(params[0]);
    *p = 42;
  }
  ++gLaunches;
  return 0;
}
int cuMemAlloc_v2(unsigned long long *p, size_t bytes) {
  if (!current()) return 201;
  *p = reinterpret_cast<unsigned long long>(std::calloc(bytes, 1));
  return *p ? 0 : 2;
}
int cuMemFree_v2(unsigned long long p) { std::free(reinterpret_cast<void *>(p)); return 0; }
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n) {
  std::memcpy(reinterpret_cast<void *>(dst), src, n); return current() ? 0 : 201;
}
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) {
  std::memcpy(dst, reinterpret_cast<void *>(src), n); return current() ? 0 : 201;
}
int cuGetErrorName(int r, const char **name) {
  *name = r == 201 ? "CUDA_ERROR_INVALID_CONTEXT" : r == 500 ? "CUDA_ERROR_NOT_FOUND"
        : r == 218 ? "CUDA_ERROR_INVALID_PTX" : "CUDA_ERROR_FAKE";
  return 0;
}
}
"""


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    if not HAVE_CXX:
        pytest.skip("no C++ compiler")
    d = tmp_path_factory.mktemp("fakecuda")
    (d / "fake.cpp").write_text(FAKE_DRIVER)
    lib = d / "libfakecuda.so"
    cxx = shutil.which("g++") or shutil.which("c++")
    subprocess.run([cxx, "-O1", "-std=c++17", "-shared", "-fPIC", str(d / "fake.cpp"), "-o",
                    str(lib)], check=True, capture_output=True)
    return str(lib)


@pytest.fixture(scope="module")
def natives(tmp_path_factory):
    if not HAVE_CXX:
        pytest.skip("no C++ compiler")
    built, missing = bare_native.build_bare(str(tmp_path_factory.mktemp("bare")))
    assert not missing, missing
    return built


def run_dry(tmp_path, env, *extra):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--dry-run",
                           "--build-dir", str(tmp_path / "build"), "--json", str(out), *extra],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "| metric | unit | ptxjit |" in proc.stdout
    return proc.stdout, json.loads(out.read_text())


def dry_env(subprocess_env):
    env = dict(subprocess_env)
    env.pop("PTXJIT_TARGET", None)
    env.pop("PTXJIT_BENCH_LIBCUDA", None)
    return env


def test_dry_run_covers_every_metric(tmp_path, subprocess_env):
    stdout, report = run_dry(tmp_path, dry_env(subprocess_env))
    assert report["dry_run"] is True
    assert [m["name"] for m in report["metrics"]] == METRIC_NAMES
    for m in report["metrics"]:
        if m["name"] in GRAPHS:
            # CUDA graphs need the CUDA backend: a dry run says so instead of a figure.
            assert m["ptxjit"] is None, m
            assert "CUDA graphs need the CUDA backend" in m["missing"]["ptxjit"], m
        elif m["ptxjit"] is None:
            # Only an unavailable ptxjit.vectorize may leave a figure out, and it says why.
            assert m["name"].startswith("vectorize"), m
            assert m["missing"].get("ptxjit"), m
        else:
            assert m["ptxjit"] > 0, m
        # No GPU is used in a dry run: every peer is reported missing, with a reason.
        assert not m["peers"], m
        for peer, why in m["missing"].items():
            assert why, (m["name"], peer)
        assert m["meets_target"] is None
    by_name = {m["name"]: m for m in report["metrics"]}
    for name in LAUNCH:
        m = by_name[name]
        assert set(m["missing"]) == {"bare", "numba"}
        assert m["missing"]["bare"] == "dry run: no GPU used"
        assert m["bare_method"] is None and m["bare_separate"] is None
        assert m["bare_interleaved_error"] == "dry run: no GPU used"
    for name in STARTUP:
        assert set(by_name[name]["missing"]) == {"bare", "numba"}
    # The first launch includes the first compile.
    assert by_name["first_launch_fresh_process"]["ptxjit"] >= \
        by_name["first_compile_fresh_process"]["ptxjit"]
    assert set(by_name["saxpy_2^26_f32_kernel"]["missing"]) == {"cuda_cpp", "numba"}
    assert {"numba", "cupy", "torch"} <= set(by_name["vectorize_add_f32_1000"]["missing"])
    for name in ("ufunc_add_f32_2^26", "ufunc_haversine_4x1M_f64_host",
                 "transfer_host_roundtrip_f32_2^24"):  # checked vs NumPy
        assert set(by_name[name]["missing"]) == {"numba", "cupy", "torch"}, by_name[name]
    for name in SUITE:  # measured by ptxjit on the CPU backend (each checked against NumPy)
        assert set(by_name[name]["missing"]) == {"cuda_cpp", "numba"}, by_name[name]
    suite = report["extra"]["ptxjit.suite"]
    assert set(suite) >= {"reduce", "matmul", "histogram", "transpose", "jacobi", "nbody", "pi"}
    assert all(len(suite[k]["ptxjit_ms"]) == 2 for k in ("reduce", "pi"))
    for name in GRAPHS:
        assert set(by_name[name]["missing"]) == {"ptxjit", "numba", "cupy"}, by_name[name]
        assert by_name[name]["missing"]["numba"] == "numba-cuda has no CUDA graphs"
    # The bare C++ peers are built even in a dry run, or reported missing with the reason.
    build = report["extra"]["native_build"]
    assert set(build["built"]) | set(build["missing"]) >= set(bare_native.TARGETS)
    if HAVE_CXX:
        assert set(bare_native.TARGETS) <= set(build["built"]), build


def test_dry_run_with_fake_driver_measures_bare_peers(tmp_path, subprocess_env, fake_driver):
    env = dry_env(subprocess_env)
    env["PTXJIT_BENCH_LIBCUDA"] = fake_driver
    stdout, report = run_dry(tmp_path, env)
    by_name = {m["name"]: m for m in report["metrics"]}
    rounds = report["extra"]["bare.interleaved_rounds"]
    reps = report["sizes"]["launch_reps"]
    for name in LAUNCH:
        m = by_name[name]
        assert m["bare_method"] == bench_run.INTERLEAVED, m
        assert m["peers"]["bare"] > 0 and m["bare_separate"] > 0, m
        assert set(m["missing"]) == {"numba"}, m
        r = rounds[name]
        assert len(r["ptxjit_us"]) == len(r["bare_us"]) == reps
        assert m["peers"]["bare"] == sorted(r["bare_us"])[reps // 2]
        assert m["ptxjit"] == sorted(r["ptxjit_us"])[reps // 2]
        # Three participants: ptxjit, bare (kernelParams) and bare_buffer (one packed buffer).
        assert r["first"] == ["ptxjit", "bare_buffer", "ptxjit"][:reps]
        assert len(r["bare_buffer_us"]) == reps
        assert r["bare_buffer_median"] == sorted(r["bare_buffer_us"])[reps // 2]
        # ptxjit runs on the CPU backend here: its context is not the fake's.
        assert r["same_context"] is False
    startup = report["extra"]["bare.startup"]
    assert startup["sm"] == "sm_90"
    assert list(startup["phases"]) == [
        "dlopen", "cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent",
        "cuMemAlloc_and_copy", "cuModuleLoadData", "cuModuleGetFunction", "cuLaunchKernel",
        "cuCtxSynchronize"]
    assert len(startup["totals"]) == report["sizes"]["startup_reps"]
    for name in STARTUP:
        assert by_name[name]["peers"]["bare"] == startup["total_ms"]
        assert "bare" in by_name[name]["ratios"]
    # The paired figure: each round's ptxjit process minus the bare process run beside it.
    diffs = report["extra"]["ptxjit.first_launch_minus_bare_rounds"]
    assert len(diffs) == report["sizes"]["startup_reps"]
    assert report["extra"]["ptxjit.first_launch_minus_bare"] == sorted(diffs)[len(diffs) // 2]
    if len(diffs) == 1:
        launch = by_name["first_launch_fresh_process"]
        assert diffs[0] == pytest.approx(launch["ptxjit"] - launch["peers"]["bare"])
    assert "minus CUDA's start-up, the two run back to back" in stdout
    assert "interleaved with ptxjit's loop" in stdout
    assert "Bare launcher in a separate process" in stdout
    assert "as one packed buffer" in stdout
    assert "CUDA's start-up (bare_startup, sm_90" in stdout
    assert "WARNING: launch" not in stdout  # no fall-back


def test_interleave_rounds_alternates_order():
    calls = []

    def fake(name, values):
        it = iter(values)

        def run():
            calls.append(name)
            return next(it)
        return run

    figs, order = bench_run.interleave_rounds(
        {"ptxjit": fake("ptxjit", [1, 2, 3, 4, 5]), "bare": fake("bare", [10, 20, 30, 40, 50])},
        5)
    assert order == calls == ["ptxjit", "bare", "bare", "ptxjit", "ptxjit", "bare", "bare",
                              "ptxjit", "ptxjit", "bare"]
    assert figs == {"ptxjit": [1, 2, 3, 4, 5], "bare": [10, 20, 30, 40, 50]}
    calls.clear()
    figs, order = bench_run.interleave_rounds(
        {"a": fake("a", [1, 2]), "b": fake("b", [3, 4]), "c": fake("c", [5, 6])}, 2)
    assert order == ["a", "b", "c", "c", "b", "a"]
    assert figs == {"a": [1, 2], "b": [3, 4], "c": [5, 6]}
    assert bench_run.interleave_rounds({"a": fake("a", [])}, 0) == ({"a": []}, [])


class FakeKernel:
    signatures = ["sig"]

    def inspect_ptx(self, sig):
        assert sig == "sig"
        return ".version 8.0\n.target sm_90\n.visible .entry _ptxjit_k_1(\n)\n{\n ret;\n}\n"


class FakeBare:
    """BareLauncher's interface, recording the calls; loop_us returns 2.0, 4.0, 6.0, ..."""

    def __init__(self, log, fail_at=None):
        self.log, self.fail_at, self.figure = log, fail_at, 0.0

    def open(self, ptx, entry, layout, block):
        self.log.append(("open", entry, layout, block))
        return 7

    def same_context(self, h):
        return True

    def loop_us(self, h, iters):
        assert h == 7
        self.figure += 2.0
        self.log.append(("bare", iters))
        if self.fail_at is not None and len([c for c in self.log if c[0] == "bare"]) > \
                self.fail_at:
            raise RuntimeError("bare launch loop: CUDA_ERROR_FAKE")
        return self.figure

    def close(self, h):
        self.log.append(("close", h))


def test_interleaved_launch_with_fakes():
    log = []

    def cfg(*args):
        assert args == (1, 2)
        log.append("call")

    def sync():
        log.append("sync")

    def code():  # the kernel's (ptx, entry, layout), as worker_kernels passes it
        return (*bench_run.ptx_of(FakeKernel()), "0")

    mine, theirs, details = bench_run.interleaved_launch(cfg, (1, 2), 3, 4, sync, FakeBare(log),
                                                         code, 32)
    # warm-up: 3 calls + sync, the bare open, one untimed loop of each
    assert log[:5] == ["call", "call", "call", "sync", ("open", "_ptxjit_k_1", "0", 32)]
    assert log[5:9] == ["call", "call", "call", "sync"] and log[9] == ("bare", 3)
    loops = []
    for entry in log[10:-1]:
        if entry == "sync":
            loops.append("ptxjit")
        elif entry[0] == "bare":
            loops.append("bare")
    assert loops == ["ptxjit", "bare", "bare", "ptxjit", "ptxjit", "bare", "bare", "ptxjit"]
    assert log[-1] == ("close", 7)
    assert details["bare_us"] == [4.0, 6.0, 8.0, 10.0] and theirs == 7.0
    assert details["first"] == ["ptxjit", "bare", "ptxjit", "bare"]
    assert len(details["ptxjit_us"]) == 4 and mine > 0
    assert details["same_context"] is True

    # A failing bare loop still closes the handle, and the error reaches the caller.
    log.clear()
    with pytest.raises(RuntimeError, match="CUDA_ERROR_FAKE"):
        bench_run.interleaved_launch(cfg, (1, 2), 3, 4, sync, FakeBare(log, fail_at=2), code,
                                     1)
    assert log[-1] == ("close", 7)


class FakeBufferBare(FakeBare):
    """A launcher that also has the packed-buffer loop (loop_buffer_us returns 1.0, 1.5, ...)."""

    buffer_figure = 0.5

    def loop_buffer_us(self, h, iters):
        assert h == 7
        self.buffer_figure += 0.5
        self.log.append(("buffer", iters))
        return self.buffer_figure


def test_interleaved_launch_times_the_packed_buffer_loop_beside():
    log = []

    def code():
        return (*bench_run.ptx_of(FakeKernel()), "0")

    mine, theirs, details = bench_run.interleaved_launch(
        lambda *a: log.append("call"), (), 2, 3, lambda: log.append("sync"),
        FakeBufferBare(log), code, 1)
    loops = [e if isinstance(e, str) else e[0] for e in log if e == "sync" or
             isinstance(e, tuple) and e[0] in ("bare", "buffer")]
    # the warm-up's sync, one untimed loop of each, then rounds alternating in order
    assert loops == ["sync", "sync", "bare", "buffer", "sync", "bare", "buffer", "buffer", "bare",
                     "sync", "sync", "bare", "buffer"]
    assert details["first"] == ["ptxjit", "bare_buffer", "ptxjit"]
    assert details["bare_us"] == [4.0, 6.0, 8.0] and theirs == 6.0
    assert details["bare_buffer_us"] == [1.5, 2.0, 2.5] and details["bare_buffer_median"] == 2.0
    assert len(details["ptxjit_us"]) == 3 and mine > 0


class FakeDeviceArray:
    def __init__(self, ndim):
        self.ndim = ndim

    def copy_to_host(self):
        raise AssertionError("not called")


def test_abi_layout_follows_the_kernel_abi():
    import numpy as np

    layout = bench_run.abi_layout
    assert layout(()) == "0"
    # A Python float is weak: its double, then its float32 copy (docs/architecture.md).
    assert layout((2.0, FakeDeviceArray(1), FakeDeviceArray(2), FakeDeviceArray(3))) == \
        "f64,f32,a1,a2,a3"
    assert layout((np.float32(1), np.float64(1), 3, np.int32(4))) == "f32,f64,i64,i64"
    with pytest.raises(TypeError, match="bool"):
        layout((True,))
    with pytest.raises(TypeError, match="str"):
        layout(("x",))


def test_choose_bare_prefers_interleaved_and_says_when_it_falls_back():
    fig, info, why = bench_run.choose_bare(3.5, None, 3.9, None)
    assert (fig, why) == (3.5, None)
    assert info == {"separate": 3.9, "method": bench_run.INTERLEAVED}
    fig, info, why = bench_run.choose_bare(None, "bare launcher: no libcuda", 3.9, None)
    assert (fig, why) == (3.9, None)
    assert info["method"].startswith("separate process (fall-back")
    assert "no libcuda" in info["method"] and info["interleaved_error"] == \
        "bare launcher: no libcuda"
    fig, info, why = bench_run.choose_bare(None, "x", None, "y")
    assert fig is None and info["method"] is None
    assert why == "interleaved: x; separate process: y"
    assert bench_run.choose_bare(None, "same", None, "same")[2] == "same"
    # The table's notes warn about a fall-back.
    report = {"metrics": [{"name": "launch_empty", "ptxjit": 4.0, "bare_method": info_method,
                           "bare_separate": 3.9}
                          for info_method in ["separate process (fall-back: the interleaved "
                                              "measurement failed: no libcuda)"]],
              "extra": {}}
    notes = "\n".join(bench_run.bare_notes(report))
    assert "WARNING: launch_empty: bare from a separate process (fall-back" in notes
    assert "launch_empty 3.9 µs (ptxjit/that 1.03)" in notes


def test_worker_falls_back_when_the_library_cannot_be_loaded(tmp_path, subprocess_env):
    env = dry_env(subprocess_env)
    env["PTXJIT_TARGET"] = "cpu"
    env["PYTHONPATH"] = BENCH + os.pathsep + env["PYTHONPATH"]
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--worker", "ptxjit",
                           "--dry-run", "--bare-lib", str(tmp_path / "missing.so")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    res = out["results"]
    assert "kernels" not in out["errors"], out["errors"]
    for name in LAUNCH:
        assert res[name] > 0  # measured alone
    assert res["bare_interleaved"] == {}
    assert "cannot load" in res["bare_interleaved_errors"]["all"]


@needs_cxx
def test_native_sources_compile_and_startup_ptx_assembles(natives, tmp_path):
    assert set(natives) == set(bare_native.TARGETS)
    for path in natives.values():
        assert os.path.getsize(path) > 0
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    for major, minor in [(8, 0), (9, 0)]:
        ptx = subprocess.run([natives["bare_startup"], "--print-ptx", str(major), str(minor)],
                             capture_output=True, text=True, check=True).stdout
        assert f".target sm_{major}{minor}" in ptx and ".version 8.0" in ptx
        if os.path.exists(ptxas):
            (tmp_path / "k.ptx").write_text(ptx)
            r = subprocess.run([ptxas, f"-arch=sm_{major}{minor}", str(tmp_path / "k.ptx"),
                                "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
    for (major, minor), version in {(10, 0): "8.6", (10, 3): "8.8", (12, 0): "8.7",
                                    (12, 1): "8.8", (11, 0): "9.0"}.items():
        ptx = subprocess.run([natives["bare_startup"], "--print-ptx", str(major), str(minor)],
                             capture_output=True, text=True, check=True).stdout
        assert f".version {version}\n.target sm_{major}{minor}\n" in ptx


SAXPY_LIKE_PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry _ptxjit_saxpy_3(
\t.param .f64 p0,
\t.param .u64 p1, .param .u64 p2, .param .u64 p3,
\t.param .u64 p4, .param .u64 p5, .param .u64 p6,
\t.param .u64 p7, .param .u64 p8, .param .u64 p9
)
{
\tret;
}
.visible .entry _ptxjit_saxpy(
\t.param .f64 q0
)
{
\tret;
}
"""


def test_bare_programs_against_fake_driver(natives, fake_driver, tmp_path):
    env = dict(os.environ, PTXJIT_BENCH_LIBCUDA=fake_driver)
    r = subprocess.run([natives["bare_startup"]], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["sm"] == "sm_90" and out["total_ms"] >= 0
    assert abs(sum(out["phases"].values()) - out["total_ms"]) < 0.05

    ptx = tmp_path / "k.ptx"
    ptx.write_text(SAXPY_LIKE_PTX)
    r = subprocess.run([natives["bare"], str(ptx), "_ptxjit_saxpy_3", "f64,a1,a1,a1", "256",
                        "100"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["nargs"] == 10
    # The parameter count of the layout must match the kernel's (the prefix-named entry is
    # not confused with the other).
    r = subprocess.run([natives["bare"], str(ptx), "_ptxjit_saxpy_3", "f64,a1,a1", "256"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "makes 7 parameters" in r.stderr and "has 10" in r.stderr
    r = subprocess.run([natives["bare"], str(ptx), "_ptxjit_saxpy", "f64"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([natives["bare"], str(ptx), "_ptxjit_saxpy", "f16"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "unknown layout token 'f16'" in r.stderr
    r = subprocess.run([natives["bare"], str(ptx), "nothere"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 1 and "no .entry nothere" in r.stderr
    r = subprocess.run([natives["bare"], str(ptx), "_ptxjit_saxpy", "f64"], capture_output=True,
                       text=True, env=dict(env, PTXJIT_BENCH_LIBCUDA=str(tmp_path / "none.so")))
    assert r.returncode == 1 and "cannot load the CUDA driver" in r.stderr


LIBRARY_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from bare_native import BareLauncher
bare = BareLauncher(sys.argv[2])
ptx = open(sys.argv[3]).read()
out = {}
h = bare.open(ptx, "_ptxjit_saxpy_3", "f64,a1,a1,a1", 256)
out["params"] = bare.param_count(h)
out["same_context"] = bare.same_context(h)
out["loops"] = [bare.loop_us(h, 50) for _ in range(3)]
bare.close(h)
h = bare.open(ptx, "_ptxjit_saxpy", "f64", 1)
out["same_context_after_close"] = bare.same_context(h)  # close restored no context
bare.close(h)
for args in [("_ptxjit_saxpy_3", "a1", 1), ("nothere", "0", 1), ("_ptxjit_saxpy", "f64", 0)]:
    try:
        bare.open(ptx, *args)
        out.setdefault("errors", []).append(None)
    except RuntimeError as e:
        out.setdefault("errors", []).append(str(e))
try:
    bare.loop_us(None, 10)
except RuntimeError as e:
    out["null_handle"] = str(e)
print(json.dumps(out))
"""


def test_bare_library_through_ctypes_against_fake_driver(natives, fake_driver, tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(SAXPY_LIKE_PTX)
    env = dict(os.environ, PTXJIT_BENCH_LIBCUDA=fake_driver)
    r = subprocess.run([sys.executable, "-c", LIBRARY_SCRIPT, BENCH, natives["bare_lib"],
                        str(ptx)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["params"] == 10
    assert out["same_context"] is False and out["same_context_after_close"] is False
    assert len(out["loops"]) == 3 and all(us > 0 for us in out["loops"])
    assert "makes 3 parameters" in out["errors"][0]
    assert "no .entry nothere" in out["errors"][1]
    assert "block < 1" in out["errors"][2]
    assert "null handle" in out["null_handle"]


def test_multi_device_dry_run_measures_and_checks_every_figure(tmp_path, subprocess_env):
    # bench/multi_device.py (the multi-GPU issue's figures) on the CPU backend's one device: the
    # mesh and the n-body split are checked against NumPy inside the script.
    out = tmp_path / "multi.json"
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "multi_device.py"), "--dry-run",
                           "--json", str(out)], capture_output=True, text=True,
                          env=dry_env(subprocess_env), timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["dry_run"] is True and report["backend"] == "cpu" and report["devices"] == 1
    assert report["launch"]["last_device"] == 0 and report["launch"]["ratio"] > 0
    assert report["mesh"]["mesh"] == [40, 30] and report["mesh"]["speed_up"] > 0
    assert [f["bodies"] for f in report["nbody"]] == [512, 1024]
    for figure in [report["mesh"], *report["nbody"]]:
        assert figure["one_device_ms"] > 0 and figure["every_device_ms"] > 0
    assert "| launch, empty kernel (µs) |" in proc.stdout


# ---- scripts/ab.py: the A/B of two builds -----------------------------------------------------

AB = os.path.join(ROOT, "scripts", "ab.py")
AB_SETS = {
    "launch": {"launch_empty", "launch_16_arrays", "launch_16_scalars", "vectorize_add_f32_1000",
               "vectorize_add_f32_1000_scalar"},
    "compile": {"compile_warm_saxpy", "compile_warm_mandelbrot"},
    "ufunc": {"ufunc_add_f32_2^26", "ufunc_haversine_4x1M_f64_host", "ufunc_reduce_add_f32_2^26",
              "ufunc_guvectorize_rowdot_f32_2^20x64", "transfer_host_roundtrip_f32_2^24"},
    "cache": {"cache_warm_first_call", "cache_warm_first_ufunc_call"},
}


def fake_build(path):
    """A directory standing for a checkout built by ./setup.sh: its .venv/bin/python runs this
    interpreter, whose children import this checkout's ptxjit through PYTHONPATH. A script, not a
    symlink: a virtual environment's python linked from elsewhere loses its environment (its
    site-packages, NumPy) because Python looks for pyvenv.cfg beside the link."""
    os.makedirs(path / ".venv" / "bin")
    python = path / ".venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return str(path)


def run_ab(args, env):
    return subprocess.run([sys.executable, AB, *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_ab_dry_run_measures_every_set_for_both_builds(tmp_path, subprocess_env):
    a, b = fake_build(tmp_path / "a"), fake_build(tmp_path / "b")
    out = tmp_path / "ab.json"
    r = run_ab([a, b, "--rounds", "2", "--sets", "all", "--dry-run", "--json", str(out)],
               dry_env(subprocess_env))
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["sets"] == ["launch", "compile", "ufunc", "cache"]
    assert report["dry_run"] is True
    expected = set().union(*AB_SETS.values())
    for side in ("a", "b"):
        assert len(report["rounds"][side]) == 2
        for figs in report["rounds"][side]:
            assert set(figs) == expected
            assert all(v > 0 for v in figs.values()), figs
    assert "DRY RUN" in r.stdout
    for name in expected:  # one table row per metric
        assert f"| {name} |" in r.stdout


def test_ab_measures_only_the_sets_asked_for(tmp_path, subprocess_env):
    a = fake_build(tmp_path / "a")
    out = tmp_path / "ab.json"
    r = run_ab([a, a, "--rounds", "1", "--sets", "cache,compile", "--dry-run", "--json",
                str(out)], dry_env(subprocess_env))
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(out.read_text())
    assert set(report["rounds"]["a"][0]) == AB_SETS["cache"] | AB_SETS["compile"]


def test_ab_refuses_unknown_sets_and_unbuilt_checkouts(tmp_path, subprocess_env):
    a = fake_build(tmp_path / "a")
    r = run_ab([a, a, "--sets", "launch,speed", "--dry-run"], dry_env(subprocess_env))
    assert r.returncode == 2
    assert "unknown set(s) speed" in r.stderr
    os.makedirs(tmp_path / "unbuilt")
    r = run_ab([a, str(tmp_path / "unbuilt"), "--rounds", "1", "--sets", "compile", "--dry-run"],
               dry_env(subprocess_env))
    assert r.returncode != 0
    assert "unbuilt/.venv/bin/python is missing: build" in r.stderr


class _FakeTwin:
    """bench/suite.py's SuiteLib for the C++ twins, without a GPU: each handle's checksum is the
    value `checksums` gives for its workload (0 where none is given)."""

    def __init__(self, checksums):
        self.lib = types.SimpleNamespace(suite_checksum=lambda h: float(checksums.get(h, 0)),
                                         suite_close=lambda h: None)

    def copy_gbs(self, nbytes):
        return 100.0

    def open(self, name, sizes):
        return name

    def sample(self, h, inner):
        return 1.0


def test_suite_compares_the_pi_twins_first_unit_with_ptxjits_check(cpu, monkeypatch):
    import suite
    import workloads

    from ptxjit import cuda
    from ptxjit.cuda import random as cuda_random

    sizes = workloads.SUITE_SIZES["pi"][1]
    first = np.empty(sizes["threads"], cuda_random.xoroshiro128p_dtype)
    cuda_random.init_xoroshiro128p_states_cpu(first, workloads.PI_SEED, 0)
    want = workloads.xoroshiro_pi_reference(first, sizes["samples"])
    for checksum, same in ((want, True), (want + 1, False)):
        twin = _FakeTwin({"pi": checksum})
        monkeypatch.setattr(suite, "SuiteLib", lambda path: twin)
        res = suite.worker_suite("ptxjit", cuda, True, bench_run.interleave_rounds,
                                 lib_path="twin.so")
        assert not res["suite_errors"], res["suite_errors"]
        pi = res["suite"]["pi"]
        assert pi["result"] == {"ptxjit": want, "cuda_cpp": checksum}
        assert pi["same_result_as_cuda_cpp"] is same
        # the other workloads' twins compute nothing comparable: no result compared
        assert all("result" not in res["suite"][k] for k in ("reduce", "matmul", "nbody"))
        lines = "\n".join(suite.notes({"extra": {"ptxjit.suite": res["suite"]}}))
        assert f"pi {'yes' if same else 'NO'} (" in lines
