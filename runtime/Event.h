// CUDA events: points in a stream's work that the host can wait for, other streams can wait
// for, and that time the work between them.
#pragma once

#include "runtime/Driver.h"

#include <memory>

namespace ptxjit::runtime {

// An owned CUDA event (cuEventCreate), destroyed with the object (skipped once the process is
// exiting). Every call makes the device context current first and throws DriverUnavailable or
// CudaError (naming the CUresult) when the driver fails.
class Event {
public:
  // A new event; `timing` false creates it with CU_EVENT_DISABLE_TIMING (cheaper; it cannot be
  // used with elapsedMs).
  static std::shared_ptr<Event> create(bool timing);
  ~Event();
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  CUevent handle() const noexcept { return handle_; }
  bool timing() const noexcept { return timing_; }

  // Captures the work submitted to `stream` so far (cuEventRecord; null: the default stream).
  void record(CUstream stream);
  // Waits on the host until the captured work is done (cuEventSynchronize).
  void synchronize() const;
  // True once the captured work is done (or the event was never recorded), false while it is
  // pending (cuEventQuery).
  bool query() const;
  // Makes work submitted to `stream` from now on wait for the captured work (cuStreamWaitEvent).
  void wait(CUstream stream) const;
  // Milliseconds between two recorded timing events (cuEventElapsedTime; the driver reports
  // CUDA_ERROR_NOT_READY while either is pending, CUDA_ERROR_INVALID_HANDLE for an event without
  // timing or never recorded). Throws DriverUnavailable on drivers before CUDA 12.8, which lack
  // cuEventElapsedTime_v2.
  static float elapsedMs(const Event &start, const Event &stop);

private:
  Event(CUevent handle, bool timing, int ordinal)
      : handle_(handle), timing_(timing), ordinal_(ordinal) {}
  CUevent handle_;
  bool timing_;
  int ordinal_; // the device whose context made it (and destroys it)
};

} // namespace ptxjit::runtime
