// saxpy over n float32 elements (out = a * x + y, one element per thread, 256 threads per
// block) and a device-to-device copy of the same n floats, the bandwidth reference.
// Usage: saxpy [n=2^26] [reps=50]; prints JSON (milliseconds per kernel / copy, GB/s).
#include "common.h"

__global__ void saxpy(float a, const float *x, const float *y, float *out, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * x[i] + y[i];
}

__global__ void fill(float *p, long n, float scale) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = scale * (float)(i % 1000) + 0.5f;
}

int main(int argc, char **argv) {
  long n = argOr(argc, argv, 1, 1L << 26);
  int reps = static_cast<int>(argOr(argc, argv, 2, 50));
  float *x, *y, *out, *copy;
  size_t bytes = n * sizeof(float);
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMalloc(&copy, bytes));
  unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  fill<<<blocks, 256>>>(x, n, 0.001f);
  fill<<<blocks, 256>>>(y, n, 0.002f);
  double kernel = timeLaunches([&] { saxpy<<<blocks, 256>>>(2.0f, x, y, out, n); }, reps);
  double memcpy =
      timeLaunches([&] { CHECK(cudaMemcpyAsync(copy, x, bytes, cudaMemcpyDeviceToDevice)); }, reps);
  float check[2];
  CHECK(cudaMemcpy(check, out + 1, 2 * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("{\"n\": %ld, \"kernel_ms\": %.6f, \"copy_ms\": %.6f, \"copy_gbs\": %.3f, "
              "\"saxpy_gbs\": %.3f, \"check\": %.6f}\n",
              n, kernel, memcpy, 2.0 * bytes / (memcpy * 1e6), 3.0 * bytes / (kernel * 1e6),
              check[0]);
  return 0;
}
