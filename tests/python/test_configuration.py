"""ptxjit's environment variables and logging (docs/configuration.md): where libdevice is
looked for, numba-cuda's variables that ptxjit honours (NUMBA_CUDA_DEFAULT_PTX_CC,
NUMBA_ENABLE_CUDASIM), the disk cache's pruning policy (PTXJIT_CACHE_POLICY), and diagnostics
through the logger "ptxjit"."""

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptxjit
from ptxjit import cuda, float64
from ptxjit._loader import lib


def child(code, env):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=300)
    return proc


def fake_libdevice(root):
    path = root / "nvvm" / "libdevice" / "libdevice.10.bc"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"BC")
    return str(path)


# ---- libdevice -------------------------------------------------------------------------------

def test_libdevice_override_and_cuda_home(monkeypatch, tmp_path):
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    home = fake_libdevice(tmp_path / "toolkit")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    monkeypatch.delenv("PTXJIT_LIBDEVICE", raising=False)
    sources = [s for s, _ in lib().libdevice_candidates()]
    assert sources[-2:] == ["CUDA_HOME", "system CUDA toolkit"]
    # Wheels come before CUDA_HOME (numba-cuda's order); this environment has none.
    if not any("nvidia" in p and os.path.isfile(p) for _, p in lib().libdevice_candidates()):
        assert lib().libdevice_path() == home
    monkeypatch.setenv("PTXJIT_LIBDEVICE", str(tmp_path / "mine.bc"))
    assert lib().libdevice_candidates() == [("PTXJIT_LIBDEVICE", str(tmp_path / "mine.bc"))]
    assert lib().libdevice_path() == ""


def test_missing_libdevice_names_every_place(monkeypatch, tmp_path):
    missing = str(tmp_path / "nowhere" / "libdevice.10.bc")
    monkeypatch.setenv("PTXJIT_LIBDEVICE", missing)

    def f(x, out):
        out[0] = math.sin(x[0])

    with pytest.raises(Exception) as info:
        cuda.compile_ptx(f, "void(float64[:], float64[:])")
    text = str(info.value)
    assert "libdevice" in text and missing in text and "PTXJIT_LIBDEVICE" in text
    assert "CUDA_HOME" in text  # how to point ptxjit at a toolkit


def test_libdevice_from_an_nvcc_wheel(subprocess_env, tmp_path):
    """The nvidia-cuda-nvcc wheel's layout in a directory of sys.path (as site-packages): found
    before CUDA_HOME, as numba-cuda finds it."""
    site = tmp_path / "site"
    wheel = fake_libdevice(site / "nvidia" / "cuda_nvcc")
    fake_libdevice(tmp_path / "toolkit")
    env = dict(subprocess_env, CUDA_HOME=str(tmp_path / "toolkit"))
    env["PYTHONPATH"] = env["PYTHONPATH"] + os.pathsep + str(site)
    env.pop("PTXJIT_LIBDEVICE", None)
    env.pop("CONDA_PREFIX", None)
    proc = child("""
        from ptxjit._loader import lib
        print(lib().libdevice_path())
    """, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == wheel


# ---- numba-cuda's variables ------------------------------------------------------------------

def add_one(x):
    return x + 1.0


def test_default_ptx_cc(monkeypatch):
    monkeypatch.delenv("NUMBA_CUDA_DEFAULT_PTX_CC", raising=False)
    ptx, _ = cuda.compile_ptx(add_one, float64(float64), device=True)
    assert ".target sm_90" in ptx
    monkeypatch.setenv("NUMBA_CUDA_DEFAULT_PTX_CC", "8.0")
    ptx, _ = cuda.compile_ptx(add_one, float64(float64), device=True)
    assert ".target sm_80" in ptx
    # An explicit cc wins.
    ptx, _ = cuda.compile_ptx(add_one, float64(float64), device=True, cc=(7, 5))
    assert ".target sm_75" in ptx
    monkeypatch.setenv("NUMBA_CUDA_DEFAULT_PTX_CC", "eight")
    with pytest.raises(ValueError, match="NUMBA_CUDA_DEFAULT_PTX_CC='eight'.*major.minor"):
        cuda.compile_ptx(add_one, float64(float64), device=True)


CUDASIM = """
    import logging, sys
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    import numpy as np
    from ptxjit import cuda

    @cuda.jit
    def k(x):
        x[cuda.grid(1)] += 1

    x = np.zeros(8)
    k[1, 8](x)
    print(cuda.current_target(), x.sum())
"""


def test_enable_cudasim_selects_the_cpu_backend_with_a_note(subprocess_env):
    env = dict(subprocess_env, NUMBA_ENABLE_CUDASIM="1")
    env.pop("PTXJIT_TARGET", None)
    proc = child(CUDASIM, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["cpu", "8.0"]
    assert "ptxjit: NUMBA_ENABLE_CUDASIM=1: ptxjit has no CUDA simulator" in proc.stderr
    # PTXJIT_TARGET decides over it; NUMBA_ENABLE_CUDASIM=0 is no request.
    proc = child(CUDASIM, dict(env, PTXJIT_TARGET="cpu"))
    assert proc.returncode == 0, proc.stderr
    assert "CUDASIM" not in proc.stderr
    proc = child(CUDASIM, dict(env, NUMBA_ENABLE_CUDASIM="0", PTXJIT_TARGET="cpu"))
    assert "CUDASIM" not in proc.stderr


# ---- logging ---------------------------------------------------------------------------------

def test_startup_trace_goes_through_logging(subprocess_env):
    """PTXJIT_TRACE_STARTUP's Python lines are records of the logger "ptxjit.startup": a
    program's own handler receives them (and then no bare copy is written to stderr)."""
    code = """
        import logging
        records = []
        class Keep(logging.Handler):
            def emit(self, record):
                records.append((record.name, record.levelname, record.getMessage()))
        logging.getLogger("ptxjit").addHandler(Keep())
        from ptxjit._loader import lib
        lib()
        import json
        print(json.dumps(records))
    """
    env = dict(subprocess_env, PTXJIT_TRACE_STARTUP="1", PTXJIT_TARGET="cpu")
    proc = child(code, env)
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [r[:2] for r in records] == [["ptxjit.startup", "INFO"]]
    assert records[0][2].startswith("ptxjit startup: [main] importing ptxjit._core (LLVM): ")
    assert "[main] importing ptxjit._core" not in proc.stderr


def test_the_package_writes_nothing_to_stderr_itself():
    """Diagnostics of the Python package go through logging or warnings, never raw writes."""
    pkg = os.path.dirname(ptxjit.__file__)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), encoding="utf-8") as f:
                text = f.read()
            assert "sys.stderr.write" not in text and "file=sys.stderr" not in text, name


