// A/B timing of Mandelbrot kernels in one process and one context (scripts/mandelbrot-ab.sh):
// each argument triple names a module file (PTX, JIT-compiled by the driver, or a cubin), its
// entry and its parameter layout: `nv` for bench/cuda/mandelbrot.cu's (4 doubles, image,
// height, width, iters) or `pj` for ptxjit's kernel ABI (4 doubles, then the uint8[:, ::1]
// image as data, shape[2], strides[2], then iters). The kernels run the suite's Mandelbrot
// (4096², 256 iterations, grid of 32×8 blocks) in 9 interleaved rounds of 20 launches timed
// with events, rotating which goes first; it prints per kernel the registers, the median and
// minimum per launch, the ratio of medians to the first kernel, and the image's checksum.
// Usage: mandelbrot_ab FILE ENTRY nv|pj [FILE ENTRY nv|pj ...]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      const char *s_ = nullptr;                                                                    \
      cuGetErrorName(r_, &s_);                                                                     \
      std::fprintf(stderr, "%s failed: %s\n", #x, s_ ? s_ : "?");                                  \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

struct Kernel {
  std::string file, entry, layout;
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
  int registers = 0;
  std::vector<double> ms;
};

int main(int argc, char **argv) {
  if (argc < 4 || (argc - 1) % 3 != 0) {
    std::fprintf(stderr, "usage: %s FILE ENTRY nv|pj [FILE ENTRY nv|pj ...]\n", argv[0]);
    return 2;
  }
  if (cudaFree(nullptr) != cudaSuccess) // the runtime's primary context, current from here on
    return 1;
  const long size = 4096, iters = 256;
  const int reps = 20, rounds = 9;
  unsigned char *image = nullptr;
  if (cudaMalloc(&image, size * size) != cudaSuccess)
    return 1;
  std::vector<Kernel> ks;
  for (int i = 1; i + 2 < argc; i += 3) {
    Kernel k{argv[i], argv[i + 1], argv[i + 2]};
    if (k.layout != "nv" && k.layout != "pj") {
      std::fprintf(stderr, "layout must be nv or pj: %s\n", k.layout.c_str());
      return 2;
    }
    CK(cuModuleLoad(&k.module, k.file.c_str()));
    CK(cuModuleGetFunction(&k.fn, k.module, k.entry.c_str()));
    CK(cuFuncGetAttribute(&k.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, k.fn));
    ks.push_back(k);
  }
  double minX = -2.0, maxX = 1.0, minY = -1.5, maxY = 1.5;
  CUdeviceptr data = reinterpret_cast<CUdeviceptr>(image);
  long height = size, width = size, stride0 = size, stride1 = 1, n = iters;
  void *nv[] = {&minX, &maxX, &minY, &maxY, &data, &height, &width, &n};
  void *pj[] = {&minX, &maxX, &minY, &maxY, &data, &height, &width, &stride0, &stride1, &n};
  auto launch = [&](const Kernel &k) {
    CK(cuLaunchKernel(k.fn, size / 32, size / 8, 1, 32, 8, 1, 0, nullptr,
                      k.layout == "pj" ? pj : nv, nullptr));
  };
  for (const Kernel &k : ks)
    for (int i = 0; i < 3; ++i)
      launch(k);
  CK(cuCtxSynchronize());
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < ks.size(); ++j) {
      Kernel &k = ks[(j + r) % ks.size()];
      cudaEventRecord(start);
      for (int i = 0; i < reps; ++i)
        launch(k);
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      k.ms.push_back(ms / reps);
    }
  std::vector<unsigned char> host(size * size);
  double first = 0;
  for (Kernel &k : ks) {
    cudaMemset(image, 0, size * size);
    launch(k);
    cudaMemcpy(host.data(), image, size * size, cudaMemcpyDeviceToHost);
    long sum = 0;
    for (unsigned char v : host)
      sum += v;
    std::sort(k.ms.begin(), k.ms.end());
    double median = k.ms[k.ms.size() / 2];
    if (first == 0)
      first = median;
    std::printf("%-40s registers %2d  median %.4f ms  min %.4f ms  ratio %.4f  checksum %ld\n",
                k.file.c_str(), k.registers, median, k.ms.front(), median / first, sum);
  }
  return 0;
}
