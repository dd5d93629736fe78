// Kernel launch configuration and GPU kernel launches.
#pragma once

#include "runtime/Driver.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace ptxjit::runtime {

// A grid or block shape (CUDA's dim3); unspecified dimensions are 1.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// The limits a launch configuration must respect. The defaults are those of every GPU of compute
// capability 5.0 and later (and what the host backend enforces).
struct LaunchLimits {
  unsigned maxThreadsPerBlock = 1024;
  std::array<unsigned, 3> maxBlockDim{1024u, 1024u, 64u};
  std::array<unsigned, 3> maxGridDim{2147483647u, 65535u, 65535u};
};

namespace detail {
// validateLaunch's error: the message naming the first offending dimension.
[[noreturn]] void throwInvalidLaunch(Dim3 grid, Dim3 block, const LaunchLimits &limits);
} // namespace detail

// Checks a launch configuration: every dimension >= 1, each block dimension <= maxBlockDim, the
// block's thread count (x*y*z) <= maxThreadsPerBlock, each grid dimension <= maxGridDim.
// Throws std::invalid_argument with a message starting "invalid launch configuration: " that
// names the offending dimension and the limit. Inline and without branches (d - 1 >= max in
// unsigned arithmetic is both d == 0 and d > max): every launch checks its shape.
inline void validateLaunch(Dim3 grid, Dim3 block, const LaunchLimits &limits) {
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  const bool bad = (grid.x - 1u >= limits.maxGridDim[0]) | (grid.y - 1u >= limits.maxGridDim[1]) |
                   (grid.z - 1u >= limits.maxGridDim[2]) | (block.x - 1u >= limits.maxBlockDim[0]) |
                   (block.y - 1u >= limits.maxBlockDim[1]) |
                   (block.z - 1u >= limits.maxBlockDim[2]) |
                   (threads - 1u >= limits.maxThreadsPerBlock);
  if (bad) [[unlikely]]
    detail::throwInvalidLaunch(grid, block, limits);
}

// The calling thread's current device's limits (Device::current().launchLimits()). Throws
// DriverUnavailable, CudaError.
const LaunchLimits &deviceLaunchLimits();

// Launches `f` on `stream` (null: the default stream) with `sharedMem` bytes of dynamic shared
// memory. `params` is cuLaunchKernel's kernelParams: an array of pointers to each flattened
// kernel argument (may be null for a kernel without parameters); the values are copied before
// the call returns. Makes the device context current, validates the configuration against the
// device's cached limits (std::invalid_argument, also for a null `f` or sharedMem beyond the
// device's opt-in maximum), then calls cuLaunchKernel once. The launch is asynchronous: faults
// in the kernel surface at a later synchronization. Throws DriverUnavailable, CudaError (whose
// detail lists the configuration and the kernel's limits).
void launchKernel(CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem, CUstream stream,
                  void **params);

// As launchKernel, with the kernel's parameters given as one buffer (cuLaunchKernel's
// CU_LAUNCH_PARAM_BUFFER_POINTER): `bytes` bytes at `buffer`, laid out exactly as the kernel's
// parameters are (check with functionParamLayoutIs first; `bytes` is the end of the last one).
// The driver copies the buffer in one piece instead of reading one pointer per parameter. A
// kernel without parameters takes bytes == 0 (buffer ignored).
void launchKernelBuffer(CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem, CUstream stream,
                        void *buffer, size_t bytes);

// As launchKernel, with cuLaunchCooperativeKernel: every block of the grid is resident at once,
// as a kernel that synchronizes its grid (cuda.cg) needs; a grid larger than
// maxCooperativeGridBlocks allows fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. Throws as
// launchKernel; DriverUnavailable when the driver lacks the entry point.
void launchCooperativeKernel(CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem,
                             CUstream stream, void **params);

class Device;

// As launchKernel, launchKernelBuffer and launchCooperativeKernel, on `current`: the calling
// thread's current device, as Device::current() returned it (its context current). For a
// caller that needs the device first (a kernel's function is per device), so that a launch
// reads the thread's device and checks its context once.
void launchKernel(const Device &current, CUfunction f, Dim3 grid, Dim3 block, unsigned sharedMem,
                  CUstream stream, void **params);
