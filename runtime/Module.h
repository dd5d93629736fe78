// A loaded CUDA module (PTX JIT-compiled by the driver for the runtime's device).
#pragma once

#include "runtime/Driver.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ptxjit::runtime {

// Owns a CUmodule in the device's primary context; unloads it on destruction (skipped once the
// process is exiting, see driverShuttingDown()). Thread-safe.
class Module {
public:
  // JIT-compiles and loads `ptx` (PTX text) with cuModuleLoadDataEx, capturing the JIT info and
  // error logs, into the calling thread's current device (Device::current()).
  // Throws std::invalid_argument for an empty text, DriverUnavailable, or CudaError whose what()
  // ends with "JIT error log:\n<the JIT compiler's log>" when the driver produced a log.
  static std::shared_ptr<Module> loadPTX(const std::string &ptx);

  // External code linked with a module's PTX (cuda.jit(link=...), cuda.declare_device's link=).
  struct LinkInput {
    enum class Kind : uint8_t { Ptx, Cu, Cubin, Fatbin, Object, Library };
    Kind kind;
    std::string name;        // shown in errors (a file name, or a source object's name)
    const std::string *data; // the bytes; CUDA C++ source for Kind::Cu (compiled with NVRTC)
  };
  // Links `ptx` with `inputs` through the driver's linker (cuLink*) for the current device and
  // loads the resulting cubin. CUDA C++ inputs are first compiled to relocatable PTX by NVRTC
  // (runtime/Nvrtc.h) for the device's compute capability. Throws CudaError naming the link
  // step and the input, with the linker's error log; NvrtcError for a CUDA C++ input that does
  // not compile; std::runtime_error when the driver has no linker.
  static std::shared_ptr<Module> loadLinked(const std::string &ptx,
                                            const std::vector<LinkInput> &inputs);

  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  // The kernel (.entry) named `name` (the mangled/exported PTX name). Looked up once, then
  // cached. Throws CudaError (CUDA_ERROR_NOT_FOUND for an unknown name; the message names it).
  CUfunction function(const std::string &name) const;

  // The address and size of the module's global variable `name`. Throws CudaError
  // (CUDA_ERROR_NOT_FOUND for an unknown name), DriverUnavailable when the driver lacks
  // cuModuleGetGlobal.
  std::pair<CUdeviceptr, size_t> global(const std::string &name) const;

  // The device the module was loaded for (the caller's current device at load time).
  int device() const noexcept { return ordinal_; }

  // The driver's module handle.
  CUmodule handle() const noexcept { return module_; }

  // The JIT compiler's info log of the successful load (verbose: registers, spills...); may be
  // empty.
  const std::string &infoLog() const noexcept { return infoLog_; }

private:
  Module(CUmodule module, std::string infoLog, int ordinal);
  CUmodule module_;
  int ordinal_; // the device whose context loaded it
  std::string infoLog_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, CUfunction> functions_;
};

} // namespace ptxjit::runtime
