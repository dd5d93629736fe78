// Shared by the bench's native peers (bare_launch, libbare_launch.so, bare_startup): the CUDA
// driver loaded with dlopen (libcuda is never linked, so these build where no driver is
// installed), error text, and the kernel arguments of a layout such as "f64,a1,a1,a1" laid out
// as ptxjit's kernel ABI flattens them.
//
// The driver library is $PTXJIT_BENCH_LIBCUDA if set (bench tests point it at a fake driver),
// else $PTXJIT_LIBCUDA (the library ptxjit itself loads, so that an in-process launcher shares
// ptxjit's driver and contexts), else libcuda.so.1.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace bare {

// The entry points used, by their ABI names: cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so on
// with macros, and dlsym needs the versioned name (the unversioned symbols are the old ABI).
#define BARE_DRIVER_ENTRY_POINTS(X)                                                                \
  X(cuInit)                                                                                        \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease_v2)                                                                  \
  X(cuCtxGetCurrent)                                                                               \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuLaunchKernel)                                                                                \
  X(cuMemAlloc_v2)                                                                                 \
  X(cuMemFree_v2)                                                                                  \
  X(cuMemcpyHtoD_v2)                                                                               \
  X(cuMemcpyDtoH_v2)

// The driver's entry points; `cuGetErrorName` is optional (null if absent).
struct Driver {
#define BARE_DECLARE(name) decltype(&::name) name = nullptr;
  BARE_DRIVER_ENTRY_POINTS(BARE_DECLARE)
#undef BARE_DECLARE
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
};

// The path of the driver library to load (see the file comment).
inline std::string driverPath() {
  for (const char *var : {"PTXJIT_BENCH_LIBCUDA", "PTXJIT_LIBCUDA"})
    if (const char *v = std::getenv(var); v && *v)
      return v;
  return "libcuda.so.1";
}

// dlopen()s the driver (never closed) and resolves every entry point into `d`; false with
// `error` set if the library or an entry point is missing. cuInit is not called.
inline bool loadDriver(Driver &d, std::string &error) {
  std::string path = driverPath();
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    error = "cannot load the CUDA driver " + path + ": " + (e ? e : "dlopen failed");
    return false;
  }
  std::string missing;
