#include "runtime/Device.h"

#include "runtime/DriverJobs.h"
#include "runtime/Fork.h"
#include "runtime/StartupTrace.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace ptxjit::runtime {
namespace {

// The open devices by ordinal, each published once it (and, for device 0, a background
// opening's afterOpen) is complete. Never destroyed: primary contexts are retained for the life
// of the process.
std::atomic<const Device *> gDevices[Device::kMaxDevices];

// The calling thread's current device ordinal (Device::select).
thread_local int tOrdinal = 0;

// A background opening (Device::openInBackground), and the lock every opening takes.
struct Opener {
  std::mutex mutex; // held by synchronous openings, and to read or change the fields
  std::condition_variable done;
  int ordinal = 0;          // the device of the last background opening
  bool running = false;     // a background opening is under way (a DriverJob::DeviceOpening)
  std::exception_ptr error; // what it threw, for the next waiter to rethrow
};

// Never destroyed: the opener thread may use it at exit. Replaced in a forked child
// (forgetInChild).
std::atomic<Opener *> gOpener{new Opener};

Opener &opener() { return *gOpener.load(std::memory_order_acquire); }

// PTXJIT_STACK_SIZE: bytes of stack per GPU thread for every device's context (CUDA's default
// is 1 KiB; recursion and compute-sanitizer's instrumented frames may need more). nullopt when
// unset or empty. Throws std::invalid_argument for anything but a positive decimal integer.
std::optional<size_t> stackSizeSetting() {
  const char *env = std::getenv("PTXJIT_STACK_SIZE");
  if (!env || !*env)
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(env, &end, 10);
  if (*env == '-' || !end || *end != '\0' || errno == ERANGE || v == 0)
    throw std::invalid_argument(std::string("PTXJIT_STACK_SIZE=") + env +
                                " is not a stack size: give the bytes per GPU thread as a "
                                "positive integer (CUDA's default is 1024)");
  return static_cast<size_t>(v);
}

// Sets context `ctx`'s per-thread stack to `bytes` (cuCtxSetLimit acts on the current context,
// so `ctx` is made current for the call and the thread's previous context restored). Throws
// CudaError naming the setting when the driver refuses (a size beyond the device's limit, or
// local memory for every resident thread that cannot be reserved).
void setStackSize(const DriverApi &d, CUcontext ctx, size_t bytes) {
  CUcontext previous = nullptr;
  check(d.cuCtxGetCurrent(&previous), "cuCtxGetCurrent");
  check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUresult r = d.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, bytes);
  d.cuCtxSetCurrent(previous); // restoring what was current cannot fail in a useful way
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuCtxSetLimit(CU_LIMIT_STACK_SIZE, " + std::to_string(bytes) + ")",
                    "from PTXJIT_STACK_SIZE: the driver refused this per-thread stack size");
}

// On the background opener, once its device is built: what Device::current() returns there (for
// afterOpen), as the device is published only when afterOpen has finished.
thread_local const Device *tOpening = nullptr;

// The child handler of fork() (runtime/Fork.h): the opener thread of the parent, and whatever it
// was doing, are not in the child, whose CUDA is unusable anyway (driver() refuses it). A fresh
// opener (and lock) keeps any later caller from waiting for them (runtime/DriverJobs.h forgets
// the thread itself); the old one is leaked.
void forgetInChild() { gOpener.store(new Opener, std::memory_order_release); }

// Serializes deviceComputeCapability()'s cache; held while the driver may be loaded.
std::mutex gComputeCapabilityMutex;

[[maybe_unused]] const bool gForkHandlersRegistered = [] {
  onForkChild(forgetInChild);
  registerForkLock(gComputeCapabilityMutex, kForkComputeCapability);
  return true;
}();

int getAttribute(const DriverApi &d, CUdevice dev, CUdevice_attribute attr) {
  int value = 0;
  check(d.cuDeviceGetAttribute(&value, attr, dev), "cuDeviceGetAttribute");
  return value;
}

unsigned positive(int v) { return v > 0 ? static_cast<unsigned>(v) : 0u; }

} // namespace

