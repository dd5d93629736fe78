#include "runtime/Stream.h"

#include "runtime/Device.h"
#include "runtime/Fork.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace ptxjit::runtime {
namespace {

// The live streams that may be non-blocking (joinLegacyStreamAfter), per handle: several Stream
// objects may wrap one external handle. An external handle's flags are read on its first use
// for work, not when it is wrapped: cuda.external_stream() takes any number (numba-cuda's does),
// and the driver's cuStreamGetFlags crashes on a handle that is not a stream.
enum class Ordering : int8_t { Unknown, NonBlocking, Blocking };
struct HandleEntry {
  int refs = 0;
  Ordering ordering = Ordering::Unknown;
};
std::mutex gUnorderedMutex;
std::unordered_map<CUstream, HandleEntry> *gUnordered =
    new std::unordered_map<CUstream, HandleEntry>;
// The live Stream objects whose handle is not known to be blocking: zero keeps
// joinLegacyStreamAfter to one relaxed load.
std::atomic<int> gUnorderedCount{0};

[[maybe_unused]] const bool gForkLockRegistered = [] {
  registerForkLock(gUnorderedMutex);
  return true;
}();

/// Adds (`delta` 1) or removes (-1) a Stream object of `handle`, whose ordering is `known` when
/// its creator knows it (Unknown for an external handle).
void noteStream(CUstream handle, int delta, Ordering known) {
  std::lock_guard<std::mutex> lock(gUnorderedMutex);
  HandleEntry &e = (*gUnordered)[handle];
  if (delta > 0 && e.refs == 0)
    e.ordering = known;
  e.refs += delta;
  if (e.ordering != Ordering::Blocking)
    gUnorderedCount.fetch_add(delta, std::memory_order_relaxed);
  if (e.refs <= 0)
    gUnordered->erase(handle);
}

// Whether work on `handle` is not ordered before later work on the legacy default stream: a
// stream created with CU_STREAM_NON_BLOCKING. The special handles are ordered with it.
bool unorderedWithLegacy(CUstream handle) {
  const DriverApi &d = driver();
  unsigned flags = 0;
  if (!d.cuStreamGetFlags || d.cuStreamGetFlags(handle, &flags) != CUDA_SUCCESS)
    return false; // not a stream this driver knows: nothing to join
  return (flags & CU_STREAM_NON_BLOCKING) != 0;
}

/// Whether work on `handle`, a live stream with an entry, must be joined into the legacy stream;
/// reads an external handle's flags the first time. Called with gUnorderedMutex held.
bool needsJoinLocked(CUstream handle) {
  auto it = gUnordered->find(handle);
  if (it == gUnordered->end())
    return false;
  HandleEntry &e = it->second;
  if (e.ordering == Ordering::Unknown) {
    e.ordering = unorderedWithLegacy(handle) ? Ordering::NonBlocking : Ordering::Blocking;
    if (e.ordering == Ordering::Blocking)
      gUnorderedCount.fetch_sub(e.refs, std::memory_order_relaxed);
  }
  return e.ordering == Ordering::NonBlocking;
}

} // namespace

Stream::Stream(CUstream handle, bool nonBlocking, bool owned, int ordinal)
    : handle_(handle), nonBlocking_(nonBlocking), owned_(owned), ordinal_(ordinal) {
  if (mayBeUnordered())
    noteStream(handle_, 1, nonBlocking_ ? Ordering::NonBlocking : Ordering::Unknown);
}

bool streamIsCapturing(CUstream stream) noexcept {
  if (!stream || stream == CU_STREAM_LEGACY)
    return false;
  const DriverApi *d = nullptr;
  try {
    d = &driver();
  } catch (...) {
    return false; // no driver: nothing is being captured
  }
  if (!d->cuStreamIsCapturing)
    return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return d->cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS ||
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void joinLegacyStreamAfter(CUstream stream) {
  if (gUnorderedCount.load(std::memory_order_relaxed) == 0 || stream == nullptr) [[likely]]
    return;
  {
    std::lock_guard<std::mutex> lock(gUnorderedMutex);
    if (!needsJoinLocked(stream))
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
  // Classified on its first use for work (joinLegacyStreamAfter), not here.
  return std::shared_ptr<Stream>(new Stream(handle, /*nonBlocking=*/false, /*owned=*/false));
}

Stream::~Stream() {
  if (mayBeUnordered())
    noteStream(handle_, -1, Ordering::Unknown);
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
