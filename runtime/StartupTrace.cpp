#include "runtime/StartupTrace.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace ptxjit::runtime {
namespace {

// When the runtime library was loaded (static initialization of the extension).
const std::chrono::steady_clock::time_point kLoaded = std::chrono::steady_clock::now();

thread_local bool tBackground = false;

bool readFlag() {
  const char *v = std::getenv("PTXJIT_TRACE_STARTUP");
  return v && *v && std::strcmp(v, "0") != 0;
}

} // namespace

bool startupTraceEnabled() noexcept {
  static const bool enabled = readFlag();
  return enabled;
}

void markStartupTraceBackgroundThread() noexcept { tBackground = true; }

void traceStartup(const std::string &phase, double ms) noexcept {
  if (!startupTraceEnabled())
    return;
  static const std::thread::id mainThread = std::this_thread::get_id();
  const char *who =
      tBackground ? "bg" : (std::this_thread::get_id() == mainThread ? "main" : "thread");
  double since =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - kLoaded).count();
  // One fprintf per line: lines of concurrent threads do not interleave within a line.
  std::fprintf(stderr, "ptxjit startup: +%.2f ms [%s] %s: %.3f ms\n", since, who, phase.c_str(),
               ms);
}

} // namespace ptxjit::runtime
