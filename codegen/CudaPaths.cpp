#include "codegen/CudaPaths.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace ptxjit::codegen {
namespace {

constexpr const char *kLibdeviceFile = "nvvm/libdevice/libdevice.10.bc";

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

struct PythonPaths {
  std::mutex mutex;
  std::string prefix;
  std::vector<std::string> paths;
};

PythonPaths &pythonPaths() {
  static PythonPaths *p = new PythonPaths(); // never destroyed: compiles may run at exit
  return *p;
}

std::string under(const std::string &root, const std::string &rest) {
  return (std::filesystem::path(root) / rest).string();
}

} // namespace

void setPythonSearchPaths(std::string prefix, std::vector<std::string> paths) {
  PythonPaths &p = pythonPaths();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.prefix = std::move(prefix);
  p.paths = std::move(paths);
}

std::vector<LibdeviceCandidate> libdeviceCandidates() {
  namespace fs = std::filesystem;
  if (std::string p = env("PTXJIT_LIBDEVICE"); !p.empty())
    return {{"PTXJIT_LIBDEVICE", p}};
  std::vector<LibdeviceCandidate> c;
  std::string prefix;
  std::vector<std::string> paths;
  {
    PythonPaths &pp = pythonPaths();
    std::lock_guard<std::mutex> lock(pp.mutex);
    prefix = pp.prefix;
    paths = pp.paths;
  }
  std::error_code ec;
  // numba-cuda takes the conda layout from sys.prefix when it is a conda environment;
  // $CONDA_PREFIX covers programs without Python and environments activated around it.
  if (!prefix.empty() && fs::is_directory(under(prefix, "conda-meta"), ec))
    c.push_back({"conda environment (sys.prefix)", under(prefix, kLibdeviceFile)});
  if (std::string p = env("CONDA_PREFIX"); !p.empty() && p != prefix)
    c.push_back({"conda environment (CONDA_PREFIX)", under(p, kLibdeviceFile)});
  for (const std::string &dir : paths) {
    if (dir.empty() || !fs::is_directory(dir, ec))
      continue;
    c.push_back({"NVIDIA NVCC wheel (nvidia-cuda-nvcc-cu12)",
                 under(dir, std::string("nvidia/cuda_nvcc/") + kLibdeviceFile)});
    c.push_back({"NVIDIA NVVM wheel (nvidia-nvvm, CUDA 13)",
                 under(dir, std::string("nvidia/cu13/") + kLibdeviceFile)});
  }
  // As numba-cuda: CUDA_PATH only when CUDA_HOME is unset.
  if (std::string p = env("CUDA_HOME"); !p.empty())
    c.push_back({"CUDA_HOME", under(p, kLibdeviceFile)});
  else if (std::string q = env("CUDA_PATH"); !q.empty())
    c.push_back({"CUDA_PATH", under(q, kLibdeviceFile)});
  c.push_back({"system CUDA toolkit", under("/usr/local/cuda", kLibdeviceFile)});
  return c;
}

std::string libdevicePath() {
  std::error_code ec;
  for (const LibdeviceCandidate &c : libdeviceCandidates())
    if (std::filesystem::is_regular_file(c.path, ec))
      return c.path;
  return "";
}

std::string libdeviceNotFoundMessage() {
  std::string looked;
  for (const LibdeviceCandidate &c : libdeviceCandidates())
    looked += "\n  " + c.path + "  (" + c.source + ")";
  return "libdevice (libdevice.10.bc, the CUDA toolkit's math library, needed to compile kernels "
         "that call math functions for the GPU) was not found; looked in:" +
         looked +
         "\nSet PTXJIT_LIBDEVICE to the file, or CUDA_HOME to a CUDA toolkit, or install the "
         "nvidia-cuda-nvcc wheel.";
}

} // namespace ptxjit::codegen
