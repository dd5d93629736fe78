#include "runtime/Memory.h"

#include "runtime/Device.h"
#include "runtime/DriverJobs.h"
#include "runtime/Fork.h"
#include "runtime/PinnedRing.h"
#include "runtime/StartupTrace.h"
#include "runtime/Stream.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxjit::runtime {
namespace {

class PlainAllocator final : public DeviceAllocator {
public:
  CUdeviceptr allocate(size_t bytes, CUstream) override {
    CUdeviceptr ptr = 0;
    check(driver().cuMemAlloc_v2(&ptr, bytes), "cuMemAlloc");
    return ptr;
  }
  void deallocate(CUdeviceptr ptr, size_t, CUstream) noexcept override {
    driver().cuMemFree_v2(ptr); // errors ignored (e.g. a sticky error from an earlier launch)
  }
  const char *name() const noexcept override { return "cuMemAlloc"; }
};

class PoolAllocator final : public DeviceAllocator {
public:
  // Device `dev`'s default pool, its release threshold raised (needs no current context).
  explicit PoolAllocator(const Device &dev) {
    if (!dev.memoryPoolsSupported())
      throw std::runtime_error("the device " + dev.name() +
                               " does not support stream-ordered memory pools");
    const DriverApi &d = driver();
    check(d.cuDeviceGetDefaultMemPool(&pool_, dev.handle()), "cuDeviceGetDefaultMemPool");
    poolDevice_ = dev.ordinal();
    // Keep freed memory in the pool instead of returning it to the OS at each synchronization.
    cuuint64_t threshold = std::numeric_limits<cuuint64_t>::max();
    check(d.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
          "cuMemPoolSetAttribute");
  }
  // The allocation is ordered on the caller's stream; the free always on the legacy default
  // stream: the stream an allocation was made on may be destroyed before the allocation is freed
  // (freeing on a destroyed stream crashes the driver), and work on other streams may still use
  // the memory. The legacy stream waits for all earlier work of every blocking stream (ptxjit's
  // Python streams are all blocking), so the free follows every use submitted before it, without
  // a host synchronization.
  //
  // Small blocks skip the driver (a cuMemAllocAsync and cuMemFreeAsync pair costs about 1 µs on
  // the host, a sixth of a small ufunc call): a freed block of at most kMaxCachedBlock bytes is
  // kept here, and allocateForUseNow on the legacy default stream takes one of its size class.
  // That is as safe as the free on the legacy stream it replaces, because the new owner's first
  // use is work on the legacy stream, which follows all earlier work of every blocking stream
  // (later work on other blocking streams follows that). Any other allocation comes from the
  // driver; its block returns here when freed.
  CUdeviceptr allocate(size_t bytes, CUstream stream) override {
    if (size_t cls = cacheClass(bytes))
      bytes = cls; // the block fits any request of its class when it comes back
    const DriverApi &d = driver();
    CUdeviceptr ptr = 0;
    CUresult r = d.cuMemAllocAsync(&ptr, bytes, stream);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && releaseCached())
      r = d.cuMemAllocAsync(&ptr, bytes, stream);
    check(r, "cuMemAllocAsync");
    return ptr;
  }
  void deallocate(CUdeviceptr ptr, size_t bytes, CUstream) noexcept override {
    if (size_t cls = cacheClass(bytes)) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cachedBytes_ + cls <= kMaxCachedBytes) {
        try {
          free_[cls].push_back(ptr);
          cachedBytes_ += cls;
          return;
        } catch (const std::bad_alloc &) {
          // give it back to the driver below
        }
      }
    }
    driver().cuMemFreeAsync(ptr, nullptr);
  }
  const char *name() const noexcept override { return "cuMemAllocAsync"; }
  CUdeviceptr allocateForUseNow(size_t bytes, CUstream stream) override {
    size_t cls = cacheClass(bytes);
    if (cls && !stream) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        CUdeviceptr ptr = it->second.back();
        it->second.pop_back();
        cachedBytes_ -= cls;
        return ptr;
      }
    }
    return allocate(bytes, stream);
  }

  // Blocks of up to this many bytes are kept for reuse, up to kMaxCachedBytes in all.
  static constexpr size_t kMaxCachedBlock = size_t(1) << 20;
  static constexpr size_t kMaxCachedBytes = size_t(64) << 20;

