#include "runtime/Nvrtc.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <type_traits>

namespace ptxjit::runtime {
namespace {

// NVRTC's C API, declared here so that building ptxjit needs no nvrtc.h (nvrtc.h's types).
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram *;

struct NvrtcApi {
  nvrtcResult (*createProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                               const char *const *) = nullptr;
  nvrtcResult (*compileProgram)(nvrtcProgram, int, const char *const *) = nullptr;
  nvrtcResult (*getProgramLogSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*getProgramLog)(nvrtcProgram, char *) = nullptr;
  nvrtcResult (*getPTXSize)(nvrtcProgram, size_t *) = nullptr;
  nvrtcResult (*getPTX)(nvrtcProgram, char *) = nullptr;
  nvrtcResult (*destroyProgram)(nvrtcProgram *) = nullptr;
  const char *(*getErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*version)(int *, int *) = nullptr;
  std::string path;  // the library opened
  std::string error; // why none could be opened (when path is empty)
};

std::string envOr(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

const NvrtcApi &nvrtc() {
  static const NvrtcApi api = [] {
    NvrtcApi a;
    for (const std::string &p : nvrtcCandidates()) {
      void *h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h)
        continue;
      auto sym = [&](auto &fn, const char *name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
        return fn != nullptr;
      };
      if (sym(a.createProgram, "nvrtcCreateProgram") &&
          sym(a.compileProgram, "nvrtcCompileProgram") &&
          sym(a.getProgramLogSize, "nvrtcGetProgramLogSize") &&
          sym(a.getProgramLog, "nvrtcGetProgramLog") && sym(a.getPTXSize, "nvrtcGetPTXSize") &&
          sym(a.getPTX, "nvrtcGetPTX") && sym(a.destroyProgram, "nvrtcDestroyProgram") &&
          sym(a.getErrorString, "nvrtcGetErrorString") && sym(a.version, "nvrtcVersion")) {
        a.path = p;
        return a;
      }
      dlclose(h);
    }
    std::string looked;
    for (const std::string &p : nvrtcCandidates())
      looked += "\n  " + p;
    a.error = "NVRTC (libnvrtc, the CUDA toolkit's runtime compiler) is needed to compile CUDA "
              "C++ for link=, and was not found; looked in:" +
              looked + "\nSet PTXJIT_NVRTC to the library's path, or CUDA_HOME to the toolkit.";
    return a;
  }();
  return api;
}

} // namespace

std::vector<std::string> nvrtcCandidates() {
  std::vector<std::string> c;
  if (std::string p = envOr("PTXJIT_NVRTC"); !p.empty())
    c.push_back(p);
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string p = envOr(var); !p.empty())
      c.push_back(p + "/lib64/libnvrtc.so");
  if (std::string p = envOr("CONDA_PREFIX"); !p.empty())
    c.push_back(p + "/lib/libnvrtc.so");
  c.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  for (const char *soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
    c.push_back(soname);
  return c;
}

std::pair<int, int> nvrtcVersion() {
  const NvrtcApi &a = nvrtc();
  if (a.path.empty())
    throw NvrtcError(a.error);
  int major = 0, minor = 0;
  if (nvrtcResult r = a.version(&major, &minor); r != 0)
    throw NvrtcError(std::string("nvrtcVersion failed: ") + a.getErrorString(r));
  return {major, minor};
}

std::string nvrtcIncludeDir() {
  const std::string &lib = nvrtc().path;
  size_t slash = lib.rfind('/');
  if (slash == std::string::npos)
    return "";
  std::string dir = lib.substr(0, slash); // .../lib64
  std::string include = dir.substr(0, dir.rfind('/')) + "/include";
  return include;
}

std::string compileCudaToPtx(const std::string &source, const std::string &name, int ccMajor,
                             int ccMinor) {
  const NvrtcApi &a = nvrtc();
  if (a.path.empty())
    throw NvrtcError(a.error);
  auto check = [&](nvrtcResult r, const char *what) {
    if (r != 0)
      throw NvrtcError(std::string(what) + " failed for '" + name + "': " + a.getErrorString(r));
  };
  nvrtcProgram prog = nullptr;
  check(a.createProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  struct Destroy {
    const NvrtcApi &a;
    nvrtcProgram &p;
    ~Destroy() { a.destroyProgram(&p); }
  } destroy{a, prog};
  std::string arch = "--gpu-architecture=compute_" + std::to_string(ccMajor * 10 + ccMinor);
  std::vector<std::string> opts = {arch, "-rdc=true"};
  if (std::string inc = nvrtcIncludeDir(); !inc.empty()) {
    opts.push_back("-I" + inc);
    // CUDA 13 keeps CCCL (<cuda/std/...>, <cuda/barrier>, which <curand_kernel.h> and
    // <cooperative_groups.h> users include) in include/cccl.
    struct stat st;
    if (::stat((inc + "/cccl").c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      opts.push_back("-I" + inc + "/cccl");
  }
  std::vector<const char *> argv;
  for (const std::string &o : opts)
    argv.push_back(o.c_str());
  nvrtcResult r = a.compileProgram(prog, static_cast<int>(argv.size()), argv.data());
  if (r != 0) {
    size_t n = 0;
    std::string log;
    if (a.getProgramLogSize(prog, &n) == 0 && n > 1) {
      log.resize(n);
      a.getProgramLog(prog, log.data());
      log.resize(n - 1);
    }
    throw NvrtcError("NVRTC could not compile '" + name + "' (" + a.getErrorString(r) + "):\n" +
                     log);
  }
  size_t size = 0;
  check(a.getPTXSize(prog, &size), "nvrtcGetPTXSize");
  std::string ptx(size, '\0');
  check(a.getPTX(prog, ptx.data()), "nvrtcGetPTX");
  while (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();
  return ptx;
}

} // namespace ptxjit::runtime
