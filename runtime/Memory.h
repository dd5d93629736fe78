// Device and host memory, and copies between them.
//
// Device memory comes from a replaceable DeviceAllocator (plain cuMemAlloc by default, or the
// driver's stream-ordered memory pool), so callers only ever see Allocation and allocateDevice().
#pragma once

#include "runtime/Driver.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

namespace ptxjit::runtime {

class PinnedRingUse; // runtime/PinnedRing.h

// Alignment in bytes of every non-empty Allocation (host and device).
inline constexpr size_t kAllocationAlignment = 256;

// Where device memory comes from. Implementations must be thread-safe.
class DeviceAllocator {
public:
  virtual ~DeviceAllocator() = default;
  // Returns `bytes` (> 0) bytes of device memory aligned to at least kAllocationAlignment, usable
  // by work submitted to `stream` (stream-ordered allocators make it available in that stream's
  // order). Called with the device context current. Throws CudaError.
  virtual CUdeviceptr allocate(size_t bytes, CUstream stream) = 0;
  // Gives back memory from allocate() with the same size and stream. Called with the device
  // context current and never once driverShuttingDown(). Must not throw.
  virtual void deallocate(CUdeviceptr ptr, size_t bytes, CUstream stream) noexcept = 0;
  // A short name for diagnostics, e.g. "cuMemAlloc".
  virtual const char *name() const noexcept = 0;
  // As allocate(), for a caller whose first use of the memory is work it submits to `stream`
  // right away (a copy or a launch; FirstUse::OnStreamNow): a caching allocator may then return
  // a block freed earlier when that work is ordered after every earlier use of the block. The
  // default calls allocate().
  virtual CUdeviceptr allocateForUseNow(size_t bytes, CUstream stream) {
    return allocate(bytes, stream);
  }
  // The ordinal of the device whose memory pool this allocator is (poolDeviceAllocator()), or -1
  // for any other allocator. allocateDevice() gives an allocation on another device that
  // device's own pool instead: one load and a compare per allocation.
  int poolDevice() const noexcept { return poolDevice_; }

protected:
  int poolDevice_ = -1;
};

// What the caller of allocateDevice() does first with the memory.
enum class FirstUse : uint8_t {
  Unknown,     ///< anything, on any stream, at any time
  OnStreamNow, ///< work it submits to the allocation's stream right away (a copy or a launch)
};

// The default allocator: cuMemAlloc / cuMemFree (synchronous; the stream is ignored). Needs no
// driver until used. Never throws.
std::shared_ptr<DeviceAllocator> plainDeviceAllocator();

// A caching, stream-ordered allocator: cuMemAllocAsync on the stream given at allocation and
// cuMemFreeAsync on the legacy default stream, from the device's default memory pool with its
// release threshold raised so freed memory is kept for reuse. A free thus follows every use
// submitted before it on any blocking stream (even once the allocation's own stream is gone);
// memory used on a CU_STREAM_NON_BLOCKING stream must be synchronized before it is freed.
// Freed blocks of up to 1 MiB (64 MiB in all) are kept by the allocator itself, by size rounded
// up to 512 bytes, and reused without a driver call by allocateForUseNow on the legacy default
// stream, whose work follows every earlier use of the block on a blocking stream as the free
// would have; when the pool is out of memory they are freed and the allocation retried. One per
// device: the calling thread's current device's (Device::current()). Throws DriverUnavailable,
// CudaError, or std::runtime_error if the device lacks memory pools.
std::shared_ptr<DeviceAllocator> poolDeviceAllocator();

// Makes poolDeviceAllocator() the allocator once the pool has made its first allocation. The
// driver makes that one slow (8-12 ms on an H100, against microseconds for later ones: it maps
// the pool's first memory), so it is made, and freed, on a thread of its own (and on a
// non-blocking stream of its own: legacy-stream work would break any capture under way), while
// allocateDevice() keeps the allocator current now (plain cuMemAlloc at start-up); the first
// copies and launches of a process then do not wait for it. Allocations made meanwhile keep
// their allocator (Allocation records it). The switch is skipped if setDeviceAllocator() was
// called in between, and the current allocator stays when the pool's set-up or the warm-up
// allocation fails. The set-up (cuDeviceGetDefaultMemPool, the release threshold) is made on
// that thread too, so that the caller (Device::openInBackground's afterOpen, which runs before
// the device is published to the threads waiting for it) returns after one thread start. Call
// with the device open. Returns false, changing nothing and starting no thread, when the pool
// cannot be used (no memory pools, no device); true once the warm-up has started (or, without a
// thread, has switched). Exit waits for the thread.
bool usePoolAllocatorAfterWarmUp();

// Waits until a warm-up started by usePoolAllocatorAfterWarmUp() has finished; returns at once
// when none is under way. Thread-safe.
void joinPoolWarmUp();

// The allocator allocateDevice() uses now (initially plainDeviceAllocator()); after the warm-up,
// the pool of the device the process opened first. While it is one device's pool,
// allocateDevice() on another device uses that device's own pool (poolDeviceAllocator()).
// Thread-safe.
std::shared_ptr<DeviceAllocator> deviceAllocator();

// Makes `allocator` (nullptr: plainDeviceAllocator()) the one allocateDevice() uses from now on.
// Existing allocations keep and are freed by the allocator that made them. Thread-safe.
void setDeviceAllocator(std::shared_ptr<DeviceAllocator> allocator);

// An owning block of device or host memory, freed on destruction (device memory through the
// allocator that made it, in its stream's order; skipped once the process is exiting). Not
// copyable; share it through std::shared_ptr.
class Allocation {
public:
  ~Allocation();
  Allocation(const Allocation &) = delete;
  Allocation &operator=(const Allocation &) = delete;

