"""pytest configuration: makes python/ importable, registers the `gpu` marker (skipped unless a
CUDA GPU is usable) and provides the `backend` fixture that runs a test on the CPU backend and,
where a GPU is present, on CUDA."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(ROOT, "python")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)
# bench/workloads.py (the benchmark kernels as shared source) is importable as `workloads`.
BENCH_DIR = os.path.join(ROOT, "bench")
if BENCH_DIR not in sys.path:
    sys.path.append(BENCH_DIR)

# The compiler verifies the IR it builds and types (ir::verifyInDebug) in every test.
os.environ.setdefault("PTXJIT_VERIFY_IR", "1")

from ptxjit import cuda  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped when none is usable)")
    config.addinivalue_line("markers", "multigpu: needs two or more CUDA GPUs (skipped with "
                                       "fewer); also marked gpu")
    config.addinivalue_line("markers", "device_exclusive: measures the whole device (its memory "
                                       "in use), so other processes on the GPU disturb it; "
                                       "scripts/sanitize_gpu.sh runs these alone")


def _cuda_device_count():
    from ptxjit import _core

    return _core._device_count() if cuda.is_available() else 0


def pytest_collection_modifyitems(config, items):
    available = cuda.is_available()
    if available:
        count = _cuda_device_count()
        if count < 2:
            skip_multi = pytest.mark.skip(reason=f"needs 2 or more CUDA GPUs; {count} visible")
            for item in items:
                if "multigpu" in item.keywords:
                    item.add_marker(skip_multi)
        return
    skip = pytest.mark.skip(reason="no usable CUDA driver/GPU on this machine")
    for item in items:
        if "gpu" in item.keywords or "multigpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def backend(request):
    """Runs the test with kernels on the given backend ('cpu' or 'cuda')."""
    from ptxjit import _core

    previous = os.environ.get("PTXJIT_TARGET")
    _core.select_target(request.param)
    yield request.param
    _core.select_target(previous if previous in ("cpu", "cuda") else "cpu")


@pytest.fixture
def cpu():
    """Runs the test on the CPU backend."""
    from ptxjit import _core

    _core.select_target("cpu")
    yield "cpu"


@pytest.fixture
def cuda_target():
    """Runs a @pytest.mark.gpu test on the CUDA backend (then back to the previous choice)."""
    from ptxjit import _core

    previous = os.environ.get("PTXJIT_TARGET")
    _core.select_target("cuda")
    yield "cuda"
    _core.select_target(previous if previous in ("cpu", "cuda") else "cpu")


@pytest.fixture
def needs_libdevice():
    """The libdevice file that GPU code calling math functions links; skips the test when none
    is found (ptxjit builds and runs on the CPU without a CUDA toolkit: docs/configuration.md)."""
    from ptxjit._loader import lib

    path = lib().libdevice_path()
    if not path:
        places = ", ".join(p for _, p in lib().libdevice_candidates())
        pytest.skip(f"no libdevice (CUDA toolkit) found; looked in {places}")
    return path


@pytest.fixture
def subprocess_env():
    """Environment for child interpreters: python/ on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture
def cached_runs(backend, subprocess_env, tmp_path):
    """Runs a program (its source) in fresh interpreters on the `backend` fixture's backend,
    sharing one disk cache (PTXJIT_CACHE_DIR) between them: `cached_runs(source, count=2)` is
    the JSON value each run printed on its last line (for cache=True tests)."""
    import json
    import subprocess

    def run(source, count=2):
        program = tmp_path / "cached_program.py"
        program.write_text(source)
        env = dict(subprocess_env, PTXJIT_TARGET=backend,
                   PTXJIT_CACHE_DIR=str(tmp_path / "cache"))
        results = []
        for _ in range(count):
            proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                                  env=env, timeout=300)
            assert proc.returncode == 0, proc.stderr
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        return results

    return run


@pytest.fixture(scope="session")
def fake_libcuda(tmp_path_factory):
    """The fake CUDA driver of tests/cpp/fakecuda (its controls and counters: FakeCuda.cpp),
    for CUDA-backend tests without a GPU: the CMake build's, else compiled here. Use it in a
    child interpreter (fake_cuda_env): a process loads one driver."""
    import shutil
    import subprocess

    built = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build"), "tests", "cpp",
                         "libptxjit_fakecuda.so")
    if os.path.exists(built):
        return built
    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx:
        pytest.skip("no C++ compiler for the fake CUDA driver")
    lib = tmp_path_factory.mktemp("fakecuda") / "libfakecuda.so"
    source = os.path.join(ROOT, "tests", "cpp", "fakecuda", "FakeCuda.cpp")
    subprocess.run([cxx, "-O1", "-std=c++17", "-shared", "-fPIC", "-pthread", source, "-o",
                    str(lib)], check=True, capture_output=True)
    return str(lib)


@pytest.fixture
def fake_cuda_env(subprocess_env, fake_libcuda, tmp_path):
    """Environment for a child interpreter whose CUDA backend runs on the fake driver. Its
    per-user cache directory (XDG_CACHE_HOME) is the test's own: no device record
    (compiler/DeviceRecord.h) of an earlier process lets an eager compile skip CUDA's start-up
    unless the test makes one."""
    env = dict(subprocess_env)
    env["PTXJIT_LIBCUDA"] = fake_libcuda
    env["PTXJIT_TARGET"] = "cuda"
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")
    env.pop("PTXJIT_ALLOCATOR", None)
    return env


@pytest.fixture
def run_python():
    """run_python(script, env, timeout=120, args=()): runs `script` (dedented) in a child
    interpreter with `args` as sys.argv[1:], asserts that it exits with 0 (a hang fails at the
    timeout) and returns its stdout."""
    return _run_python


def _run_python(script, env, timeout=120, args=()):
    import subprocess
    import sys
    import textwrap

    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout
