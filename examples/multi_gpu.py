"""Every GPU of the machine from one process: the haversine mesh split by rows across devices.

Each device gets a band of the mesh's rows. One thread per device selects its GPU
(`with cuda.gpus[i]:`), launches the mesh kernel on its band (the kernel loads once per device)
and copies its band back; a @vectorize ufunc then runs on every device over that device's own
array. The result is checked against NumPy and the time on all devices compared with the time
on device 0 alone. Runs with one GPU (one band) and on the CPU backend (one device, the host).

    python examples/multi_gpu.py [rows] [cols]
"""
import math
import sys
import threading
from timeit import default_timer as timer

import numpy as np

from ptxjit import cuda, float64, vectorize


@cuda.jit(device=True)
def distance(lat1, lon1, lat2, lon2, s):
    a = (math.sin(0.008726645 * (lat2 - lat1)) ** 2 +
         math.cos(0.01745329 * lat1) * math.cos(0.01745329 * lat2) *
         math.sin(0.008726645 * (lon2 - lon1)) ** 2)
    return math.atan2(a, 1 - a) * s


@cuda.jit
def mesh_band(lat_lo, lat_hi, lon_lo, lon_hi, ny, row0, lat2, lon2, s, out):
    """out[y, x] for the rows row0 .. row0 + out.shape[0] of an ny-row mesh."""
    x, y = cuda.grid(2)
    rows, nx = out.shape[0], out.shape[1]
    if y < rows and x < nx:
        lat1 = lat_lo + (lat_hi - lat_lo) * (row0 + y) / (ny - 1)
        lon1 = lon_lo + (lon_hi - lon_lo) * x / (nx - 1)
        out[y, x] = distance(lat1, lon1, lat2, lon2, s)


@vectorize([float64(float64)], target="cuda")
def to_km(d):
    return d * 0.001


BOUNDS = (40.0, 41.0, -74.0, -73.0)
POINT = (40.7, -73.9, 12742000.0)


def reference(ny, nx):
    lat_lo, lat_hi, lon_lo, lon_hi = BOUNDS
    lat2, lon2, s = POINT
    lat = lat_lo + (lat_hi - lat_lo) * np.arange(ny)[:, None] / (ny - 1)
    lon = lon_lo + (lon_hi - lon_lo) * np.arange(nx)[None, :] / (nx - 1)
    a = (np.sin(0.008726645 * (lat2 - lat)) ** 2 +
         np.cos(0.01745329 * lat) * np.cos(0.01745329 * lat2) *
         np.sin(0.008726645 * (lon2 - lon)) ** 2)
    return np.arctan2(a, 1 - a) * s * 0.001


def run_band(device_id, ny, nx, row0, rows, out):
    """On device `device_id`: rows row0 .. row0 + rows of the mesh, in km, into out."""
    if rows == 0:
        return
    with cuda.gpus[device_id]:
        d = cuda.device_array((rows, nx))
        block = (16, 16)
        grid = ((nx + 15) // 16, (rows + 15) // 16)
        mesh_band[grid, block](*BOUNDS, ny, row0, *POINT, d)
        km = to_km(d)  # a ufunc on this device's array runs on this device
        km.copy_to_host(out[row0:row0 + rows])


def run(ny, nx, devices):
    """The whole mesh split into len(devices) bands, one thread per device."""
    out = np.empty((ny, nx))
    bounds = np.linspace(0, ny, len(devices) + 1).astype(int)
    threads = [threading.Thread(target=run_band,
                                args=(dev, ny, nx, bounds[k], bounds[k + 1] - bounds[k], out))
               for k, dev in enumerate(devices)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for dev in devices:
        with cuda.gpus[dev]:
            cuda.synchronize()
    return out


def main(ny=2000, nx=2000):
    devices = [gpu.id for gpu in cuda.gpus]
    print(f"backend: {cuda.current_target()}, devices: "
          + ", ".join(f"{g.id}: {g.name}" for g in cuda.gpus))
    expected = reference(ny, nx)
    run(ny, nx, devices)  # compile, and load the kernels on every device
    run(ny, nx, [0])
    t0 = timer()
    one = run(ny, nx, [0])
    t1 = timer()
    every = run(ny, nx, devices)
    t2 = timer()
    for got in (one, every):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    print(f"{ny}x{nx} mesh: device 0 alone {1e3 * (t1 - t0):.2f} ms, "
          f"{len(devices)} device(s) {1e3 * (t2 - t1):.2f} ms "
          f"(speed-up {(t1 - t0) / (t2 - t1):.2f}x); results match NumPy")
    return every


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
