// The CUDA driver API, opened lazily with dlopen("libcuda.so.1") and never linked, so that the
// whole project builds and runs (CPU backend) on machines without a driver or a GPU.
//
// Only the declarations of cuda.h are used. Every entry point is resolved by its real exported,
// versioned name (cuda.h #defines e.g. cuMemAlloc to cuMemAlloc_v2; dlsym needs the latter).
#pragma once

#include "runtime/CudaApi.h"

#include <atomic>
#include <stdexcept>
#include <string>

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error                                                                                             \
    "ptxjit's runtime resolves the legacy-default-stream entry points; do not define CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

namespace ptxjit::runtime {

// X-macro list of the driver entry points the runtime uses, by their exported symbol names.
// Each name must be the real symbol (never a cuda.h macro): Driver.cpp checks this at compile
// time. The DriverApi member of the same name has the type of cuda.h's declaration.
#define PTXJIT_CUDA_DRIVER_ENTRY_POINTS(X)                                                         \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)                                                                              \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDeviceTotalMem_v2)                                                                           \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease_v2)                                                                  \
  X(cuCtxGetCurrent)                                                                               \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuCtxSetLimit)                                                                                 \
  X(cuCtxGetLimit)                                                                                 \
  X(cuDeviceCanAccessPeer)                                                                         \
  X(cuCtxEnablePeerAccess)                                                                         \
  X(cuMemcpyPeer)                                                                                  \
  X(cuMemcpyPeerAsync)                                                                             \
  X(cuMemGetInfo_v2)                                                                               \
  X(cuMemAlloc_v2)                                                                                 \
  X(cuMemFree_v2)                                                                                  \
  X(cuMemAllocAsync)                                                                               \
  X(cuMemFreeAsync)                                                                                \
  X(cuDeviceGetDefaultMemPool)                                                                     \
  X(cuMemPoolSetAttribute)                                                                         \
  X(cuMemcpyHtoD_v2)                                                                               \
  X(cuMemcpyDtoH_v2)                                                                               \
  X(cuMemcpyDtoD_v2)                                                                               \
  X(cuMemcpyHtoDAsync_v2)                                                                          \
  X(cuMemcpyDtoHAsync_v2)                                                                          \
  X(cuMemcpyDtoDAsync_v2)                                                                          \
  X(cuMemsetD8_v2)                                                                                 \
  X(cuMemsetD8Async)                                                                               \
  X(cuModuleLoadDataEx)                                                                            \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncGetAttribute)                                                                            \
  X(cuFuncSetAttribute)                                                                            \
  X(cuOccupancyMaxPotentialBlockSize)                                                              \
  X(cuLaunchKernel)                                                                                \
  X(cuStreamCreate)                                                                                \
  X(cuStreamDestroy_v2)                                                                            \
  X(cuStreamSynchronize)                                                                           \
  X(cuStreamQuery)                                                                                 \
  X(cuStreamWaitEvent)                                                                             \
  X(cuEventCreate)                                                                                 \
  X(cuEventDestroy_v2)                                                                             \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventQuery)                                                                                  \
  X(cuMemHostAlloc)                                                                                \
  X(cuMemFreeHost)                                                                                 \
  X(cuMemHostGetDevicePointer_v2)                                                                  \
  X(cuMemHostRegister_v2)                                                                          \
  X(cuMemHostUnregister)                                                                           \
  X(cuMemAllocManaged)                                                                             \
  X(cuPointerGetAttribute)

