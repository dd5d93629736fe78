"""Black-Scholes option pricing with @vectorize (float32), as in the Numba examples.

Call and put prices for a batch of options are computed by two ufuncs that call a device
function for the cumulative normal distribution; the inputs are device arrays, the results stay
on the device until copied back and checked against NumPy.
"""
import math
import sys
from timeit import default_timer as timer

import numpy as np

from ptxjit import cuda, float32, vectorize

RISKFREE = 0.02
VOLATILITY = 0.30


@cuda.jit(device=True)
def cnd(d):
    A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    RSQRT2PI = 0.39894228040143267793994605993438
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    value = (RSQRT2PI * math.exp(-0.5 * d * d) *
             (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        value = 1.0 - value
    return value


@vectorize([float32(float32, float32, float32, float32, float32)], target='cuda')
def call_price(S, X, T, R, V):
    sqrtT = math.sqrt(T)
    d1 = (math.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    return S * cnd(d1) - X * math.exp(-R * T) * cnd(d2)


@vectorize([float32(float32, float32, float32, float32, float32)], target='cuda')
def put_price(S, X, T, R, V):
    sqrtT = math.sqrt(T)
    d1 = (math.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    return X * math.exp(-R * T) * (1.0 - cnd(d2)) - S * (1.0 - cnd(d1))


def reference(S, X, T, R, V):
    S, X, T = S.astype(np.float64), X.astype(np.float64), T.astype(np.float64)

    def cnd_np(d):
        A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
        K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        v = 0.3989422804014327 * np.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
        return np.where(d > 0, 1.0 - v, v)

    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    call = S * cnd_np(d1) - X * np.exp(-R * T) * cnd_np(d2)
    put = X * np.exp(-R * T) * (1.0 - cnd_np(d2)) - S * (1.0 - cnd_np(d1))
    return call, put


def main(n=4_000_000):
    rng = np.random.default_rng(0)
    S = rng.uniform(5.0, 30.0, n).astype(np.float32)
    X = rng.uniform(1.0, 100.0, n).astype(np.float32)
    T = rng.uniform(0.25, 10.0, n).astype(np.float32)
    dS, dX, dT = cuda.to_device(S), cuda.to_device(X), cuda.to_device(T)
    call_price(dS, dX, dT, RISKFREE, VOLATILITY)  # compiles the loop kernel
    put_price(dS, dX, dT, RISKFREE, VOLATILITY)
    start = timer()
    dcall = call_price(dS, dX, dT, RISKFREE, VOLATILITY)
    dput = put_price(dS, dX, dT, RISKFREE, VOLATILITY)
    cuda.synchronize()
    dt = timer() - start
    call, put = dcall.copy_to_host(), dput.copy_to_host()
    ref_call, ref_put = reference(S, X, T, RISKFREE, VOLATILITY)
    err = max(np.max(np.abs(call - ref_call)), np.max(np.abs(put - ref_put)))
    print(f"Black-Scholes for {n} options (@vectorize, float32): {dt:.4f} s, "
          f"max |error| vs NumPy {err:.2e}")
    assert np.allclose(call, ref_call, rtol=1e-3, atol=1e-3)
    assert np.allclose(put, ref_put, rtol=1e-3, atol=1e-3)
    return call, put


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000)