Device::Device(int ordinal) : ordinal_(ordinal) {
  const DriverApi &d = driver();
  check(d.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  char buf[256] = {};
  check(d.cuDeviceGetName(buf, static_cast<int>(sizeof(buf) - 1), device_), "cuDeviceGetName");
  name_ = buf;
  ccMajor_ = getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  ccMinor_ = getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  smCount_ = getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  warpSize_ = getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  maxThreadsPerBlock_ =
      positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  maxBlockDim_ = {positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)),
                  positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)),
                  positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z))};
  maxGridDim_ = {positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)),
                 positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)),
                 positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z))};
  sharedPerBlock_ =
      positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  sharedPerBlockOptin_ =
      positive(getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  if (sharedPerBlockOptin_ < sharedPerBlock_)
    sharedPerBlockOptin_ = sharedPerBlock_;
  memoryPools_ = getAttribute(d, device_, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
  check(d.cuDeviceTotalMem_v2(&totalMemory_, device_), "cuDeviceTotalMem");
  limits_.maxThreadsPerBlock = maxThreadsPerBlock_;
  limits_.maxBlockDim = maxBlockDim_;
  limits_.maxGridDim = maxGridDim_;
  // Retained once and never released: the primary context lives as long as the process.
  std::optional<size_t> stack = stackSizeSetting(); // a bad setting fails before the retain
  {
    StartupTimer timer("cuDevicePrimaryCtxRetain");
    check(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  }
  if (stack) {
    try {
      setStackSize(d, context_, *stack);
    } catch (...) {
      d.cuDevicePrimaryCtxRelease_v2(device_); // the opening fails: nothing stays retained
      throw;
    }
  }
}

const Device &Device::current() { return current(tOrdinal); }

const Device &Device::current(int ordinal) {
  const Device *device = gDevices[ordinal].load(std::memory_order_acquire);
  if (!device) [[unlikely]]
    device = &openOrWait(ordinal);
  device->makeCurrent();
  return *device;
}

int Device::currentOrdinal() noexcept { return tOrdinal; }

int Device::count() {
  int n = 0;
  check(driver().cuDeviceGetCount(&n), "cuDeviceGetCount");
  return n < kMaxDevices ? n : kMaxDevices;
}

const Device &Device::get(int ordinal) {
  // An open device needs no driver call (destructors come through here for every free).
  if (ordinal >= 0 && ordinal < kMaxDevices)
    if (const Device *device = gDevices[ordinal].load(std::memory_order_acquire)) [[likely]]
      return *device;
  if (ordinal < 0 || ordinal >= count()) {
    int n = count();
    throw std::out_of_range("no CUDA device " + std::to_string(ordinal) + ": " + std::to_string(n) +
                            " device" + (n == 1 ? " is" : "s are") + " visible (ordinals 0 to " +
                            std::to_string(n - 1) + "; see CUDA_VISIBLE_DEVICES)");
  }
  return openOrWait(ordinal);
}

const Device &Device::select(int ordinal) {
  const Device &device = get(ordinal);
  device.makeCurrent();
  tOrdinal = ordinal;
  return device;
}

const Device &Device::openOrWait(int ordinal) {
  // Before any wait: in a child forked after the driver was loaded this throws ForkedAfterInit
  // (a background opening of the parent would otherwise be waited for in vain).
  driver();
  if (tOpening && tOpening->ordinal() == ordinal) // afterOpen on the background opener
    return *tOpening;
  Opener &o = opener();
  std::unique_lock<std::mutex> lock(o.mutex);
  if (o.ordinal == ordinal) { // this device was (or is being) opened in the background
    if (o.running) {
      StartupTimer timer("waiting for the background device opening");
      o.done.wait(lock, [&] { return !o.running; });
    }
    // The opener is not joined here: it set running = false as its last step but may still be
    // exiting, and this caller need not wait for that (the next openInBackground or the exit
    // handler of runtime/DriverJobs.h joins it).
    if (o.error)
      std::rethrow_exception(std::exchange(o.error, nullptr));
  }
  if (const Device *device = gDevices[ordinal].load(std::memory_order_acquire))
    return *device;
  // Open here, under the lock, so that concurrent callers wait for it and a background opening
  // cannot start meanwhile. A throw leaves nothing published and the next call tries again.
  StartupTimer timer("opening the device");
  const Device *device = new Device(ordinal);
  gDevices[ordinal].store(device, std::memory_order_release);
  return *device;
}

void Device::openInBackground(void (*afterOpen)()) {
  if (!driverAvailable())
    return;
  const int ordinal = tOrdinal;
  Opener &o = opener();
  {
    std::lock_guard<std::mutex> lock(o.mutex);
    if (!o.running && !o.error && !gDevices[ordinal].load(std::memory_order_acquire)) {
      o.running = true;
      o.ordinal = ordinal;
      // After cuInit (driverAvailable() above), as runtime/DriverJobs.h asks. The previous
      // opener, if any, set running = false as its last step: joining it here cannot wait long.
      bool started = false;
      try {
        started = startDriverJob(DriverJob::DeviceOpening, [afterOpen, ordinal] {
          markStartupTraceBackgroundThread();
          tOrdinal = ordinal; // what Device::current() means in afterOpen
          const Device *device = nullptr;
          std::exception_ptr error;
          try {
            StartupTimer timer("opening the device");
            std::unique_ptr<Device> built(new Device(ordinal));
            built->makeCurrent();
            device = built.release();
            if (afterOpen) {
              tOpening = device;
              StartupTimer hookTimer("after opening (memory pool set-up)");
              afterOpen();
            }
          } catch (...) {
            error = std::current_exception();
          }
          tOpening = nullptr;
          Opener &op = opener();
          {
            std::lock_guard<std::mutex> guard(op.mutex);
            if (device)
              gDevices[ordinal].store(device, std::memory_order_release);
            op.error = error;
            op.running = false;
          }
          op.done.notify_all();
        });
      } catch (...) { // std::bad_alloc
        o.running = false;
        throw;
      }
      if (started)
        return;
      o.running = false; // no thread to be had: open here, below
    }
  }
  // Open already, being opened, or no thread for it: what the background thread would have done,
  // here.
  current();
  if (afterOpen)
    afterOpen();
}

void Device::makeCurrent() const {
  const DriverApi &d = driver();
  CUcontext cur = nullptr;
  check(d.cuCtxGetCurrent(&cur), "cuCtxGetCurrent");
  if (cur != context_) [[unlikely]]
    check(d.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

Device::Cleanup::Cleanup(int ordinal) noexcept {
  if (driverShuttingDown() || !driverAvailable())
    return;
  try {
    const Device &device = get(ordinal);
    const DriverApi &d = driver();
    if (d.cuCtxGetCurrent(&previous_) != CUDA_SUCCESS)
      return;
    if (previous_ != device.context()) {
      if (d.cuCtxSetCurrent(device.context()) != CUDA_SUCCESS)
        return;
      switched_ = true;
    }
    device_ = &device;
  } catch (...) {
    device_ = nullptr;
  }
}

Device::Cleanup::~Cleanup() {
  if (switched_)
    driver().cuCtxSetCurrent(previous_); // errors ignored: nothing sensible to do here
}

Device::Selection::Selection(int ordinal) : back_(currentOrdinal()) {
  if (ordinal == back_)
    return;
  select(ordinal);
  switched_ = true;
}

Device::Selection::~Selection() {
  if (switched_)
    try {
      select(back_);
    } catch (...) { // the earlier device opened before, so only a failing driver gets here
    }
}

void Device::Selection::restore() {
  if (!switched_)
    return;
  switched_ = false;
  select(back_);
}

std::string Device::uuid() const {
  const DriverApi &d = driver();
  if (!d.cuDeviceGetUuid_v2)
    throw DriverUnavailable("the CUDA driver has no cuDeviceGetUuid_v2 (CUDA 11.4 or newer is "
                            "needed for Device.uuid)");
  CUuuid id{};
  check(d.cuDeviceGetUuid_v2(&id, device_), "cuDeviceGetUuid");
  static const char digits[] = "0123456789abcdef";
  std::string out = "GPU-";
  for (int k = 0; k < 16; ++k) {
    if (k == 4 || k == 6 || k == 8 || k == 10)
      out += '-';
    auto byte = static_cast<unsigned char>(id.bytes[k]);
    out += digits[byte >> 4];
    out += digits[byte & 15];
  }
  return out;
}

int Device::attribute(CUdevice_attribute attr) const {
  return getAttribute(driver(), device_, attr);
}

bool Device::canAccessPeer(int peer) const {
  const Device &other = get(peer);
  if (peer == ordinal_)
    return false;
  int can = 0;
  check(driver().cuDeviceCanAccessPeer(&can, device_, other.handle()), "cuDeviceCanAccessPeer");
  return can != 0;
}

void Device::enablePeerAccess(int peer) const {
  const Device &other = get(peer);
  if (peer == ordinal_)
    throw std::out_of_range("peer access of device " + std::to_string(peer) +
                            " to itself: give another device's ordinal");
  if (peerAccessEnabled(peer))
    return;
  makeCurrent(); // cuCtxEnablePeerAccess acts for the current context
  CUresult r = driver().cuCtxEnablePeerAccess(other.context(), 0);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    throw CudaError(r, "cuCtxEnablePeerAccess",
                    "from device " + std::to_string(ordinal_) + " to device " +
                        std::to_string(peer));
  // Memory from the peer's stream-ordered pool (where ptxjit allocates) is not covered by
  // cuCtxEnablePeerAccess: grant it to this device too, or its kernels fault on the peer's arrays.
  const DriverApi &d = driver();
  if (d.cuMemPoolSetAccess && other.memoryPoolsSupported()) {
    CUmemoryPool pool = nullptr;
    check(d.cuDeviceGetDefaultMemPool(&pool, other.handle()), "cuDeviceGetDefaultMemPool");
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = ordinal_;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = d.cuMemPoolSetAccess(pool, &access, 1);
    if (r != CUDA_SUCCESS)
      throw CudaError(r, "cuMemPoolSetAccess",
                      "device " + std::to_string(ordinal_) + " to device " + std::to_string(peer) +
                          "'s memory pool");
  }
  peers_.fetch_or(1u << peer, std::memory_order_acq_rel);
  current(); // back to the calling thread's own device
}

ComputeCapability deviceComputeCapability() {
  static std::optional<ComputeCapability> known;
  std::lock_guard<std::mutex> lock(gComputeCapabilityMutex);
  if (known)
    return *known;
  // The oldest of the visible devices: PTX for it loads on every newer one (the driver compiles
  // it for the device at cuModuleLoadData), so one compiled kernel serves every device.
  std::optional<ComputeCapability> oldest;
  for (int ordinal = 0, n = Device::count(); ordinal < n; ++ordinal) {
    ComputeCapability cc;
    if (const Device *device = gDevices[ordinal].load(std::memory_order_acquire)) {
      cc = {device->computeCapabilityMajor(), device->computeCapabilityMinor()};
    } else {
      const DriverApi &d = driver();
      CUdevice dev = 0;
      check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
      cc = {getAttribute(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            getAttribute(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)};
    }
    if (!oldest || cc.major * 10 + cc.minor < oldest->major * 10 + oldest->minor)
      oldest = cc;
  }
  if (!oldest)
    throw DriverUnavailable("the CUDA driver reports no device");
  known = oldest;
  return *oldest;
}

DeviceSummary describeDevice(int ordinal) {
  if (ordinal >= 0 && ordinal < Device::kMaxDevices)
    if (const Device *device = gDevices[ordinal].load(std::memory_order_acquire))
      return {device->name(), device->computeCapabilityMajor(), device->computeCapabilityMinor()};
  int n = Device::count();
  if (ordinal < 0 || ordinal >= n)
    return {Device::get(ordinal).name(), 0, 0}; // throws the out_of_range of a bad ordinal
  const DriverApi &d = driver();
  CUdevice dev = 0;
  check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  char buf[256] = {};
  check(d.cuDeviceGetName(buf, static_cast<int>(sizeof(buf) - 1), dev), "cuDeviceGetName");
  return {buf, getAttribute(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
          getAttribute(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)};
}

void synchronize() {
  Device::current();
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

MemoryInfo memoryInfo() {
  Device::current();
  MemoryInfo info;
  check(driver().cuMemGetInfo_v2(&info.free, &info.total), "cuMemGetInfo");
  return info;
}

} // namespace ptxjit::runtime
