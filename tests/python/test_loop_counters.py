"""32-bit loop counters on the GPU (codegen/NarrowInductionVars.cpp, docs/performance.md).

Python ints are int64; on CUDA the compiler counts innermost `for i in range(...)` loops in 32
bits behind a run-time guard (the bounds and step are small enough) and keeps a 64-bit copy of
the loop for everything else. The end-to-end tests below give every thread of one launch a
different range, with bounds on both sides of that guard and of the int32 limits, and compare
with Python: on CUDA both copies of each loop run (in one warp), on the CPU (where the pass
does not run) they check the same semantics. The PTX checks need no GPU (compile_ptx).
"""
import re

import numpy as np
import pytest

from ptxjit import cuda
from ptxjit.types import float64, int64


E29, E30, E31 = 2**29, 2**30, 2**31

# (start, stop) pairs a few iterations apart, around 0, the guard's limits (+-2^30), int32's
# limits (+-2^31) and far beyond; some empty or reversed.
EDGES = [0, E30 - 1, E30, -E30, -E30 - 1, E31 - 1, E31, -E31, -E31 - 1, 5 * E31, -(2**40)]
PAIRS = sorted({(e + d, e + f) for e in EDGES for d in (-5, -1, 0, 2) for f in (-4, 0, 1, 5)})


