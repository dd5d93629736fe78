// The bare cuLaunchKernel loop of bare_launch.cpp as a shared library, so that bench/run.py can
// time it interleaved with ptxjit's launch loop in ptxjit's own process, in the context ptxjit
// uses (the device's primary context), rounds apart by milliseconds instead of minutes.
// Build: g++ -O2 -std=c++17 -shared -fPIC -I/usr/local/cuda/include bare_launch_lib.cpp -ldl
//        -o libbare_launch.so
// The C interface (loaded with ctypes by bench/bare_native.py); no function throws:
#include "bare_driver.h"

#include <new>

namespace {

thread_local std::string tLastError;

// Loaded once, never unloaded (ptxjit keeps the same library loaded too).
const bare::Driver *driver(std::string &error) {
  static bare::Driver d;
  static std::string loadError;
  static const bool loaded = bare::loadDriver(d, loadError);
  if (!loaded) {
    error = loadError;
    return nullptr;
  }
  return &d;
}

} // namespace

extern "C" {

// Loads `entry` of `ptx` into the device's primary context (retained, and made current on the
// calling thread) with the arguments of `layout` (bare_driver.h), for launches on grid 1 x
// `block`; a handle, or null with bare_last_error() set.
void *bare_open(const char *ptx, const char *entry, const char *layout, int block) {
  try {
    if (!ptx || !entry || !layout || block < 1) {
      tLastError = "bare_open: null text or block < 1";
      return nullptr;
    }
    const bare::Driver *d = driver(tLastError);
    if (!d)
      return nullptr;
    auto *launcher = new bare::Launcher();
    if (!launcher->open(*d, ptx, entry, layout, static_cast<unsigned>(block), tLastError)) {
      delete launcher;
      return nullptr;
    }
    return launcher;
  } catch (const std::exception &e) {
    tLastError = std::string("bare_open: ") + e.what();
    return nullptr;
  }
}

// Microseconds per launch of one loop of `iters` launches followed by cuCtxSynchronize (timed
// in C++ with steady_clock; the call's own overhead is outside); negative with
// bare_last_error() set on failure.
double bare_launch_us(void *handle, int iters) {
  if (!handle || iters < 1) {
    tLastError = "bare_launch_us: null handle or iters < 1";
    return -1;
  }
  try {
    return static_cast<bare::Launcher *>(handle)->loopMicroseconds(iters, tLastError);
  } catch (const std::exception &e) {
    tLastError = std::string("bare_launch_us: ") + e.what();
    return -1;
  }
}

// As bare_launch_us, with the arguments passed as one packed buffer
// (CU_LAUNCH_PARAM_BUFFER_POINTER) instead of kernelParams.
double bare_launch_buffer_us(void *handle, int iters) {
  if (!handle || iters < 1) {
    tLastError = "bare_launch_buffer_us: null handle or iters < 1";
    return -1;
  }
  try {
    return static_cast<bare::Launcher *>(handle)->loopMicroseconds(iters, tLastError, true);
  } catch (const std::exception &e) {
    tLastError = std::string("bare_launch_buffer_us: ") + e.what();
    return -1;
  }
}

// 1 if the primary context was already current on the thread that opened `handle` (ptxjit had
// made it current: both sides launch in the same context), 0 if not.
int bare_same_context(void *handle) {
  return handle && static_cast<bare::Launcher *>(handle)->primaryWasCurrent() ? 1 : 0;
}

// The number of kernel parameters the handle passes.
int bare_param_count(void *handle) {
  return handle ? static_cast<bare::Launcher *>(handle)->paramCount() : -1;
}

// Frees the arrays, unloads the module and releases the primary context; null is ignored.
void bare_close(void *handle) { delete static_cast<bare::Launcher *>(handle); }

// The last error of this thread's calls ("" if none).
const char *bare_last_error() { return tLastError.c_str(); }

} // extern "C"
