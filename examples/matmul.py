"""Tiled matrix product with shared memory: C = A @ B in float32.

The Numba documentation's pattern: each block computes a TPB x TPB tile of C; for every tile
along the inner dimension its threads first copy one tile of A and one of B into shared
memory, wait at cuda.syncthreads() until the whole block has written them, multiply the two
tiles from shared memory, and wait again before the tiles are overwritten. Unlike the
documentation's version this one also handles sizes that are not multiples of TPB (threads
outside the matrices load zeros and store nothing, but still reach both barriers).

Runs on the GPU when there is one, else on the CPU backend, where the threads of a block run
as fibers that switch at each barrier. `python matmul.py [n]` prints the GFLOP/s.
"""
import sys
import time

import numpy as np

from ptxjit import cuda, float32

TPB = 16  # threads per block along each axis; the tiles are TPB x TPB


@cuda.jit
def matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    col, row = cuda.grid(2)  # x runs along a row of C: neighbouring threads read neighbours
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tmp = float32(0.0)
    for t in range((A.shape[1] + TPB - 1) // TPB):
        k = t * TPB
        sA[ty, tx] = A[row, k + tx] if row < A.shape[0] and k + tx < A.shape[1] else 0.0
        sB[ty, tx] = B[k + ty, col] if k + ty < B.shape[0] and col < B.shape[1] else 0.0
        cuda.syncthreads()  # the tiles are complete
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()  # everyone is done with the tiles before they are overwritten
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = tmp


def launch(d_a, d_b, d_c):
    """Launches matmul over C's shape (d_c is n x m)."""
    n, m = d_c.shape
    grid = ((m + TPB - 1) // TPB, (n + TPB - 1) // TPB)
    matmul[grid, (TPB, TPB)](d_a, d_b, d_c)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else (2048 if cuda.current_target() == "cuda" else 256)
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_c = cuda.device_array((n, n), dtype=np.float32)
    launch(d_a, d_b, d_c)  # compile and warm up
    cuda.synchronize()
    reps = 10 if cuda.current_target() == "cuda" else 1
    t0 = time.perf_counter()
    for _ in range(reps):
        launch(d_a, d_b, d_c)
    cuda.synchronize()
    seconds = (time.perf_counter() - t0) / reps
    c = d_c.copy_to_host()
    assert np.allclose(c, a @ b, rtol=1e-4, atol=1e-3), "matmul differs from NumPy"
    target = "GPU" if cuda.current_target() == "cuda" else "CPU backend"
    print(f"tiled matmul {n}x{n} on {target}: {seconds * 1e3:.2f} ms, "
          f"{2 * n**3 / seconds / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
