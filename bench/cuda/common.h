// Shared by the CUDA C++ reference benchmarks (bench/cuda/*.cu, built by bench/run.py with
// nvcc): error checking and the timing loop (CUDA events around `reps` back-to-back
// launches after a warm-up, median of 7 repetitions, milliseconds per launch).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t err_ = (x);                                                                        \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(err_));                       \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

/// Median milliseconds per call of launch() over 7 timed repetitions of `reps` calls.
template <typename F> double timeLaunches(F launch, int reps) {
  for (int i = 0; i < 3; ++i)
    launch();
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<double> per;
  for (int r = 0; r < 7; ++r) {
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < reps; ++i)
      launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    per.push_back(static_cast<double>(ms) / reps);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

inline long argOr(int argc, char **argv, int i, long dflt) {
  return argc > i ? std::atol(argv[i]) : dflt;
}
