#include "runtime/Launch.h"

#include "runtime/Device.h"
#include "runtime/Stream.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ptxjit::runtime {
namespace {

constexpr const char *kAxis[3] = {"x", "y", "z"};

std::string shape(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

[[noreturn]] void invalid(const std::string &why) {
  throw std::invalid_argument("invalid launch configuration: " + why);
}

int functionAttribute(const DriverApi &d, CUfunction f, CUfunction_attribute attr) {
  int value = 0;
  check(d.cuFuncGetAttribute(&value, attr, f), "cuFuncGetAttribute");
  return value;
}

[[noreturn]] void throwLaunchError(CUresult r, CUfunction f, Dim3 grid, Dim3 block,
                                   unsigned sharedMem) {
  std::string detail = "launch of grid " + shape(grid) + ", block " + shape(block) + " with " +
                       std::to_string(sharedMem) + " bytes of dynamic shared memory";
  // Best effort: the kernel's own limits explain most launch failures.
  const DriverApi &d = driver();
  int maxThreads = 0, regs = 0, shared = 0, maxDyn = 0;
  if (d.cuFuncGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) ==
          CUDA_SUCCESS &&
      d.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS &&
      d.cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS &&
      d.cuFuncGetAttribute(&maxDyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f) ==
          CUDA_SUCCESS)
    detail += "; the kernel allows at most " + std::to_string(maxThreads) +
              " threads per block, uses " + std::to_string(regs) + " registers per thread and " +
              std::to_string(shared) + " bytes of static shared memory, and allows " +
              std::to_string(maxDyn) + " bytes of dynamic shared memory";
  throw CudaError(r, "cuLaunchKernel", detail);
}

} // namespace

[[noreturn]] void detail::throwInvalidLaunch(Dim3 grid, Dim3 block, const LaunchLimits &limits) {
  const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  for (int i = 0; i < 3; ++i)
    if (g[i] == 0)
      invalid("grid " + shape(grid) + ": dimension " + kAxis[i] +
              " is 0; every grid and block dimension must be at least 1");
  for (int i = 0; i < 3; ++i)
    if (b[i] == 0)
      invalid("block " + shape(block) + ": dimension " + kAxis[i] +
              " is 0; every grid and block dimension must be at least 1");
  for (int i = 0; i < 3; ++i)
    if (b[i] > limits.maxBlockDim[i])
      invalid("block " + shape(block) + ": dimension " + kAxis[i] + " is " + std::to_string(b[i]) +
              "; at most " + std::to_string(limits.maxBlockDim[i]) + " is allowed");
  uint64_t threads = uint64_t(b[0]) * b[1] * b[2];
  if (threads > limits.maxThreadsPerBlock)
    invalid("block " + shape(block) + " has " + std::to_string(threads) + " threads; at most " +
            std::to_string(limits.maxThreadsPerBlock) + " threads per block are allowed");
  for (int i = 0; i < 3; ++i)
    if (g[i] > limits.maxGridDim[i])
      invalid("grid " + shape(grid) + ": dimension " + kAxis[i] + " is " + std::to_string(g[i]) +
              "; at most " + std::to_string(limits.maxGridDim[i]) + " is allowed");
  invalid("grid " + shape(grid) + ", block " + shape(block)); // unreachable by construction
}

const LaunchLimits &deviceLaunchLimits() { return Device::current().launchLimits(); }

namespace {

// Refuses a null `f`: the first check of a launch (currentFor: before the driver is loaded).
void requireFunction(CUfunction f) {
  if (!f) [[unlikely]]
    throw std::invalid_argument("launchKernel: the kernel (CUfunction) is null");
}

// launchKernel and launchKernelBuffer: cuLaunchKernel with `params` or `extra`;
// launchCooperativeKernel: cuLaunchCooperativeKernel with `params` (it takes no `extra`). `dev`
// is the calling thread's current device, its context current.
void launch(const Device &dev, CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem,
            CUstream stream, void **params, void **extra, bool cooperative = false) {
  requireFunction(f);
  validateLaunch(grid, block, dev.launchLimits());
  const DriverApi &d = driver();
  if (sharedMem > dev.sharedMemoryPerBlock()) [[unlikely]] {
    if (sharedMem > dev.sharedMemoryPerBlockOptin())
      invalid(std::to_string(sharedMem) + " bytes of dynamic shared memory requested; the " +
              "device allows at most " + std::to_string(dev.sharedMemoryPerBlockOptin()) +
              " per block");
    // Beyond the default 48 KiB of dynamic shared memory a kernel must opt in (cuda.shared.array
    // of size 0 with a large sharedmem, see docs/cooperation.md).
    CUresult a = d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(sharedMem));
    if (a != CUDA_SUCCESS)
      throwLaunchError(a, f, grid, block, sharedMem);
  }
  CUresult r = cooperative
                   ? d.cuLaunchCooperativeKernel(f, grid.x, grid.y, grid.z, block.x, block.y,
                                                 block.z, sharedMem, stream, params)
                   : d.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                      sharedMem, stream, params, extra);
  if (r != CUDA_SUCCESS) [[unlikely]]
    throwLaunchError(r, f, grid, block, sharedMem);
  joinLegacyStreamAfter(stream); // memory freed later waits for the kernel (runtime/Stream.h)
}

// The calling thread's current device, for a launch of `f`: a null `f` is refused first,
// before the driver is loaded.
const Device &currentFor(CUfunction f) {
  requireFunction(f);
  return Device::current();
}

} // namespace

