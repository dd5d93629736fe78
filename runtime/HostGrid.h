// The host (CPU) backend's grid executor: runs a kernel compiled for the host once per simulated
// CUDA thread.
#pragma once

#include "runtime/Launch.h"

#include <cstdint>
#include <type_traits>

namespace ptxjit::runtime {

// The special registers of one simulated thread, as the host kernel ABI passes them (codegen
// emits exactly this layout): threadIdx, blockDim, blockIdx, gridDim, each {x, y, z}.
struct HostThreadCtx {
  uint32_t tid[3];
  uint32_t ntid[3];
  uint32_t ctaid[3];
  uint32_t nctaid[3];
};
static_assert(std::is_standard_layout_v<HostThreadCtx> && sizeof(HostThreadCtx) == 48);

// A host kernel: `args` is the same array of pointers to the flattened arguments that
// cuLaunchKernel takes; `ctx` describes the simulated thread. Called once per thread.
using HostKernelEntry = void (*)(void **args, const HostThreadCtx *ctx);

// Runs `entry` for every thread of every block of the grid and returns when all are done.
// The threads of a block run sequentially on one OS thread in x-fastest order (x, then y, then
// z); blocks are spread over a process-wide pool of worker threads (created on first use, sized
// by std::thread::hardware_concurrency() or the environment variable PTXJIT_HOST_THREADS, reused
// by every launch) plus the calling thread. Concurrent launches from several threads are
// serialized; a launch from inside a running host kernel runs inline on the calling thread.
// The configuration is checked like a GPU launch with the default LaunchLimits (1024 threads per
// block, block dims 1024/1024/64, grid x < 2^31, y and z < 65536).
// Throws std::invalid_argument (bad configuration or null entry); if `entry` throws, the first
// exception is rethrown here after the running blocks end (blocks not yet started are skipped).
void launchHost(HostKernelEntry entry, Dim3 grid, Dim3 block, void **args);

// The number of OS threads that run blocks of one launch (pool workers + the caller), >= 1.
// Creates the pool if needed. Never throws except std::system_error if threads cannot start.
unsigned hostParallelism();

} // namespace ptxjit::runtime
