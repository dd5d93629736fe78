"""Haversine distances over a 1000x1000 mesh, three ways.

1. @cuda.jit: a device function computes the distance term with math.sin, math.cos, ** and
   math.atan2; the kernel generates each mesh point from scalar bounds (nothing is copied to
   the device) and writes out[y][x].
2. @vectorize over four equal-size arrays (1e6 elements, constant second point and scale).
3. @vectorize with the second point and the scale as scalars, broadcast by the ufunc.

Each result is checked against NumPy and each version's time printed. With --png PATH the
distance field of version 1 (distance from (30°, 101°) to every mesh point) is also written as
a heat map, with the NumPy-only PNG writer of examples/_png.py.

    python examples/haversine.py [N] [--png PATH]      # an N x N mesh (default 1000)
"""
import argparse
import math
import os
import sys
from timeit import default_timer as timer

import numpy as np

from ptxjit import cuda, float64, vectorize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _png import colorize, write_png  # noqa: E402  (examples/_png.py)


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


@vectorize([float64(float64, float64, float64, float64, float64)], target='cuda')
def hav(lat1, lon1, lat2, lon2, s):
    a = (math.sin(0.008726645 * (lat2 - lat1)) ** 2 +
         math.cos(0.01745329 * lat1) * math.cos(0.01745329 * lat2) *
         math.sin(0.008726645 * (lon2 - lon1)) ** 2)
    return math.atan2(a, 1 - a) * s


def mesh_points(lat_lo, lat_hi, lon_lo, lon_hi, ny, nx):
    """The mesh's latitudes and longitudes as two flat arrays of ny * nx points."""
    lat = lat_lo + (lat_hi - lat_lo) * np.arange(ny)[:, None] / (ny - 1)
    lon = lon_lo + (lon_hi - lon_lo) * np.arange(nx)[None, :] / (nx - 1)
    lat, lon = np.broadcast_arrays(lat, lon)
    return np.ascontiguousarray(lat).ravel(), np.ascontiguousarray(lon).ravel()


def vectorize_arrays(X, Y, lat2, lon2, s):
    """Version 2: four equal-size device arrays."""
    n = X.size
    dX, dY = cuda.to_device(X), cuda.to_device(Y)
    dLat2 = cuda.to_device(np.full(n, lat2))
    dLon2 = cuda.to_device(np.full(n, lon2))
    dS = cuda.to_device(np.full(n, s))
    start = timer()
    dZ = hav(dX, dY, dLat2, dLon2, dS)
    cuda.synchronize()
    return dZ.copy_to_host(), timer() - start


def vectorize_scalars(X, Y, lat2, lon2, s):
    """Version 3: two device arrays and three scalars broadcast by the ufunc."""
    dX, dY = cuda.to_device(X), cuda.to_device(Y)
    start = timer()
    dZ = hav(dX, dY, lat2, lon2, s)
    cuda.synchronize()
    return dZ.copy_to_host(), timer() - start


def reference(lat_lo, lat_hi, lon_lo, lon_hi, lat2, lon2, s, ny, nx):
    lat1 = lat_lo + (lat_hi - lat_lo) * np.arange(ny)[:, None] / (ny - 1)
    lon1 = lon_lo + (lon_hi - lon_lo) * np.arange(nx)[None, :] / (nx - 1)
    a = (np.sin(0.008726645 * (lat2 - lat1)) ** 2 +
         np.cos(0.01745329 * lat1) * np.cos(0.01745329 * lat2) *
         np.sin(0.008726645 * (lon2 - lon1)) ** 2)
    return np.arctan2(a, 1 - a) * s


def main(n=1000, png=None):
    bounds = (-90.0, 90.0, -180.0, 180.0)
    print(f"haversine on the {cuda.current_target()} backend", flush=True)
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
    if png:
        # Row 0 is latitude -90: flip so that north is up, as on a map.
        write_png(png, colorize(z[::-1]))
        print(f"saved the distance field as {os.path.abspath(png)}", flush=True)

    X, Y = mesh_points(*bounds, n, n)
    hav(X[:2], Y[:2], 30.0, 101.0, 1.0)  # compile outside the timed calls
    hav(cuda.to_device(X[:2]), cuda.to_device(Y[:2]), cuda.to_device(X[:2]),
        cuda.to_device(Y[:2]), cuda.to_device(X[:2]))
    for label, version in (("@vectorize, 4 device arrays", vectorize_arrays),
                           ("@vectorize, 2 device arrays + 3 scalars", vectorize_scalars)):
        zv, dtv = version(X, Y, 30.0, 101.0, 1.0)
        errv = np.max(np.abs(zv - ref.ravel()))
        print(f"haversine over {X.size} points ({label}): {dtv:.4f} s, "
              f"max |error| vs NumPy {errv:.2e}")
        assert np.allclose(zv, ref.ravel(), rtol=1e-12, atol=1e-15)
    return z


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Haversine distances over a mesh, three ways.")
    ap.add_argument("n", nargs="?", type=int, default=1000, help="mesh size (n x n)")
    ap.add_argument("--png", metavar="PATH", help="write the distance field as a heat map")
    a = ap.parse_args()
    if a.n < 2:
        ap.error("the mesh needs at least 2 x 2 points")
    main(a.n, a.png)
