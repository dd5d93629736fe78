"""The kernels of the benchmark suite, as Python source shared by ptxjit and numba-cuda.

Each source is executed in a namespace holding `cuda` (ptxjit's or Numba's), `math` and `np`,
so both compilers see the same program. The CUDA C++ references in bench/cuda/*.cu mirror
SAXPY, MANDELBROT and BLACK_SCHOLES.
"""
import importlib
import math

import numpy as np

EMPTY = '''
@cuda.jit
def empty():
    pass
'''

SAXPY = '''
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
'''

SAXPY_SIG = "void(float32, float32[::1], float32[::1], float32[::1])"

# The Numba blog's Mandelbrot (examples/mandelbrot.py), float64 and complex arithmetic.
MANDELBROT = '''
@cuda.jit(device=True)
def mandel(x, y, max_iters):
    c = complex(x, y)
    z = 0.0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters

@cuda.jit
def mandel_kernel(min_x, max_x, min_y, max_y, image, iters):
    height = image.shape[0]
    width = image.shape[1]
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height
    startX = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    startY = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
    gridX = cuda.gridDim.x * cuda.blockDim.x
    gridY = cuda.gridDim.y * cuda.blockDim.y
    for x in range(startX, width, gridX):
        real = min_x + x * pixel_size_x
        for y in range(startY, height, gridY):
            imag = min_y + y * pixel_size_y
            image[y, x] = mandel(real, imag, iters)
'''

MANDELBROT_SIG = "void(float64, float64, float64, float64, uint8[:, ::1], int64)"

# Numba's Black-Scholes example: float32 arrays, the constants as plain Python literals.
BLACK_SCHOLES = '''
RSQRT2PI = 0.39894228040143267793994605993438
A1 = 0.31938153
A2 = -0.356563782
A3 = 1.781477937
A4 = -1.821255978
A5 = 1.330274429

@cuda.jit(device=True)
def cnd_cuda(d):
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val

@cuda.jit
def black_scholes(callResult, putResult, S, X, T, R, V):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= S.shape[0]:
        return
    sqrtT = math.sqrt(T[i])
    d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd_cuda(d1)
    cndd2 = cnd_cuda(d2)
    expRT = math.exp((-1. * R) * T[i])
    callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
    putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))
'''


def many_args_source(kind, count=16):
    """A kernel taking `count` float32 arrays (kind 'arrays') or `count` float64 scalars
    (kind 'scalars'), touching the first and the last."""
    names = [f"a{i}" for i in range(count)]
    if kind == "arrays":
        body = f"    if cuda.grid(1) == 0:\n        a0[0] = {names[-1]}[0]\n"
    else:
        body = f"    if cuda.grid(1) == 1 << 30:\n        x = a0 + {names[-1]}\n"
    return f"@cuda.jit\ndef many({', '.join(names)}):\n{body}"


def build(source, cuda, name):
    """Executes `source` with `cuda` and returns its function `name` (a dispatcher). A source
    that uses `cuda.random` has that submodule imported first (numba-cuda's `numba.cuda` does
    not import it; ptxjit's loads it on first use either way)."""
    if "cuda.random" in source:
        importlib.import_module(cuda.__name__ + ".random")
    ns = {"cuda": cuda, "math": math, "np": np}
    exec(compile(source, f"<bench:{name}>", "exec"), ns)
    return ns[name]


# Ufuncs at scale (issue 20): the seed program's haversine ufunc (examples/haversine.py's `hav`),
# called on host arrays, and a float32 add. HAVERSINE_C is the same formula for CuPy's
# ElementwiseKernel.
UFUNC_ADD = '''
@vectorize(["float32(float32, float32)"], target="cuda")
def add(a, b):
    return a + b
'''

# A row-wise dot product as a generalized ufunc (issue 20's guvectorize case).
ROWDOT = '''
@guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->()", target="cuda")
def rowdot(x, y, out):
    s = np.float32(0)
    for k in range(x.shape[0]):
        s += x[k] * y[k]
    out[0] = s
'''

