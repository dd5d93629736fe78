// A loaded CUDA module (PTX JIT-compiled by the driver for the runtime's device).
#pragma once

#include "runtime/Driver.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace ptxjit::runtime {

// Owns a CUmodule in the device's primary context; unloads it on destruction (skipped once the
// process is exiting, see driverShuttingDown()). Thread-safe.
class Module {
public:
  // JIT-compiles and loads `ptx` (PTX text) with cuModuleLoadDataEx, capturing the JIT info and
  // error logs. Makes the device context current on the calling thread first.
  // Throws std::invalid_argument for an empty text, DriverUnavailable, or CudaError whose what()
  // ends with "JIT error log:\n<the JIT compiler's log>" when the driver produced a log.
  static std::shared_ptr<Module> loadPTX(const std::string &ptx);

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

  // The driver's module handle.
  CUmodule handle() const noexcept { return module_; }

  // The JIT compiler's info log of the successful load (verbose: registers, spills...); may be
  // empty.
  const std::string &infoLog() const noexcept { return infoLog_; }

private:
  Module(CUmodule module, std::string infoLog);
  CUmodule module_;
  std::string infoLog_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, CUfunction> functions_;
};

} // namespace ptxjit::runtime