private:
  // The size class of a request: its size rounded up to 512 bytes, or 0 when not kept.
  static size_t cacheClass(size_t bytes) {
    size_t cls = (bytes + 511) / 512 * 512;
    return cls <= kMaxCachedBlock ? cls : 0;
  }
  // Frees every kept block (cuMemFreeAsync); false when none was kept.
  bool releaseCached() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cachedBytes_ == 0)
      return false;
    for (auto &[cls, blocks] : free_)
      for (CUdeviceptr ptr : blocks)
        driver().cuMemFreeAsync(ptr, nullptr);
    free_.clear();
    cachedBytes_ = 0;
    return true;
  }

  CUmemoryPool pool_ = nullptr;
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<CUdeviceptr>> free_; ///< by size class
  size_t cachedBytes_ = 0;
};

std::mutex gAllocatorMutex;
std::shared_ptr<DeviceAllocator> &currentAllocatorSlot() {
  static std::shared_ptr<DeviceAllocator> slot = plainDeviceAllocator();
  return slot;
}

[[maybe_unused]] const bool gForkHandlersRegistered = [] {
  registerForkLock(gAllocatorMutex); // a leaf: held to read or replace the allocator only
  return true;
}();

// Device `dev`'s pool allocator, made on first use (thread-safe). Never destroyed: a warm-up
// thread may still use it at exit.
std::shared_ptr<DeviceAllocator> &poolSlot(int ordinal) {
  static auto *pools = new std::shared_ptr<DeviceAllocator>[Device::kMaxDevices];
  return pools[ordinal];
}
std::mutex gPoolsMutex;
std::shared_ptr<DeviceAllocator> poolOf(const Device &dev) {
  std::lock_guard<std::mutex> lock(gPoolsMutex);
  std::shared_ptr<DeviceAllocator> &pool = poolSlot(dev.ordinal());
  if (!pool)
    pool = std::make_shared<PoolAllocator>(dev);
  return pool;
}