HAVERSINE = '''
@vectorize(["float64(float64, float64, float64, float64, float64)"], target="cuda")
def hav(lat1, lon1, lat2, lon2, s):
    a = (math.sin(0.008726645 * (lat2 - lat1)) ** 2 +
         math.cos(0.01745329 * lat1) * math.cos(0.01745329 * lat2) *
         math.sin(0.008726645 * (lon2 - lon1)) ** 2)
    return math.atan2(a, 1 - a) * s
'''

HAVERSINE_C = ("double u = sin(0.008726645 * (lat2 - lat1)), v = sin(0.008726645 * (lon2 - lon1));"
               " double a = u * u + cos(0.01745329 * lat1) * cos(0.01745329 * lat2) * v * v;"
               " z = atan2(a, 1 - a) * s;")


def build_ufunc(source, vectorize, name, guvectorize=None):
    """Executes ufunc `source` with `vectorize` and `guvectorize` (ptxjit's or Numba's) and
    returns `name`."""
    ns = {"vectorize": vectorize, "guvectorize": guvectorize, "math": math, "np": np}
    exec(compile(source, f"<bench:{name}>", "exec"), ns)
    return ns[name]


def haversine_inputs(n, seed=7):
    """Four float64 arrays of n points (latitudes, longitudes of two points each)."""
    rng = np.random.default_rng(seed)
    return (rng.uniform(-90, 90, n), rng.uniform(-180, 180, n), rng.uniform(-90, 90, n),
            rng.uniform(-180, 180, n))


def haversine_reference(lat1, lon1, lat2, lon2, s):
    u, v = np.sin(0.008726645 * (lat2 - lat1)), np.sin(0.008726645 * (lon2 - lon1))
    a = u * u + np.cos(0.01745329 * lat1) * np.cos(0.01745329 * lat2) * v * v
    return np.arctan2(a, 1 - a) * s


def black_scholes_inputs(n, seed=0):
    """Non-trivial float32 inputs (stock price, strike, years) as in Numba's example."""
    rng = np.random.default_rng(seed)
    S = rng.uniform(5.0, 30.0, n).astype(np.float32)
    X = rng.uniform(1.0, 100.0, n).astype(np.float32)
    T = rng.uniform(0.25, 10.0, n).astype(np.float32)
    return S, X, T


