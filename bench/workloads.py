"""The kernels of the benchmark suite, as Python source shared by ptxjit and numba-cuda.

Each source is executed in a namespace holding `cuda` (ptxjit's or Numba's), `math` and `np`,
so both compilers see the same program. The CUDA C++ references in bench/cuda/*.cu mirror
SAXPY, MANDELBROT and BLACK_SCHOLES.
"""
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
    """Executes `source` with `cuda` and returns its function `name` (a dispatcher)."""
    ns = {"cuda": cuda, "math": math, "np": np}
    exec(compile(source, f"<bench:{name}>", "exec"), ns)
    return ns[name]


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