// On the warm-up thread: the pool's set-up (two driver calls) and first allocation (and its
// free), then the switch to the pool unless the allocator was replaced meanwhile. Errors leave
// the allocator as it is.
//
// The allocation and its free are ordered on a non-blocking stream of the warm-up's own, not on
// the legacy default stream: work on the legacy stream synchronizes with every blocking stream,
// which invalidates a capture under way on any of them (the process's other libraries' captures
// included, which nothing here could make wait), and would make the warm-up wait for their work.
// The free is queued after the allocation on that stream and the stream is destroyed without
// waiting (the driver releases it once its work is done): no call here synchronizes anything.
void warmUpPool(const Device *dev, std::shared_ptr<DeviceAllocator> before) noexcept {
  markStartupTraceBackgroundThread();
  StartupTimer timer("warming up the memory pool (its first allocation)");
  std::shared_ptr<DeviceAllocator> pool;
  const DriverApi *d = nullptr;
  CUstream own = nullptr;
  try {
    d = &driver();
    check(d->cuCtxSetCurrent(dev->context()), "cuCtxSetCurrent");
    pool = poolOf(*dev);
    check(d->cuStreamCreate(&own, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    CUdeviceptr ptr = pool->allocate(1, own);
    d->cuMemFreeAsync(ptr, own); // not kept by the pool allocator: its blocks are legacy-ordered
  } catch (...) {
    pool = nullptr;
  }
  if (own)
    d->cuStreamDestroy_v2(own);
  if (!pool)
    return;
  std::lock_guard<std::mutex> lock(gAllocatorMutex);
  if (currentAllocatorSlot() == before)
    currentAllocatorSlot() = std::move(pool);
}

[[noreturn]] void throwRange(const char *what, size_t offset, size_t n, size_t size) {
  throw std::out_of_range(std::string(what) + ": bytes [" + std::to_string(offset) + ", " +
                          std::to_string(offset) + " + " + std::to_string(n) +
                          ") exceed the allocation's " + std::to_string(size) + " bytes");
}

} // namespace

std::shared_ptr<DeviceAllocator> plainDeviceAllocator() {
  static const std::shared_ptr<DeviceAllocator> plain = std::make_shared<PlainAllocator>();
  return plain;
}

std::shared_ptr<DeviceAllocator> poolDeviceAllocator() {
  // Device::current() outside the pools' lock: it may wait for a background opening
  // (Device::openInBackground) whose afterOpen starts a warm-up, which takes that lock.
  return poolOf(Device::current());
}

bool usePoolAllocatorAfterWarmUp() {
  const Device *dev = nullptr;
  try {
    dev = &Device::current();
  } catch (const std::exception &) {
    return false; // no device
  }
  if (!dev->memoryPoolsSupported())
    return false;
  std::shared_ptr<DeviceAllocator> before = deviceAllocator();
  {
    std::lock_guard<std::mutex> lock(gPoolsMutex);
    if (before && before == poolSlot(dev->ordinal()))
      return true; // the pool is in use already
  }
  // The warm-up thread (runtime/DriverJobs.h: joined at exit, started after cuInit since
  // Device::current() above succeeded).
  if (startDriverJob(DriverJob::PoolWarmUp, [dev, before] { warmUpPool(dev, before); }))
    return true;
  // No thread: the set-up here, and the first allocation pays for the warm-up.
  try {
    setDeviceAllocator(poolOf(*dev));
  } catch (const std::exception &) {
    return false;
  }
  return true;
}

void joinPoolWarmUp() { joinDriverJob(DriverJob::PoolWarmUp); }

std::shared_ptr<DeviceAllocator> deviceAllocator() {
  std::lock_guard<std::mutex> lock(gAllocatorMutex);
  return currentAllocatorSlot();
}

void setDeviceAllocator(std::shared_ptr<DeviceAllocator> allocator) {
  if (!allocator)
    allocator = plainDeviceAllocator();
  std::lock_guard<std::mutex> lock(gAllocatorMutex);
  currentAllocatorSlot() = std::move(allocator);
}

Allocation::Allocation(uint64_t ptr, size_t size, bool onDevice, CUstream stream,
                       std::shared_ptr<DeviceAllocator> allocator)
    : ptr_(ptr), size_(size), onDevice_(onDevice), stream_(stream),
      allocator_(std::move(allocator)) {}

namespace {

// What an Allocation gives back, kept while cleanup is deferred (beginDeferredCleanup).
struct Released {
  uint64_t ptr;
  size_t size;
  bool onDevice;
  CUstream stream;
  std::shared_ptr<DeviceAllocator> allocator;
  int device;
};

void giveBack(const Released &r) noexcept {
  if (!r.onDevice) {
    std::free(reinterpret_cast<void *>(r.ptr));
    return;
  }
  if (Device::Cleanup in{r.device})
    r.allocator->deallocate(r.ptr, r.size, r.stream);
}

struct Deferred {
  std::mutex mutex;
  int depth = 0; // open defer_cleanup() blocks, all threads
  std::vector<Released> kept;
};

Deferred &deferred() {
  static Deferred *d = new Deferred; // never destroyed: allocations may die during exit
  return *d;
}

} // namespace

void beginDeferredCleanup() {
  Deferred &d = deferred();
  std::lock_guard<std::mutex> lock(d.mutex);
  ++d.depth;
}

void endDeferredCleanup() noexcept {
  Deferred &d = deferred();
  std::vector<Released> kept;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (d.depth > 0 && --d.depth == 0)
      kept.swap(d.kept);
  }
  for (const Released &r : kept) // outside the lock: a deallocation may take time
    giveBack(r);
}

size_t deferredAllocationCount() {
  Deferred &d = deferred();
  std::lock_guard<std::mutex> lock(d.mutex);
  return d.kept.size();
}

Allocation::~Allocation() {
  if (ptr_ == 0 || !owned_)
    return;
  Released r{ptr_, size_, onDevice_, stream_, std::move(allocator_), device_};
  Deferred &d = deferred();
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (d.depth > 0) {
      try {
        d.kept.push_back(std::move(r));
        return;
      } catch (const std::bad_alloc &) { // no room to keep it: given back now
      }
    }
  }
  giveBack(r);
}

