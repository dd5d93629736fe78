#include "runtime/Stream.h"

#include "runtime/Device.h"

namespace ptxjit::runtime {

std::shared_ptr<Stream> Stream::create(bool nonBlocking) {
  int ordinal = Device::current().ordinal();
  CUstream handle = nullptr;
  check(driver().cuStreamCreate(&handle, nonBlocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT),
        "cuStreamCreate");
  // If allocating the Stream throws, shared_ptr deletes it, which destroys the handle.
  return std::shared_ptr<Stream>(new Stream(handle, nonBlocking, true, ordinal));
}

const std::shared_ptr<Stream> &Stream::defaultStream() {
  static const std::shared_ptr<Stream> stream(new Stream(nullptr, false));
  return stream;
}

std::shared_ptr<Stream> Stream::external(CUstream handle) {
  return std::shared_ptr<Stream>(new Stream(handle, false, /*owned=*/false));
}

Stream::~Stream() {
  if (!handle_ || !owned_)
    return;
  if (Device::Cleanup in{ordinal_})
    driver().cuStreamDestroy_v2(handle_); // errors ignored
}

void Stream::synchronize() const {
  Device::current();
  check(driver().cuStreamSynchronize(handle_), "cuStreamSynchronize");
}

bool Stream::query() const {
  Device::current();
  CUresult r = driver().cuStreamQuery(handle_);
  if (r == CUDA_ERROR_NOT_READY)
    return false;
  check(r, "cuStreamQuery");
  return true;
}

} // namespace ptxjit::runtime
