// Black-Scholes over n float32 options, as the CUDA samples write it (float arithmetic, `f`
// literals, one option per thread, 256 threads per block); the same formula as
// bench/workloads.py BLACK_SCHOLES. Usage: blackscholes [n=2^24] [reps=20]; prints JSON.
#include "common.h"

#include <cmath>

__device__ inline float cnd(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
              A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
  float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float ret = RSQRT2PI * expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
  if (d > 0)
    ret = 1.0f - ret;
  return ret;
}

__global__ void blackScholes(float *call, float *put, const float *S, const float *X,
                             const float *T, float R, float V, long n) {
  long i = threadIdx.x + blockIdx.x * (long)blockDim.x;
  if (i >= n)
    return;
  float sqrtT = sqrtf(T[i]);
  float d1 = (logf(S[i] / X[i]) + (R + 0.5f * V * V) * T[i]) / (V * sqrtT);
  float d2 = d1 - V * sqrtT;
  float cndd1 = cnd(d1), cndd2 = cnd(d2);
  float expRT = expf(-R * T[i]);
  call[i] = S[i] * cndd1 - X[i] * expRT * cndd2;
  put[i] = X[i] * expRT * (1.0f - cndd2) - S[i] * (1.0f - cndd1);
}

__global__ void fill(float *p, long n, float lo, float hi) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = lo + (hi - lo) * (float)((i * 7919) % 10007) / 10007.0f;
}

int main(int argc, char **argv) {
  long n = argOr(argc, argv, 1, 1L << 24);
  int reps = static_cast<int>(argOr(argc, argv, 2, 20));
  float *call, *put, *S, *X, *T;
  size_t bytes = n * sizeof(float);
  for (float **p : {&call, &put, &S, &X, &T})
    CHECK(cudaMalloc(p, bytes));
  unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  fill<<<blocks, 256>>>(S, n, 5.0f, 30.0f);
  fill<<<blocks, 256>>>(X, n, 1.0f, 100.0f);
  fill<<<blocks, 256>>>(T, n, 0.25f, 10.0f);
  double ms = timeLaunches(
      [&] { blackScholes<<<blocks, 256>>>(call, put, S, X, T, 0.02f, 0.30f, n); }, reps);
  float check;
  CHECK(cudaMemcpy(&check, call + 12345 % n, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("{\"n\": %ld, \"kernel_ms\": %.6f, \"check\": %.6f}\n", n, ms, check);
  return 0;
}
