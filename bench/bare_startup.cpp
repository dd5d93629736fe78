// CUDA's own start-up, the reference for ptxjit's fresh-process figures: a bare C++ program that
// does what any CUDA program must before its first kernel has run, timing each phase in-process
// with steady_clock and printing them as JSON (milliseconds):
//   dlopen (libcuda.so.1 and dlsym of the entry points), cuInit, cuDeviceGet (and the compute
//   capability), cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuMemAlloc + cuMemcpyHtoD (4 KiB,
//   as the bench's `cuda.to_device` of 1,024 float32), cuModuleLoadData (a tiny PTX kernel for
//   the device's sm, compiled to SASS by the driver or found in its compute cache),
//   cuModuleGetFunction, cuLaunchKernel, cuCtxSynchronize; total = the sum, from before dlopen to
//   after the synchronize. The kernel stores 42 through its pointer argument, which is checked
//   afterwards (outside the total).
// bench/run.py runs it in fresh processes (after one untimed warm-up process: the first CUDA
// process after the machine starts is much slower) and takes the median total.
// Build: g++ -O2 -std=c++17 -I/usr/local/cuda/include bare_startup.cpp -ldl -o bare_startup
// Usage: ./bare_startup                     measure
//        ./bare_startup --print-ptx MAJ MIN  print the kernel's PTX for compute capability MAJ.MIN
#include "bare_driver.h"

#include <cstdio>
#include <utility>

namespace {

// The lowest PTX ISA version that supports sm_<major><minor> (PTX ISA release notes), so the
// program runs with the oldest driver that knows the device; 8.0 covers everything to sm_90a.
const char *ptxVersion(int major, int minor) {
  if (major == 11 || major > 12)
    return "9.0"; // sm_110 (and, as a guess, later devices)
  if ((major == 10 && minor >= 3) || (major == 12 && minor >= 1))
    return "8.8"; // sm_103, sm_121
  if (major == 12)
    return "8.7"; // sm_120
  if (major == 10)
    return "8.6"; // sm_100, sm_101
  return "8.0";
}

std::string kernelPtx(int major, int minor) {
  std::string sm = "sm_" + std::to_string(major) + std::to_string(minor);
  return std::string(".version ") + ptxVersion(major, minor) + "\n.target " + sm +
         "\n.address_size 64\n\n"
         ".visible .entry bare_startup_store(\n"
         "\t.param .u64 bare_startup_store_param_0\n"
         ")\n{\n"
         "\t.reg .b32 %r<2>;\n"
         "\t.reg .b64 %rd<3>;\n"
         "\tld.param.u64 %rd1, [bare_startup_store_param_0];\n"
         "\tcvta.to.global.u64 %rd2, %rd1;\n"
         "\tmov.u32 %r1, 42;\n"
         "\tst.global.u32 [%rd2], %r1;\n"
         "\tret;\n}\n";
}

using Clock = std::chrono::steady_clock;

struct Phases {
  Clock::time_point start = Clock::now(), last = start;
  std::vector<std::pair<const char *, double>> list;
  // Ends the phase `name` now.
  void mark(const char *name) {
    auto now = Clock::now();
    list.emplace_back(name, std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
  }
  double total() const { return std::chrono::duration<double, std::milli>(last - start).count(); }
};

int fail(const std::string &message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 4 && std::string(argv[1]) == "--print-ptx") {
    std::fputs(kernelPtx(std::atoi(argv[2]), std::atoi(argv[3])).c_str(), stdout);
    return 0;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--print-ptx MAJOR MINOR]\n", argv[0]);
    return 2;
  }
  Phases t; // starts the clock
  bare::Driver d;
  std::string error;
  if (!bare::loadDriver(d, error))
    return fail(error);
  t.mark("dlopen");
#define STEP(call, what)                                                                           \
  if (CUresult r = (call); r != CUDA_SUCCESS)                                                      \
    return fail(bare::errorText(d, what, r));
  STEP(d.cuInit(0), "cuInit")
  t.mark("cuInit");
  CUdevice dev = 0;
  int major = 0, minor = 0;
  STEP(d.cuDeviceGet(&dev, 0), "cuDeviceGet")
  STEP(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
       "cuDeviceGetAttribute")
  STEP(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
       "cuDeviceGetAttribute")
  std::string ptx = kernelPtx(major, minor); // a microsecond: left in this phase
  t.mark("cuDeviceGet");
  CUcontext ctx = nullptr;
  STEP(d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain")
  t.mark("cuDevicePrimaryCtxRetain");
  STEP(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
  t.mark("cuCtxSetCurrent");
  std::vector<unsigned> host(1024, 0);
  CUdeviceptr buf = 0;
  STEP(d.cuMemAlloc_v2(&buf, host.size() * sizeof(unsigned)), "cuMemAlloc")
  STEP(d.cuMemcpyHtoD_v2(buf, host.data(), host.size() * sizeof(unsigned)), "cuMemcpyHtoD")
  t.mark("cuMemAlloc_and_copy");
  CUmodule mod = nullptr;
  STEP(d.cuModuleLoadData(&mod, ptx.c_str()), "cuModuleLoadData")
  t.mark("cuModuleLoadData");
  CUfunction fn = nullptr;
  STEP(d.cuModuleGetFunction(&fn, mod, "bare_startup_store"), "cuModuleGetFunction")
  t.mark("cuModuleGetFunction");
  void *params[] = {&buf};
  STEP(d.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel")
  t.mark("cuLaunchKernel");
  STEP(d.cuCtxSynchronize(), "cuCtxSynchronize")
  t.mark("cuCtxSynchronize");

  unsigned stored = 0;
  STEP(d.cuMemcpyDtoH_v2(&stored, buf, sizeof stored), "cuMemcpyDtoH")
  if (stored != 42)
    return fail("the kernel stored " + std::to_string(stored) + ", not 42");
  d.cuMemFree_v2(buf);
  d.cuModuleUnload(mod);
  d.cuDevicePrimaryCtxRelease_v2(dev);
#undef STEP

  std::printf("{\"total_ms\": %.3f, \"sm\": \"sm_%d%d\", \"phases\": {", t.total(), major, minor);
  for (size_t i = 0; i < t.list.size(); ++i)
    std::printf("%s\"%s\": %.3f", i ? ", " : "", t.list[i].first, t.list[i].second);
  std::printf("}}\n");
  return 0;
}
