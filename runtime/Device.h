// The GPU the runtime uses and its primary context.
#pragma once

#include "runtime/Driver.h"

#include <array>
#include <cstddef>
#include <string>

namespace ptxjit::runtime {

// The runtime's device: ordinal 0 of the devices the driver exposes (so the first entry of
// CUDA_VISIBLE_DEVICES when it is set), with its primary context (shared with the CUDA runtime
// API, CuPy, Numba...) retained once for the life of the process. Properties are read once.
class Device {
public:
  // Loads the driver (driver()), opens the device and retains its primary context on the first
  // call (thread-safe; retried on a later call if it threw), or waits for an opening started by
  // openInBackground() and rethrows what it threw, then makes that context current on the
  // calling thread (makeCurrent()). Every public runtime function that talks to the driver
  // goes through here, so any thread may call them.
  // Throws DriverUnavailable or CudaError.
  static const Device &current();

  // Starts what the first Device::current() does (opening the device and retaining its primary
  // context, the costly part of CUDA's start-up) on a background thread, followed there by
  // `afterOpen` (may be null; it runs with the context current, may call Device::current(), and
  // must not need Python's GIL), and returns at once, so that the caller can do other work (the
  // first compile) meanwhile. The next Device::current() on any thread waits for both and
  // rethrows, with its type and message, what either threw; a failed opening is retried by a
  // later current(). Does nothing but run `afterOpen` on the calling thread (after waiting for
  // the device, as current() does) when the device is already open or being opened, and
  // nothing at all when the driver is unavailable (driverAvailable() false: current() throws
  // DriverUnavailable as before). A thread still running at process exit is joined by an atexit
  // handler (registered after cuInit, so before the driver's teardown). Never throws except
  // what current() and `afterOpen` throw in the already-open case, and std::system_error when
  // no thread can be started.
  static void openInBackground(void (*afterOpen)());

  // Makes the primary context current on the calling thread if it is not already (one
  // cuCtxGetCurrent, plus cuCtxSetCurrent when another context or none is current; the context
  // on top of the thread's stack is replaced). Throws CudaError.
  void makeCurrent() const;

  // For destructors: the device with its context current on the calling thread, or nullptr when
  // the process is exiting (driverShuttingDown()), the driver or device is unavailable, or the
  // context cannot be made current. Never throws.
  static const Device *currentForCleanup() noexcept;

  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  // The driver's device handle (cuDeviceGet(0)).
  CUdevice handle() const noexcept { return device_; }
  // The retained primary context.
  CUcontext context() const noexcept { return context_; }
  // The device name (cuDeviceGetName), e.g. "NVIDIA H100 80GB HBM3".
  const std::string &name() const noexcept { return name_; }
  // Compute capability, e.g. 9 and 0 for sm_90.
  int computeCapabilityMajor() const noexcept { return ccMajor_; }
  int computeCapabilityMinor() const noexcept { return ccMinor_; }
  // major * 10 + minor, e.g. 90.
  int computeCapability() const noexcept { return ccMajor_ * 10 + ccMinor_; }
  // Number of streaming multiprocessors.
  int multiprocessorCount() const noexcept { return smCount_; }
  // Maximum threads per block (product of the block dimensions).
  unsigned maxThreadsPerBlock() const noexcept { return maxThreadsPerBlock_; }
  // Maximum block dimensions (x, y, z), e.g. 1024, 1024, 64.
  const std::array<unsigned, 3> &maxBlockDim() const noexcept { return maxBlockDim_; }
  // Maximum grid dimensions (x, y, z), e.g. 2^31 - 1, 65535, 65535.
  const std::array<unsigned, 3> &maxGridDim() const noexcept { return maxGridDim_; }
  // Threads per warp (32).
  int warpSize() const noexcept { return warpSize_; }
  // Total device memory in bytes (cuDeviceTotalMem).
  size_t totalMemory() const noexcept { return totalMemory_; }
  // Shared memory a block may use without opting in (static + dynamic), in bytes.
  size_t sharedMemoryPerBlock() const noexcept { return sharedPerBlock_; }
  // The most shared memory a block can use after opting in, in bytes (>= sharedMemoryPerBlock()).
  size_t sharedMemoryPerBlockOptin() const noexcept { return sharedPerBlockOptin_; }
  // Whether stream-ordered allocation (cuMemAllocAsync, memory pools) is supported.
  bool memoryPoolsSupported() const noexcept { return memoryPools_; }

  // A live cuDeviceGetAttribute query. Throws CudaError.
  int attribute(CUdevice_attribute attr) const;

private:
  Device(); // opens device 0; throws
  static const Device &openOrWait();
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int ccMajor_ = 0, ccMinor_ = 0, smCount_ = 0, warpSize_ = 0;
  unsigned maxThreadsPerBlock_ = 0;
  std::array<unsigned, 3> maxBlockDim_{}, maxGridDim_{};
  size_t totalMemory_ = 0, sharedPerBlock_ = 0, sharedPerBlockOptin_ = 0;
  bool memoryPools_ = false;
};

// The compute capability of the runtime's device (ordinal 0), e.g. {9, 0}: from the open
// Device when there is one, else read with cuDeviceGetAttribute, which needs cuInit but no
// context (so it neither creates the primary context nor waits for openInBackground()). Read
// once. Throws DriverUnavailable or CudaError.
struct ComputeCapability {
  int major = 0;
  int minor = 0;
};
ComputeCapability deviceComputeCapability();

// Waits until all work submitted to the device's context has finished (cuCtxSynchronize);
// reports asynchronous errors of earlier launches. Throws DriverUnavailable or CudaError.
void synchronize();

// Free and total device memory in bytes, as reported now by cuMemGetInfo.
struct MemoryInfo {
  size_t free = 0;
  size_t total = 0;
};

// cuMemGetInfo for the device. Throws DriverUnavailable or CudaError.
MemoryInfo memoryInfo();

} // namespace ptxjit::runtime
