#include "bindings/Target.h"

#include "bindings/Errors.h"
#include "codegen/Codegen.h"
#include "compiler/DeviceRecord.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Memory.h"
#include "runtime/StartupTrace.h"

#include <pybind11/stl.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace ptxjit::bindings {
namespace {

bool gWarned = false;

/// PTXJIT_TARGET in lower case, or "cpu" for NUMBA_ENABLE_CUDASIM (said once, when `log`).
std::string envTarget(bool log = true) {
  const char *v = std::getenv("PTXJIT_TARGET");
  std::string s = v ? v : "";
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // numba-cuda's NUMBA_ENABLE_CUDASIM=1 runs kernels in its simulator, without a GPU: ptxjit's
  // nearest is the CPU backend (compiled, not interpreted), unless PTXJIT_TARGET decides.
  if (const char *sim = std::getenv("NUMBA_ENABLE_CUDASIM");
      s.empty() && sim && *sim && std::string(sim) != "0") {
    if (log)
      logInfo("NUMBA_ENABLE_CUDASIM=" + std::string(sim) +
              ": ptxjit has no CUDA simulator; kernels run on its CPU backend (compiled, with "
              "bounds checks), as PTXJIT_TARGET=cpu would choose");
    return "cpu";
  }
  return s;
}

codegen::Backend decide(const std::string &name, bool fromEnv) {
  if (name == "cpu" || name == "host")
    return codegen::Backend::Host;
  if (name == "cuda" || name == "gpu") {
    std::string why;
    if (!runtime::driverAvailable(&why))
      throw PtxjitPyError("CudaSupportError",
                          std::string(fromEnv ? "PTXJIT_TARGET=cuda" : "the CUDA target") +
                              " was requested but CUDA cannot be used: " + why);
    return codegen::Backend::CUDA;
  }
  if (name.empty()) {
    std::string why;
    if (runtime::driverAvailable(&why))
      return codegen::Backend::CUDA;
    if (!gWarned) {
      gWarned = true;
      warn("ptxjit: no usable CUDA driver or GPU (" + why +
           "); kernels run on the CPU backend. Set PTXJIT_TARGET=cpu to silence this warning, "
           "or PTXJIT_TARGET=cuda to require a GPU.");
    }
    return codegen::Backend::Host;
  }
  throw std::invalid_argument("PTXJIT_TARGET must be 'cpu' or 'cuda', not '" + name + "'");
}

/// Once the GPU is in use, device memory comes from the driver's stream-ordered pool (a caching
/// allocator: freed blocks are reused without cuMemFree/cuMemAlloc), unless
/// PTXJIT_ALLOCATOR=plain or the device lacks memory pools (then cuMemAlloc stays). The pool's
/// slow first allocation is made on a thread of its own; the process's first allocations use
/// cuMemAlloc until it is done (runtime::usePoolAllocatorAfterWarmUp).
void useCachingAllocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *v = std::getenv("PTXJIT_ALLOCATOR");
    if (v && std::string(v) == "plain")
      return;
    runtime::usePoolAllocatorAfterWarmUp();
  });
}

/// What this process found in the device record (compiler/DeviceRecord.h) when it looked, before
/// CUDA started; `looked` stays false in a process whose driver was loaded before any compile.
/// Guarded by `mutex` (a lookup and a keep may run on two threads).
struct RecordState {
  std::mutex mutex;
  bool looked = false;
  std::optional<compiler::RememberedCapability> found;
};
RecordState &recordState() {
  static RecordState *s = new RecordState(); // never destroyed: compiles may run at exit
  return *s;
}

/// The compute capability of the device record for the devices this process will see, while the
/// backend is undecided, may become CUDA, and nothing has loaded the driver yet (a cuInit may be
/// under way on the Python package's early thread): what an eager compile at decoration uses
/// instead of waiting for CUDA's start-up. nullopt otherwise.
std::optional<compiler::RememberedCapability> capabilityBeforeCudaStarts() {
  if (detail::gBackend.load(std::memory_order_acquire) != detail::kBackendUndecided ||
      runtime::driverLoadAttempted())
    return std::nullopt;
  std::string target = envTarget(/*log=*/false);
  if (!target.empty() && target != "cuda" && target != "gpu")
    return std::nullopt;
  // Read once per process: only this process's keepDeviceRecord changes the record, and only
  // once the driver has loaded, when it is no longer consulted.
  RecordState &r = recordState();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.looked) {
    {
      runtime::StartupTimer timer("identifying the devices without cuInit");
      runtime::deviceSetIdentity();
    }
    runtime::StartupTimer timer("reading the device record");
    r.found = compiler::readDeviceRecord(runtime::deviceSetIdentity().text);
    r.looked = true;
  }
  return r.found;
}

/// Records `cc`, the devices' compute capability as CUDA reports it, for later processes, when
/// this process looked for a record before CUDA started (an eager compile came first, as it
/// will in the next run of the same program) and found none or another; once per process. A
/// process that never looked pays a lock here, once.
void keepDeviceRecord(runtime::ComputeCapability cc) {
  static std::atomic<bool> done{false};
  if (done.load(std::memory_order_acquire))
    return;
  RecordState &r = recordState();
  std::lock_guard<std::mutex> lock(r.mutex);
  compiler::RememberedCapability actual{cc.major, cc.minor};
  if (!done.load(std::memory_order_relaxed) && r.looked && r.found != actual)
    compiler::writeDeviceRecord(runtime::deviceSetIdentity().text, actual);
  done.store(true, std::memory_order_release);
}

