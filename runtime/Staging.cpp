#include "runtime/Staging.h"

#include "runtime/Device.h"
#include "runtime/DriverJobs.h"
#include "runtime/Stream.h"
#include "runtime/Workers.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

namespace ptxjit::runtime {

namespace {
// A wave is up to kLanes chunks, one per thread; the ring is two halves of one wave each. Two
// MiB chunks and four threads were the best of 1-8 threads and 1-2 MiB chunks on the H200's
// host (eight threads gained under 10% more).
constexpr size_t kChunk = size_t(2) << 20;
constexpr unsigned kLanes = 4;
constexpr size_t kHalfBytes = kLanes * kChunk;
static_assert(kPinnedStagingMinBytes >= 2 * kChunk, "a smaller array gains nothing from lanes");
} // namespace

namespace detail {
// A device's pinned ring (Staging.h). Never destroyed: a set-up thread may write it at exit.
struct PinnedRing {
  enum State : int { Absent, Starting, Ready, Failed };
  std::atomic<int> state{Absent};
  // Everything below is written by the set-up before `state` becomes Ready, then used only by
  // the HostStaging holding `use`.
  std::mutex use;
  char *pinned = nullptr; // two halves of kHalfBytes
  CUevent done[2] = {};   // recorded after the last copy from or into each half
  bool pending[2] = {};   // done[h] recorded and not yet waited for
  unsigned lanes = 0;     // threads that fill or drain a wave: 2 .. kLanes
  unsigned half = 0;      // the half the next copy in uses
};
} // namespace detail

namespace {

using detail::PinnedRing;

PinnedRing &ringOf(int ordinal) {
  static auto *rings = new PinnedRing[Device::kMaxDevices];
  return rings[ordinal];
}

// On the set-up thread: the pinned memory, the events and the workers; Ready, or Failed when any
// of them cannot be had (the driver's path is then used for good).
void setUpRing(PinnedRing *ring, CUcontext context) noexcept {
  int result = PinnedRing::Failed;
  try {
    const DriverApi &d = driver();
    unsigned lanes = std::min(kLanes, Workers::get().count() + 1);
    void *pinned = nullptr;
    CUevent done[2] = {};
    if (lanes >= 2 && d.cuCtxSetCurrent(context) == CUDA_SUCCESS &&
        d.cuMemHostAlloc(&pinned, 2 * kHalfBytes, 0) == CUDA_SUCCESS) {
      if (d.cuEventCreate(&done[0], CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
          d.cuEventCreate(&done[1], CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS) {
        ring->pinned = static_cast<char *>(pinned);
        ring->done[0] = done[0];
        ring->done[1] = done[1];
        ring->lanes = lanes;
        result = PinnedRing::Ready;
      } else {
        if (done[0])
          d.cuEventDestroy_v2(done[0]);
        d.cuMemFreeHost(pinned);
      }
    }
  } catch (...) {
  }
  ring->state.store(result, std::memory_order_release);
}

// Starts `ring`'s set-up on a thread, once (the first caller to find it Absent).
void startRingSetUp(PinnedRing &ring, CUcontext context) {
  int expected = PinnedRing::Absent;
  if (!ring.state.compare_exchange_strong(expected, PinnedRing::Starting))
    return;
  // After cuInit (the caller has a device), as runtime/DriverJobs.h asks.
  if (!startDriverJob(DriverJob::StagingRingSetUp, [&ring, context] { setUpRing(&ring, context); }))
    ring.state.store(PinnedRing::Failed, std::memory_order_release);
}

// Waits until the copy last recorded on `half` of `ring` is done.
void waitForHalf(PinnedRing &ring, unsigned half) {
  if (!ring.pending[half])
    return;
  check(driver().cuEventSynchronize(ring.done[half]), "cuEventSynchronize");
  ring.pending[half] = false;
}

// Whether `host` is pageable memory, which the driver stages with one thread; memory it knows
// (pinned by cuMemHostAlloc or cuMemHostRegister, managed) it copies at full speed itself.
bool pageable(const void *host) {
  CUmemorytype type = CU_MEMORYTYPE_HOST;
  return driver().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        reinterpret_cast<CUdeviceptr>(host)) ==
         CUDA_ERROR_INVALID_VALUE;
}

// Copies `bytes` (at most one wave) from `from` to `to`, one chunk per lane: the caller and the
// workers at once.
void copyWave(char *to, const char *from, size_t bytes) {
  unsigned pieces = static_cast<unsigned>((bytes + kChunk - 1) / kChunk);
  Workers::get().run(pieces, [&](unsigned lane) {
    size_t at = lane * kChunk;
    std::memcpy(to + at, from + at, std::min(kChunk, bytes - at));
  });
}

} // namespace

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

HostStaging::~HostStaging() { releaseRing(); }

bool HostStaging::takeRing() {
  if (ring_)
    return true;
  if (ringRefused_)
    return false;
  ringRefused_ = true; // unless taken below
  const Device &dev = Device::current();
  PinnedRing &ring = ringOf(dev.ordinal());
  int state = ring.state.load(std::memory_order_acquire);
  if (state == PinnedRing::Absent)
    startRingSetUp(ring, dev.context());
  if (state != PinnedRing::Ready || !ring.use.try_lock())
    return false;
  ring_ = &ring;
  ringRefused_ = false;
  return true;
}

void HostStaging::releaseRing() noexcept {
  if (!ring_)
    return;
  try {
    for (unsigned h = 0; h < 2; ++h)
      if (ring_->pending[h])
        driver().cuEventSynchronize(ring_->done[h]); // an error leaves nothing to wait for
  } catch (...) {
  }
  ring_->pending[0] = ring_->pending[1] = false;
  ring_->use.unlock();
  ring_ = nullptr;
}

void HostStaging::copyInThroughRing(CUdeviceptr dst, const char *src, size_t n) {
  PinnedRing &r = *ring_;
  const DriverApi &d = driver();
  const size_t wave = r.lanes * kChunk;
  for (size_t off = 0; off < n;) {
    const unsigned h = r.half;
    r.half ^= 1;
    waitForHalf(r, h); // its last copy has read it
    char *slots = r.pinned + h * kHalfBytes;
    const size_t bytes = std::min(wave, n - off);
    copyWave(slots, src + off, bytes);
    check(d.cuMemcpyHtoDAsync_v2(dst + off, slots, bytes, stream_), "cuMemcpyHtoDAsync");
    check(d.cuEventRecord(r.done[h], stream_), "cuEventRecord");
    r.pending[h] = true;
    joinLegacyStreamAfter(stream_);
    off += bytes;
  }
}

void HostStaging::copyBackThroughRing(char *dst, CUdeviceptr src, size_t n) {
  PinnedRing &r = *ring_;
  const DriverApi &d = driver();
  const size_t wave = r.lanes * kChunk;
  // Queued after whatever last used the half (stream order), so only the CPU's drain waits.
  auto queue = [&](size_t off, unsigned h) {
    check(d.cuMemcpyDtoHAsync_v2(r.pinned + h * kHalfBytes, src + off, std::min(wave, n - off),
                                 stream_),
          "cuMemcpyDtoHAsync");
    check(d.cuEventRecord(r.done[h], stream_), "cuEventRecord");
    r.pending[h] = true;
    joinLegacyStreamAfter(stream_);
  };
  unsigned h = r.half;
  queue(0, h);
  for (size_t off = 0; off < n;) {
    const size_t bytes = std::min(wave, n - off);
    if (off + bytes < n)
      queue(off + bytes, h ^ 1); // the other half's copy runs while this one drains
    waitForHalf(r, h);
    copyWave(dst + off, r.pinned + h * kHalfBytes, bytes);
    h ^= 1;
    off += bytes;
  }
  r.half = h;
}

uint64_t HostStaging::stage(uint64_t data, int ndim, const int64_t *shape, const int64_t *strides,
                            int itemsize, bool copyIn, bool copyBack) {
  ArrayExtent extent = arrayExtent(ndim, shape, strides, itemsize);
  Staged s;
  s.host = reinterpret_cast<char *>(data) + extent.low;
  s.bytes = extent.bytes;
  s.copyBack = copyBack;
  s.device = allocateDevice(s.bytes, stream_, FirstUse::OnStreamNow);
  if (copyIn && s.bytes) {
    if (s.bytes >= kPinnedStagingMinBytes && pageable(s.host) && takeRing())
      copyInThroughRing(s.device->devicePtr(), s.host, s.bytes);
    else
      copyHostToDevice(s.device->devicePtr(), s.host, s.bytes, stream_);
  }
  uint64_t address = s.device->devicePtr() - static_cast<uint64_t>(extent.low);
  staged_.push_back(std::move(s));
  return address;
}

void HostStaging::finish() {
  if (staged_.empty())
    return;
  // In staging order (copies to pageable memory end before the driver returns), so that arrays
  // sharing host memory are written back in the same order whichever path each takes.
  for (const Staged &s : staged_) {
    if (!s.copyBack || !s.bytes)
      continue;
    if (s.bytes >= kPinnedStagingMinBytes && pageable(s.host) && takeRing())
      copyBackThroughRing(s.host, s.device->devicePtr(), s.bytes);
    else
      copyDeviceToHost(s.host, s.device->devicePtr(), s.bytes, stream_);
  }
  synchronizeStream(stream_);
  releaseRing();
}

bool pinnedStagingReady() {
  return ringOf(Device::current().ordinal()).state.load(std::memory_order_acquire) ==
         PinnedRing::Ready;
}

void synchronizeStream(CUstream stream) {
  Device::current();
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
}

} // namespace ptxjit::runtime