  // The host address of a host allocation; nullptr for device memory or an empty allocation.
  void *hostPtr() const noexcept { return onDevice_ ? nullptr : reinterpret_cast<void *>(ptr_); }
  // The device address of a device allocation; 0 for host memory or an empty allocation.
  CUdeviceptr devicePtr() const noexcept { return onDevice_ ? ptr_ : 0; }
  // The address kernels of the allocation's backend use (device or host address; 0 if empty).
  uint64_t address() const noexcept { return ptr_; }
  // The requested size in bytes (may be 0).
  size_t size() const noexcept { return size_; }
  // True for device memory, false for host memory.
  bool onDevice() const noexcept { return onDevice_; }
  // The stream the memory was allocated on (and will be released on); null for host memory.
  CUstream stream() const noexcept { return stream_; }
  // False for memory wrapped by wrapMemory(), which the runtime never frees.
  bool owned() const noexcept { return owned_; }
  // The ordinal of the device whose memory this is (the current device when it was allocated
  // or wrapped; 0 for host memory).
  int device() const noexcept { return device_; }

  // Copies n bytes from host memory `src` into this allocation at byte `offset`. For device
  // memory: asynchronous on a non-null `stream` (src must stay valid until the copy is done),
  // synchronous otherwise; for host memory: an immediate memmove. Memory of another device than
  // the calling thread's current one is copied in its own device's context, synchronously after
  // `stream` (a stream of the current device). Throws std::out_of_range if the range exceeds
  // size(), DriverUnavailable, CudaError.
  void upload(const void *src, size_t n, size_t offset = 0, CUstream stream = nullptr);
  // Copies n bytes at byte `offset` of this allocation into host memory `dst`; same rules.
  void download(void *dst, size_t n, size_t offset = 0, CUstream stream = nullptr) const;
  // Sets n bytes at byte `offset` to `value`; same rules.
  void fill(unsigned char value, size_t n, size_t offset = 0, CUstream stream = nullptr);

private:
  Allocation(uint64_t ptr, size_t size, bool onDevice, CUstream stream,
             std::shared_ptr<DeviceAllocator> allocator);
  void checkRange(size_t offset, size_t n, const char *what) const;

  uint64_t ptr_;
  size_t size_;
  bool onDevice_;
  CUstream stream_;
  std::shared_ptr<DeviceAllocator> allocator_; // device memory only
  bool owned_ = true;
  int device_ = 0;

