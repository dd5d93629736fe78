// The GPU the runtime uses and its primary context.
#pragma once

#include "runtime/Driver.h"
#include "runtime/Launch.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ptxjit::runtime {

// A device the runtime uses, with its primary context (shared with the CUDA runtime API, CuPy,
// Numba...) retained once for the life of the process. Properties are read once.
//
// Each thread has a current device: ordinal 0 of the devices the driver exposes (so the first
// entry of CUDA_VISIBLE_DEVICES when it is set) until the thread selects another (select()), as
// numba-cuda's cuda.select_device / `with cuda.gpus[i]` do. A device opens when first used (or
// selected); nothing about the others costs a process that uses one device, whichever it is.
class Device {
public:
  // The most devices one process can use (ordinals 0 .. kMaxDevices - 1); peer-access sets are
  // bit masks of this width.
  static constexpr int kMaxDevices = 32;

  // The calling thread's current device (ordinal currentOrdinal()): loads the driver
  // (driver()), opens the device and retains its primary context on the first call
  // (thread-safe; retried on a later call if it threw), or waits for an opening of that device
  // started by openInBackground() and rethrows what it threw, then makes that context current
  // on the calling thread (makeCurrent()). Every public runtime function that talks to the
  // driver goes through here, so any thread may call them. Opening a device sets its context's
  // per-thread stack to PTXJIT_STACK_SIZE bytes when that is set (docs/configuration.md).
  // Throws DriverUnavailable or CudaError (cuCtxSetLimit refusing the size: the opening fails
  // and its context is released), std::invalid_argument for a PTXJIT_STACK_SIZE that is not a
  // positive integer.
  static const Device &current();
  // current() for a caller that has just read currentOrdinal() on this thread and passes it
  // (`ordinal`): the same, without reading the thread's selection again (a thread-local
  // look-up, a call in a shared library: the launch path reads it once).
  static const Device &current(int ordinal);

  // The calling thread's current device ordinal (0 until select() chose another). Never throws.
  static int currentOrdinal() noexcept;

  // Makes device `ordinal` the calling thread's current device: opens it (get()) and makes its
  // context current. Throws std::out_of_range for an ordinal outside [0, count()) (the message
  // gives the number of devices), DriverUnavailable, CudaError; on a throw the thread's device
  // stays what it was.
  static const Device &select(int ordinal);

  // Device `ordinal`, opened on the first call (thread-safe) without changing the calling
  // thread's current device or context. Throws as select().
  static const Device &get(int ordinal);

  // The number of devices the driver exposes (cuDeviceGetCount, capped at kMaxDevices).
  // Throws DriverUnavailable.
  static int count();

  // For destructors of resources owned by device `ordinal`: while it lives, that device's
  // context is current on the calling thread, and the thread's previous context (whatever it
  // was: another device's, another library's, none) is current again when it ends, so that a
  // free never changes the device another library sees on this thread. device() is nullptr
  // (and nothing is switched) when the process is exiting (driverShuttingDown()), the driver or
  // device is unavailable, or the context cannot be made current. Never throws.
  class Cleanup {
  public:
    explicit Cleanup(int ordinal) noexcept;
    ~Cleanup();
    Cleanup(const Cleanup &) = delete;
    Cleanup &operator=(const Cleanup &) = delete;
    const Device *device() const noexcept { return device_; }
    explicit operator bool() const noexcept { return device_ != nullptr; }

  private:
    const Device *device_ = nullptr;
    CUcontext previous_ = nullptr;
    bool switched_ = false;
  };

  // Device `ordinal` selected on the calling thread for a scope, then the thread's selection
  // of before (currentOrdinal() when it was made) again: for work that belongs to a device other
  // than the thread's own (a module loaded into its context, a graph's arguments read where it
  // replays), so that the caller's device is unchanged afterwards on every path. Nothing is
  // switched when `ordinal` is the thread's device already. The constructor throws as select()
  // (the thread's device is then unchanged); restore() selects the earlier device at once and
  // throws as select(); the destructor does it when restore() has not, ignoring errors (it
  // runs while an exception unwinds).
  class Selection {
  public:
    explicit Selection(int ordinal);
    ~Selection();
    Selection(const Selection &) = delete;
    Selection &operator=(const Selection &) = delete;
    // Whether the constructor changed the thread's device (and restore() will change it back).
    bool switched() const noexcept { return switched_; }
    void restore();

  private:
    int back_;
    bool switched_ = false;
  };

