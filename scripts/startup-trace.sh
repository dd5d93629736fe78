#!/usr/bin/env bash
# Prints ptxjit's start-up split on the GPU machine (run after ./setup.sh): a fresh interpreter
# compiles saxpy eagerly, launches it once, and PTXJIT_TRACE_STARTUP=1 traces each phase.
set -euo pipefail
cd "$(dirname "$0")/.."
PTXJIT_TARGET=cuda PTXJIT_TRACE_STARTUP=1 .venv/bin/python - <<'PY'
import time
t_import = time.perf_counter()
import numpy as np
from ptxjit import cuda
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
t0 = time.perf_counter()
k = cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")(saxpy)
t1 = time.perf_counter()
x = cuda.to_device(np.arange(1024, dtype=np.float32)); o = cuda.device_array_like(x)
k[4, 256](np.float32(2), x, x, o); cuda.synchronize()
t2 = time.perf_counter()
print({"import_ms": (t0 - t_import) * 1e3, "compile_ms": (t1 - t0) * 1e3,
       "first_launch_ms": (t2 - t1) * 1e3, "total_ms": (t2 - t_import) * 1e3})
PY