def black_scholes_reference(S, X, T, R, V):
    """NumPy float64 reference (call, put)."""
    S, X, T = (a.astype(np.float64) for a in (S, X, T))

    def cnd(d):
        A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
        K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        r = 0.39894228040143267793994605993438 * np.exp(-0.5 * d * d) * (
            K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
        return np.where(d > 0, 1.0 - r, r)

    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    expRT = np.exp(-R * T)
    return S * cnd(d1) - X * expRT * cnd(d2), X * expRT * (1.0 - cnd(d2)) - S * (1.0 - cnd(d1))


# ---------------------------------------------------------------------------------------------
# The kernels people write (issue 20): shared memory, barriers, warp shuffles, atomics. Each is
# mirrored, same algorithm, block sizes and tiling, by bench/cuda/suite.cu. Constants that the
# kernels use as compile-time values (shapes of shared arrays) are globals of the source, as in
# Numba's documentation; float32 constants are np.float32 so that neither compiler promotes
# float32 arithmetic to float64.
# ---------------------------------------------------------------------------------------------

# Sum of a float32 vector: a grid-stride loop per thread, a warp reduction with shfl_down_sync,
# the warps' sums through shared memory, then one atomic per block. Block: REDUCE_BLOCK threads.
REDUCE = '''
REDUCE_BLOCK = 256

@cuda.jit(device=True)
def warp_sum(v):
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, offset)
        offset //= 2
    return v

@cuda.jit
def reduce_sum(x, out):
    warp_sums = cuda.shared.array(32, np.float32)
    tid = cuda.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    acc = np.float32(0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        acc += x[i]
        i += stride
    acc = warp_sum(acc)
    if lane == 0:
        warp_sums[warp] = acc
    cuda.syncthreads()
    if warp == 0:
        acc = np.float32(0)
        if lane < cuda.blockDim.x // 32:
            acc = warp_sums[lane]
        acc = warp_sum(acc)
        if lane == 0:
            cuda.atomic.add(out, 0, acc)
'''

# Numba's documented fast_matmul (docs: "Matrix multiplication", shared-memory tiles of
# TPB x TPB), C = A @ B. Block (TPB, TPB); grid covers C's columns (x) and rows (y).
MATMUL = '''
TPB = 16

@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = np.float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp
'''

# 256-bin histogram of uint8 data: a block-private histogram in shared memory (shared-memory
# atomics, grid-stride loop), then one global atomic per bin and block. Block: 256 threads.
HISTOGRAM = '''
@cuda.jit
def histogram(data, bins):
    local = cuda.shared.array(256, np.uint32)
    tid = cuda.threadIdx.x
    local[tid] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < data.size:
        cuda.atomic.add(local, data[i], 1)
        i += stride
    cuda.syncthreads()
    cuda.atomic.add(bins, tid, local[tid])
'''

# Transpose through a shared tile padded by one column (no bank conflicts): TILE x TILE per
# block of (TILE, ROWS) threads, each thread moving TILE / ROWS elements.
TRANSPOSE = '''
TILE = 32
TILE_PAD = 33
ROWS = 8

@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((TILE, TILE_PAD), np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):
        if x < a.shape[1] and y + j < a.shape[0]:
            tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    y = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        if x < out.shape[1] and y + j < out.shape[0]:
            out[y + j, x] = tile[tx, ty + j]
'''

# One Jacobi step of Laplace's equation (5-point stencil) on the interior; the boundary of
# `out` is left as it is (both buffers carry the same boundary). Block (32, 8).
JACOBI = '''
@cuda.jit
def jacobi_step(a, out):
    x, y = cuda.grid(2)
    if x > 0 and y > 0 and y < a.shape[0] - 1 and x < a.shape[1] - 1:
        out[y, x] = 0.25 * (a[y - 1, x] + a[y + 1, x] + a[y, x - 1] + a[y, x + 1])
'''

# All-pairs gravitational acceleration of n bodies (x, y, z, mass) in float32: tiles of
# NB_TILE bodies staged in shared memory, 1 / sqrt(r^2 + eps) per pair. Block: NB_TILE threads;
# n must be a multiple of NB_TILE.
NBODY = '''
NB_TILE = 256
SOFTENING = np.float32(1e-3)
ONE = np.float32(1.0)

@cuda.jit
def nbody(pos, acc):
    sh = cuda.shared.array((NB_TILE, 4), np.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    px = pos[i, 0]
    py = pos[i, 1]
    pz = pos[i, 2]
    ax = np.float32(0)
    ay = np.float32(0)
    az = np.float32(0)
    for t in range(pos.shape[0] // NB_TILE):
        j = t * NB_TILE + tid
        sh[tid, 0] = pos[j, 0]
        sh[tid, 1] = pos[j, 1]
        sh[tid, 2] = pos[j, 2]
        sh[tid, 3] = pos[j, 3]
        cuda.syncthreads()
        for k in range(NB_TILE):
            dx = sh[k, 0] - px
            dy = sh[k, 1] - py
            dz = sh[k, 2] - pz
            d2 = dx * dx + dy * dy + dz * dz + SOFTENING
            inv = ONE / math.sqrt(d2)
            s = sh[k, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        cuda.syncthreads()
    acc[i, 0] = ax
    acc[i, 1] = ay
    acc[i, 2] = az
'''

# Monte Carlo estimate of pi with cuda.random's xoroshiro128+ generator (numba-cuda's
# numba.cuda.random, ptxjit's ptxjit.cuda.random): thread i draws `samples` points from
# generator states[i] (xoroshiro128p_uniform_float32, which loads and stores the state on each
# draw), counts those inside the unit circle, then a warp reduction and one atomic per warp.
# build() imports the random submodule first (numba.cuda does not import it itself).
MONTE_CARLO_PI = '''
uniform_float32 = cuda.random.xoroshiro128p_uniform_float32
ONE = np.float32(1.0)

@cuda.jit
def monte_carlo_pi(samples, states, hits):
    i = cuda.grid(1)
    count = 0
    for k in range(samples):
        x = uniform_float32(states, i)
        y = uniform_float32(states, i)
        if x * x + y * y <= ONE:
            count += 1
    offset = 16
    while offset > 0:
        count += cuda.shfl_down_sync(0xffffffff, count, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(hits, 0, count)
'''

# The seed of the pi workload's generator states, here and in bench/cuda/suite.cu.
PI_SEED = 20261130


def xoroshiro_pi_reference(states, samples):
    """The hit count MONTE_CARLO_PI computes from generator `states` (a host array of
    xoroshiro128p_dtype, one per thread), in NumPy: xoroshiro128+ in uint64 arithmetic, which
    wraps as on the device, and each draw's float32 made as numba-cuda makes it (the top 53
    bits as a float64 in [0, 1), rounded to float32)."""
    s0, s1 = states["s0"].astype(np.uint64), states["s1"].astype(np.uint64)
    k55, k9, k14, k36, k28 = (np.uint64(v) for v in (55, 9, 14, 36, 28))
    hits = 0

    def draw():
        nonlocal s0, s1
        out = s0 + s1
        t = s1 ^ s0
        s0 = ((s0 << k55) | (s0 >> k9)) ^ t ^ (t << k14)
        s1 = (t << k36) | (t >> k28)
        return ((out >> np.uint64(11)).astype(np.float64) * 2.0 ** -53).astype(np.float32)

    for _ in range(samples):
        x = draw()
        y = draw()
        hits += int(np.count_nonzero(x * x + y * y <= np.float32(1.0)))
    return hits


def nbody_reference(pos, rows=slice(None)):
    """float64 NumPy reference of NBODY's accelerations of the bodies `rows`, (len, 3)."""
    p = pos.astype(np.float64)
    d = p[None, :, :3] - p[rows, None, :3]  # d[i, j] = pos[j] - pos[i]
    d2 = (d * d).sum(axis=2) + 1e-3
    s = p[None, :, 3] / (d2 * np.sqrt(d2))
    return (d * s[:, :, None]).sum(axis=1)


def jacobi_reference(a, steps):
    """`steps` Jacobi steps of JACOBI in NumPy (float64)."""
    a = a.copy()
    for _ in range(steps):
        b = a.copy()
        b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
        a = b
    return a


def jacobi_input(n):
    """An n x n float64 grid: random interior, boundary 1 on the top row, 0 elsewhere."""
    rng = np.random.default_rng(3)
    a = rng.random((n, n))
    a[0, :], a[-1, :], a[:, 0], a[:, -1] = 1.0, 0.0, 0.0, 0.0
    return a


def nbody_input(n):
    """n bodies (x, y, z, mass) float32: positions in [-1, 1)^3, masses in [0.5, 1.5)."""
    rng = np.random.default_rng(4)
    pos = np.empty((n, 4), np.float32)
    pos[:, :3] = rng.uniform(-1, 1, (n, 3))
    pos[:, 3] = rng.uniform(0.5, 1.5, n)
    return pos


# ---------------------------------------------------------------------------------------------
# The suite's cases: inputs, launches and checks shared by bench/run.py (full sizes, on the
# GPU, ptxjit and numba-cuda) and tests/python/test_bench_workloads.py (tiny sizes, CPU
# backend). bench/cuda/suite.cu sets up the same inputs' shapes and launches.
# ---------------------------------------------------------------------------------------------

# name -> (source, kernel name, an explicit signature): for compile_ptx checks without a GPU.
SUITE_KERNELS = {
    "reduce": ("REDUCE", "reduce_sum", "void(float32[::1], float32[::1])"),
    "matmul": ("MATMUL", "fast_matmul",
               "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
    "histogram": ("HISTOGRAM", "histogram", "void(uint8[::1], uint32[::1])"),
    "transpose": ("TRANSPOSE", "transpose", "void(float32[:, ::1], float32[:, ::1])"),
    "jacobi": ("JACOBI", "jacobi_step", "void(float64[:, ::1], float64[:, ::1])"),
    "nbody": ("NBODY", "nbody", "void(float32[:, ::1], float32[:, ::1])"),
    "pi": ("MONTE_CARLO_PI", "monte_carlo_pi",
           "void(int64, Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True)[::1], "
           "int64[::1])"),
}

# name -> (full sizes, tiny sizes); the sizes each case's constructor takes.
SUITE_SIZES = {
    "reduce": (dict(n=1 << 26), dict(n=(1 << 14) + 77)),
    "matmul": (dict(n=4096), dict(n=40)),
    "histogram": (dict(n=1 << 26), dict(n=(1 << 14) + 5)),
    "transpose": (dict(n=8192), dict(n=72)),
    "jacobi": (dict(n=8192, steps=100), dict(n=24, steps=3)),
    "nbody": (dict(n=65536), dict(n=512)),
    "pi": (dict(threads=1 << 20, samples=256), dict(threads=512, samples=8)),
}

# Per-thread work of the grid-stride kernels: the grid is n / (block * this), at least 1.
REDUCE_ITEMS = 16
HISTOGRAM_ITEMS = 64


class Case:
    """One workload ready to run: `run()` enqueues one timed unit (one launch, or `steps`
    launches for the stencil), `check()` resets the outputs, runs once and compares with NumPy
    (AssertionError on a mismatch), `bytes` is the unit's DRAM traffic at best (None: compute
    bound), `inner` how many units one timing sample holds (fast kernels: several). `result`,
    where the CUDA C++ twin computes the same value from the same inputs, gives that value as
    the last check() computed it (the twin's checksum after its first unit must equal it);
    None elsewhere."""

    def __init__(self, run, check, bytes=None, inner=1, result=None):
        self.run, self.check, self.bytes, self.inner = run, check, bytes, inner
        self.result = result


def _grid1(n, block, items):
    return max(1, n // (block * items))


def make_case(name, cuda, sizes):
    """The Case of workload `name` (a key of SUITE_SIZES) with `sizes` (one of its dicts),
    compiled by `cuda` (ptxjit's or Numba's module)."""
    return _MAKERS[name](cuda, **sizes)


def _reduce(cuda, n):
    k = build(REDUCE, cuda, "reduce_sum")
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    dx, out = cuda.to_device(x), cuda.to_device(np.zeros(1, np.float32))
    cfg = k[_grid1(n, 256, REDUCE_ITEMS), 256]

    def check():
        out.copy_to_device(np.zeros(1, np.float32))
        cfg(dx, out)
        np.testing.assert_allclose(out.copy_to_host()[0], x.sum(dtype=np.float64), rtol=1e-4)

    return Case(lambda: cfg(dx, out), check, bytes=4 * n, inner=10)


def _matmul(cuda, n):
    k = build(MATMUL, cuda, "fast_matmul")
    rng = np.random.default_rng(2)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.device_array((n, n), np.float32)
    tiles = (n + 15) // 16
    cfg = k[(tiles, tiles), (16, 16)]

    def check():
        dc.copy_to_device(np.zeros((n, n), np.float32))
        cfg(da, db, dc)
        np.testing.assert_allclose(dc.copy_to_host(), a @ b, rtol=1e-4, atol=1e-4 * n)

    return Case(lambda: cfg(da, db, dc), check)


def _histogram(cuda, n):
    k = build(HISTOGRAM, cuda, "histogram")
    data = np.random.default_rng(5).integers(0, 256, n, dtype=np.uint8)
    data[: n // 8] = 7  # a skewed bin: contended shared-memory atomics
    dd, bins = cuda.to_device(data), cuda.to_device(np.zeros(256, np.uint32))
    cfg = k[_grid1(n, 256, HISTOGRAM_ITEMS), 256]

    def check():
        bins.copy_to_device(np.zeros(256, np.uint32))
        cfg(dd, bins)
        np.testing.assert_array_equal(bins.copy_to_host(), np.bincount(data, minlength=256))

    return Case(lambda: cfg(dd, bins), check, bytes=n, inner=10)


def _transpose(cuda, n):
    k = build(TRANSPOSE, cuda, "transpose")
    a = np.random.default_rng(6).random((n, n), dtype=np.float32)
    da, dout = cuda.to_device(a), cuda.device_array((n, n), np.float32)
    tiles = (n + 31) // 32
    cfg = k[(tiles, tiles), (32, 8)]

    def check():
        dout.copy_to_device(np.zeros((n, n), np.float32))
        cfg(da, dout)
        np.testing.assert_array_equal(dout.copy_to_host(), a.T)

    return Case(lambda: cfg(da, dout), check, bytes=2 * 4 * n * n, inner=10)


def _jacobi(cuda, n, steps):
    k = build(JACOBI, cuda, "jacobi_step")
    a0 = jacobi_input(n)
    da, db = cuda.to_device(a0), cuda.to_device(a0)
    cfg = k[((n + 31) // 32, (n + 7) // 8), (32, 8)]

    def run(count=steps):
        for s in range(count):
            if s % 2 == 0:
                cfg(da, db)
            else:
                cfg(db, da)

    def check():
        count = min(steps, 4)  # the reference of 100 steps of 8192^2 would take minutes
        da.copy_to_device(a0)
        db.copy_to_device(a0)
        run(count)
        got = (db if count % 2 else da).copy_to_host()
        np.testing.assert_allclose(got, jacobi_reference(a0, count), rtol=1e-12, atol=1e-12)

    return Case(run, check, bytes=steps * 2 * 8 * n * n)


def _nbody(cuda, n):
    k = build(NBODY, cuda, "nbody")
    pos = nbody_input(n)
    dpos, dacc = cuda.to_device(pos), cuda.device_array((n, 3), np.float32)
    cfg = k[n // 256, 256]

    def check():
        dacc.copy_to_device(np.zeros((n, 3), np.float32))
        cfg(dpos, dacc)
        rows = slice(0, min(n, 64))  # all pairs of 65,536 bodies: too slow in NumPy
        want = nbody_reference(pos, rows)
        np.testing.assert_allclose(dacc.copy_to_host()[rows], want, rtol=2e-3,
                                   atol=2e-3 * np.abs(want).max())

    return Case(lambda: cfg(dpos, dacc), check)


def _pi(cuda, threads, samples):
    k = build(MONTE_CARLO_PI, cuda, "monte_carlo_pi")
    states = cuda.random.create_xoroshiro128p_states(threads, seed=PI_SEED)
    first = states.copy_to_host()
    hits = cuda.to_device(np.zeros(1, np.int64))
    cfg = k[threads // 256, 256]

    last = {}

    def check():
        states.copy_to_device(first)  # each run advances the generators
        hits.copy_to_device(np.zeros(1, np.int64))
        cfg(samples, states, hits)
        got, total = int(hits.copy_to_host()[0]), threads * samples
        last["hits"] = got
        if total <= 1 << 16:
            # exact up to points on the circle's edge (fused multiply-add or not)
            want = xoroshiro_pi_reference(first, samples)
            assert abs(got - want) <= max(2, total // 10000), (got, want)
        assert abs(4 * got / total - math.pi) < 8 / math.sqrt(total), 4 * got / total

    # bench/cuda/suite.cu's twin starts from the same states (PI_SEED): the same hits
    return Case(lambda: cfg(samples, states, hits), check, result=lambda: last.get("hits"))


_MAKERS = {"reduce": _reduce, "matmul": _matmul, "histogram": _histogram,
           "transpose": _transpose, "jacobi": _jacobi, "nbody": _nbody, "pi": _pi}
