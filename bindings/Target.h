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

/// With CUDA the backend in use, starts opening the calling thread's current device (its
/// primary context, the costly part of CUDA's start-up) and its memory pool on a background
/// thread, once per process; called by the first compile and the first device allocation, so
/// that a process whose first act selects another device (`cuda.select_device(1)`) never opens
/// device 0. Deciding the backend opens nothing. Never throws: an opening's error is reported by
/// the next use of the device.
void startCuda();

/// "cuda" or "cpu".
const char *backendName(codegen::Backend b);

/// True when a CUDA driver and GPU are usable; `why` gets the reason when not.
bool cudaAvailable(std::string *why = nullptr);

/// Compile options of `fo` for backend `b`. CUDA: the oldest compute capability among the
/// visible devices (runtime::deviceComputeCapability) and the PTX version the driver accepts
/// when CUDA is the backend in use (then it also calls startCuda()), else sm_90 and the newest
/// PTX.
codegen::CompileOptions compileOptionsFor(codegen::Backend b, const compiler::FunctionOptions &fo);

/// CUDA options for an explicit compute capability (compile_ptx).
codegen::CompileOptions cudaOptionsForCC(int major, int minor, const compiler::FunctionOptions &fo);

} // namespace ptxjit::bindings
