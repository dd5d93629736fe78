// Large copies between pageable host memory and the device, through a pinned ring of the
// device's.
//
// The driver copies pageable memory through a pinned buffer of its own, filled (or drained) by
// the calling thread alone, so one CPU thread's memcpy bounds it (on the H200's host, four 8 MB
// arrays in and one back took 5.9 ms). A pageable range of at least kPinnedStagingMinBytes goes
// through a pinned ring of the current device's instead, in waves: up to four threads
// (runtime/Workers.h) fill one half of the ring while the other half's copy runs, and copies
// back are drained alike (2.5 ms for the same copies). The ring is made on a background thread
// (runtime/DriverJobs.h) the first time a large range is offered on a device (pinned memory
// takes milliseconds to allocate); until it is ready, while another use holds it, while the
// stream is being captured into a graph (the graph would replay the ring's bytes of the time),
// and on machines with one hardware thread, the driver's path is taken.
//
// One user: copyHostToDevice and copyDeviceToHost (runtime/Memory.h: cuda.to_device,
// copy_to_host, ...) take the ring for one copy, or use the one a caller holds for several:
// HostStaging (runtime/Staging.h) holds it for all the arrays of one call, so that one array's
// last wave overlaps the next one's first.
#pragma once

#include "runtime/Driver.h"

#include <cstddef>

namespace ptxjit::runtime {

/// Ranges of at least this many bytes are copied through the pinned ring (see above).
inline constexpr size_t kPinnedStagingMinBytes = size_t(4) << 20;

namespace detail {
struct PinnedRing;
} // namespace detail

/// A use of the pinned ring of the calling thread's current device for copies queued on one
/// stream. Not thread-safe; one per call.
class PinnedRingUse {
public:
  /// A use for copies on `stream` (null: the legacy default stream), a stream of the calling
  /// thread's current device; takes nothing yet.
  explicit PinnedRingUse(CUstream stream) : stream_(stream) {}
  PinnedRingUse(const PinnedRingUse &) = delete;
  PinnedRingUse &operator=(const PinnedRingUse &) = delete;
  /// release(); never throws.
  ~PinnedRingUse() { release(); }

  /// Whether `n` bytes at `host` would go through the ring: n >= kPinnedStagingMinBytes and
  /// the memory pageable (the driver knows nothing of it: not pinned, registered or managed,
  /// which it copies at full speed itself). Needs the device context current. Throws
  /// DriverUnavailable.
  static bool wanted(const void *host, size_t n);

  /// Takes the ring for this use: true when held (taken now or earlier). False, for the rest
  /// of this use, when it is not ready (the first call starts its set-up), another use holds it
  /// (one of this thread's included), or the stream is being captured. Throws
  /// DriverUnavailable, CudaError.
  bool take();

  /// While held: queues the copy of `n` bytes from host `src` to device `dst` on the stream, in
  /// waves through the ring; `src` may be reused when it returns. Throws CudaError.
  void copyIn(CUdeviceptr dst, const void *src, size_t n);

  /// While held: copies `n` bytes from device `src` to host `dst`, queued on the stream after
  /// the work before it; the bytes are in `dst` when it returns. Throws CudaError.
  void copyBack(void *dst, CUdeviceptr src, size_t n);

  /// Waits for the ring's queued copies and gives it back, when held. Never throws.
  void release() noexcept;

private:
  CUstream stream_;
  detail::PinnedRing *ring_ = nullptr;
  bool refused_ = false;
};

/// Whether the pinned ring of the calling thread's current device is ready (its background
/// set-up done), so that the next large copy on that device may use it. For tests and
/// diagnostics; starts nothing. Throws DriverUnavailable, CudaError.
bool pinnedStagingReady();

} // namespace ptxjit::runtime
