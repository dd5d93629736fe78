"""CUDA start-up in a fresh process: the eager compile overlapping the device opening (on CUDA),
cuInit overlapping the import of the extension, and the PTXJIT_TRACE_STARTUP trace of the phases
(docs/performance.md)."""

import subprocess
import sys

import pytest

SCRIPT = r"""
import numpy as np
from ptxjit import cuda

def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

k = cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")(saxpy)
x = cuda.to_device(np.arange(1024, dtype=np.float32))
o = cuda.device_array_like(x)
k[4, 256](np.float32(2), x, x, o)
cuda.synchronize()
assert (o.copy_to_host() == 3 * np.arange(1024, dtype=np.float32)).all()
print(cuda.current_target())
"""


def run(env):
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=300)


def test_fresh_process_compile_and_launch_with_the_trace(backend, subprocess_env):
    env = dict(subprocess_env, PTXJIT_TARGET=backend, PTXJIT_TRACE_STARTUP="1")
    r = run(env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == backend
    lines = [l for l in r.stderr.splitlines() if l.startswith("ptxjit startup: ")]
    text = "\n".join(lines)
    assert "[main] importing ptxjit._core (LLVM): " in text
    assert "[main] choosing the backend: " in text
    assert "[main] compiling a kernel (or loading it from the disk cache): " in text
    if backend == "cuda":
        # cuInit on the deciding thread; the context on the background opener; the module load
        # at the first launch.
        assert "[main] cuInit: " in text
        assert "[main] starting cuInit on a thread before importing ptxjit._core" in text
        assert "[bg] cuDevicePrimaryCtxRetain: " in text
        assert "cuModuleLoadDataEx (the driver's PTX to SASS compile): " in text
    else:
        assert "cuDevicePrimaryCtxRetain" not in text  # the CPU backend opens no device
    for line in lines:  # "ptxjit startup: [+<t> ms ][thread] <phase>: <ms> ms"
        assert line.endswith(" ms"), line
        float(line.rsplit(": ", 1)[1][:-3])


def test_no_trace_unless_asked(backend, subprocess_env):
    env = dict(subprocess_env, PTXJIT_TARGET=backend)
    env.pop("PTXJIT_TRACE_STARTUP", None)
    r = run(env)
    assert r.returncode == 0, r.stderr
    assert "ptxjit startup" not in r.stderr
    env["PTXJIT_TRACE_STARTUP"] = "0"
    r = run(env)
    assert r.returncode == 0, r.stderr
    assert "ptxjit startup" not in r.stderr


# The first eager compile starts cuInit on a thread of its own before it imports the extension.
# The fake driver's cuInit is held until two callers wait in it at once (or 30 s pass): the early
# thread's and, once the import is over, the C++ side's own, which joins it.
OVERLAP = """
    import ctypes, os, sys, threading
    import numpy as np
    fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
    fake.fakeCudaHoldInit(2, 30000)
    from ptxjit import cuda
    assert "ptxjit._core" not in sys.modules

    def noop():
        pass

    if {first!r} == "jit":
        assert cuda.jit("void()")(noop).signatures
    else:
        assert (cuda.to_device(np.arange(3)).copy_to_host() == np.arange(3)).all()
    assert fake.fakeCudaInitReleasedByCount() == 1, "cuInit was called by one thread at a time"
    assert fake.fakeCudaInitThreads() == 2, fake.fakeCudaInitThreads()
    print(cuda.current_target())
"""


@pytest.mark.parametrize("first", ["jit", "to_device"])
def test_the_first_eager_compile_overlaps_cuinit_with_the_import(fake_cuda_env, run_python,
                                                                 first):
    # Also when the first call is a copy to the device.
    assert run_python(OVERLAP.format(first=first), fake_cuda_env).strip() == "cuda"


# No early cuInit where none would follow: a lazy kernel (numba-cuda starts CUDA at its first
# launch, so a program may fork() after decorating), and the CPU backend chosen by PTXJIT_TARGET.
NO_EARLY_INIT = """
    import ctypes, os, threading
    fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
    from ptxjit import cuda
    import ptxjit._loader as loader

    def noop():
        pass

    lazy = cuda.jit(noop)
    assert loader._cuda_init_thread is None and fake.fakeCudaInitCalls() == 0
    cuda.jit("void()")(noop)
    print(fake.fakeCudaInitCalls(), loader._cuda_init_thread is not None, cuda.current_target())
"""


def test_no_early_cuinit_for_a_lazy_kernel(fake_cuda_env, run_python):
    # The lazy kernel imported the extension; the eager compile after it then starts nothing
    # early (the C++ side's cuInit follows at once).
    assert run_python(NO_EARLY_INIT, fake_cuda_env).split() == ["1", "False", "cuda"]


def test_no_cuinit_when_ptxjit_target_is_cpu(fake_cuda_env, run_python):
    env = dict(fake_cuda_env, PTXJIT_TARGET="cpu")
    assert run_python(NO_EARLY_INIT, env).split() == ["0", "False", "cpu"]


# A failing cuInit is reported by the C++ side, as without the early start: the early thread
# swallows its result, the C++ side calls cuInit again and names the CUresult.
FAILING_INIT = """
    import ctypes, os
    fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
    fake.fakeCudaSetInitResult(100)  # CUDA_ERROR_NO_DEVICE
    from ptxjit import cuda
    from ptxjit.errors import CudaSupportError

    def noop():
        pass

    try:
        cuda.jit("void()")(noop)
    except CudaSupportError as e:
        assert "cuInit failed: CUDA_ERROR_NO_DEVICE" in str(e), str(e)
        print("refused", fake.fakeCudaInitThreads())
"""


def test_a_failing_cuinit_started_early_is_reported_with_its_cuRESULT(fake_cuda_env, run_python):
    assert run_python(FAILING_INIT, fake_cuda_env).split() == ["refused", "2"]


# fork() waits for an early cuInit under way, so that the child does not inherit a driver in the
# middle of its initialization (the child reports how many cuInit calls it saw under way).
FORK_DURING_INIT = """
    import ctypes, os, time, warnings
    warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a multi-threaded process
    fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
    fake.fakeCudaHoldInit(99, 3000)  # released after three seconds
    t0 = time.monotonic()
    import ptxjit._loader as loader

    loader._start_cuda_init()  # returns once its thread is about to call cuInit
    while fake.fakeCudaInitWaiting() != 1:
        assert time.monotonic() - t0 < 2.5, "the thread did not reach cuInit"
        time.sleep(0.001)
    pid = os.fork()
    if pid == 0:
        os._exit(fake.fakeCudaInitWaiting())
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0, "forked during cuInit"
    assert fake.fakeCudaInitCalls() == 1 and fake.fakeCudaInitWaiting() == 0
    print("waited")
"""


def test_fork_waits_for_an_early_cuinit_under_way(fake_cuda_env, run_python):
    assert "waited" in run_python(FORK_DURING_INIT, fake_cuda_env)


# The device record (compiler/DeviceRecord.h): a process that has seen CUDA's devices records
# their compute capability in the per-user cache directory; a later process with the same devices
# compiles `cuda.jit(signature)` from it while cuInit is still under way (the fake driver holds
# cuInit until two callers wait: the early thread's, then the C++ side's at the first device
# use). The options are taken again from CUDA once it has started: a stale record costs a compile
# and is rewritten.
RECORD = """
    import ctypes, glob, os, sys
    import numpy as np
    fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
    major, minor = (int(v) for v in sys.argv[1].split("."))
    fake.fakeCudaSetComputeCapability(0, major, minor)
    fake.fakeCudaHoldInit(2, 30000)
    from ptxjit import cuda

    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    k = cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")(saxpy)
    # ".target sm_XY" of the kernel's PTX, for the options in force now.
    target = lambda: next(l.split()[1] for l in k.inspect_asm()[k.signatures[0]].splitlines()
                          if l.startswith(".target"))
    # 1: the compile waited for cuInit (the C++ side's call joined the early thread's, which
    # released both); 0: it returned while the early thread was still held there. (Not the count
    # of waiting callers: a released caller may not have left cuInit yet.)
    waited = fake.fakeCudaInitReleasedByCount()
    before = target()
    cuda.to_device(np.zeros(4))  # the C++ side's cuInit: CUDA starts
    after = target()
    records = glob.glob(os.path.join(os.environ["XDG_CACHE_HOME"], "ptxjit", "device-record-*"))
    recorded = sorted(open(r).read().splitlines()[-1] for r in records)
    print(waited, before, after, *recorded, sep=",")
"""


def test_the_device_record_lets_an_eager_compile_skip_cudas_start_up(fake_cuda_env, run_python):
    record = "compute capability 9.0"
    # The first process waits for cuInit (no record yet) and writes the record.
    assert run_python(RECORD, fake_cuda_env, args=["9.0"]).strip() == f"1,sm_90,sm_90,{record}"
    # The next compiles while cuInit is held.
    assert run_python(RECORD, fake_cuda_env, args=["9.0"]).strip() == f"0,sm_90,sm_90,{record}"


def test_a_stale_device_record_is_corrected_once_cuda_has_started(fake_cuda_env, run_python):
    run_python(RECORD, fake_cuda_env, args=["9.0"])
    # The device is now 8.6: the eager compile trusted the record (sm_90), the options after
    # cuInit are CUDA's (sm_86), and the record says so for the next process.
    assert (run_python(RECORD, fake_cuda_env, args=["8.6"]).strip() ==
            "0,sm_90,sm_86,compute capability 8.6")
    assert (run_python(RECORD, fake_cuda_env, args=["8.6"]).strip() ==
            "0,sm_86,sm_86,compute capability 8.6")


def test_the_device_record_is_keyed_by_the_visible_devices(fake_cuda_env, run_python):
    run_python(RECORD, fake_cuda_env, args=["9.0"])
    # Another CUDA_VISIBLE_DEVICES is another set of devices: no record for it yet.
    env = dict(fake_cuda_env, CUDA_VISIBLE_DEVICES="0")
    assert (run_python(RECORD, env, args=["9.0"]).strip() ==
            "1,sm_90,sm_90,compute capability 9.0,compute capability 9.0")


NO_RECORD = """
    import os
    from ptxjit import cuda

    def noop():
        pass

    cuda.jit("void()")(noop)
    print(cuda.current_target(), os.path.exists(os.path.join(os.environ["XDG_CACHE_HOME"], "ptxjit")))
"""


# A process whose driver is loaded before any compile (its first act a copy to the device) never
# looks for a record, so it neither reads nor writes one: the compile after it reads nothing.
CUDA_FIRST = """
    import os
    import numpy as np
    from ptxjit import cuda

    def noop():
        pass

    cuda.to_device(np.zeros(4))
    cuda.jit("void()")(noop)
    print(cuda.current_target(), os.path.exists(os.path.join(os.environ["XDG_CACHE_HOME"], "ptxjit")))
"""


def test_a_process_that_started_cuda_before_compiling_keeps_no_record(fake_cuda_env,
                                                                     run_python):
    assert run_python(CUDA_FIRST, fake_cuda_env).split() == ["cuda", "False"]


def test_no_device_record_without_cuda(fake_cuda_env, run_python):
    env = dict(fake_cuda_env, PTXJIT_TARGET="cpu")
    assert run_python(NO_RECORD, env).split() == ["cpu", "False"]


def test_an_unwritable_cache_directory_only_loses_the_record(fake_cuda_env, run_python, tmp_path):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")  # $XDG_CACHE_HOME/ptxjit cannot be made below a file
    env = dict(fake_cuda_env, XDG_CACHE_HOME=str(blocked))
    for _ in range(2):
        assert run_python(NO_RECORD, env).split() == ["cuda", "False"]


# The early thread's cuInit gets its head start (_loader._let_cuinit_begin) before the extension
# is imported, once per process, and only when the driver's cuInit is about to run.
HEAD_START = """
    import sys
    from ptxjit import cuda
    import ptxjit._loader as loader
    seen = []
    loader._let_cuinit_begin = lambda: seen.append("ptxjit._core" in sys.modules)

    def noop():
        pass

    cuda.jit("void()")(noop)
    cuda.jit("void()")(noop)
    print(seen, loader._cuda_init_thread is not None)
"""


def test_cuinit_gets_a_head_start_before_the_extension_loads(fake_cuda_env, run_python):
    assert run_python(HEAD_START, fake_cuda_env).split() == ["[False]", "True"]


def test_no_head_start_without_a_driver(fake_cuda_env, run_python, tmp_path):
    env = dict(fake_cuda_env, PTXJIT_LIBCUDA=str(tmp_path / "missing.so"))
    env.pop("PTXJIT_TARGET")
    out = run_python("\n    import warnings; warnings.simplefilter('ignore')" + HEAD_START, env)
    assert out.split() == ["[]", "True"]
