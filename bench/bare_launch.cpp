// The baseline for ptxjit's launch overhead: a bare cuLaunchKernel loop from C++.
// Build (on the GPU machine): g++ -O2 -std=c++17 -I/usr/local/cuda/include bare_launch.cpp -ldl
// Usage: ./bare_launch <kernel.ptx> <kernel-name> [nargs | layout] [block]
//   Loads the PTX, launches kernel<<<1, block>>> (block = 1 by default) `iters` times per
//   repetition, synchronizes, and prints the median microseconds per launch as JSON.
//   The arguments are either `nargs` 8-byte zeros, or a layout: a comma-separated list of
//   f32, f64, i64 (scalars, passed as 1.5 / 1.5 / 256) and aN (a float32 array of N
//   dimensions, 256 elements per dimension, allocated on the device and passed as ptxjit's
//   kernel ABI flattens it: data pointer, N shapes, N byte strides), e.g. "f32,a1,a1,a1".
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  std::string layout = argc > 3 ? argv[3] : "0";
  unsigned block = argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 1u;
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
  auto p_alloc = reinterpret_cast<CUresult (*)(CUdeviceptr *, size_t)>(
      dlsym(lib, "cuMemAlloc_v2"));

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

  // Every parameter in an 8-byte slot of its own (4-byte values use the low half).
  std::vector<unsigned long long> values;
  bool numeric = !layout.empty() && layout.find_first_not_of("0123456789") == std::string::npos;
  if (numeric) {
    values.assign(std::atoi(layout.c_str()), 0);
  } else {
    std::stringstream tokens(layout);
    std::string tok;
    while (std::getline(tokens, tok, ',')) {
      unsigned long long v = 0;
      if (tok == "f32") {
        float f = 1.5f;
        std::memcpy(&v, &f, 4);
        values.push_back(v);
      } else if (tok == "f64") {
        double d = 1.5;
        std::memcpy(&v, &d, 8);
        values.push_back(v);
      } else if (tok == "i64") {
        values.push_back(256);
      } else if (tok.size() == 2 && tok[0] == 'a' && tok[1] >= '1' && tok[1] <= '3') {
        int ndim = tok[1] - '0';
        size_t elems = 1;
        for (int d = 0; d < ndim; ++d)
          elems *= 256;
        CUdeviceptr p = 0;
        CHECK(p_alloc(&p, elems * 4));
        values.push_back(p);
        for (int d = 0; d < ndim; ++d)
          values.push_back(256);
        unsigned long long stride = 4;
        std::vector<unsigned long long> strides(ndim);
        for (int d = ndim - 1; d >= 0; --d, stride *= 256)
          strides[d] = stride;
        for (unsigned long long st : strides)
          values.push_back(st);
      } else {
        std::fprintf(stderr, "unknown layout token '%s'\n", tok.c_str());
        return 2;
      }
    }
  }
  int nargs = static_cast<int>(values.size());
  std::vector<void *> params(nargs);
  for (int i = 0; i < nargs; ++i)
    params[i] = &values[i];

  const int iters = 10000, reps = 7;
  std::vector<double> perLaunch;
  for (int r = 0; r < reps + 1; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      CHECK(p_launch(fn, 1, 1, 1, block, 1, 1, 0, nullptr, params.data(), nullptr));
    CHECK(p_sync());
    auto t1 = std::chrono::steady_clock::now();
    if (r > 0) // the first repetition warms up
      perLaunch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
  }
  std::sort(perLaunch.begin(), perLaunch.end());
  std::printf("{\"bare_launch_us\": %.3f, \"nargs\": %d}\n", perLaunch[perLaunch.size() / 2], nargs);
  return 0;
}