void launchKernelBuffer(const Device &current, CUfunction f, Dim3 grid, Dim3 block,
                        unsigned sharedMem, CUstream stream, void *buffer, size_t bytes);
void launchCooperativeKernel(const Device &current, CUfunction f, Dim3 grid, Dim3 block,
                             unsigned sharedMem, CUstream stream, void **params);

// The most blocks of `threadsPerBlock` threads (with `dynamicSharedMem` bytes of dynamic shared
// memory each) a cooperative launch of `f` may have on the current device: the blocks resident
// per multiprocessor (cuOccupancyMaxActiveBlocksPerMultiprocessor) times the multiprocessors.
// Throws std::invalid_argument for a null `f` or threadsPerBlock 0, DriverUnavailable,
// CudaError.
int maxCooperativeGridBlocks(CUfunction f, int threadsPerBlock, size_t dynamicSharedMem = 0);

// Where one kernel parameter lies in the kernel's parameter buffer.
struct ParamExtent {
  size_t offset = 0;
  size_t size = 0;
  bool operator==(const ParamExtent &) const = default;
};

// cuFuncGetParamInfo's contract: fills offset and size of parameter `index`, or fails (any
// result other than CUDA_SUCCESS) when the kernel has no such parameter.
using ParamInfoQuery = std::function<CUresult(size_t index, size_t *offset, size_t *size)>;

// True when `query` reports exactly `expected`: the same extent for every index below
// expected.size(). Indices from expected.size() on are never asked about (the count is the
// plan's by construction; asking past the last parameter is a driver error). Never throws (a
// throwing query counts as a mismatch).
bool paramLayoutMatches(const std::vector<ParamExtent> &expected,
                        const ParamInfoQuery &query) noexcept;

// True when `f`'s parameters lie exactly at `expected` according to the driver
// (cuFuncGetParamInfo through paramLayoutMatches); false when the driver lacks
// cuFuncGetParamInfo (before CUDA 12.4) or describes them otherwise. Throws
// std::invalid_argument for a null `f`, DriverUnavailable.
bool functionParamLayoutIs(CUfunction f, const std::vector<ParamExtent> &expected);

// A kernel's compiled properties (cuFuncGetAttribute).
struct FunctionAttributes {
  int maxThreadsPerBlock = 0;        // the most threads per block this kernel can be launched with
  int numRegs = 0;                   // registers per thread
  int sharedSizeBytes = 0;           // static shared memory per block
  int localSizeBytes = 0;            // local memory per thread
  int constSizeBytes = 0;            // user constant memory
  int ptxVersion = 0;                // PTX target architecture * 10 + minor (e.g. 52 for sm_52)
  int binaryVersion = 0;             // SASS version * 10 + minor (e.g. 90)
  int maxDynamicSharedSizeBytes = 0; // dynamic shared memory allowed without raising the limit
};

// Reads `f`'s attributes. Throws std::invalid_argument for a null `f`, DriverUnavailable,
// CudaError.
FunctionAttributes functionAttributes(CUfunction f);

// Sets `f`'s preferred shared-memory carveout (percent of the unified L1/shared memory, -1 for
// the driver's default). Throws std::invalid_argument for a null `f` or a value outside
// [-1, 100], DriverUnavailable, CudaError.
void setSharedMemoryCarveout(CUfunction f, int percent);

// cuOccupancyMaxPotentialBlockSize's answer.
struct BlockSizeSuggestion {
  int minGridSize = 0; // the smallest grid reaching full occupancy with blockSize
  int blockSize = 0;   // the block size reaching maximum occupancy
};

// The block size that maximizes occupancy for `f` with `dynamicSharedMem` bytes of dynamic
// shared memory per block, and no more than `blockSizeLimit` threads (0: no limit).
// Throws std::invalid_argument for a null `f`, DriverUnavailable, CudaError.
BlockSizeSuggestion maxPotentialBlockSize(CUfunction f, size_t dynamicSharedMem = 0,
                                          int blockSizeLimit = 0);

} // namespace ptxjit::runtime