  friend std::shared_ptr<Allocation> allocateDevice(size_t, CUstream, FirstUse);
  friend std::shared_ptr<Allocation> allocateHost(size_t);
  friend std::shared_ptr<Allocation> wrapMemory(uint64_t, size_t, bool, int);
};

// Allocates `bytes` bytes (0 allowed: address 0, nothing allocated) of memory of the calling
// thread's current device with its allocator (see deviceAllocator()), for use in the order of
// `stream` (null: the default stream); `use` says whether the caller's first use is work on
// `stream` right away (which lets the pool allocator reuse a cached block,
// DeviceAllocator::allocateForUseNow). Contents are uninitialized. Throws DriverUnavailable,
// CudaError (e.g. CUDA_ERROR_OUT_OF_MEMORY).
std::shared_ptr<Allocation> allocateDevice(size_t bytes, CUstream stream = nullptr,
                                           FirstUse use = FirstUse::Unknown);

// numba-cuda's cuda.defer_cleanup(): while a deferral begun by beginDeferredCleanup() is open
// (any thread; they nest), the memory of Allocations destroyed is kept instead of given back,
// and endDeferredCleanup() closing the last one gives it all back (device memory in its
// stream's order, as ~Allocation does). So memory is not returned in the middle of timed or
// latency-sensitive work. Thread-safe; endDeferredCleanup never throws and ignores calls
// without an open deferral. deferredAllocationCount(): the allocations kept now (for tests).
void beginDeferredCleanup();
void endDeferredCleanup() noexcept;
size_t deferredAllocationCount();

// A host allocation that failed: a std::bad_alloc whose what() names the size asked for
// ("cannot allocate 8000000000000000 bytes (7.11 PiB) of host memory"), so that the user sees
// more than "std::bad_alloc".
class HostOutOfMemory : public std::bad_alloc {
public:
  explicit HostOutOfMemory(size_t bytes);
  const char *what() const noexcept override { return message_.c_str(); }
  size_t bytes() const { return bytes_; }

private:
  size_t bytes_;
  std::string message_;
};

// Allocates `bytes` bytes (0 allowed: hostPtr() null) of host memory aligned to
// kAllocationAlignment, for the CPU backend. Contents are uninitialized. Needs no driver.
// Throws HostOutOfMemory.
std::shared_ptr<Allocation> allocateHost(size_t bytes);

// An Allocation naming `bytes` bytes at `address` that belong to someone else (an array handed
// over through __cuda_array_interface__): device memory when `onDevice`, else host memory. The
// runtime copies to and from it like any allocation and never frees it; the caller keeps the
// memory's owner alive while the Allocation is in use. Device memory is device `device`'s, or
// the calling thread's current device's (Device::currentOrdinal()) when `device` is -1. Needs
// no driver. Never throws except std::bad_alloc.
std::shared_ptr<Allocation> wrapMemory(uint64_t address, size_t bytes, bool onDevice,
                                       int device = -1);

// The ordinal of the device whose memory holds `address`, asked of the driver
// (cuPointerGetAttribute): for device memory any library of this process allocated there
// (cuMemAlloc, memory pools, cudaMalloc, another process's memory opened through IPC). -1 when
// there is no one device to name: the driver knows no memory at `address`
// (CUDA_ERROR_INVALID_VALUE: e.g. unregistered host memory), or the memory is host memory
// (pinned or registered) or managed memory, which every device reaches; and, without asking the
// driver, whenever the process sees one device. Makes the calling thread's current device's
// context current first (the query needs one). Throws DriverUnavailable, CudaError for any
// other failure.
int deviceOfPointer(CUdeviceptr address);

// Copies n bytes from host `src` to device `dst`: asynchronous on a non-null `stream` (src must
// stay valid until done), else synchronous. n == 0 does nothing (after making the device context
// current). A large pageable `src` travels through the device's pinned ring
// (runtime/PinnedRing.h) when it can be had: taken for this copy, and the call returns once the
// copy is done, or through `held`, a use of the ring on the same stream that the caller keeps
// for several copies (HostStaging), whose copies end when it is released. Throws
// DriverUnavailable, CudaError.
void copyHostToDevice(CUdeviceptr dst, const void *src, size_t n, CUstream stream = nullptr,
                      PinnedRingUse *held = nullptr);

// Copies n bytes from device `src` to host `dst`; same rules (an asynchronous copy has finished
// only once the stream is synchronized; one to pageable memory, which the driver makes
// synchronous, and one through the ring have finished when the call returns).
void copyDeviceToHost(void *dst, CUdeviceptr src, size_t n, CUstream stream = nullptr,
                      PinnedRingUse *held = nullptr);

// Copies n bytes from device `src` to device `dst`; same rules.
void copyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream = nullptr);

// Copies n bytes from device `src` of device `srcDevice` to `dst` of device `dstDevice` (two
// different ordinals): with cuMemcpyPeer (cuMemcpyPeerAsync on a non-null `stream`, which must
// belong to the calling thread's current device) when the devices can access each other (peer
// access is then enabled from the destination to the source, once), else staged through host
// memory (synchronous; `stream` is synchronized first). Leaves the calling thread's current
// device as it was. Throws std::out_of_range for a bad ordinal, DriverUnavailable, CudaError.
void copyPeer(CUdeviceptr dst, int dstDevice, CUdeviceptr src, int srcDevice, size_t n,
              CUstream stream = nullptr);

// True when copyPeer between the two devices goes directly (cuDeviceCanAccessPeer both ways),
// false when it stages through the host. Throws as copyPeer.
bool peerCopyIsDirect(int dstDevice, int srcDevice);

// Sets n bytes of device memory at `dst` to `value`; same rules.
void fillDevice(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream = nullptr);

// Copies n bytes from `src` at `srcOffset` to `dst` at `dstOffset`, whatever memory each holds
// (host-host: memmove, no driver needed; between two devices' memory: copyPeer; otherwise the
// matching driver copy, asynchronous on a non-null stream). Throws std::out_of_range for a range
// past either end, DriverUnavailable, CudaError.
void copyAllocation(Allocation &dst, size_t dstOffset, const Allocation &src, size_t srcOffset,
                    size_t n, CUstream stream = nullptr);

} // namespace ptxjit::runtime
