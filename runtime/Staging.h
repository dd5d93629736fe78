// Host arrays copied to device memory for one kernel launch or ufunc call, and back after it:
// the one staging path of every launcher, with its one synchronization rule.
//
// The rule: the copies in are queued on the call's stream before the work, the copies back
// after it, and then the call waits for the stream before it returns, whichever stream it is.
// numba-cuda's copies back to host (pageable) memory also complete before its calls return (the
// driver makes device-to-pageable copies synchronous), so results are in the host arrays when
// the call returns, as there; waiting also keeps the staging memory alive until the stream is
// done with it, which a CU_STREAM_NON_BLOCKING stream (cuda.stream()) needs before it is freed.
//
// How large arrays travel: a pageable array of at least kPinnedStagingMinBytes goes through the
// device's pinned ring (runtime/PinnedRing.h), held for the whole call so that one array's last
// wave overlaps the next one's first; the others, and every array while the ring is not to be
// had, take the driver's path.
#pragma once

#include "runtime/Memory.h"
#include "runtime/PinnedRing.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ptxjit::runtime {

/// The bytes an array view touches: from `low` bytes before its data pointer (negative strides
/// reach below it) for `bytes` bytes; bytes == 0 for an empty array.
struct ArrayExtent {
  int64_t low = 0;
  size_t bytes = 0;
};

/// The extent of an array of `ndim` dimensions with `shape` and byte `strides`, of elements of
/// `itemsize` bytes.
ArrayExtent arrayExtent(int ndim, const int64_t *shape, const int64_t *strides, int itemsize);

/// The host arrays one call copies to the device. Not thread-safe; one per call.
class HostStaging {
public:
  /// Staging for work queued on `stream` (null: the legacy default stream), a stream of the
  /// calling thread's current device.
  explicit HostStaging(CUstream stream) : stream_(stream), ring_(stream) {}
  HostStaging(const HostStaging &) = delete;
  HostStaging &operator=(const HostStaging &) = delete;
  /// Gives the pinned ring back, once its copies are done (an error path that skipped
  /// finish()); never throws.
  ~HostStaging() = default;

  /// Makes a device copy of the host array at `data` (ndim, shape, strides in bytes, elements
  /// of `itemsize` bytes) and returns the device address standing for `data`. `copyIn`: its
  /// bytes are copied to the device now (queued on the stream; an array the work reads, or one
  /// it may not overwrite everywhere: copied back whole, its other bytes must survive);
  /// `copyBack`: finish() copies them back. The device memory is allocated for use on the
  /// stream right away (FirstUse::OnStreamNow). Throws DriverUnavailable, CudaError.
  uint64_t stage(uint64_t data, int ndim, const int64_t *shape, const int64_t *strides,
                 int itemsize, bool copyIn, bool copyBack);

  /// True when nothing was staged.
  bool empty() const { return staged_.empty(); }

  /// After the work was queued: queues the copies back, then waits for the stream (the rule
  /// above). Does nothing when nothing was staged. Throws DriverUnavailable, CudaError.
  void finish();

private:
  struct Staged {
    std::shared_ptr<Allocation> device;
    char *host = nullptr;
    size_t bytes = 0;
    bool copyBack = false;
  };

  CUstream stream_;
  std::vector<Staged> staged_;
  PinnedRingUse ring_;
};

/// Waits for the work queued on `stream` (null: the legacy default stream), making the device
/// context current first. Throws DriverUnavailable, CudaError.
void synchronizeStream(CUstream stream);

} // namespace ptxjit::runtime
