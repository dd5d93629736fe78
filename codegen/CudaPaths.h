// Where the CUDA toolkit's libdevice (libdevice.10.bc, NVIDIA's math library in LLVM bitcode,
// linked into kernels that call math functions) is found at run time: the one home of that
// search. It follows numba-cuda's numba/cuda/cuda_paths.py, so that a machine set up for
// numba-cuda works unchanged; nothing of the toolkit is needed at build time.
#pragma once

#include <string>
#include <vector>

namespace ptxjit::codegen {

/// One place libdevice is looked for: what it comes from (e.g. "CUDA_HOME", "NVIDIA NVCC
/// wheel") and the file's path.
struct LibdeviceCandidate {
  std::string source;
  std::string path;
};

/// The places, in order (numba-cuda's SEARCH_PRIORITY):
///   $PTXJIT_LIBDEVICE when set and non-empty: that file alone (an override, never fallen back
///     from, so that a wrong setting is reported rather than silently bypassed);
///   the conda environment: <prefix>/nvvm/libdevice/libdevice.10.bc for the Python prefix given to
///     setPythonSearchPaths when it holds conda-meta/, then $CONDA_PREFIX;
///   the NVIDIA NVCC wheels in each Python path directory (setPythonSearchPaths):
///     nvidia/cuda_nvcc/nvvm/libdevice/ (nvidia-cuda-nvcc-cu12), nvidia/cu13/nvvm/libdevice/
///     (nvidia-nvvm 13);
///   $CUDA_HOME, else $CUDA_PATH: <root>/nvvm/libdevice/libdevice.10.bc;
///   the system toolkit: /usr/local/cuda/nvvm/libdevice/libdevice.10.bc.
/// Reads the environment on each call (tests change it). Thread-safe.
std::vector<LibdeviceCandidate> libdeviceCandidates();

/// The first candidate that is a regular file, or "" when none is. Thread-safe; never throws.
std::string libdevicePath();

/// The message for libdevice not found: what it is for and every candidate looked in, with how
/// to point ptxjit at one (PTXJIT_LIBDEVICE, CUDA_HOME, the nvidia-cuda-nvcc wheel).
std::string libdeviceNotFoundMessage();

/// Records the Python environment, for the conda and wheel candidates: `prefix` (sys.prefix) and
/// `paths` (sys.path's entries). The extension calls it at import; C++ programs without Python
/// need not. Thread-safe.
void setPythonSearchPaths(std::string prefix, std::vector<std::string> paths);

} // namespace ptxjit::codegen
