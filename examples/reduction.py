"""Block sum: each block adds up its part of an array, first within each warp with
cuda.shfl_down_sync, then across the block's warps through shared memory; a second launch (or
the host) adds up the per-block sums.

The warp step needs no barrier: the 32 lanes of a warp exchange registers directly. The
block step does: every warp writes its partial sum to shared memory, and cuda.syncthreads()
makes them visible to the first warp, which reduces them with shuffles again.
"""
import numpy as np

from ptxjit import cuda, float32

TPB = 256                 # threads per block (a multiple of 32)
WARPS = TPB // 32
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def block_sum(x, partial):
    warp_sums = cuda.shared.array(WARPS, float32)
    tid = cuda.threadIdx.x
    lane = cuda.laneid
    warp = tid // 32
    # Grid-stride accumulation: each thread sums several elements.
    acc = float32(0.0)
    i = cuda.grid(1)
    while i < x.size:
        acc += x[i]
        i += cuda.gridsize(1)
    # Warp level: after five halving steps lane 0 holds the warp's sum.
    offset = 16
    while offset > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset //= 2
    if lane == 0:
        warp_sums[warp] = acc
    cuda.syncthreads()
    # Block level: the first warp adds up the warps' sums.
    if warp == 0:
        acc = warp_sums[lane] if lane < WARPS else float32(0.0)
        offset = 16
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            partial[cuda.blockIdx.x] = acc


def total(x, blocks=64):
    """The sum of the float32 array x (host or device array)."""
    d_partial = cuda.device_array(blocks, dtype=np.float32)
    block_sum[blocks, TPB](x, d_partial)
    out = cuda.device_array(1, dtype=np.float32)
    block_sum[1, TPB](d_partial, out)
    return out.copy_to_host()[0]


def main():
    rng = np.random.default_rng(0)
    x = rng.random(1_000_000, dtype=np.float32)
    s = total(cuda.to_device(x))
    expected = np.sum(x, dtype=np.float64)
    print(f"sum = {s:.3f} (NumPy: {expected:.3f})")
    assert abs(s - expected) <= 1e-4 * expected


if __name__ == "__main__":
    main()