  // Starts what the first Device::current() does (opening the calling thread's current device
  // and retaining its primary context, the costly part of CUDA's start-up) on a background
  // thread, followed there by
  // `afterOpen` (may be null; it runs with the context current, may call Device::current(), and
  // must not need Python's GIL), and returns at once, so that the caller can do other work (the
  // first compile) meanwhile. The next Device::current() on any thread waits for both and
  // rethrows, with its type and message, what either threw; a failed opening is retried by a
  // later current(). Does nothing but run `afterOpen` on the calling thread (after waiting for
  // the device, as current() does) when the device is already open or being opened, and
  // nothing at all when the driver is unavailable (driverAvailable() false: current() throws
  // DriverUnavailable as before). The thread is a runtime/DriverJobs.h job (joined at process
  // exit, before the driver's teardown); when the system refuses a thread, the device is opened
  // and `afterOpen` run on the calling thread instead. Never throws except what current() and
  // `afterOpen` throw when they run on the calling thread, and std::bad_alloc.
  static void openInBackground(void (*afterOpen)());

  // Makes the primary context current on the calling thread if it is not already (one
  // cuCtxGetCurrent, plus cuCtxSetCurrent when another context or none is current; the context
  // on top of the thread's stack is replaced). Throws CudaError.
  void makeCurrent() const;

  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  // The ordinal given to cuDeviceGet (the device's index in cuda.gpus).
  int ordinal() const noexcept { return ordinal_; }
  // The driver's device handle (cuDeviceGet(ordinal())).
  CUdevice handle() const noexcept { return device_; }
  // The retained primary context.
  CUcontext context() const noexcept { return context_; }
  // The device name (cuDeviceGetName), e.g. "NVIDIA H100 80GB HBM3".
  const std::string &name() const noexcept { return name_; }
  // The device's UUID as nvidia-smi and numba-cuda write it, "GPU-" and 32 hex digits in the
  // groups 8-4-4-4-12 (cuDeviceGetUuid). Throws DriverUnavailable when the driver lacks
  // cuDeviceGetUuid_v2 (before CUDA 11.4), CudaError.
  std::string uuid() const;
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

  // The launch limits of this device (from the properties above).
  const LaunchLimits &launchLimits() const noexcept { return limits_; }

  // A live cuDeviceGetAttribute query. Throws CudaError.
  int attribute(CUdevice_attribute attr) const;

  // True when this device can access memory of device `peer` directly
  // (cuDeviceCanAccessPeer; false for peer == ordinal()). Throws std::out_of_range for a bad
  // ordinal, DriverUnavailable, CudaError.
  bool canAccessPeer(int peer) const;

  // Lets kernels and copies of this device's context use device `peer`'s memory
  // (cuCtxEnablePeerAccess from this context to peer's; opens peer). Idempotent. Throws
  // std::out_of_range for a bad ordinal or peer == ordinal(), CudaError
  // (CUDA_ERROR_PEER_ACCESS_UNSUPPORTED when canAccessPeer(peer) is false), DriverUnavailable.
  void enablePeerAccess(int peer) const;

  // True once enablePeerAccess(peer) succeeded (always true for peer == ordinal()): one load
  // and a bit test, for per-launch checks. Never throws.
  bool peerAccessEnabled(int peer) const noexcept {
    return peer == ordinal_ || (static_cast<unsigned>(peer) < kMaxDevices &&
                                (peers_.load(std::memory_order_acquire) >> peer & 1u) != 0);
  }

private:
  explicit Device(int ordinal); // opens device `ordinal`; throws
  static const Device &openOrWait(int ordinal);
  int ordinal_ = 0;
  mutable std::atomic<uint32_t> peers_{0}; // bit k: peer access to device k enabled
  LaunchLimits limits_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int ccMajor_ = 0, ccMinor_ = 0, smCount_ = 0, warpSize_ = 0;
  unsigned maxThreadsPerBlock_ = 0;
  std::array<unsigned, 3> maxBlockDim_{}, maxGridDim_{};
  size_t totalMemory_ = 0, sharedPerBlock_ = 0, sharedPerBlockOptin_ = 0;
  bool memoryPools_ = false;
};

// The compute capability kernels are compiled for, e.g. {9, 0}: the oldest among the visible
// devices (PTX for it loads on every newer device), from each open Device, else read with
// cuDeviceGetAttribute, which needs cuInit but no context (so it neither creates a primary
// context nor waits for openInBackground()). Read once. Throws DriverUnavailable (also when the
// driver reports no device) or CudaError.
struct ComputeCapability {
  int major = 0;
  int minor = 0;
};
ComputeCapability deviceComputeCapability();

// What a device is, read without opening it (no context is created: cheap for listing every
// device). Throws std::out_of_range for a bad ordinal (as Device::get), DriverUnavailable,
// CudaError.
struct DeviceSummary {
  std::string name;
  int major = 0, minor = 0; // compute capability
};
DeviceSummary describeDevice(int ordinal);

// Waits until all work submitted to the current device's context has finished (cuCtxSynchronize);
// reports asynchronous errors of earlier launches. Throws DriverUnavailable or CudaError.
void synchronize();

// Free and total device memory in bytes, as reported now by cuMemGetInfo.
struct MemoryInfo {
  size_t free = 0;
  size_t total = 0;
};

// cuMemGetInfo for the calling thread's current device. Throws DriverUnavailable or CudaError.
MemoryInfo memoryInfo();

} // namespace ptxjit::runtime
