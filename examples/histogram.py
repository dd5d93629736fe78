"""Histogram with atomics: every thread bins some values and adds 1 to their bins with
cuda.atomic.add, first in a per-block histogram in shared memory (cheap atomics, contended by
one block only), then once per bin into the global histogram.
"""
import numpy as np

from ptxjit import cuda, int32

BINS = 64
TPB = 128


@cuda.jit
def histogram(x, lo, hi, hist):
    local_hist = cuda.shared.array(BINS, int32)
    tid = cuda.threadIdx.x
    for b in range(tid, BINS, cuda.blockDim.x):
        local_hist[b] = 0
    cuda.syncthreads()
    width = (hi - lo) / BINS
    i = cuda.grid(1)
    while i < x.size:
        v = x[i]
        if lo <= v < hi:
            b = int((v - lo) / width)
            cuda.atomic.add(local_hist, min(b, BINS - 1), 1)
        i += cuda.gridsize(1)
    cuda.syncthreads()
    for b in range(tid, BINS, cuda.blockDim.x):
        if local_hist[b]:
            cuda.atomic.add(hist, b, local_hist[b])


def compute(x, lo, hi, blocks=32):
    """Counts of x in BINS equal bins over [lo, hi) (int32)."""
    hist = np.zeros(BINS, dtype=np.int32)
    histogram[blocks, TPB](x, lo, hi, hist)
    return hist


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200_000)
    hist = compute(x, -3.0, 3.0)
    expected, _ = np.histogram(x, bins=BINS, range=(-3.0, 3.0))
    print("first bins:", hist[:8])
    assert np.array_equal(hist, expected)


if __name__ == "__main__":
    main()
