#include "runtime/Driver.h"

#include "runtime/Fork.h"
#include "runtime/StartupTrace.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

namespace ptxjit::runtime {
namespace {

// Each listed entry point must be the exported symbol itself, not a cuda.h macro (stringizing the
// macro-expanded name must give the name as written).
#define PTXJIT_STR2(x) #x
#define PTXJIT_STR(x) PTXJIT_STR2(x)
#define PTXJIT_CHECK_REAL_NAME(name)                                                               \
  static_assert(std::string_view(PTXJIT_STR(name)) == std::string_view(#name),                     \
                "list the exported, versioned name (" PTXJIT_STR(name) ") instead of " #name);
PTXJIT_CUDA_DRIVER_ENTRY_POINTS(PTXJIT_CHECK_REAL_NAME)
PTXJIT_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(PTXJIT_CHECK_REAL_NAME)
#undef PTXJIT_CHECK_REAL_NAME

struct DriverState {
  DriverApi api;
  bool ok = false;
  bool forked = false; // a child forked after the driver was loaded (see ForkedAfterInit)
  std::string error;   // why the driver is unavailable (when !ok)
};

DriverState *gState = nullptr; // the loaded state, for the fork handler

std::atomic<bool> gShuttingDown{false};

struct NamedCode {
  CUresult code;
  const char *name;
};

#define PTXJIT_NAMED(e)                                                                            \
  { e, #e }
// Every CUresult of CUDA 13's cuda.h.
constexpr NamedCode kCodeNames[] = {
    PTXJIT_NAMED(CUDA_SUCCESS),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_VALUE),
    PTXJIT_NAMED(CUDA_ERROR_OUT_OF_MEMORY),
    PTXJIT_NAMED(CUDA_ERROR_NOT_INITIALIZED),
    PTXJIT_NAMED(CUDA_ERROR_DEINITIALIZED),
    PTXJIT_NAMED(CUDA_ERROR_PROFILER_DISABLED),
    PTXJIT_NAMED(CUDA_ERROR_PROFILER_NOT_INITIALIZED),
    PTXJIT_NAMED(CUDA_ERROR_PROFILER_ALREADY_STARTED),
    PTXJIT_NAMED(CUDA_ERROR_PROFILER_ALREADY_STOPPED),
    PTXJIT_NAMED(CUDA_ERROR_STUB_LIBRARY),
    PTXJIT_NAMED(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER),
    PTXJIT_NAMED(CUDA_ERROR_DEVICE_UNAVAILABLE),
    PTXJIT_NAMED(CUDA_ERROR_NO_DEVICE),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_DEVICE),
    PTXJIT_NAMED(CUDA_ERROR_DEVICE_NOT_LICENSED),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_IMAGE),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_CONTEXT),
    PTXJIT_NAMED(CUDA_ERROR_CONTEXT_ALREADY_CURRENT),
    PTXJIT_NAMED(CUDA_ERROR_MAP_FAILED),
    PTXJIT_NAMED(CUDA_ERROR_UNMAP_FAILED),
    PTXJIT_NAMED(CUDA_ERROR_ARRAY_IS_MAPPED),
    PTXJIT_NAMED(CUDA_ERROR_ALREADY_MAPPED),
    PTXJIT_NAMED(CUDA_ERROR_NO_BINARY_FOR_GPU),
    PTXJIT_NAMED(CUDA_ERROR_ALREADY_ACQUIRED),
    PTXJIT_NAMED(CUDA_ERROR_NOT_MAPPED),
    PTXJIT_NAMED(CUDA_ERROR_NOT_MAPPED_AS_ARRAY),
    PTXJIT_NAMED(CUDA_ERROR_NOT_MAPPED_AS_POINTER),
    PTXJIT_NAMED(CUDA_ERROR_ECC_UNCORRECTABLE),
    PTXJIT_NAMED(CUDA_ERROR_UNSUPPORTED_LIMIT),
    PTXJIT_NAMED(CUDA_ERROR_CONTEXT_ALREADY_IN_USE),
    PTXJIT_NAMED(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_PTX),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
    PTXJIT_NAMED(CUDA_ERROR_NVLINK_UNCORRECTABLE),
    PTXJIT_NAMED(CUDA_ERROR_JIT_COMPILER_NOT_FOUND),
    PTXJIT_NAMED(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
    PTXJIT_NAMED(CUDA_ERROR_JIT_COMPILATION_DISABLED),
    PTXJIT_NAMED(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY),
    PTXJIT_NAMED(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC),
    PTXJIT_NAMED(CUDA_ERROR_CONTAINED),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_SOURCE),
    PTXJIT_NAMED(CUDA_ERROR_FILE_NOT_FOUND),
    PTXJIT_NAMED(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND),
    PTXJIT_NAMED(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED),
    PTXJIT_NAMED(CUDA_ERROR_OPERATING_SYSTEM),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_HANDLE),
    PTXJIT_NAMED(CUDA_ERROR_ILLEGAL_STATE),
    PTXJIT_NAMED(CUDA_ERROR_LOSSY_QUERY),
    PTXJIT_NAMED(CUDA_ERROR_NOT_FOUND),
    PTXJIT_NAMED(CUDA_ERROR_NOT_READY),
    PTXJIT_NAMED(CUDA_ERROR_ILLEGAL_ADDRESS),
    PTXJIT_NAMED(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
    PTXJIT_NAMED(CUDA_ERROR_LAUNCH_TIMEOUT),
    PTXJIT_NAMED(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING),
    PTXJIT_NAMED(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED),
    PTXJIT_NAMED(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED),
    PTXJIT_NAMED(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE),
    PTXJIT_NAMED(CUDA_ERROR_CONTEXT_IS_DESTROYED),
    PTXJIT_NAMED(CUDA_ERROR_ASSERT),
    PTXJIT_NAMED(CUDA_ERROR_TOO_MANY_PEERS),
    PTXJIT_NAMED(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
    PTXJIT_NAMED(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
    PTXJIT_NAMED(CUDA_ERROR_HARDWARE_STACK_ERROR),
    PTXJIT_NAMED(CUDA_ERROR_ILLEGAL_INSTRUCTION),
    PTXJIT_NAMED(CUDA_ERROR_MISALIGNED_ADDRESS),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_ADDRESS_SPACE),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_PC),
    PTXJIT_NAMED(CUDA_ERROR_LAUNCH_FAILED),
    PTXJIT_NAMED(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE),
    PTXJIT_NAMED(CUDA_ERROR_TENSOR_MEMORY_LEAK),
    PTXJIT_NAMED(CUDA_ERROR_NOT_PERMITTED),
    PTXJIT_NAMED(CUDA_ERROR_NOT_SUPPORTED),
    PTXJIT_NAMED(CUDA_ERROR_SYSTEM_NOT_READY),
    PTXJIT_NAMED(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
    PTXJIT_NAMED(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
    PTXJIT_NAMED(CUDA_ERROR_MPS_CONNECTION_FAILED),
    PTXJIT_NAMED(CUDA_ERROR_MPS_RPC_FAILURE),
    PTXJIT_NAMED(CUDA_ERROR_MPS_SERVER_NOT_READY),
    PTXJIT_NAMED(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED),
    PTXJIT_NAMED(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED),
    PTXJIT_NAMED(CUDA_ERROR_MPS_CLIENT_TERMINATED),
    PTXJIT_NAMED(CUDA_ERROR_CDP_NOT_SUPPORTED),
    PTXJIT_NAMED(CUDA_ERROR_CDP_VERSION_MISMATCH),
    PTXJIT_NAMED(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
    PTXJIT_NAMED(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
    PTXJIT_NAMED(CUDA_ERROR_STREAM_CAPTURE_MERGE),
    PTXJIT_NAMED(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED),
    PTXJIT_NAMED(CUDA_ERROR_STREAM_CAPTURE_UNJOINED),
    PTXJIT_NAMED(CUDA_ERROR_STREAM_CAPTURE_ISOLATION),
    PTXJIT_NAMED(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT),
    PTXJIT_NAMED(CUDA_ERROR_CAPTURED_EVENT),
    PTXJIT_NAMED(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD),
    PTXJIT_NAMED(CUDA_ERROR_TIMEOUT),
    PTXJIT_NAMED(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE),
    PTXJIT_NAMED(CUDA_ERROR_EXTERNAL_DEVICE),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_CLUSTER_SIZE),
    PTXJIT_NAMED(CUDA_ERROR_FUNCTION_NOT_LOADED),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_RESOURCE_TYPE),
    PTXJIT_NAMED(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION),
    PTXJIT_NAMED(CUDA_ERROR_KEY_ROTATION),
    PTXJIT_NAMED(CUDA_ERROR_UNKNOWN),
};
#undef PTXJIT_NAMED

const char *fallbackName(CUresult code) {
  for (const NamedCode &entry : kCodeNames)
    if (entry.code == code)
      return entry.name;
  return nullptr;
}

// Descriptions of the codes users meet most, worded as the driver words them.
const char *fallbackText(CUresult code) {
  switch (code) {
  case CUDA_SUCCESS:
    return "no error";
  case CUDA_ERROR_INVALID_VALUE:
    return "invalid argument";
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case CUDA_ERROR_NOT_INITIALIZED:
    return "initialization error";
  case CUDA_ERROR_DEINITIALIZED:
    return "driver shutting down";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA driver is a stub library";
  case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
    return "API call is not supported in the installed CUDA driver";
  case CUDA_ERROR_DEVICE_UNAVAILABLE:
    return "CUDA-capable device(s) is/are busy or unavailable";
  case CUDA_ERROR_NO_DEVICE:
    return "no CUDA-capable device is detected";
  case CUDA_ERROR_INVALID_DEVICE:
    return "invalid device ordinal";
  case CUDA_ERROR_INVALID_IMAGE:
    return "device kernel image is invalid";
  case CUDA_ERROR_INVALID_CONTEXT:
    return "invalid device context";
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return "no kernel image is available for execution on the device";
  case CUDA_ERROR_INVALID_PTX:
    return "a PTX JIT compilation failed";
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return "the provided PTX was compiled with an unsupported toolchain.";
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    return "PTX JIT compiler library not found";
  case CUDA_ERROR_INVALID_HANDLE:
    return "invalid resource handle";
  case CUDA_ERROR_NOT_FOUND:
    return "named symbol not found";
  case CUDA_ERROR_NOT_READY:
    return "device not ready";
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return "an illegal memory access was encountered";
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return "too many resources requested for launch";
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    return "the launch timed out and was terminated";
  case CUDA_ERROR_ASSERT:
    return "device-side assert triggered";
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    return "an illegal instruction was encountered";
  case CUDA_ERROR_MISALIGNED_ADDRESS:
    return "misaligned address";
  case CUDA_ERROR_LAUNCH_FAILED:
    return "unspecified launch failure";
  case CUDA_ERROR_NOT_PERMITTED:
    return "operation not permitted";
  case CUDA_ERROR_NOT_SUPPORTED:
    return "operation not supported";
  case CUDA_ERROR_UNKNOWN:
    return "unknown error";
  default:
    return nullptr;
  }
}

std::string nameWith(const DriverApi *api, CUresult code) {
  if (api && api->cuGetErrorName) {
    const char *s = nullptr;
    if (api->cuGetErrorName(code, &s) == CUDA_SUCCESS && s && *s)
      return s;
  }
  if (const char *s = fallbackName(code))
    return s;
  return "CUDA_ERROR_UNRECOGNIZED_" + std::to_string(static_cast<int>(code));
}

std::string textWith(const DriverApi *api, CUresult code) {
  if (api && api->cuGetErrorString) {
    const char *s = nullptr;
    if (api->cuGetErrorString(code, &s) == CUDA_SUCCESS && s && *s)
      return s;
  }
  if (const char *s = fallbackText(code))
    return s;
  return {};
}

std::string describe(const DriverApi *api, CUresult code) {
  std::string out = nameWith(api, code) + " (" + std::to_string(static_cast<int>(code)) + ")";
  std::string text = textWith(api, code);
  if (!text.empty())
    out += ": " + text;
  return out;
}

void markShuttingDown() { gShuttingDown.store(true, std::memory_order_release); }

// The child handler of fork() (runtime/Fork.h): the driver's contexts do not survive fork(), so
// the child refuses every later use (driver() throws ForkedAfterInit) instead of hanging or
// crashing in the driver.
void markForkedChild() {
  if (!gState || !gState->ok)
    return;
  gState->ok = false;
  gState->forked = true;
  gState->error = "CUDA initialized before forking: this process was forked (fork(), or "
                  "multiprocessing's 'fork' start method) after its parent initialized CUDA, "
                  "and cannot use it; start workers with the 'spawn' method instead";
  detail::gLoadedApi.store(nullptr, std::memory_order_release);
}

DriverState loadDriver() {
  DriverState st;
  const char *env = std::getenv("PTXJIT_LIBCUDA");
  std::string path = (env && *env) ? env : "libcuda.so.1";

  dlerror();
  std::optional<StartupTimer> timer(std::in_place, "dlopen and dlsym of the CUDA driver");
  // Never closed: the driver stays loaded for the life of the process.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    st.error = "the CUDA driver library " + path + " could not be loaded (" +
               (err ? err : "unknown dlopen error") +
               "); a GPU with the NVIDIA driver is needed for the CUDA backend";
    return st;
  }

  std::string missing;
#define PTXJIT_RESOLVE(name)                                                                       \
  if (void *sym = dlsym(handle, #name))                                                            \
    st.api.name = reinterpret_cast<decltype(st.api.name)>(sym);                                    \
  else                                                                                             \
    missing += (missing.empty() ? "" : ", ") + std::string(#name);
  PTXJIT_CUDA_DRIVER_ENTRY_POINTS(PTXJIT_RESOLVE)
#undef PTXJIT_RESOLVE
#define PTXJIT_RESOLVE_OPTIONAL(name)                                                              \
  st.api.name = reinterpret_cast<decltype(st.api.name)>(dlsym(handle, #name));
  PTXJIT_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(PTXJIT_RESOLVE_OPTIONAL)
#undef PTXJIT_RESOLVE_OPTIONAL
  if (!missing.empty()) {
    st.error = "the CUDA driver library " + path + " lacks the entry points " + missing +
               " (the installed NVIDIA driver is too old)";
    return st;
  }

  timer.emplace("cuInit");
  CUresult r = st.api.cuInit(0);
  timer.reset();
  if (r != CUDA_SUCCESS) {
    st.error = "cuInit failed: " + describe(&st.api, r) + " (driver library " + path + ")";
    return st;
  }
  // Registered after cuInit, so it runs before the teardown handlers the driver registered.
  std::atexit(markShuttingDown);

  r = st.api.cuDriverGetVersion(&st.api.version);
  if (r != CUDA_SUCCESS) {
    st.error = "cuDriverGetVersion failed: " + describe(&st.api, r);
    return st;
  }
  int count = 0;
  r = st.api.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    st.error = "cuDeviceGetCount failed: " + describe(&st.api, r);
    return st;
  }
  if (count <= 0) {
    st.error =
        "no CUDA device is visible (cuDeviceGetCount returned 0; check CUDA_VISIBLE_DEVICES)";
    return st;
  }
  st.ok = true;
  return st;
}

// Serializes the loading. A global (constant-initialized) mutex rather than a function-local
// static, so that a fork() while another thread loads the driver waits for the loading instead
// of leaving the child an initialization guard that never completes.
std::mutex gLoadMutex;
std::atomic<DriverState *> gLoadedState{nullptr}; // published once loaded (or failed)

// Registered at static initialization (runtime/Fork.h: before the lock is first taken).
[[maybe_unused]] const bool gForkHandlersRegistered = [] {
  registerForkLock(gLoadMutex, kForkDriverLoad);
  onForkChild(markForkedChild);
  return true;
}();

const DriverState &driverState() {
  // Loaded once; a failure is kept in the state (no retry). Changed afterwards only by
  // markForkedChild, in a forked child (single-threaded then).
  if (const DriverState *st = gLoadedState.load(std::memory_order_acquire)) [[likely]]
    return *st;
  std::lock_guard<std::mutex> lock(gLoadMutex);
  if (const DriverState *st = gLoadedState.load(std::memory_order_acquire))
    return *st;
  auto *state = new DriverState(loadDriver()); // never destroyed: the driver stays loaded
  if (state->ok) {
    gState = state;
    detail::gLoadedApi.store(&state->api, std::memory_order_release);
  }
  gLoadedState.store(state, std::memory_order_release);
  return *state;
}

} // namespace

CudaError::CudaError(CUresult code, std::string call, const std::string &detail)
    : std::runtime_error(
          call + " failed: " + describe(detail::gLoadedApi.load(std::memory_order_acquire), code) +
          (detail.empty() ? std::string() : "\n" + detail)),
      code_(code), call_(std::move(call)) {}

namespace detail {
std::atomic<const DriverApi *> gLoadedApi{nullptr};
} // namespace detail

const DriverApi &detail::loadedDriver() {
  const DriverState &st = driverState();
  if (!st.ok) [[unlikely]] {
    if (st.forked)
      throw ForkedAfterInit(st.error);
    throw DriverUnavailable("CUDA driver unavailable: " + st.error);
  }
  return st.api;
}

bool driverAvailable(std::string *why) noexcept {
  try {
    const DriverState &st = driverState();
    if (!st.ok && why)
      *why = st.error;
    return st.ok;
  } catch (...) { // std::bad_alloc while loading
    if (why)
      *why = "the CUDA driver could not be loaded (out of memory)";
    return false;
  }
}

int driverVersion() { return driver().version; }

bool driverLoadAttempted() noexcept {
  return gLoadedState.load(std::memory_order_acquire) != nullptr;
}

namespace {

// The driver's CUDA version before cuInit: cuDriverGetVersion is one of the calls CUDA allows
// before it. The library is opened again (dlopen counts references; it stays loaded, as the
// driver does) rather than through driver(), which would call cuInit and wait for it.
int driverVersionWithoutInit(const std::string &path) {
  if (const DriverState *st = gLoadedState.load(std::memory_order_acquire); st && st->ok)
    return st->api.version;
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return 0;
  auto get = reinterpret_cast<CUresult (*)(int *)>(dlsym(handle, "cuDriverGetVersion"));
  int version = 0;
  if (!get || get(&version) != CUDA_SUCCESS)
    version = 0;
  return version;
}

DeviceSetIdentity readIdentity() {
  const char *env = std::getenv("PTXJIT_LIBCUDA");
  std::string path = (env && *env) ? env : "libcuda.so.1";
  DeviceSetIdentity id;
  id.driverVersion = driverVersionWithoutInit(path);
  if (id.driverVersion <= 0)
    return {};
  id.text =
      "driver library: " + path + "\nCUDA version: " + std::to_string(id.driverVersion) + "\n";
  namespace fs = std::filesystem;
  {
    std::ifstream in("/proc/driver/nvidia/version");
    std::string line;
    if (std::getline(in, line))
      id.text += "kernel module: " + line + "\n";
  }
  // The GPUs by PCI address: the directory's names only. Reading a GPU's `information` file
  // asks the driver (its model, UUID, firmware), which may wait for a cuInit under way.
  std::error_code ec;
  std::vector<std::string> gpus;
  for (const auto &e : fs::directory_iterator("/proc/driver/nvidia/gpus", ec))
    gpus.push_back("gpu " + e.path().filename().string() + "\n");
  std::sort(gpus.begin(), gpus.end());
  for (const std::string &g : gpus)
    id.text += g;
  for (const char *name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    const char *v = std::getenv(name);
    id.text += std::string(name) + (v ? "=" + std::string(v) : std::string(" unset")) + "\n";
  }
  return id;
}

} // namespace

const DeviceSetIdentity &deviceSetIdentity() noexcept {
  static const DeviceSetIdentity identity = [] {
    try {
      return readIdentity();
    } catch (...) { // std::bad_alloc, a /proc directory that fails while being listed
      return DeviceSetIdentity{};
    }
  }();
  return identity;
}

bool driverShuttingDown() noexcept { return gShuttingDown.load(std::memory_order_acquire); }

std::string errorName(CUresult code) {
  return nameWith(detail::gLoadedApi.load(std::memory_order_acquire), code);
}

std::string errorString(CUresult code) {
  return textWith(detail::gLoadedApi.load(std::memory_order_acquire), code);
}

void throwCudaError(CUresult code, const char *call) { throw CudaError(code, call); }

} // namespace ptxjit::runtime