# ---- the disk cache's pruning policy --------------------------------------------------------

CACHED = """
    import json, os
    import numpy as np
    from ptxjit import cuda
    from ptxjit._loader import lib

    @cuda.jit(cache=True)
    def a(x):
        x[cuda.grid(1)] += 1.0

    @cuda.jit(cache=True)
    def b(x):
        x[cuda.grid(1)] += 2.0

    @cuda.jit(cache=True)
    def c(x):
        x[cuda.grid(1)] += 3.0

    x = np.zeros(4)
    {"a": a, "b": b, "c": c}[os.environ.get("KERNEL", "a")][1, 4](x)
    print(json.dumps(lib().cache_counters()))
"""


def test_cache_policy_prunes_unused_entries(subprocess_env, tmp_path):
    program = tmp_path / "cached.py"
    program.write_text(textwrap.dedent(CACHED))
    cache = tmp_path / "cache"
    env = dict(subprocess_env, PTXJIT_TARGET="cpu", PTXJIT_CACHE_DIR=str(cache),
               PTXJIT_CACHE_POLICY="prune_interval=0s:prune_after=1h")

    def run(**extra):
        proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                              env=dict(env, **extra), timeout=300)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def entries():
        return sorted(n for n in os.listdir(cache) if n.endswith(".ptxjitc"))

    assert run()["stores"] == 1
    first = entries()
    assert len(first) == 1 and first[0].startswith("llvmcache-cached.a-")
    assert not (cache / "llvmcache.timestamp").exists()  # LLVM's bookkeeping is not left
    # Unused for two hours: the next store in the directory (another kernel's) removes it.
    old = os.path.getmtime(cache / first[0]) - 7200
    os.utime(cache / first[0], (old, old))
    assert run(KERNEL="b")["stores"] == 1
    second = entries()
    assert len(second) == 1 and second[0].startswith("llvmcache-cached.b-")
    # With pruning off, old entries stay.
    os.utime(cache / second[0], (old, old))
    assert run(KERNEL="c", PTXJIT_CACHE_POLICY="off")["stores"] == 1
    assert [n.split("-")[1] for n in entries()] == ["cached.b", "cached.c"]


def test_bad_cache_policy_is_reported(subprocess_env, tmp_path):
    program = tmp_path / "cached.py"
    program.write_text(textwrap.dedent(CACHED))
    env = dict(subprocess_env, PTXJIT_TARGET="cpu", PTXJIT_CACHE_DIR=str(tmp_path / "cache"),
               PTXJIT_CACHE_POLICY="cache_size_bytes=lots")
    proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode != 0
    assert "ValueError: PTXJIT_CACHE_POLICY='cache_size_bytes=lots' is not a cache pruning " \
           "policy" in proc.stderr
