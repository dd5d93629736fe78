// Threads that work with the CUDA driver in the background (driver jobs): the background opening
// of a device (runtime/Device.h), the memory pool's warm-up (runtime/Memory.h) and the set-up of
// the pinned ring that large host copies go through (runtime/PinnedRing.h). Each job runs on one
// thread at a time. So that no such thread is inside the driver while the driver tears down, the
// first start registers an exit handler that joins them all, in the order of DriverJob (an
// opening may start a warm-up); start them only after cuInit, so that the handler runs before
// the driver's own (exit handlers run in the reverse order of their registration). A forked
// child has none of its parent's threads: it forgets them (runtime/Fork.h).
#pragma once

#include <functional>

namespace ptxjit::runtime {

enum class DriverJob : int {
  DeviceOpening,    // Device::openInBackground()
  PoolWarmUp,       // usePoolAllocatorAfterWarmUp()
  StagingRingSetUp, // a device's pinned staging ring
  Count,
};

// Runs `work` on a new thread of `job`'s, after waiting for that job's previous thread if it
// has not ended. Returns false, without running `work`, when the system refuses a thread.
// Thread-safe; throws only std::bad_alloc.
bool startDriverJob(DriverJob job, std::function<void()> work);

// Waits until `job`'s thread has ended; returns at once when none was started. Thread-safe.
void joinDriverJob(DriverJob job);

} // namespace ptxjit::runtime