def _launch(kernel, n, *args):
    kernel[(n + 63) // 64, 64](*args)


def _pairs_arrays(pairs):
    starts = np.array([p[0] for p in pairs], dtype=np.int64)
    stops = np.array([p[1] for p in pairs], dtype=np.int64)
    return starts, stops


def test_range_across_the_guard_matches_python(backend):
    @cuda.jit
    def stats(starts, stops, out):
        t = cuda.grid(1)
        if t < starts.size:
            count = 0
            total = 0
            i = -7
            for i in range(starts[t], stops[t]):
                count += 1
                total = total * 3 + i  # no closed form: the loop stays a loop
            out[t, 0] = count
            out[t, 1] = total
            out[t, 2] = i  # the counter's final value, after the loop

    starts, stops = _pairs_arrays(PAIRS)
    out = np.zeros((len(PAIRS), 3), dtype=np.int64)
    _launch(stats, len(PAIRS), starts, stops, out)
    for k, (a, b) in enumerate(PAIRS):
        i = -7
        count = total = 0
        for i in range(a, b):
            count += 1
            total = total * 3 + i
        assert list(out[k]) == [count, total, i], (a, b)


def test_constant_bounds_beyond_int32(backend):
    @cuda.jit
    def sums(out):
        t = cuda.grid(1)
        if t == 0:
            s = 0
            for i in range(2**31 - 5, 2**31 + 5):
                s += i
            out[0] = s
            s = 0
            for i in range(-2**31 - 3, -2**31 + 3):
                s += i
            out[1] = s
            s = 0
            for i in range(2**30 - 3, 2**30 + 3):
                s += i
            out[2] = s

    out = np.zeros(3, dtype=np.int64)
    sums[1, 32](out)
    assert list(out) == [sum(range(2**31 - 5, 2**31 + 5)), sum(range(-2**31 - 3, -2**31 + 3)),
                         sum(range(2**30 - 3, 2**30 + 3))]


def test_counting_down_matches_python(backend):
    @cuda.jit
    def down(starts, stops, out):
        t = cuda.grid(1)
        if t < starts.size:
            s = 0
            i = 99
            for i in range(starts[t], stops[t], -1):
                s = s * 5 + i
            out[t, 0] = s
            out[t, 1] = i

    @cuda.jit
    def to_zero(ns, out):
        t = cuda.grid(1)
        if t < ns.size:
            s = 0
            for i in range(ns[t], 0, -1):
                s = (s * 31 + i) % 1000003
            out[t] = s

    pairs = [(b, a) for a, b in PAIRS]
    starts, stops = _pairs_arrays(pairs)
    out = np.zeros((len(pairs), 2), dtype=np.int64)
    _launch(down, len(pairs), starts, stops, out)
    for k, (a, b) in enumerate(pairs):
        s, i = 0, 99
        for i in range(a, b, -1):
            s = s * 5 + i
        assert list(out[k]) == [s, i], (a, b)

    ns = np.array([-(2**40), -E31, -3, 0, 1, 2, 7, 100, 1000], dtype=np.int64)
    res = np.zeros(len(ns), dtype=np.int64)
    _launch(to_zero, len(ns), ns, res)
    refs = []
    for n in ns:
        s = 0
        for i in range(int(n), 0, -1):
            s = (s * 31 + i) % 1000003
        refs.append(s)
    assert list(res) == refs


@pytest.mark.parametrize("step", [E29, E29 + 1, E30, E31])
def test_large_constant_steps(backend, step):
    # Steps up to 2^29 are narrowed (behind the guard); larger ones never are.
    src = f'''
def big_steps(starts, stops, out):
    t = cuda.grid(1)
    if t < starts.size:
        count = 0
        s = 0
        i = -1
        for i in range(starts[t], stops[t], {step}):
            count += 1
            s = s * 3 + i
        out[t, 0] = count
        out[t, 1] = s
        out[t, 2] = i
'''
    ns = {"cuda": cuda}
    exec(compile(src, "<big_steps>", "exec"), ns)
    kernel = cuda.jit(ns["big_steps"])
    pairs = sorted({(e + d * step, e + f * step) for e in EDGES for d in (-3, -1, 0)
                    for f in (0, 1, 4)} | {(-E31, E31), (0, 2 * E31 + 7)})
    pairs = [(a, b) for a, b in pairs if (b - a) // step <= 16]
    starts, stops = _pairs_arrays(pairs)
    out = np.zeros((len(pairs), 3), dtype=np.int64)
    _launch(kernel, len(pairs), starts, stops, out)
    for k, (a, b) in enumerate(pairs):
        count, s, i = 0, 0, -1
        for i in range(a, b, step):
            count += 1
            s = s * 3 + i
        assert list(out[k]) == [count, s, i], (a, b, step)


def test_early_exit_and_return_from_the_loop(backend):
    @cuda.jit(device=True)
    def first_multiple(a, b, k):
        for i in range(a, b):
            if i % k == 0:
                return i
        return -1

    @cuda.jit
    def search(starts, stops, ks, found, stopped):
        t = cuda.grid(1)
        if t < starts.size:
            found[t] = first_multiple(starts[t], stops[t], ks[t])
            i = -3
            for i in range(starts[t], stops[t]):
                if i % ks[t] == 1:
                    break
            stopped[t] = i

    pairs = [(a, b) for a, b in PAIRS] + [(E31 - 40, E31 + 40), (-E31 - 40, -E31 + 40)]
    starts, stops = _pairs_arrays(pairs)
    ks = np.array([3 + (k % 5) for k in range(len(pairs))], dtype=np.int64)
    found = np.zeros(len(pairs), dtype=np.int64)
    stopped = np.zeros(len(pairs), dtype=np.int64)
    _launch(search, len(pairs), starts, stops, ks, found, stopped)
    for k, (a, b) in enumerate(pairs):
        kk = int(ks[k])
        ref = next((i for i in range(a, b) if i % kk == 0), -1)
        i = -3
        for i in range(a, b):
            if i % kk == 1:
                break
        assert (found[k], stopped[k]) == (ref, i), (a, b, kk)


def _workloads():
    import workloads  # bench/workloads.py (tests/python/conftest.py puts bench/ on the path)

    return workloads


def test_mandel_with_iteration_limits_across_the_guard(backend):
    # `for i in range(max_iters)` with `return i` inside and `return max_iters` after: limits
    # on both sides of 2^30 and beyond int32, for points that escape within a few iterations
    # (and for limits that end the loop first).
    w = _workloads()
    mandel = w.build(w.MANDELBROT, cuda, "mandel")

    @cuda.jit
    def escape(xs, ys, limits, out):
        t = cuda.grid(1)
        if t < xs.size:
            out[t] = mandel(xs[t], ys[t], limits[t])

    # Points whose iterations round the same with and without fma contraction (on the real
    # axis, or exact in binary), escaping after 0 to 29 iterations.
    points = [(1.0, 1.0), (0.0, 1.5), (2.5, 0.0), (-2.1, 0.0), (0.3, 0.0), (0.26, 0.0)]
    limits = [-(2**40), -E31 - 1, -5, 0, 1, 3, 7, E30 - 1, E30, E31 - 1, E31 + 5, 2**40]
    cases = [(x, y, m) for x, y in points for m in limits]
    xs = np.array([c[0] for c in cases])
    ys = np.array([c[1] for c in cases])
    lim = np.array([c[2] for c in cases], dtype=np.int64)
    out = np.zeros(len(cases), dtype=np.int64)
    _launch(escape, len(cases), xs, ys, lim, out)

    def ref(x, y, max_iters):
        c, z = complex(x, y), 0j
        for i in range(max_iters):
            z = z * z + c
            if (z.real * z.real + z.imag * z.imag) >= 4:
                return i
        return max_iters

    assert list(out) == [ref(*c) for c in cases]


# ---- the PTX of the Mandelbrot benchmark ---------------------------------------------------

def _loops(ptx):
    """The bodies of the PTX loops: for each label, the text from it to its last backward
    branch."""
    lines = ptx.splitlines()
    loops = []
    for k, line in enumerate(lines):
        m = re.match(r"^(\$L__BB\d+_\d+):", line)
        if not m:
            continue
        ends = [j for j in range(k + 1, len(lines))
                if re.search(r"\bbra(\.uni)?\s+" + re.escape(m.group(1)) + ";", lines[j])]
        if ends:
            loops.append("\n".join(lines[k:ends[-1] + 1]))
    return loops


def _counter_widths(body):
    """'32' when the loop counts by one in 32 bits, '64' when in 64 bits."""
    widths = set()
    if re.search(r"add\.s32\s+%r\d+, %r\d+, 1;", body) and re.search(r"setp\.\w+\.s32", body):
        widths.add("32")
    if re.search(r"add\.s64\s+%rd\d+, %rd\d+, 1;", body) and re.search(r"setp\.\w+\.s64", body):
        widths.add("64")
    return widths


def _assert_narrow_inner_loop(ptx):
    loops = [b for b in _loops(ptx) if "0d4010000000000000" in b]
    widths = [_counter_widths(b) for b in loops]
    # One copy counts in 32 bits (and nothing in 64 bits), the fallback copy in 64 bits.
    assert {"32"} in widths, ptx
    assert {"64"} in widths, ptx


def test_mandelbrot_device_function_counts_in_32_bits():
    w = _workloads()
    mandel = w.build(w.MANDELBROT, cuda, "mandel")
    ptx, ret = cuda.compile_ptx(mandel.py_func, (float64, float64, int64), device=True,
                                cc=(9, 0))
    assert str(ret) == "int64"
    _assert_narrow_inner_loop(ptx)


def test_mandelbrot_kernel_inner_loop_counts_in_32_bits():
    w = _workloads()
    kernel = w.build(w.MANDELBROT, cuda, "mandel_kernel")
    ptx, _ = cuda.compile_ptx(kernel.py_func, w.MANDELBROT_SIG, cc=(9, 0))
    _assert_narrow_inner_loop(ptx)
    # The guard is one 64-bit compare of max_iters, hoisted out of the pixel loops.
    assert re.search(r"setp\.lt\.s64\s+%p\d+, %rd\d+, 1073741824;", ptx), ptx


def test_mandelbrot_without_optimization_keeps_64_bit_counters():
    # The contrast that keeps the checks above meaningful: opt=False skips the pass.
    w = _workloads()
    mandel = w.build(w.MANDELBROT, cuda, "mandel")
    ptx, _ = cuda.compile_ptx(mandel.py_func, (float64, float64, int64), device=True,
                              cc=(9, 0), opt=False)
    assert not re.search(r"add\.s32\s+%r\d+, %r\d+, 1;", ptx), ptx


def test_mandelbrot_inner_loop_copies_nothing():
    # The exit values (`return i` after the escape test, `return max_iters` when the count
    # runs out) are made on the exit paths (codegen/SplitLoopExits.cpp): inside the inner loops
    # only the loop's own work, no register copies; `i` leaves as the incremented counter - 1.
    w = _workloads()
    kernel = w.build(w.MANDELBROT, cuda, "mandel_kernel")
    ptx, _ = cuda.compile_ptx(kernel.py_func, w.MANDELBROT_SIG, cc=(9, 0))
    # The inner loops: those of the escape test without the pixel loops' store.
    loops = [b for b in _loops(ptx) if "0d4010000000000000" in b and "st.global" not in b]
    assert len(loops) == 2, ptx  # the 32-bit loop and its 64-bit fallback
    for body in loops:
        assert not re.search(r"^\s*mov\.", body, re.M), body
    assert re.search(r"sub\.s32 %r\d+, %r\d+, %r\d+;", ptx), ptx
