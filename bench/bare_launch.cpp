// The baseline for ptxjit's launch overhead: a bare cuLaunchKernel loop from C++.
// Build (on the GPU machine): g++ -O2 -std=c++17 -I/usr/local/cuda/include bare_launch.cpp -ldl
// Usage: ./bare_launch <kernel.ptx> <kernel-name> [nargs]
//   Loads the PTX, launches kernel<<<1,1>>> with nargs 8-byte zero arguments `iters` times per
//   repetition, synchronizes, and prints the median microseconds per launch as JSON.
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define LOAD(name) auto p_##name = reinterpret_cast<decltype(&name)>(dlsym(lib, #name))
#define CHECK(x)                                                                                   \
  do {                                                                                             \
    CUresult r = (x);                                                                              \
    if (r != CUDA_SUCCESS) {                                                                       \
      std::fprintf(stderr, "%s failed: %d\n", #x, (int)r);                                         \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s kernel.ptx name [nargs]\n", argv[0]);
    return 2;
  }
  int nargs = argc > 3 ? std::atoi(argv[3]) : 0;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "no libcuda: %s\n", dlerror());
    return 1;
  }
  auto p_cuInit = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(lib, "cuInit"));
  auto p_cuDeviceGet = reinterpret_cast<CUresult (*)(CUdevice *, int)>(dlsym(lib, "cuDeviceGet"));
  auto p_retain = reinterpret_cast<CUresult (*)(CUcontext *, CUdevice)>(
      dlsym(lib, "cuDevicePrimaryCtxRetain"));
  auto p_setCurrent = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(lib, "cuCtxSetCurrent"));
  auto p_load = reinterpret_cast<CUresult (*)(CUmodule *, const void *)>(
      dlsym(lib, "cuModuleLoadData"));
  auto p_getFn = reinterpret_cast<CUresult (*)(CUfunction *, CUmodule, const char *)>(
      dlsym(lib, "cuModuleGetFunction"));
  auto p_launch = reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                                unsigned, unsigned, unsigned, CUstream, void **,
                                                void **)>(dlsym(lib, "cuLaunchKernel"));
  auto p_sync = reinterpret_cast<CUresult (*)()>(dlsym(lib, "cuCtxSynchronize"));

  std::ifstream in(argv[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string ptx = ss.str();

  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  CHECK(p_cuInit(0));
  CHECK(p_cuDeviceGet(&dev, 0));
  CHECK(p_retain(&ctx, dev));
  CHECK(p_setCurrent(ctx));
  CHECK(p_load(&mod, ptx.c_str()));
  CHECK(p_getFn(&fn, mod, argv[2]));

  std::vector<unsigned long long> values(nargs, 0);
  std::vector<void *> params(nargs);
  for (int i = 0; i < nargs; ++i)
    params[i] = &values[i];

  const int iters = 10000, reps = 7;
  std::vector<double> perLaunch;
  for (int r = 0; r < reps + 1; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      CHECK(p_launch(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, params.data(), nullptr));
    CHECK(p_sync());
    auto t1 = std::chrono::steady_clock::now();
    if (r > 0) // the first repetition warms up
      perLaunch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
  }
  std::sort(perLaunch.begin(), perLaunch.end());
  std::printf("{\"bare_launch_us\": %.3f, \"nargs\": %d}\n", perLaunch[perLaunch.size() / 2], nargs);
  return 0;
}