// Entry points that older drivers lack: resolved when present, else left null (callers check).
// cuFuncGetParamInfo: CUDA 12.4.
// Optional: null when the driver lacks them (the linker is only needed for link=).
// cuEventElapsedTime_v2 (what cuda.h 13 names cuEventElapsedTime): CUDA 12.8; without it events
// cannot be timed, everything else works.
// cuMemPoolSetAccess (CUDA 11.2): without it a peer's stream-ordered pool memory stays out of
// reach of kernels even with peer access enabled.
// Stream capture and graphs (runtime/Graph.h): CUDA 11.4 (cuGraphInstantiateWithFlags); without
// them cuda.graph() raises, everything else works. cuStreamGetCaptureInfo_v3 (CUDA 12.3) and
// cuGraphExecKernelNodeSetParams_v2 (12.0): a captured kernel's arguments set anew (Graph.h);
// without them graphs replay what they captured.
// cuLaunchCooperativeKernel (CUDA 9) and cuOccupancyMaxActiveBlocksPerMultiprocessor: kernels
// that synchronize their grid (cuda.cg); without them such kernels cannot be launched.
// cuDeviceGetUuid_v2 (CUDA 11.4): Device.uuid. cuStreamGetFlags: whether an external stream is
// non-blocking (runtime/Stream.h, joinLegacyStreamAfter); without it none is taken to be.
#define PTXJIT_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(X)                                                \
  X(cuFuncGetParamInfo)                                                                            \
  X(cuDeviceGetUuid_v2)                                                                            \
  X(cuStreamGetFlags)                                                                              \
  X(cuModuleGetGlobal_v2)                                                                          \
  X(cuEventElapsedTime_v2)                                                                         \
  X(cuLinkCreate_v2)                                                                               \
  X(cuLinkAddData_v2)                                                                              \
  X(cuLinkComplete)                                                                                \
  X(cuLinkDestroy)                                                                                 \
  X(cuStreamBeginCapture_v2)                                                                       \
  X(cuStreamEndCapture)                                                                            \
  X(cuStreamIsCapturing)                                                                           \
  X(cuGraphInstantiateWithFlags)                                                                   \
  X(cuGraphLaunch)                                                                                 \
  X(cuGraphGetNodes)                                                                               \
  X(cuGraphExecDestroy)                                                                            \
  X(cuGraphDestroy)                                                                                \
  X(cuStreamGetCaptureInfo_v3)                                                                     \
  X(cuGraphExecKernelNodeSetParams_v2)                                                             \
  X(cuMemPoolSetAccess)                                                                            \
  X(cuLaunchCooperativeKernel)                                                                     \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

// The resolved entry points. Every member of PTXJIT_CUDA_DRIVER_ENTRY_POINTS is non-null in the
// object returned by driver(); those of PTXJIT_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS may be null.
// Call them as `driver().cuMemAlloc_v2(...)` (or `driver().cuMemAlloc(...)`, which cuda.h's macro
// maps to the same member). Callers must make the runtime's context current first (see
// Device::current()); the runtime's own functions do.
struct DriverApi {
#define PTXJIT_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  PTXJIT_CUDA_DRIVER_ENTRY_POINTS(PTXJIT_DECLARE_ENTRY)
  PTXJIT_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(PTXJIT_DECLARE_ENTRY)
#undef PTXJIT_DECLARE_ENTRY
  int version = 0; // cuDriverGetVersion, e.g. 13000 for CUDA 13.0
};

// Thrown when the CUDA driver cannot be used: libcuda.so.1 missing (with the dlerror text), an
// entry point missing (driver too old), cuInit failing (with its CUresult name), or no device.
class DriverUnavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Thrown by driver() in a process forked after its parent loaded the driver: the child cannot
// use CUDA (the driver's state does not survive fork()). what() starts with "CUDA initialized
// before forking". Use the 'spawn' or 'forkserver' start method of multiprocessing instead.
class ForkedAfterInit : public DriverUnavailable {
public:
  using DriverUnavailable::DriverUnavailable;
};

