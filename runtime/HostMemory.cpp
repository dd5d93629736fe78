#include "runtime/HostMemory.h"

#include "runtime/Device.h"

namespace ptxjit::runtime {

std::shared_ptr<HostMemory> HostMemory::allocate(Kind kind, size_t bytes, bool portable,
                                                 bool writeCombined, bool attachHost) {
  int ordinal = Device::current().ordinal();
  if (bytes == 0)
    return std::shared_ptr<HostMemory>(new HostMemory(kind, 0, nullptr, 0, ordinal));
  const DriverApi &d = driver();
  if (kind == Kind::Managed) {
    CUdeviceptr ptr = 0;
    check(d.cuMemAllocManaged(&ptr, bytes, attachHost ? CU_MEM_ATTACH_HOST : CU_MEM_ATTACH_GLOBAL),
          "cuMemAllocManaged");
    auto *raw = reinterpret_cast<void *>(ptr);
    try {
      return std::shared_ptr<HostMemory>(new HostMemory(kind, bytes, raw, ptr, ordinal));
    } catch (...) {
      d.cuMemFree_v2(ptr);
      throw;
    }
  }
  unsigned flags = (portable ? CU_MEMHOSTALLOC_PORTABLE : 0u) |
                   (kind == Kind::Mapped ? CU_MEMHOSTALLOC_DEVICEMAP : 0u) |
                   (kind == Kind::Mapped && writeCombined ? CU_MEMHOSTALLOC_WRITECOMBINED : 0u);
  void *host = nullptr;
  check(d.cuMemHostAlloc(&host, bytes, flags), "cuMemHostAlloc");
  CUdeviceptr device = 0;
  if (kind == Kind::Mapped) {
    CUresult r = d.cuMemHostGetDevicePointer_v2(&device, host, 0);
    if (r != CUDA_SUCCESS) {
      d.cuMemFreeHost(host);
      throwCudaError(r, "cuMemHostGetDevicePointer");
    }
  }
  try {
    return std::shared_ptr<HostMemory>(new HostMemory(kind, bytes, host, device, ordinal));
  } catch (...) {
    d.cuMemFreeHost(host);
    throw;
  }
}

HostMemory::~HostMemory() {
  if (!host_)
    return;
  Device::Cleanup in(ordinal_);
  if (!in)
    return;
  if (kind_ == Kind::Managed)
    driver().cuMemFree_v2(device_); // errors ignored
  else
    driver().cuMemFreeHost(host_);
}

CUdeviceptr registerHost(void *p, size_t bytes, bool deviceMap) {
  if (bytes == 0)
    return 0;
  Device::current();
  const DriverApi &d = driver();
  check(d.cuMemHostRegister_v2(p, bytes, deviceMap ? CU_MEMHOSTREGISTER_DEVICEMAP : 0),
        "cuMemHostRegister");
  if (!deviceMap)
    return 0;
  CUdeviceptr device = 0;
  CUresult r = d.cuMemHostGetDevicePointer_v2(&device, p, 0);
  if (r != CUDA_SUCCESS) {
    d.cuMemHostUnregister(p); // not left registered when its mapping fails
    throwCudaError(r, "cuMemHostGetDevicePointer");
  }
  return device;
}

void unregisterHost(void *p) {
  Device::current();
  check(driver().cuMemHostUnregister(p), "cuMemHostUnregister");
}

} // namespace ptxjit::runtime
