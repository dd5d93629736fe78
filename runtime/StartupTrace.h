// An opt-in trace of the process's start-up costs (driver load, device opening, memory-pool
// set-up, compiles, module loads), for measuring the first compile in a fresh process on the GPU
// machine. Enabled by the environment variable PTXJIT_TRACE_STARTUP (any value but "" and "0"),
// read once; when disabled every entry point costs one load of a cached flag.
#pragma once

#include <chrono>
#include <string>

namespace ptxjit::runtime {

// True when PTXJIT_TRACE_STARTUP is set to a value other than "" and "0" (read on the first
// call). Never throws.
bool startupTraceEnabled() noexcept;

// When enabled, writes one line to stderr:
//   "ptxjit startup: +<t> ms [<thread>] <phase>: <ms> ms"
// where <t> is the time since the runtime library was loaded (the extension's import) and
// <thread> is "main" for the first thread that traced and "bg" for the background device opener
// (see Device::openInBackground) and the memory pool's warm-up (usePoolAllocatorAfterWarmUp),
// else "thread". Never throws.
void traceStartup(const std::string &phase, double ms) noexcept;

// Marks the calling thread as a background start-up thread ("bg") in trace lines. Never throws.
void markStartupTraceBackgroundThread() noexcept;

// Times its own lifetime and traces it under `phase` (when enabled; else does nothing but read
// the flag). `phase` must outlive the timer.
class StartupTimer {
public:
  explicit StartupTimer(const char *phase) noexcept : phase_(phase), on_(startupTraceEnabled()) {
    if (on_)
      start_ = std::chrono::steady_clock::now();
  }
  ~StartupTimer() {
    if (on_)
      traceStartup(phase_, std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start_)
                               .count());
  }
  StartupTimer(const StartupTimer &) = delete;
  StartupTimer &operator=(const StartupTimer &) = delete;

private:
  const char *phase_;
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace ptxjit::runtime
