"""The Numba-blog Mandelbrot set, unchanged apart from the import.

Computes a 1536x1024 image of iteration counts on the GPU (or the CPU backend), prints which
backend ran it and the time, and saves it as a PNG (mandelbrot.png in the working directory, or
the path given with -o), coloured with the NumPy-only writer of examples/_png.py.

    python examples/mandelbrot.py [-o PATH] [--width 1536] [--height 1024] [--iters 20]
"""
import argparse
import os
import sys
from timeit import default_timer as timer

import numpy as np

from ptxjit import cuda

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _png import colorize, write_png  # noqa: E402  (examples/_png.py)


@cuda.jit(device=True)
def mandel(x, y, max_iters):
    """Given the real and imaginary parts of a complex number, determine if it is a candidate
    for membership in the Mandelbrot set given a fixed number of iterations."""
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


def main(out_path="mandelbrot.png", width=1536, height=1024, iters=20):
    gimage = np.zeros((height, width), dtype=np.uint8)
    blockdim = (32, 8)
    griddim = (32, 16)
    backend = cuda.current_target()
    print(f"rendering {width}x{height}, {iters} iterations, on the {backend} backend ...",
          flush=True)

    start = timer()
    d_image = cuda.to_device(gimage)
    mandel_kernel[griddim, blockdim](-2.0, 1.0, -1.0, 1.0, d_image, iters)
    d_image.to_host()
    dt = timer() - start

    where = "GPU" if backend == "cuda" else "CPU backend"
    print("Mandelbrot created on %s in %f s (backend: %s)" % (where, dt, backend))
    if out_path:
        write_png(out_path, colorize(gimage, vmin=0, vmax=iters))
        print("saved", os.path.abspath(out_path))
    return gimage


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="The Mandelbrot set, drawn by a CUDA kernel.")
    ap.add_argument("-o", "--output", default="mandelbrot.png",
                    help="where to write the PNG (default: mandelbrot.png here)")
    ap.add_argument("--width", type=int, default=1536)
    ap.add_argument("--height", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=20, help="iterations per pixel (at most 255)")
    a = ap.parse_args()
    if not 1 <= a.iters <= 255:
        ap.error("--iters must be between 1 and 255 (the image holds uint8 counts)")
    if a.width < 1 or a.height < 1:
        ap.error("--width and --height must be positive")
    main(a.output, a.width, a.height, a.iters)
