#include "runtime/Event.h"

#include "runtime/Device.h"

namespace ptxjit::runtime {

std::shared_ptr<Event> Event::create(bool timing) {
  int ordinal = Device::current().ordinal();
  CUevent handle = nullptr;
  check(driver().cuEventCreate(&handle, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
        "cuEventCreate");
  // If allocating the Event throws, shared_ptr deletes it, which destroys the handle.
  return std::shared_ptr<Event>(new Event(handle, timing, ordinal));
}

Event::~Event() {
  if (!handle_)
    return;
  if (Device::Cleanup in{ordinal_})
    driver().cuEventDestroy_v2(handle_); // errors ignored
}

void Event::record(CUstream stream) {
  Device::current();
  check(driver().cuEventRecord(handle_, stream), "cuEventRecord");
}

void Event::synchronize() const {
  Device::current();
  check(driver().cuEventSynchronize(handle_), "cuEventSynchronize");
}

bool Event::query() const {
  Device::current();
  CUresult r = driver().cuEventQuery(handle_);
  if (r == CUDA_ERROR_NOT_READY)
    return false;
  check(r, "cuEventQuery");
  return true;
}

void Event::wait(CUstream stream) const {
  Device::current();
  check(driver().cuStreamWaitEvent(stream, handle_, 0), "cuStreamWaitEvent");
}

float Event::elapsedMs(const Event &start, const Event &stop) {
  Device::current();
  if (!driver().cuEventElapsedTime_v2)
    throw DriverUnavailable("timing events needs cuEventElapsedTime_v2, which drivers before CUDA "
                            "12.8 lack");
  float ms = 0;
  check(driver().cuEventElapsedTime_v2(&ms, start.handle_, stop.handle_), "cuEventElapsedTime");
  return ms;
}

} // namespace ptxjit::runtime
