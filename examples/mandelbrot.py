"""The Numba-blog Mandelbrot set, unchanged apart from the import.

Computes a 1024x1536 uint8 image on the GPU (or the CPU backend), saves it as mandelbrot.png
(through Pillow or matplotlib when installed, else a small built-in PNG writer) and prints the
time.
"""
import os
import struct
import sys
import zlib
from timeit import default_timer as timer

import numpy as np

from ptxjit import cuda


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


def write_png(path, gray):
    """Writes a 2-D uint8 array as a grayscale PNG (Pillow, else matplotlib, else built in)."""
    try:
        from PIL import Image

        Image.fromarray(gray).save(path)
        return
    except ImportError:
        pass
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        plt.imsave(path, gray, cmap="gray")
        return
    except ImportError:
        pass
    h, w = gray.shape
    raw = b"".join(b"\x00" + gray[row].tobytes() for row in range(h))

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data +
                struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
        f.write(chunk(b"IEND", b""))


def main(out_path=None):
    gimage = np.zeros((1024, 1536), dtype=np.uint8)
    blockdim = (32, 8)
    griddim = (32, 16)

    start = timer()
    d_image = cuda.to_device(gimage)
    mandel_kernel[griddim, blockdim](-2.0, 1.0, -1.0, 1.0, d_image, 20)
    d_image.to_host()
    dt = timer() - start

    print("Mandelbrot created on GPU in %f s" % dt)
    path = out_path or os.path.join(os.path.dirname(os.path.abspath(__file__)), "mandelbrot.png")
    # Spread the iteration counts over the gray scale (the blog's imshow does the same).
    write_png(path, (gimage.astype(np.uint16) * 255 // max(1, int(gimage.max()))).astype(np.uint8))
    print("saved", path)
    return gimage


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
