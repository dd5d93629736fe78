#include "runtime/Stream.h"

#include "runtime/Device.h"
#include "runtime/Fork.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace ptxjit::runtime {
namespace {

// The live non-blocking streams (joinLegacyStreamAfter), counted per handle: several Stream
// objects may wrap one external handle.
std::mutex gUnorderedMutex;
std::unordered_map<CUstream, int> *gUnordered = new std::unordered_map<CUstream, int>;
std::atomic<int> gUnorderedCount{0};

[[maybe_unused]] const bool gForkLockRegistered = [] {
  registerForkLock(gUnorderedMutex);
  return true;
}();

void noteUnordered(CUstream handle, int delta) {
  std::lock_guard<std::mutex> lock(gUnorderedMutex);
  int &n = (*gUnordered)[handle];
  n += delta;
  if (n <= 0)
    gUnordered->erase(handle);
  gUnorderedCount.fetch_add(delta, std::memory_order_relaxed);
}

// Whether work on `handle` is not ordered before later work on the legacy default stream: a
// stream created with CU_STREAM_NON_BLOCKING. The special handles are ordered with it.
bool unorderedWithLegacy(CUstream handle) {
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD)
    return false;
  const DriverApi &d = driver();
  unsigned flags = 0;
  if (!d.cuStreamGetFlags || d.cuStreamGetFlags(handle, &flags) != CUDA_SUCCESS)
    return false; // not a stream this driver knows: nothing to join
  return (flags & CU_STREAM_NON_BLOCKING) != 0;
}

} // namespace

Stream::Stream(CUstream handle, bool nonBlocking, bool owned, int ordinal)
    : handle_(handle), nonBlocking_(nonBlocking), owned_(owned), ordinal_(ordinal) {
  if (nonBlocking_)
    noteUnordered(handle_, 1);
}

void joinLegacyStreamAfter(CUstream stream) {
  if (gUnorderedCount.load(std::memory_order_relaxed) == 0 || stream == nullptr) [[likely]]
    return;
  {
    std::lock_guard<std::mutex> lock(gUnorderedMutex);
    if (!gUnordered->count(stream))
      return;
  }
  const DriverApi &d = driver();
  if (d.cuStreamIsCapturing) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    check(d.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing");
    if (status != CU_STREAM_CAPTURE_STATUS_NONE)
      return; // the graph's replays are the user's to order (docs/api.md#cuda-graphs)
  }
  CUevent event = nullptr;
  check(d.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUresult r = d.cuEventRecord(event, stream);
  if (r == CUDA_SUCCESS)
    r = d.cuStreamWaitEvent(nullptr, event, 0);
  d.cuEventDestroy_v2(event); // released once the wait is satisfied
  check(r, "cuStreamWaitEvent");
}

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
  bool nonBlocking = false;
  try {
    nonBlocking = unorderedWithLegacy(handle);
  } catch (const DriverUnavailable &) {
    // No driver (the CPU backend's placeholder, a forked child): nothing to order.
  }
  return std::shared_ptr<Stream>(new Stream(handle, nonBlocking, /*owned=*/false));
}

Stream::~Stream() {
  if (nonBlocking_)
    noteUnordered(handle_, -1);
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