void launchKernel(const Device &current, CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem,
                  CUstream stream, void **params) {
  launch(current, f, grid, block, sharedMem, stream, params, nullptr);
}

void launchKernelBuffer(const Device &current, CUfunction f, Dim3 grid, Dim3 block,
                        unsigned sharedMem, CUstream stream, void *buffer, size_t bytes) {
  if (bytes == 0) {
    launch(current, f, grid, block, sharedMem, stream, nullptr, nullptr);
    return;
  }
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes,
                   CU_LAUNCH_PARAM_END};
  launch(current, f, grid, block, sharedMem, stream, nullptr, extra);
}

void launchCooperativeKernel(const Device &current, CUfunction f, Dim3 grid, Dim3 block,
                             unsigned sharedMem, CUstream stream, void **params) {
  if (!driver().cuLaunchCooperativeKernel)
    throw DriverUnavailable("the CUDA driver has no cuLaunchCooperativeKernel: kernels that "
                            "synchronize their grid (cuda.cg) cannot be launched");
  launch(current, f, grid, block, sharedMem, stream, params, nullptr, /*cooperative=*/true);
}

void launchKernel(CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem, CUstream stream,
                  void **params) {
  launchKernel(currentFor(f), f, grid, block, sharedMem, stream, params);
}

void launchKernelBuffer(CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem, CUstream stream,
                        void *buffer, size_t bytes) {
  launchKernelBuffer(currentFor(f), f, grid, block, sharedMem, stream, buffer, bytes);
}

void launchCooperativeKernel(CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem,
                             CUstream stream, void **params) {
  launchCooperativeKernel(currentFor(f), f, grid, block, sharedMem, stream, params);
}

int maxCooperativeGridBlocks(CUfunction f, int threadsPerBlock, size_t dynamicSharedMem) {
  if (!f)
    throw std::invalid_argument("maxCooperativeGridBlocks: the kernel (CUfunction) is null");
  if (threadsPerBlock <= 0)
    throw std::invalid_argument("maxCooperativeGridBlocks: a block needs at least one thread");
  const Device &dev = Device::current();
  if (!driver().cuOccupancyMaxActiveBlocksPerMultiprocessor)
    throw DriverUnavailable("the CUDA driver has no cuOccupancyMaxActiveBlocksPerMultiprocessor");
  int perSm = 0;
  check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, f, threadsPerBlock,
                                                             dynamicSharedMem),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return perSm * dev.multiprocessorCount();
}

bool paramLayoutMatches(const std::vector<ParamExtent> &expected,
                        const ParamInfoQuery &query) noexcept {
  try {
    // Only the parameters the plan has are asked about: the kernel's PTX declares exactly one
    // parameter per slot (codegen emits both from the plan), and probing one past the last
    // makes the driver report CUDA_ERROR_INVALID_VALUE, which compute-sanitizer flags.
    for (size_t i = 0; i < expected.size(); ++i) {
      ParamExtent got;
      if (query(i, &got.offset, &got.size) != CUDA_SUCCESS || !(got == expected[i]))
        return false;
    }
    return true;
  } catch (...) {
    return false;
  }
}

bool functionParamLayoutIs(CUfunction f, const std::vector<ParamExtent> &expected) {
  if (!f)
    throw std::invalid_argument("functionParamLayoutIs: the kernel (CUfunction) is null");
  const DriverApi &d = driver();
  if (!d.cuFuncGetParamInfo)
    return false;
  return paramLayoutMatches(expected, [&](size_t i, size_t *offset, size_t *size) {
    return d.cuFuncGetParamInfo(f, i, offset, size);
  });
}

void setSharedMemoryCarveout(CUfunction f, int percent) {
  if (!f)
    throw std::invalid_argument("setSharedMemoryCarveout: null function");
  if (percent < -1 || percent > 100)
    throw std::invalid_argument("the shared memory carveout must be -1 to 100 (percent), not " +
                                std::to_string(percent));
  check(driver().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent),
        "cuFuncSetAttribute");
}

FunctionAttributes functionAttributes(CUfunction f) {
  if (!f)
    throw std::invalid_argument("functionAttributes: the kernel (CUfunction) is null");
  Device::current();
  const DriverApi &d = driver();
  FunctionAttributes a;
  a.maxThreadsPerBlock = functionAttribute(d, f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  a.numRegs = functionAttribute(d, f, CU_FUNC_ATTRIBUTE_NUM_REGS);
  a.sharedSizeBytes = functionAttribute(d, f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  a.localSizeBytes = functionAttribute(d, f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  a.constSizeBytes = functionAttribute(d, f, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
  a.ptxVersion = functionAttribute(d, f, CU_FUNC_ATTRIBUTE_PTX_VERSION);
  a.binaryVersion = functionAttribute(d, f, CU_FUNC_ATTRIBUTE_BINARY_VERSION);
  a.maxDynamicSharedSizeBytes =
      functionAttribute(d, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  return a;
}

BlockSizeSuggestion maxPotentialBlockSize(CUfunction f, size_t dynamicSharedMem,
                                          int blockSizeLimit) {
  if (!f)
    throw std::invalid_argument("maxPotentialBlockSize: the kernel (CUfunction) is null");
  Device::current();
  BlockSizeSuggestion s;
  check(driver().cuOccupancyMaxPotentialBlockSize(&s.minGridSize, &s.blockSize, f, nullptr,
                                                  dynamicSharedMem, blockSizeLimit),
        "cuOccupancyMaxPotentialBlockSize");
  return s;
}

} // namespace ptxjit::runtime
