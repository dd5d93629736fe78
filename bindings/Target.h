// Which backend runs kernels (env PTXJIT_TARGET=cpu|cuda, else CUDA when a driver and GPU are
// usable, else the CPU with a one-time warning), and the compile options for each backend.
#pragma once

#include "codegen/CompileOptions.h"
#include "compiler/Compiler.h"

#include <atomic>
#include <string>

namespace ptxjit::bindings {

namespace detail {
constexpr int kBackendUndecided = -1;
/// The backend in use as an int, kBackendUndecided until chosen (or after selectTarget("")).
extern std::atomic<int> gBackend;
/// currentBackend()'s first call: decides the backend and publishes it in gBackend.
codegen::Backend chooseBackend();
} // namespace detail

/// The backend in use, decided on the first call (needs the GIL: it may warn). Throws
/// PtxjitPyError("CudaSupportError") when PTXJIT_TARGET=cuda and CUDA is unusable,
/// std::invalid_argument for another PTXJIT_TARGET value. Inline: every launch asks.
inline codegen::Backend currentBackend() {
  const int b = detail::gBackend.load(std::memory_order_acquire);
  if (b != detail::kBackendUndecided) [[likely]]
    return static_cast<codegen::Backend>(b);
  return detail::chooseBackend();
}

/// The backend an eager compile at decoration (`cuda.jit(signature)`) compiles for: CUDA while
/// the backend is undecided (PTXJIT_TARGET unset, cuda or gpu), nothing has loaded the driver yet
/// and the device record knows the devices' compute capability (compileOptionsFor then needs no
/// cuInit; the first launch decides the backend); else currentBackend(). Throws as
/// currentBackend().
codegen::Backend eagerCompileBackend();

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
/// PTX. Before CUDA has started (see eagerCompileBackend), the device record's compute
/// capability and the driver's version read without cuInit, so that nothing waits for cuInit;
/// once the driver is loaded, the options come from CUDA again, and a process that looked for a
/// record then (once) writes one when it found none or another.
codegen::CompileOptions compileOptionsFor(codegen::Backend b, const compiler::FunctionOptions &fo);

/// CUDA options for an explicit compute capability (compile_ptx).
codegen::CompileOptions cudaOptionsForCC(int major, int minor, const compiler::FunctionOptions &fo);

} // namespace ptxjit::bindings
