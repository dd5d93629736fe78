// What the fake-driver scenarios share (tests/cpp/runtime and tests/cpp/compiler death tests):
// the driver state is per process, so each scenario runs in a death-test child, checks with
// SCENARIO_CHECK (which ends the child with status 1, naming the check) and ends with
// std::_Exit(0). PTXJIT_FAKE_LIBCUDA is the fake driver's path (tests/cpp/CMakeLists.txt).
#pragma once

#include "runtime/Driver.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ptxjit::testing {

#define SCENARIO_CHECK(cond)                                                                       \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "check failed: %s (line %d)\n", #cond, __LINE__);                       \
      std::fflush(stderr);                                                                         \
      std::_Exit(1);                                                                               \
    }                                                                                              \
  } while (0)

/// Points the runtime at the fake driver (PTXJIT_LIBCUDA) and checks that it loads.
inline void useFakeDriver() {
  setenv("PTXJIT_LIBCUDA", PTXJIT_FAKE_LIBCUDA, 1);
  SCENARIO_CHECK(runtime::driverAvailable());
}

/// The fake driver's control or counter function `name` (see FakeCuda.cpp), as type F; the
/// scenario fails when the driver is not loaded or lacks it.
template <typename F> F fake(const char *name) {
  void *lib = dlopen(PTXJIT_FAKE_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);
  SCENARIO_CHECK(lib != nullptr);
  void *sym = dlsym(lib, name);
  SCENARIO_CHECK(sym != nullptr);
  return reinterpret_cast<F>(sym);
}

/// What `f` throws, as text: "<CUresult name> from <call>" for a CudaError,
/// "out_of_range: <what>" for std::out_of_range; "" when it throws nothing.
template <typename F> std::string failure(F &&f) {
  try {
    f();
  } catch (const runtime::CudaError &e) {
    return runtime::errorName(e.code()) + " from " + e.call();
  } catch (const std::out_of_range &e) {
    return std::string("out_of_range: ") + e.what();
  }
  return "";
}

} // namespace ptxjit::testing
