// The Numba-blog Mandelbrot kernel (bench/workloads.py MANDELBROT) in CUDA C++: float64,
// complex arithmetic written out, grid-stride loops over a width x height uint8 image.
// Usage: mandelbrot [size=4096] [iters=256] [reps=10]; prints JSON (milliseconds per kernel).
#include "common.h"

__device__ int mandel(double x, double y, int maxIters) {
  double zr = 0.0, zi = 0.0;
  for (int i = 0; i < maxIters; ++i) {
    double r = zr * zr - zi * zi + x;
    double im = zr * zi + zi * zr + y;
    zr = r;
    zi = im;
    if (zr * zr + zi * zi >= 4)
      return i;
  }
  return maxIters;
}

__global__ void mandelKernel(double minX, double maxX, double minY, double maxY,
                             unsigned char *image, long height, long width, long iters) {
  double pixelX = (maxX - minX) / width;
  double pixelY = (maxY - minY) / height;
  long startX = blockDim.x * (long)blockIdx.x + threadIdx.x;
  long startY = blockDim.y * (long)blockIdx.y + threadIdx.y;
  long gridX = gridDim.x * (long)blockDim.x;
  long gridY = gridDim.y * (long)blockDim.y;
  for (long x = startX; x < width; x += gridX) {
    double real = minX + x * pixelX;
    for (long y = startY; y < height; y += gridY) {
      double imag = minY + y * pixelY;
      image[y * width + x] = static_cast<unsigned char>(mandel(real, imag, (int)iters));
    }
  }
}

int main(int argc, char **argv) {
  long size = argOr(argc, argv, 1, 4096);
  long iters = argOr(argc, argv, 2, 256);
  int reps = static_cast<int>(argOr(argc, argv, 3, 10));
  unsigned char *image;
  CHECK(cudaMalloc(&image, size * size));
  dim3 block(32, 8);
  dim3 grid(static_cast<unsigned>((size + 31) / 32), static_cast<unsigned>((size + 7) / 8));
  double ms = timeLaunches(
      [&] { mandelKernel<<<grid, block>>>(-2.0, 1.0, -1.5, 1.5, image, size, size, iters); }, reps);
  std::vector<unsigned char> host(size * size);
  CHECK(cudaMemcpy(host.data(), image, size * size, cudaMemcpyDeviceToHost));
  long sum = 0;
  for (unsigned char v : host)
    sum += v;
  std::printf("{\"size\": %ld, \"iters\": %ld, \"kernel_ms\": %.6f, \"checksum\": %ld}\n", size,
              iters, ms, sum);
  return 0;
}
