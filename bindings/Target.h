// Which backend runs kernels (env PTXJIT_TARGET=cpu|cuda, else CUDA when a driver and GPU are
// usable, else the CPU with a one-time warning), and the compile options for each backend.
#pragma once

#include "codegen/CompileOptions.h"
#include "compiler/Compiler.h"

#include <string>

namespace ptxjit::bindings {

/// The backend in use, decided on the first call (needs the GIL: it may warn). Throws
/// PtxjitPyError("CudaSupportError") when PTXJIT_TARGET=cuda and CUDA is unusable,
/// std::invalid_argument for another PTXJIT_TARGET value.
codegen::Backend currentBackend();

/// Overrides the choice: "cpu" (or "host"), "cuda", or "" to decide again from the environment
/// at the next use. Throws as currentBackend() for "cuda" without a driver.
void selectTarget(const std::string &name);

/// "cuda" or "cpu".
const char *backendName(codegen::Backend b);

/// True when a CUDA driver and GPU are usable; `why` gets the reason when not.
bool cudaAvailable(std::string *why = nullptr);

/// Compile options of `fo` for backend `b`. CUDA: the device's compute capability and the PTX
/// version its driver accepts when CUDA is the backend in use, else sm_90 and the newest PTX.
codegen::CompileOptions compileOptionsFor(codegen::Backend b, const compiler::FunctionOptions &fo);

/// CUDA options for an explicit compute capability (compile_ptx).
codegen::CompileOptions cudaOptionsForCC(int major, int minor, const compiler::FunctionOptions &fo);

} // namespace ptxjit::bindings