// A failed driver call. what() reads "<call> failed: <NAME> (<code>): <text>[\n<detail>]", e.g.
// "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory". The name and text come from
// cuGetErrorName/cuGetErrorString when the driver is loaded, else from a built-in table; a name
// is always given (unknown codes read "CUDA_ERROR_UNRECOGNIZED_<code>").
class CudaError : public std::runtime_error {
public:
  // `call` is the API name shown to the user (unsuffixed, e.g. "cuMemAlloc"); `detail`, when not
  // empty, is appended on a new line (e.g. a JIT error log).
  CudaError(CUresult code, std::string call, const std::string &detail = {});
  // The driver's result code.
  CUresult code() const noexcept { return code_; }
  // The failing call's name as given to the constructor.
  const std::string &call() const noexcept { return call_; }

private:
  CUresult code_;
  std::string call_;
};

// Loads the driver on the first call (thread-safe, exactly once: a failure is remembered and
// re-thrown by later calls) and returns the entry-point table. Loading = dlopen libcuda.so.1
// (or the file named by the environment variable PTXJIT_LIBCUDA, for tests), dlsym of every
// entry point, cuInit(0), cuDriverGetVersion, and cuDeviceGetCount > 0.
// Throws DriverUnavailable saying why, ForkedAfterInit in a child forked after the loading.
// Inline: every launch asks, and once loaded the answer is one load.
const DriverApi &driver();

namespace detail {
// The loaded entry points (null until loaded, on failure, and in a forked child).
extern std::atomic<const DriverApi *> gLoadedApi;
// driver() when gLoadedApi is null: loads, or throws why not.
const DriverApi &loadedDriver();
} // namespace detail

inline const DriverApi &driver() {
  if (const DriverApi *api = detail::gLoadedApi.load(std::memory_order_acquire)) [[likely]]
    return *api;
  return detail::loadedDriver();
}

// True when driver() succeeds. Never throws; on false, stores the reason into *why if given.
bool driverAvailable(std::string *why = nullptr) noexcept;

// The driver's CUDA version (cuDriverGetVersion, e.g. 13000). Throws DriverUnavailable.
int driverVersion();

// True once driver() has loaded the driver or failed to: driver() and driverAvailable() then
// return at once. False while nothing has asked for it yet (a cuInit started elsewhere, e.g. by
// the Python package's early thread, may be under way). Never blocks, never throws.
bool driverLoadAttempted() noexcept;

// What identifies the CUDA devices this process will see, read without cuInit (which takes
// 100-200 ms). `text` holds one line per fact: the driver library's name (PTXJIT_LIBCUDA or
// libcuda.so.1) and CUDA version, the kernel module's version line and the PCI address of each
// GPU it lists (/proc/driver/nvidia, when present), CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER.
// `driverVersion` is cuDriverGetVersion's answer, which CUDA gives before cuInit. Both are empty
// (0) when the library cannot be opened or reports no version. Read once per process (dlopening
// the library when nothing has, without the loading lock that driver() holds during cuInit).
// Never throws.
struct DeviceSetIdentity {
  int driverVersion = 0;
  std::string text;
};
const DeviceSetIdentity &deviceSetIdentity() noexcept;

// True once the process has begun exiting after the driver was loaded (set by an atexit handler
// registered right after cuInit, so it runs before the driver's own teardown). Destructors of
// driver-owned resources (modules, allocations, streams) skip their driver calls when this is
// true. Never throws.
bool driverShuttingDown() noexcept;

// The CUresult's enumerator name, e.g. "CUDA_ERROR_OUT_OF_MEMORY" (driver's cuGetErrorName if
// loaded, else the built-in table, else "CUDA_ERROR_UNRECOGNIZED_<code>"). Never throws.
std::string errorName(CUresult code);

// The CUresult's description, e.g. "out of memory" (driver's cuGetErrorString if loaded, else a
// built-in text for the common codes, else ""). Never throws.
std::string errorString(CUresult code);

// Throws CudaError(code, call). Out of line so check() stays small.
[[noreturn]] void throwCudaError(CUresult code, const char *call);

// Throws CudaError(result, call) unless result is CUDA_SUCCESS.
inline void check(CUresult result, const char *call) {
  if (result != CUDA_SUCCESS) [[unlikely]]
    throwCudaError(result, call);
}

} // namespace ptxjit::runtime
