#include "runtime/Device.h"

namespace ptxjit::runtime {
namespace {

int getAttribute(const DriverApi &d, CUdevice dev, CUdevice_attribute attr) {
  int value = 0;
  check(d.cuDeviceGetAttribute(&value, attr, dev), "cuDeviceGetAttribute");
  return value;
}

unsigned positive(int v) { return v > 0 ? static_cast<unsigned>(v) : 0u; }

} // namespace

Device::Device() {
  const DriverApi &d = driver();
  check(d.cuDeviceGet(&device_, 0), "cuDeviceGet");
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
  // Retained once and never released: the primary context lives as long as the process.
  check(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
}

const Device &Device::current() {
  static const Device device; // thread-safe; re-attempted if the constructor threw
  device.makeCurrent();
  return device;
}

void Device::makeCurrent() const {
  const DriverApi &d = driver();
  CUcontext cur = nullptr;
  check(d.cuCtxGetCurrent(&cur), "cuCtxGetCurrent");
  if (cur != context_) [[unlikely]]
    check(d.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

const Device *Device::currentForCleanup() noexcept {
  if (driverShuttingDown() || !driverAvailable())
    return nullptr;
  try {
    return &current();
  } catch (...) {
    return nullptr;
  }
}

int Device::attribute(CUdevice_attribute attr) const {
  return getAttribute(driver(), device_, attr);
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
