#include "runtime/Staging.h"

#include "runtime/Device.h"

namespace ptxjit::runtime {

ArrayExtent arrayExtent(int ndim, const int64_t *shape, const int64_t *strides, int itemsize) {
  ArrayExtent e;
  int64_t high = 0;
  for (int k = 0; k < ndim; ++k) {
    if (shape[k] == 0)
      return {};
    int64_t span = (shape[k] - 1) * strides[k];
    (span < 0 ? e.low : high) += span;
  }
  e.bytes = static_cast<size_t>(high - e.low + itemsize);
  return e;
}

uint64_t HostStaging::stage(uint64_t data, int ndim, const int64_t *shape, const int64_t *strides,
                            int itemsize, bool copyIn, bool copyBack) {
  ArrayExtent extent = arrayExtent(ndim, shape, strides, itemsize);
  Staged s;
  s.host = reinterpret_cast<char *>(data) + extent.low;
  s.bytes = extent.bytes;
  s.copyBack = copyBack;
  s.device = allocateDevice(s.bytes, stream_, FirstUse::OnStreamNow);
  if (copyIn && s.bytes)
    copyHostToDevice(s.device->devicePtr(), s.host, s.bytes, stream_, &ring_);
  uint64_t address = s.device->devicePtr() - static_cast<uint64_t>(extent.low);
  staged_.push_back(std::move(s));
  return address;
}

void HostStaging::finish() {
  if (staged_.empty())
    return;
  // In staging order (copies to pageable memory end before the driver returns), so that arrays
  // sharing host memory are written back in the same order whichever path each takes.
  for (const Staged &s : staged_)
    if (s.copyBack && s.bytes)
      copyDeviceToHost(s.host, s.device->devicePtr(), s.bytes, stream_, &ring_);
  synchronizeStream(stream_);
  ring_.release();
}

void synchronizeStream(CUstream stream) {
  Device::current();
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
}

} // namespace ptxjit::runtime
