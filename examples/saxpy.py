"""saxpy with ptxjit: out = a * x + y over a million float32 elements.

Runs on the GPU when there is one, else on the CPU backend (PTXJIT_TARGET=cpu|cuda forces
one). The kernel is plain Numba CUDA code: only the import differs.
"""
import time

import numpy as np

from ptxjit import cuda


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def main():
    n = 1_000_000
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    blocks, threads = (n + 255) // 256, 256

    t0 = time.perf_counter()
    # Host arrays: copied to the device, and back after the launch.
    saxpy[blocks, threads](np.float32(2.0), x, y, out)
    t1 = time.perf_counter()
    expected = np.float32(2.0) * x + y
    assert np.allclose(out, expected), "host-array launch gave wrong results"

    # Device arrays: no copies around the launch.
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array_like(x)
    saxpy[blocks, threads](2.0, d_x, d_y, d_out)
    result = d_out.copy_to_host()
    assert np.allclose(result, expected), "device-array launch gave wrong results"

    target = "GPU" if cuda.current_target() == "cuda" else "CPU backend"
    print(f"saxpy on {target}: first call (compile + launch) {1e3 * (t1 - t0):.1f} ms")
    print("out[:4] =", result[:4])
    print("signatures:", saxpy.signatures)
    # PTX is available on every machine (made for the default sm_90 when there is no GPU).
    ptx = saxpy.inspect_ptx(saxpy.signatures[0])
    print("\n".join(line for line in ptx.splitlines() if line.startswith((".version", ".target"))))


if __name__ == "__main__":
    main()
