"""Loops in the shape GPUs want them (codegen/MergeBackedges.cpp, codegen/GpuUnroll.cpp;
docs/performance.md, "Compiler: loop shapes and unrolling").

A loop that jumps back from two places (`continue`, or from CPython 3.12 on an `if` that ends
the body) is given one backedge before LLVM's optimizer sees it, so it stays one loop and a
conditional count becomes a select; on CUDA, small innermost loops are unrolled by four as nvcc
does, a grid-stride loop too. The end-to-end tests check the semantics on every backend; the
PTX checks need no GPU (compile_ptx).
"""
import re

import numpy as np

from ptxjit import cuda


def test_continue_and_a_trailing_if_count_as_python(backend):
    @cuda.jit
    def count(a, out):
        t = cuda.grid(1)
        if t < out.shape[0]:
            hits = 0
            skipped = 0
            for j in range(t, a.size):
                if a[j] < 0.25:
                    skipped += 1
                    continue
                if a[j] <= 0.75:
                    hits += 1
            out[t, 0] = hits
            out[t, 1] = skipped

    a = np.random.default_rng(3).random(301)
    out = np.zeros((77, 2), dtype=np.int64)
    count[3, 32](a, out)
    for t in range(77):
        rest = a[t:]
        assert out[t, 0] == np.count_nonzero((rest >= 0.25) & (rest <= 0.75))
        assert out[t, 1] == np.count_nonzero(rest < 0.25)


def test_grid_stride_sum_for_every_size_around_the_unrolled_step(backend):
    @cuda.jit
    def partial_sums(x, out):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        acc = 0.0
        while i < x.size:
            acc += x[i]
            i += stride
        out[cuda.grid(1)] = acc

    threads = 2 * 32
    # Each thread's iteration count runs through 0..9: every remainder of the unrolled loop.
    for n in (0, 1, threads - 1, threads, threads + 3, 4 * threads, 9 * threads + 5):
        x = np.arange(n, dtype=np.float64) + 0.5
        out = np.zeros(threads)
        partial_sums[2, 32](x, out)
        want = [x[t::threads].sum() for t in range(threads)]
        np.testing.assert_allclose(out, want, rtol=1e-12)


def _ptx(kernel, sig):
    ptx, _ = cuda.compile_ptx(kernel, sig, cc=(9, 0))
    return ptx


def _most_loads_in_one_block(ptx, load):
    best = cur = 0
    for line in ptx.splitlines():
        if line.startswith("$L__BB"):
            cur = 0
        elif load in line:
            cur += 1
            best = max(best, cur)
    return best


def test_grid_stride_loop_issues_four_loads_per_iteration_in_ptx():
    def total(x, out):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        acc = np.float32(0)
        while i < x.size:
            acc += x[i]
            i += stride
        cuda.atomic.add(out, 0, acc)

    ptx = _ptx(total, "void(float32[::1], float32[::1])")
    # nvcc's shape: four loads issued back to back, the trip count divided out before the loop.
    assert _most_loads_in_one_block(ptx, "ld.global.f32") == 4, ptx
    assert re.search(r"div\.u32", ptx), ptx


def test_count_with_continue_is_a_select_in_ptx():
    def count(a, out, n):
        hits = 0
        for j in range(n):
            if a[j] < 0.25:
                continue
            hits += 1
        out[0] = hits

    ptx = _ptx(count, "void(float64[::1], int64[::1], int64)")
    # One loop whose count adds a selected 0 or 1, not an outer loop around each hit.
    assert re.search(r"selp\.(u|b|s)64\s+%rd\d+, 1, 0, %p\d+;", ptx), ptx