void Allocation::checkRange(size_t offset, size_t n, const char *what) const {
  if (offset > size_ || n > size_ - offset)
    throwRange(what, offset, n, size_);
}

namespace {

// Runs `op` (a synchronous driver call) in the context of `device`, the owner of the memory,
// after the caller's `stream` (of the calling thread's current device) is done. Memory from a
// device's stream-ordered pool is mapped for that device only (and for peers it was granted
// to), so the driver refuses copies of it made in another device's context.
template <class Op> void onOwningDevice(int device, CUstream stream, Op &&op) {
  if (stream) {
    Device::current();
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  Device::Cleanup in{device}; // the owner's context current; the caller's again afterwards
  if (!in)
    throw std::runtime_error("the memory's device " + std::to_string(device) +
                             " cannot be made current");
  op(driver());
}

} // namespace

void Allocation::upload(const void *src, size_t n, size_t offset, CUstream stream) {
  checkRange(offset, n, "Allocation::upload");
  if (!onDevice_) {
    if (n)
      std::memmove(reinterpret_cast<char *>(ptr_) + offset, src, n);
  } else if (device_ == Device::currentOrdinal() || n == 0) {
    copyHostToDevice(ptr_ + offset, src, n, stream);
  } else {
    onOwningDevice(device_, stream, [&](const DriverApi &d) {
      check(d.cuMemcpyHtoD_v2(ptr_ + offset, src, n), "cuMemcpyHtoD");
    });
  }
}

void Allocation::download(void *dst, size_t n, size_t offset, CUstream stream) const {
  checkRange(offset, n, "Allocation::download");
  if (!onDevice_) {
    if (n)
      std::memmove(dst, reinterpret_cast<const char *>(ptr_) + offset, n);
  } else if (device_ == Device::currentOrdinal() || n == 0) {
    copyDeviceToHost(dst, ptr_ + offset, n, stream);
  } else {
    onOwningDevice(device_, stream, [&](const DriverApi &d) {
      check(d.cuMemcpyDtoH_v2(dst, ptr_ + offset, n), "cuMemcpyDtoH");
    });
  }
}

void Allocation::fill(unsigned char value, size_t n, size_t offset, CUstream stream) {
  checkRange(offset, n, "Allocation::fill");
  if (!onDevice_) {
    if (n)
      std::memset(reinterpret_cast<char *>(ptr_) + offset, value, n);
  } else if (device_ == Device::currentOrdinal() || n == 0) {
    fillDevice(ptr_ + offset, value, n, stream);
  } else {
    onOwningDevice(device_, stream, [&](const DriverApi &d) {
      check(d.cuMemsetD8_v2(ptr_ + offset, value, n), "cuMemsetD8");
    });
  }
}

std::shared_ptr<Allocation> allocateDevice(size_t bytes, CUstream stream, FirstUse use) {
  int ordinal = Device::current().ordinal();
  if (bytes == 0) {
    std::shared_ptr<Allocation> empty(new Allocation(0, 0, true, stream, nullptr));
    empty->device_ = ordinal;
    return empty;
  }
  std::shared_ptr<DeviceAllocator> allocator = deviceAllocator();
  // A device's pool serves that device only: another device takes its own pool, or plain
  // cuMemAlloc when its pool cannot be used (no memory pools there).
  if (int pooled = allocator->poolDevice(); pooled >= 0 && pooled != ordinal) [[unlikely]] {
    try {
      allocator = poolDeviceAllocator();
    } catch (const std::runtime_error &) {
      allocator = plainDeviceAllocator(); // no memory pools on this device
    }
  }
  CUdeviceptr ptr = use == FirstUse::OnStreamNow ? allocator->allocateForUseNow(bytes, stream)
                                                 : allocator->allocate(bytes, stream);
  try {
    std::shared_ptr<Allocation> a(new Allocation(ptr, bytes, true, stream, allocator));
    a->device_ = ordinal;
    return a;
  } catch (...) {
    allocator->deallocate(ptr, bytes, stream);
    throw;
  }
}

HostOutOfMemory::HostOutOfMemory(size_t bytes) : bytes_(bytes) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char scaled[32];
  std::snprintf(scaled, sizeof scaled, "%.3g %s", v, units[u]);
  message_ = "cannot allocate " + std::to_string(bytes) + " bytes (" + scaled +
             ") of host memory for the CPU backend";
}

