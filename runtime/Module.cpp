#include "runtime/Module.h"

#include "runtime/Device.h"
#include "runtime/Nvrtc.h"
#include "runtime/StartupTrace.h"

#include <cstdint>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace ptxjit::runtime {
namespace {

constexpr size_t kLogBytes = 64 * 1024;

// The NUL-terminated text the driver wrote, without trailing whitespace.
std::string logText(const std::vector<char> &buf) {
  std::string s(buf.data(), strnlen(buf.data(), buf.size()));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  return s;
}

void *optionValue(uintptr_t v) { return reinterpret_cast<void *>(v); }

// The driver JIT's info and error log buffers and the options that point it at them (module
// loads and the linker take the same ones). Not copyable: the option values point into it.
struct JitLogs {
  std::vector<char> info = std::vector<char>(kLogBytes, '\0');
  std::vector<char> error = std::vector<char>(kLogBytes, '\0');
  CUjit_option options[5] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_LOG_VERBOSE};
  // Sizes leave room for a terminating NUL whatever the driver writes.
  void *values[5] = {info.data(), optionValue(kLogBytes - 1), error.data(),
                     optionValue(kLogBytes - 1), optionValue(1)};

  JitLogs() = default;
  JitLogs(const JitLogs &) = delete;
  JitLogs &operator=(const JitLogs &) = delete;
  unsigned count() const { return static_cast<unsigned>(std::size(options)); }
  // "<what> error log:\n..." (else the info log) for an error message; empty when both are.
  std::string detail(const std::string &what) const {
    if (std::string e = logText(error); !e.empty())
      return what + " error log:\n" + e;
    if (std::string i = logText(info); !i.empty())
      return what + " info log:\n" + i;
    return {};
  }
};

// The driver linker's input type of a link input (CUDA C++ is compiled to PTX before).
CUjitInputType jitInputType(Module::LinkInput::Kind k) {
  using K = Module::LinkInput::Kind;
  switch (k) {
  case K::Ptx:
  case K::Cu:
    return CU_JIT_INPUT_PTX;
  case K::Cubin:
    return CU_JIT_INPUT_CUBIN;
  case K::Fatbin:
    return CU_JIT_INPUT_FATBINARY;
  case K::Object:
    return CU_JIT_INPUT_OBJECT;
  case K::Library:
    return CU_JIT_INPUT_LIBRARY;
  }
  return CU_JIT_INPUT_PTX;
}

} // namespace

Module::Module(CUmodule module, std::string infoLog, int ordinal)
    : module_(module), ordinal_(ordinal), infoLog_(std::move(infoLog)) {}

std::shared_ptr<Module> Module::loadPTX(const std::string &ptx) {
  if (ptx.empty())
    throw std::invalid_argument("Module::loadPTX: the PTX text is empty");
  int ordinal = Device::current().ordinal();

  JitLogs logs;
  CUmodule module = nullptr;
  StartupTimer timer("cuModuleLoadDataEx (the driver's PTX to SASS compile)");
  CUresult r =
      driver().cuModuleLoadDataEx(&module, ptx.c_str(), logs.count(), logs.options, logs.values);
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuModuleLoadDataEx", logs.detail("JIT"));
  // If allocating the Module throws, shared_ptr deletes it, which unloads the module.
  return std::shared_ptr<Module>(new Module(module, logText(logs.info), ordinal));
}

std::shared_ptr<Module> Module::loadLinked(const std::string &ptx,
                                           const std::vector<LinkInput> &inputs) {
  if (ptx.empty())
    throw std::invalid_argument("Module::loadLinked: the PTX text is empty");
  const Device &dev = Device::current();
  const DriverApi &d = driver();
  if (!d.cuLinkCreate_v2 || !d.cuLinkAddData_v2 || !d.cuLinkComplete || !d.cuLinkDestroy)
    throw std::runtime_error("the CUDA driver has no linker (cuLinkCreate): link= needs it");

  JitLogs logs;
  CUlinkState state = nullptr;
  CUresult r = d.cuLinkCreate_v2(logs.count(), logs.options, logs.values, &state);
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuLinkCreate");
  struct Destroy {
    CUlinkState s;
    ~Destroy() { driver().cuLinkDestroy(s); }
  } destroy{state};
  auto fail = [&](CUresult code, const std::string &what) {
    throw CudaError(code, what, logs.detail("linker"));
  };
  auto add = [&](CUjitInputType type, const std::string &data, const std::string &name) {
    // PTX is added with its terminating NUL, as the driver expects text inputs.
    size_t size = type == CU_JIT_INPUT_PTX ? data.size() + 1 : data.size();
    CUresult rr = d.cuLinkAddData_v2(state, type, const_cast<char *>(data.c_str()), size,
                                     name.c_str(), 0, nullptr, nullptr);
    if (rr != CUDA_SUCCESS)
      fail(rr, "cuLinkAddData (" + name + ")");
  };
  add(CU_JIT_INPUT_PTX, ptx, "kernel.ptx");
  for (const LinkInput &in : inputs) {
    if (in.kind == LinkInput::Kind::Cu) // CUDA C++: relocatable PTX for this device first
      add(CU_JIT_INPUT_PTX,
          compileCudaToPtx(*in.data, in.name, dev.computeCapabilityMajor(),
                           dev.computeCapabilityMinor()),
          in.name);
    else
      add(jitInputType(in.kind), *in.data, in.name);
  }
  void *cubin = nullptr;
  size_t cubinSize = 0;
  StartupTimer timer("cuLinkComplete (the driver's PTX to SASS compile and link)");
  if (CUresult rr = d.cuLinkComplete(state, &cubin, &cubinSize); rr != CUDA_SUCCESS)
    fail(rr, "cuLinkComplete");
  CUmodule module = nullptr;
  if (CUresult rr = d.cuModuleLoadDataEx(&module, cubin, 0, nullptr, nullptr); rr != CUDA_SUCCESS)
    throw CudaError(rr, "cuModuleLoadDataEx");
  return std::shared_ptr<Module>(new Module(module, logText(logs.info), dev.ordinal()));
}

Module::~Module() {
  if (!module_)
    return;
  if (Device::Cleanup in{ordinal_})
    driver().cuModuleUnload(module_); // errors ignored: nothing sensible to do in a destructor
}

std::pair<CUdeviceptr, size_t> Module::global(const std::string &name) const {
  const DriverApi &d = driver();
  if (!d.cuModuleGetGlobal_v2)
    throw DriverUnavailable("the CUDA driver has no cuModuleGetGlobal");
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  CUresult r = d.cuModuleGetGlobal_v2(&ptr, &bytes, module_, name.c_str());
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuModuleGetGlobal", "global '" + name + "'");
  return {ptr, bytes};
}

CUfunction Module::function(const std::string &name) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = functions_.find(name);
    if (it != functions_.end())
      return it->second;
  }
  Device::get(ordinal_).makeCurrent(); // the module's own context
  CUfunction fn = nullptr;
  CUresult r = driver().cuModuleGetFunction(&fn, module_, name.c_str());
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuModuleGetFunction",
                    r == CUDA_ERROR_NOT_FOUND ? "no kernel named '" + name + "' in the module"
                                              : "while looking up kernel '" + name + "'");
  std::lock_guard<std::mutex> lock(mutex_);
  functions_.emplace(name, fn);
  return fn;
}

} // namespace ptxjit::runtime
