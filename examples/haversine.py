"""Haversine distances over a 1000x1000 mesh built on the GPU (the @cuda.jit version).

A device function computes the distance term with math.sin, math.cos, ** and math.atan2; the
kernel generates each mesh point from scalar bounds (nothing is copied to the device) and
writes out[y][x]. The result is checked against NumPy.
"""
import math
import sys
from timeit import default_timer as timer

import numpy as np

from ptxjit import cuda


@cuda.jit(device='true')  # a truthy flag, as the original program writes it
def a_cuda(lat1, lon1, lat2, lon2, s):
    a = (math.sin(0.008726645 * (lat2 - lat1)) ** 2 +
         math.cos(0.01745329 * lat1) * math.cos(0.01745329 * lat2) *
         math.sin(0.008726645 * (lon2 - lon1)) ** 2)
    return math.atan2(a, 1 - a) * s


@cuda.jit
def mesh_kernel(lat_lo, lat_hi, lon_lo, lon_hi, lat2, lon2, s, out):
    x, y = cuda.grid(2)
    ny, nx = out.shape[0], out.shape[1]
    if y < ny and x < nx:
        lat1 = lat_lo + (lat_hi - lat_lo) * y / (ny - 1)
        lon1 = lon_lo + (lon_hi - lon_lo) * x / (nx - 1)
        out[y][x] = a_cuda(lat1, lon1, lat2, lon2, s)


def reference(lat_lo, lat_hi, lon_lo, lon_hi, lat2, lon2, s, ny, nx):
    lat1 = lat_lo + (lat_hi - lat_lo) * np.arange(ny)[:, None] / (ny - 1)
    lon1 = lon_lo + (lon_hi - lon_lo) * np.arange(nx)[None, :] / (nx - 1)
    a = (np.sin(0.008726645 * (lat2 - lat1)) ** 2 +
         np.cos(0.01745329 * lat1) * np.cos(0.01745329 * lat2) *
         np.sin(0.008726645 * (lon2 - lon1)) ** 2)
    return np.arctan2(a, 1 - a) * s


def main(n=1000):
    bounds = (-90.0, 90.0, -180.0, 180.0)
    Z = cuda.device_array((n, n), dtype=np.float64)
    start = timer()
    mesh_kernel[(32, 32), (32, 32)](*bounds, 30.0, 101.0, 1.0, Z)
    z = Z.copy_to_host()
    dt = timer() - start
    ref = reference(*bounds, 30.0, 101.0, 1.0, n, n)
    err = np.max(np.abs(z - ref))
    print(f"haversine over a {n}x{n} mesh (@cuda.jit, mesh built on the device): {dt:.4f} s, "
          f"max |error| vs NumPy {err:.2e}")
    assert np.allclose(z, ref, rtol=1e-12, atol=1e-15)
    return z


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
