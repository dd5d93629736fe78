#include "runtime/PinnedRing.h"

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
static_assert(kPinnedStagingMinBytes >= 2 * kChunk, "a smaller range gains nothing from lanes");
} // namespace

namespace detail {
// A device's pinned ring (PinnedRing.h). Never destroyed: a set-up thread may write it at exit.
struct PinnedRing {
  enum State : int { Absent, Starting, Ready, Failed };
  std::atomic<int> state{Absent};
  // Everything below is written by the set-up before `state` becomes Ready, then used only by
  // the PinnedRingUse holding `use`.
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

// The ring this thread holds, if any: a second use on the same thread is refused (try_lock on a
// mutex the thread owns is undefined).
thread_local PinnedRing *tHeld = nullptr;

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

bool PinnedRingUse::wanted(const void *host, size_t n) {
  if (n < kPinnedStagingMinBytes)
    return false;
  // Memory the driver knows (pinned by cuMemHostAlloc or cuMemHostRegister, managed) answers;
  // pageable memory is unknown to it.
  CUmemorytype type = CU_MEMORYTYPE_HOST;
  return driver().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        reinterpret_cast<CUdeviceptr>(host)) ==
         CUDA_ERROR_INVALID_VALUE;
}

bool PinnedRingUse::take() {
  if (ring_)
    return true;
  if (refused_)
    return false;
  refused_ = true; // unless taken below
  const Device &dev = Device::current();
  PinnedRing &ring = ringOf(dev.ordinal());
  int state = ring.state.load(std::memory_order_acquire);
  if (state == PinnedRing::Absent)
    startRingSetUp(ring, dev.context());
  if (state != PinnedRing::Ready || tHeld || streamIsCapturing(stream_) || !ring.use.try_lock())
    return false;
  ring_ = tHeld = &ring;
  refused_ = false;
  return true;
}

void PinnedRingUse::release() noexcept {
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
  ring_ = tHeld = nullptr;
}

void PinnedRingUse::copyIn(CUdeviceptr dst, const void *src, size_t n) {
  PinnedRing &r = *ring_;
  const DriverApi &d = driver();
  const char *from = static_cast<const char *>(src);
  const size_t wave = r.lanes * kChunk;
  for (size_t off = 0; off < n;) {
    const unsigned h = r.half;
    r.half ^= 1;
    waitForHalf(r, h); // its last copy has read it
    char *slots = r.pinned + h * kHalfBytes;
    const size_t bytes = std::min(wave, n - off);
    copyWave(slots, from + off, bytes);
    check(d.cuMemcpyHtoDAsync_v2(dst + off, slots, bytes, stream_), "cuMemcpyHtoDAsync");
    check(d.cuEventRecord(r.done[h], stream_), "cuEventRecord");
    r.pending[h] = true;
    joinLegacyStreamAfter(stream_);
    off += bytes;
  }
}

void PinnedRingUse::copyBack(void *dst, CUdeviceptr src, size_t n) {
  PinnedRing &r = *ring_;
  const DriverApi &d = driver();
  char *to = static_cast<char *>(dst);
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
    copyWave(to + off, r.pinned + h * kHalfBytes, bytes);
    h ^= 1;
    off += bytes;
  }
  r.half = h;
}

bool pinnedStagingReady() {
  return ringOf(Device::current().ordinal()).state.load(std::memory_order_acquire) ==
         PinnedRing::Ready;
}

} // namespace ptxjit::runtime