/// CUDA options for compute capability major.minor and a driver of CUDA version
/// `driverVersion` (0: unknown, the newest PTX LLVM writes).
codegen::CompileOptions cudaOptions(int major, int minor, int driverVersion,
                                    const compiler::FunctionOptions &fo);

} // namespace

void startCuda() {
  // Once per process: later compiles and allocations find the device open (or opening) anyway.
  static std::atomic<bool> started{false};
  if (started.load(std::memory_order_acquire)) [[likely]]
    return;
  if (started.exchange(true, std::memory_order_acq_rel))
    return;
  try {
    runtime::Device::openInBackground(useCachingAllocator);
  } catch (const std::exception &) {
    // An earlier failed opening (reported again by the next Device::current()), or no thread.
  }
}

std::atomic<int> detail::gBackend{detail::kBackendUndecided};

codegen::Backend detail::chooseBackend() {
  runtime::StartupTimer timer("choosing the backend");
  codegen::Backend chosen = decide(envTarget(), true);
  detail::gBackend.store(static_cast<int>(chosen), std::memory_order_release);
  return chosen;
}

void selectTarget(const std::string &name) {
  if (name.empty()) {
    detail::gBackend.store(detail::kBackendUndecided, std::memory_order_release);
    return;
  }
  codegen::Backend chosen = decide(name, false);
  detail::gBackend.store(static_cast<int>(chosen), std::memory_order_release);
}

const char *backendName(codegen::Backend b) { return b == codegen::Backend::CUDA ? "cuda" : "cpu"; }

bool cudaAvailable(std::string *why) { return runtime::driverAvailable(why); }

namespace {

bool boundscheckFor(codegen::Backend b, const compiler::FunctionOptions &fo) {
  // PTXJIT_BOUNDSCHECK=0/1 decides for every kernel (as NUMBA_BOUNDSCHECK); else the
  // decorator's boundscheck=; else on for the CPU backend, and on CUDA with debug=True.
  static const int env = [] {
    const char *v = std::getenv("PTXJIT_BOUNDSCHECK");
    if (!v || !*v)
      return -1;
    return std::string(v) == "0" ? 0 : 1;
  }();
  if (env >= 0)
    return env == 1;
  if (fo.boundscheck >= 0)
    return fo.boundscheck == 1;
  return b == codegen::Backend::Host || fo.debug;
}

} // namespace

codegen::CompileOptions cudaOptionsForCC(int major, int minor,
                                         const compiler::FunctionOptions &fo) {
  int driver = 0;
  if (detail::gBackend.load() != static_cast<int>(codegen::Backend::Host) &&
      runtime::driverAvailable())
    driver = runtime::driverVersion();
  return cudaOptions(major, minor, driver, fo);
}

namespace {

codegen::CompileOptions cudaOptions(int major, int minor, int driverVersion,
                                    const compiler::FunctionOptions &fo) {
  codegen::CompileOptions o;
  o.backend = codegen::Backend::CUDA;
  o.ccMajor = major;
  o.ccMinor = minor;
  o.ptxVersion = codegen::choosePtxVersion(major, minor, driverVersion);
  o.fastmath = fo.fastmath;
  o.optLevel = fo.opt ? 3 : 0;
  o.debugInfo = fo.debug      ? codegen::CompileOptions::DebugInfo::LineTables
                : fo.lineinfo ? codegen::CompileOptions::DebugInfo::LineInfo
                              : codegen::CompileOptions::DebugInfo::None;
  o.maxThreadsPerBlock = fo.maxThreadsPerBlock;
  o.minBlocksPerSM = fo.minBlocksPerSM;
  o.maxClusterRank = fo.maxClusterRank;
  o.maxRegisters = fo.maxRegisters;
  o.carveout = fo.carveout;
  o.boundscheck = boundscheckFor(codegen::Backend::CUDA, fo);
  o.exceptions = fo.debug; // numba-cuda raises kernel exceptions on the host with debug=True
  return o;
}

} // namespace

codegen::Backend eagerCompileBackend() {
  if (capabilityBeforeCudaStarts())
    return codegen::Backend::CUDA;
  return currentBackend();
}

codegen::CompileOptions compileOptionsFor(codegen::Backend b, const compiler::FunctionOptions &fo) {
  if (b == codegen::Backend::Host) {
    codegen::CompileOptions o;
    o.backend = codegen::Backend::Host;
    o.fastmath = fo.fastmath;
    o.optLevel = fo.opt ? 3 : 0;
    o.boundscheck = boundscheckFor(b, fo);
    o.exceptions = fo.debug;
    return o;
  }
  // Before CUDA has started, the device record's guess: a compile at decoration then need not
  // wait for cuInit. The first launch takes the options again, from CUDA (below): the same
  // options find the same specialization; a stale record costs one more compile.
  if (std::optional<compiler::RememberedCapability> cc = capabilityBeforeCudaStarts()) {
    runtime::traceStartup("compile options from the device record, CUDA not waited for", 0.0);
    return cudaOptions(cc->major, cc->minor, runtime::deviceSetIdentity().driverVersion, fo);
  }
  int major = 9, minor = 0;
  // The devices' compute capability whenever the GPU is (or may become) the backend in use.
  // Read without a context, so that the background opening started here is not waited for.
  if (detail::gBackend.load() != static_cast<int>(codegen::Backend::Host) &&
      runtime::driverAvailable()) {
    if (detail::gBackend.load() == static_cast<int>(codegen::Backend::CUDA))
      startCuda(); // the first compile overlaps the opening of the compiling thread's device
    runtime::ComputeCapability cc = runtime::deviceComputeCapability();
    major = cc.major;
    minor = cc.minor;
    keepDeviceRecord(cc);
  }
  return cudaOptionsForCC(major, minor, fo);
}

} // namespace ptxjit::bindings