#define BARE_RESOLVE(name)                                                                         \
  d.name = reinterpret_cast<decltype(d.name)>(dlsym(lib, #name));                                  \
  if (!d.name)                                                                                     \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
  BARE_DRIVER_ENTRY_POINTS(BARE_RESOLVE)
#undef BARE_RESOLVE
  d.cuGetErrorName = reinterpret_cast<decltype(d.cuGetErrorName)>(dlsym(lib, "cuGetErrorName"));
  if (!missing.empty()) {
    error = "the CUDA driver " + path + " lacks " + missing;
    return false;
  }
  return true;
}

// "what failed: CUDA_ERROR_NAME (code)".
inline std::string errorText(const Driver &d, const char *what, CUresult r) {
  const char *name = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(r, &name);
  return std::string(what) + " failed: " + (name ? name : "CUDA error") + " (" +
         std::to_string(static_cast<int>(r)) + ")";
}

// The number of `.param` declarations of `.entry <entry>(...)` in `ptx`; -1 if the entry is
// not found. Guards against a layout that does not match the kernel: cuLaunchKernel reads as
// many argument pointers as the kernel has parameters.
inline int entryParamCount(const std::string &ptx, const std::string &entry) {
  size_t pos = 0;
  while ((pos = ptx.find(".entry", pos)) != std::string::npos) {
    size_t name = ptx.find_first_not_of(" \t\r\n", pos + 6);
    pos += 6;
    if (name == std::string::npos || ptx.compare(name, entry.size(), entry) != 0)
      continue;
    size_t after = name + entry.size();
    if (after < ptx.size() && (std::isalnum(static_cast<unsigned char>(ptx[after])) ||
                               ptx[after] == '_' || ptx[after] == '$'))
      continue; // a longer name with `entry` as its prefix
    size_t open = ptx.find_first_not_of(" \t\r\n", after);
    if (open == std::string::npos || ptx[open] != '(')
      return 0; // no parameter list
    size_t close = ptx.find(')', open);
    if (close == std::string::npos)
      return -1;
    int count = 0;
    for (size_t p = ptx.find(".param", open); p != std::string::npos && p < close;
         p = ptx.find(".param", p + 6))
      ++count;
    return count;
  }
  return -1;
}

// Kernel arguments built from a layout: either a count N (N 8-byte zeros) or a comma-separated
// list of f32, f64, i64 (scalars 1.5f, 1.5, 256) and aN (a float32 array of N <= 3 dimensions,
// 256 elements per dimension, allocated on the device and passed as ptxjit's kernel ABI
// flattens it: data pointer, N shapes, N byte strides). Every parameter has an 8-byte slot of
// its own (4-byte values use the low half, as cuLaunchKernel reads only their size) for
// kernelParams, and a place in one packed buffer (each value aligned to its size, as the
// kernel's parameters lie) for CU_LAUNCH_PARAM_BUFFER_POINTER.
class Arguments {
public:
  Arguments() = default;
  Arguments(const Arguments &) = delete;
  Arguments &operator=(const Arguments &) = delete;

  // Parses `layout` and allocates its arrays in the current context; false with `error` set on
  // a bad token or a failed allocation (what was allocated is freed by the destructor).
  bool build(const Driver &d, const std::string &layout, std::string &error) {
    d_ = &d;
    auto add = [&](uint64_t v, size_t size) {
      values_.push_back(v);
      sizes_.push_back(size);
    };
    bool numeric = !layout.empty() && layout.find_first_not_of("0123456789") == std::string::npos;
    if (numeric) {
      for (unsigned long n = std::strtoul(layout.c_str(), nullptr, 10); n > 0; --n)
        add(0, 8);
    } else {
      std::stringstream tokens(layout);
      std::string tok;
      while (std::getline(tokens, tok, ',')) {
        uint64_t v = 0;
        if (tok == "f32") {
          float f = 1.5f;
          std::memcpy(&v, &f, 4);
          add(v, 4);
        } else if (tok == "f64") {
          double x = 1.5;
          std::memcpy(&v, &x, 8);
          add(v, 8);
        } else if (tok == "i64") {
          add(256, 8);
        } else if (tok.size() == 2 && tok[0] == 'a' && tok[1] >= '1' && tok[1] <= '3') {
          int ndim = tok[1] - '0';
          size_t elems = 1;
          for (int k = 0; k < ndim; ++k)
            elems *= 256;
          CUdeviceptr p = 0;
          if (CUresult r = d.cuMemAlloc_v2(&p, elems * 4); r != CUDA_SUCCESS) {
            error = errorText(d, "cuMemAlloc", r);
            return false;
          }
          allocations_.push_back(p);
          add(p, 8);
          for (int k = 0; k < ndim; ++k)
            add(256, 8);
          for (int k = 0; k < ndim; ++k) // C-order byte strides: 4 * 256^(ndim - 1 - k)
            add(uint64_t(4) << (8 * (ndim - 1 - k)), 8);
        } else {
          error = "unknown layout token '" + tok + "' (f32, f64, i64, a1, a2, a3)";
          return false;
        }
      }
    }
    std::vector<size_t> offsets;
    for (size_t i = 0; i < values_.size(); ++i) {
      pointers_.push_back(&values_[i]);
      offsets.push_back((bufferBytes_ + sizes_[i] - 1) / sizes_[i] * sizes_[i]);
      bufferBytes_ = offsets.back() + sizes_[i];
    }
    buffer_.assign(bufferBytes_ / 8 + 1, 0);
    for (size_t i = 0; i < values_.size(); ++i)
      std::memcpy(reinterpret_cast<char *>(buffer_.data()) + offsets[i], &values_[i], sizes_[i]);
    return true;
  }

  ~Arguments() {
    if (d_)
      for (CUdeviceptr p : allocations_)
        d_->cuMemFree_v2(p); // errors ignored
  }

  // The number of kernel parameters the layout makes.
  int count() const { return static_cast<int>(values_.size()); }
  // cuLaunchKernel's kernelParams (null when there are none).
  void **params() { return pointers_.empty() ? nullptr : pointers_.data(); }
  // The same values packed as the kernel's parameter buffer, and its size in bytes (0 when
  // there are no parameters).
  void *buffer() { return buffer_.data(); }
  size_t bufferBytes() const { return bufferBytes_; }

private:
  const Driver *d_ = nullptr;
  std::vector<uint64_t> values_;
  std::vector<size_t> sizes_; // bytes of each value: 4 (f32) or 8
  std::vector<void *> pointers_;
  std::vector<uint64_t> buffer_; // the packed parameter buffer (8-byte aligned)
  size_t bufferBytes_ = 0;
  std::vector<CUdeviceptr> allocations_;
};

// A kernel loaded for a bare cuLaunchKernel loop in the device's primary context (the one
// ptxjit uses): cuInit, cuDeviceGet(0), cuDevicePrimaryCtxRetain, cuCtxSetCurrent, the module,
// its function and the arguments of a layout. Not thread-safe; one thread at a time.
class Launcher {
public:
  Launcher() = default;
  Launcher(const Launcher &) = delete;
  Launcher &operator=(const Launcher &) = delete;

  // Sets everything up for launches of `entry` of `ptx` on grid 1 x block with the arguments of
  // `layout`; false with `error` set if any step fails or the layout's parameter count differs
  // from the kernel's. `driver` must outlive the launcher.
  bool open(const Driver &driver, const std::string &ptx, const std::string &entry,
            const std::string &layout, unsigned block, std::string &error) {
    d_ = &driver;
    block_ = block;
    const Driver &d = driver;
#define BARE_TRY(call, what)                                                                       \
  if (CUresult r = (call); r != CUDA_SUCCESS) {                                                    \
    error = errorText(d, what, r);                                                                 \
    return false;                                                                                  \
  }
    BARE_TRY(d.cuInit(0), "cuInit")
    BARE_TRY(d.cuDeviceGet(&device_, 0), "cuDeviceGet")
    BARE_TRY(d.cuCtxGetCurrent(&previous_), "cuCtxGetCurrent")
    BARE_TRY(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain")
    retained_ = true;
    wasCurrent_ = previous_ != nullptr && previous_ == context_;
    BARE_TRY(d.cuCtxSetCurrent(context_), "cuCtxSetCurrent")
    int expected = entryParamCount(ptx, entry);
    if (expected < 0) {
      error = "no .entry " + entry + " in the PTX";
      return false;
    }
    BARE_TRY(d.cuModuleLoadData(&module_, ptx.c_str()), "cuModuleLoadData")
    BARE_TRY(d.cuModuleGetFunction(&function_, module_, entry.c_str()), "cuModuleGetFunction")
    if (!args_->build(d, layout, error))
      return false;
    if (args_->count() != expected) {
      error = "layout '" + layout + "' makes " + std::to_string(args_->count()) +
              " parameters, the kernel " + entry + " has " + std::to_string(expected);
      return false;
    }
#undef BARE_TRY
    return true;
  }

  // Microseconds per launch of one loop of `iters` launches of kernel<<<1, block>>> on the legacy
  // default stream (as ptxjit's), followed by cuCtxSynchronize, timed with steady_clock; the
  // primary context is made current on the calling thread first (outside the timed region).
  // The arguments go as kernelParams (one pointer per parameter, as CUDA C++'s <<<...>>>
  // passes them), or with `buffer` as one packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER).
  // A negative value with `error` set on failure.
  double loopMicroseconds(int iters, std::string &error, bool buffer = false) {
    const Driver &d = *d_;
    if (CUresult r = d.cuCtxSetCurrent(context_); r != CUDA_SUCCESS) {
      error = errorText(d, "cuCtxSetCurrent", r);
      return -1;
    }
    void **params = args_->params();
    size_t bytes = args_->bufferBytes();
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, args_->buffer(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &bytes, CU_LAUNCH_PARAM_END};
    void **extraArg = nullptr;
    if (buffer) {
      params = nullptr;
      extraArg = bytes ? extra : nullptr;
    }
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      if (CUresult r =
              d.cuLaunchKernel(function_, 1, 1, 1, block_, 1, 1, 0, nullptr, params, extraArg);
          r != CUDA_SUCCESS) {
        error = errorText(d, "cuLaunchKernel", r);
        d.cuCtxSynchronize();
        return -1;
      }
    }
    if (CUresult r = d.cuCtxSynchronize(); r != CUDA_SUCCESS) {
      error = errorText(d, "cuCtxSynchronize", r);
      return -1;
    }
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / (iters > 0 ? iters : 1);
  }

  // Whether the primary context was already current on the opening thread (in ptxjit's process:
  // the launcher shares ptxjit's context).
  bool primaryWasCurrent() const { return wasCurrent_; }
  // The number of kernel parameters passed.
  int paramCount() const { return args_->count(); }

  // Frees the arrays, unloads the module, makes the context that was current at open() current
  // again (on the destructing thread) and releases the primary context (ptxjit keeps its own
  // reference, so the context stays). Errors are ignored.
  ~Launcher() {
    if (!d_)
      return;
    args_.reset(); // the arrays first, while the context is retained
    if (module_)
      d_->cuModuleUnload(module_);
    if (retained_) {
      if (!wasCurrent_)
        d_->cuCtxSetCurrent(previous_);
      d_->cuDevicePrimaryCtxRelease_v2(device_);
    }
  }

private:
  const Driver *d_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUcontext previous_ = nullptr; // current on the thread before open()
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  unsigned block_ = 1;
  bool retained_ = false;
  bool wasCurrent_ = false;
  std::unique_ptr<Arguments> args_ = std::make_unique<Arguments>();
};

} // namespace bare
