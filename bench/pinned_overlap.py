"""Does a copy from pinned memory overlap with an independent kernel? (issue 16, host memory)

    python bench/pinned_overlap.py [--mib 256]      # on the GPU machine

Times, with CUDA events, (a) a host-to-device copy of --mib MiB on stream 1 alone, (b) a kernel
of about the same duration on stream 2 alone, and (c) both submitted together, for a pinned
(cuda.pinned_array) and a pageable (np.empty) source. With a pinned source the copy runs
asynchronously, so (c) is close to max(a, b); a pageable source is staged by the driver, so (c)
is close to a + b. Prints one line per source; medians of 5 repetitions after a warm-up. On the
CPU backend (no GPU) it runs with a small size and its figures mean nothing.
"""
import argparse
import statistics

import numpy as np

from ptxjit import cuda


@cuda.jit
def spin(x, rounds):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        for _ in range(rounds):
            v = v * 1.0000001 + 0.5
        x[i] = v


def timed(stream_work, streams):
    """Milliseconds from before the first submission to after every stream is done."""
    start, stop = cuda.event(), cuda.event()
    start.record()
    for s in streams:
        start.wait(s)
    stream_work()
    for s in streams:
        done = cuda.event(timing=False)
        done.record(s)
        done.wait(cuda.default_stream())
    stop.record()
    stop.synchronize()
    return cuda.event_elapsed_time(start, stop)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    args = ap.parse_args()
    gpu = cuda.current_target() == "cuda"
    n = (args.mib if gpu else 1) * (1 << 20) // 8
    s1, s2 = cuda.stream(), cuda.stream()
    dst = cuda.device_array(n)
    work = cuda.to_device(np.ones(1 << 20 if gpu else 1 << 10))
    blocks = (work.size + 255) // 256

    def copy(src):
        return lambda: dst.copy_to_device(src, stream=s1)

    def kernel(rounds):
        return lambda: spin[blocks, 256, s2](work, rounds)

    def both(src, rounds):
        return lambda: (copy(src)(), kernel(rounds)())

    # A kernel about as long as the copy, so that overlap (or its absence) is plain.
    pinned = cuda.pinned_array(n)
    pinned[:] = 1.0
    copy_ms = statistics.median(timed(copy(pinned), [s1]) for _ in range(5))
    rounds = 100
    while gpu and timed(kernel(rounds), [s2]) < copy_ms and rounds < 1 << 20:
        rounds *= 2
    for name, src in (("pinned", pinned), ("pageable", np.ones(n))):
        timed(both(src, rounds), [s1, s2])  # warm-up
        a = statistics.median(timed(copy(src), [s1]) for _ in range(5))
        b = statistics.median(timed(kernel(rounds), [s2]) for _ in range(5))
        c = statistics.median(timed(both(src, rounds), [s1, s2]) for _ in range(5))
        print(f"{name:8s} copy {a:8.3f} ms  kernel {b:8.3f} ms  together {c:8.3f} ms  "
              f"(max {max(a, b):.3f}, sum {a + b:.3f}; overlap {100 * (a + b - c) / min(a, b):.0f}%"
              f" of the shorter)")


if __name__ == "__main__":
    main()
