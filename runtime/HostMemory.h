// Page-locked ("pinned") and unified host memory: what cuda.pinned_array, cuda.mapped_array,
// cuda.managed_array and cuda.pinned use. Copies between pinned memory and the device on a
// stream run asynchronously (the driver need not stage pageable memory through a buffer of its
// own), and mapped or managed memory is addressable from kernels.
#pragma once

#include "runtime/Driver.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ptxjit::runtime {

// A block of host memory that the driver page-locked or manages, freed on destruction (skipped
// once the process is exiting). Not copyable.
class HostMemory {
public:
  enum class Kind : uint8_t {
    Pinned,  ///< cuMemHostAlloc: page-locked, host only
    Mapped,  ///< cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP: also addressable by kernels
    Managed, ///< cuMemAllocManaged: unified memory, migrated on demand
  };

  // Allocates `bytes` bytes (0 allowed: no memory, null addresses). Pinned and mapped memory may
  // be `portable` (CU_MEMHOSTALLOC_PORTABLE: pinned for every context) and, for mapped memory,
  // `writeCombined` (CU_MEMHOSTALLOC_WRITECOMBINED: fast for the device to read, slow for the
  // host to read). Managed memory is attached globally (CU_MEM_ATTACH_GLOBAL) unless
  // `attachHost` (CU_MEM_ATTACH_HOST). Makes the device context current first. Throws
  // DriverUnavailable, CudaError (e.g. CUDA_ERROR_OUT_OF_MEMORY).
  static std::shared_ptr<HostMemory> allocate(Kind kind, size_t bytes, bool portable = false,
                                              bool writeCombined = false, bool attachHost = false);
  ~HostMemory();
  HostMemory(const HostMemory &) = delete;
  HostMemory &operator=(const HostMemory &) = delete;

  Kind kind() const noexcept { return kind_; }
  size_t size() const noexcept { return size_; }
  // The host address (null when empty).
  void *hostPtr() const noexcept { return host_; }
  // The address kernels use: the mapped device address (Mapped), the same address (Managed),
  // 0 for Pinned memory or an empty block.
  CUdeviceptr devicePtr() const noexcept { return device_; }

private:
  HostMemory(Kind kind, size_t size, void *host, CUdeviceptr device, int ordinal)
      : kind_(kind), size_(size), host_(host), device_(device), ordinal_(ordinal) {}
  Kind kind_;
  size_t size_;
  void *host_;
  CUdeviceptr device_;
  int ordinal_; // the device whose context allocated it (and frees it)
};

// Page-locks `bytes` bytes of existing host memory at `p` (cuMemHostRegister) so that copies
// from and to it run asynchronously; with `deviceMap` (CU_MEMHOSTREGISTER_DEVICEMAP) also maps
// it for kernels and returns its device address (cuMemHostGetDevicePointer), else 0. Undone by
// unregisterHost(p). Throws DriverUnavailable, CudaError (CUDA_ERROR_HOST_MEMORY_ALREADY_
// REGISTERED when some of the range already is). `bytes` == 0 does nothing and returns 0.
CUdeviceptr registerHost(void *p, size_t bytes, bool deviceMap = false);

// Undoes registerHost(p). Throws DriverUnavailable, CudaError
// (CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED).
void unregisterHost(void *p);

} // namespace ptxjit::runtime
