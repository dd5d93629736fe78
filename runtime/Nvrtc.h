// CUDA C++ to PTX through NVRTC, the CUDA toolkit's runtime compiler, for link= inputs written
// in CUDA C++ (.cu files, cuda.CUSource). libnvrtc is opened with dlopen on first use, as the
// driver is: ptxjit neither links it nor needs it unless a program links CUDA C++.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ptxjit::runtime {

// A CUDA C++ source that NVRTC did not compile (its log in what()), or NVRTC not found.
class NvrtcError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The places libnvrtc is looked for, in order: $PTXJIT_NVRTC (a path to the library),
// $CUDA_HOME/lib64, $CUDA_PATH/lib64, the conda layout ($CONDA_PREFIX/lib), /usr/local/cuda/lib64,
// then the loader's search path (libnvrtc.so.13, .12, .so).
std::vector<std::string> nvrtcCandidates();

// The CUDA include directory passed to NVRTC (-I) so that sources may include the toolkit's
// headers (cuda_fp16.h, ...): next to the libnvrtc found (../include), or empty.
std::string nvrtcIncludeDir();

// The version (major, minor) of the libnvrtc found: the CUDA toolkit ptxjit uses at run time.
// Throws NvrtcError naming every place looked in when none is found.
std::pair<int, int> nvrtcVersion();

// Compiles CUDA C++ `source` (named `name` in messages) to relocatable PTX (-rdc=true) for
// compute capability ccMajor.ccMinor (compute_<cc>), so that its device functions can be
// linked with a kernel's PTX. Thread-safe. Throws NvrtcError with NVRTC's log, or naming every
// place looked in when libnvrtc is not found.
std::string compileCudaToPtx(const std::string &source, const std::string &name, int ccMajor,
                             int ccMinor);

} // namespace ptxjit::runtime