std::shared_ptr<Allocation> allocateHost(size_t bytes) {
  if (bytes == 0)
    return std::shared_ptr<Allocation>(new Allocation(0, 0, false, nullptr, nullptr));
  if (bytes > std::numeric_limits<size_t>::max() - kAllocationAlignment)
    throw HostOutOfMemory(bytes);
  size_t rounded = (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  void *p = std::aligned_alloc(kAllocationAlignment, rounded);
  if (!p)
    throw HostOutOfMemory(bytes);
  try {
    return std::shared_ptr<Allocation>(
        new Allocation(reinterpret_cast<uint64_t>(p), bytes, false, nullptr, nullptr));
  } catch (...) {
    std::free(p);
    throw;
  }
}

std::shared_ptr<Allocation> wrapMemory(uint64_t address, size_t bytes, bool onDevice, int device) {
  std::shared_ptr<Allocation> a(new Allocation(address, bytes, onDevice, nullptr, nullptr));
  a->owned_ = false;
  if (onDevice)
    a->device_ = device >= 0 ? device : Device::currentOrdinal();
  return a;
}

int deviceOfPointer(CUdeviceptr address) {
  // With one device visible there is nothing to tell apart: the memory is the current device's
  // or reachable from it. So a one-GPU process (the common case) makes no driver call here for
  // each foreign argument of a ufunc. The count cannot change once the driver is initialized.
  static const int devices = Device::count();
  if (devices == 1)
    return -1;
  Device::current();
  const DriverApi &d = driver();
  CUmemorytype type = CU_MEMORYTYPE_HOST;
  CUresult r = d.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
  if (r == CUDA_ERROR_INVALID_VALUE) // not memory the driver knows
    return -1;
  check(r, "cuPointerGetAttribute");
  if (type != CU_MEMORYTYPE_DEVICE)
    return -1;
  // Managed memory reports the device type too, and the device current at its allocation as
  // its ordinal; every device reaches it, so it names no device. (Zeroed: the driver may write
  // a one-byte boolean.)
  unsigned int managed = 0;
  check(d.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, address),
        "cuPointerGetAttribute");
  if (managed)
    return -1;
  int ordinal = -1;
  check(d.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address),
        "cuPointerGetAttribute");
  return ordinal;
}

void copyHostToDevice(CUdeviceptr dst, const void *src, size_t n, CUstream stream,
                      PinnedRingUse *held) {
  Device::current();
  if (n == 0)
    return;
  if (n >= kPinnedStagingMinBytes && PinnedRingUse::wanted(src, n)) {
    PinnedRingUse oneCopy(stream); // gives the ring back when the copy is done
    PinnedRingUse &ring = held ? *held : oneCopy;
    if (ring.take()) {
      ring.copyIn(dst, src, n);
      return;
    }
  }
  const DriverApi &d = driver();
  if (stream) {
    check(d.cuMemcpyHtoDAsync_v2(dst, src, n, stream), "cuMemcpyHtoDAsync");
    joinLegacyStreamAfter(stream);
  } else {
    check(d.cuMemcpyHtoD_v2(dst, src, n), "cuMemcpyHtoD");
  }
}

void copyDeviceToHost(void *dst, CUdeviceptr src, size_t n, CUstream stream, PinnedRingUse *held) {
  Device::current();
  if (n == 0)
    return;
  if (n >= kPinnedStagingMinBytes && PinnedRingUse::wanted(dst, n)) {
    PinnedRingUse oneCopy(stream);
    PinnedRingUse &ring = held ? *held : oneCopy;
    if (ring.take()) {
      ring.copyBack(dst, src, n);
      return;
    }
  }
  const DriverApi &d = driver();
  if (stream) {
    check(d.cuMemcpyDtoHAsync_v2(dst, src, n, stream), "cuMemcpyDtoHAsync");
    joinLegacyStreamAfter(stream);
  } else {
    check(d.cuMemcpyDtoH_v2(dst, src, n), "cuMemcpyDtoH");
  }
}

void copyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream) {
  Device::current();
  if (n == 0)
    return;
  const DriverApi &d = driver();
  if (stream) {
    check(d.cuMemcpyDtoDAsync_v2(dst, src, n, stream), "cuMemcpyDtoDAsync");
    joinLegacyStreamAfter(stream);
  } else {
    check(d.cuMemcpyDtoD_v2(dst, src, n), "cuMemcpyDtoD");
  }
}

bool peerCopyIsDirect(int dstDevice, int srcDevice) {
  const Device &dst = Device::get(dstDevice);
  Device::get(srcDevice);
  return dst.peerAccessEnabled(srcDevice) ||
         (dst.canAccessPeer(srcDevice) && Device::get(srcDevice).canAccessPeer(dstDevice));
}

void copyPeer(CUdeviceptr dst, int dstDevice, CUdeviceptr src, int srcDevice, size_t n,
              CUstream stream) {
  const Device &to = Device::get(dstDevice);
  const Device &from = Device::get(srcDevice);
  if (n == 0)
    return;
  const DriverApi &d = driver();
  if (peerCopyIsDirect(dstDevice, srcDevice)) {
    to.enablePeerAccess(srcDevice); // returns with the caller's device current again
    Device::current();
    if (stream) {
      check(d.cuMemcpyPeerAsync(dst, to.context(), src, from.context(), n, stream),
            "cuMemcpyPeerAsync");
      joinLegacyStreamAfter(stream);
      return;
    }
    check(d.cuMemcpyPeer(dst, to.context(), src, from.context(), n), "cuMemcpyPeer");
    return;
  }
  // No peer path: through host memory, each half in its own device's context.
  std::unique_ptr<char[]> staging(new char[n]);
  onOwningDevice(srcDevice, stream, [&](const DriverApi &api) {
    check(api.cuMemcpyDtoH_v2(staging.get(), src, n), "cuMemcpyDtoH");
  });
  onOwningDevice(dstDevice, nullptr, [&](const DriverApi &api) {
    check(api.cuMemcpyHtoD_v2(dst, staging.get(), n), "cuMemcpyHtoD");
  });
}

void fillDevice(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream) {
  Device::current();
  if (n == 0)
    return;
  const DriverApi &d = driver();
  if (stream) {
    check(d.cuMemsetD8Async(dst, value, n, stream), "cuMemsetD8Async");
    joinLegacyStreamAfter(stream);
  } else {
    check(d.cuMemsetD8_v2(dst, value, n), "cuMemsetD8");
  }
}

void copyAllocation(Allocation &dst, size_t dstOffset, const Allocation &src, size_t srcOffset,
                    size_t n, CUstream stream) {
  if (dstOffset > dst.size() || n > dst.size() - dstOffset)
    throwRange("copyAllocation (destination)", dstOffset, n, dst.size());
  if (srcOffset > src.size() || n > src.size() - srcOffset)
    throwRange("copyAllocation (source)", srcOffset, n, src.size());
  uint64_t to = dst.address() + dstOffset, from = src.address() + srcOffset;
  if (!dst.onDevice() && !src.onDevice()) {
    if (n)
      std::memmove(reinterpret_cast<void *>(to), reinterpret_cast<const void *>(from), n);
  } else if (dst.onDevice() && src.onDevice()) {
    if (dst.device() != src.device()) [[unlikely]]
      copyPeer(to, dst.device(), from, src.device(), n, stream);
    else
      copyDeviceToDevice(to, from, n, stream);
  } else if (dst.onDevice()) {
    copyHostToDevice(to, reinterpret_cast<const void *>(from), n, stream);
  } else {
    copyDeviceToHost(reinterpret_cast<void *>(to), from, n, stream);
  }
}

} // namespace ptxjit::runtime
