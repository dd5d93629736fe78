"""CUDA start-up in a fresh process: the eager compile overlapping the device opening (on CUDA),
and the PTXJIT_TRACE_STARTUP trace of the phases (docs/performance.md)."""

import subprocess
import sys

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
