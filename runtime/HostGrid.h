// The host (CPU) backend's grid executor: runs a kernel compiled for the host once per simulated
// CUDA thread.
#pragma once

#include "runtime/Launch.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ptxjit::runtime {

class HostBlockRunner;

// What the host kernel ABI passes to each simulated thread (codegen reads the fields at these
// fixed offsets): the special registers threadIdx, blockDim, blockIdx, gridDim ({x, y, z} each),
// then the block's shared memory and, for kernels that synchronize, the block's scheduler.
struct HostThreadCtx {
  uint32_t tid[3];   // offset 0
  uint32_t ntid[3];  // offset 12
  uint32_t ctaid[3]; // offset 24
  uint32_t nctaid[3];
  // The block's static shared memory (cuda.shared.array with a constant shape),
  // kHostSharedAlign-aligned; null when the kernel uses none. Offset 48.
  char *shared;
  // The block's dynamic shared memory (cuda.shared.array(0, dtype)), sized by the launch's
  // sharedmem argument; 16-byte aligned after the static part (codegen pads the static size so
  // that it is as aligned as the kernel's dynamic arrays ask). Offset 56.
  char *dynShared;
  // The scheduler of the block's threads (fibers) for kernels that use barriers or warp
  // collectives; null for kernels run thread after thread. Offset 64.
  HostBlockRunner *block;
  // The launch's dynamic shared memory in bytes. Offset 72.
  uint32_t dynSharedBytes;
  // tid.x + ntid.x * (tid.y + ntid.y * tid.z): the thread's rank in its block (its warp is
  // linearTid / 32, its lane linearTid % 32). Offset 76.
  uint32_t linearTid;
  // Where ptxjit_host_exit_thread jumps (a jmp_buf of runHostThread); null outside it.
  void *exitJump;
};
static_assert(std::is_standard_layout_v<HostThreadCtx> && sizeof(HostThreadCtx) == 88);

// A host kernel: `args` is the same array of pointers to the flattened arguments that
// cuLaunchKernel takes; `ctx` describes the simulated thread. Called once per thread.
using HostKernelEntry = void (*)(void **args, const HostThreadCtx *ctx);

// What a host kernel needs from the grid runner besides its arguments (the compiler records it
// per specialization).
struct HostLaunchOptions {
  // Bytes of static shared memory per block (the sum of the kernel's cuda.shared.array sizes).
  size_t staticSharedBytes = 0;
  // Bytes of dynamic shared memory per block (the launch's sharedmem argument).
  size_t dynamicSharedBytes = 0;
  // True when the kernel uses barriers or warp collectives: the threads of a block then run as
  // cooperatively scheduled fibers (see HostBlock.h) instead of one after another.
  bool cooperative = false;
  // Stack bytes per fiber beyond the default (for large cuda.local.array allocations).
  size_t extraStackBytes = 0;
  // True when a thread may end early by calling ptxjit_host_exit_thread (a kernel that can
  // raise): each thread then runs through runHostThread. False costs nothing per thread.
  bool threadsMayExit = false;
  // True when the kernel synchronizes its grid (cuda.cg; implies cooperative): every block of
  // the launch runs at once, each on an OS thread of its own, and grid.sync() waits for all.
  bool gridSync = false;
};

// The most blocks of `threadsPerBlock` threads a launch with HostLaunchOptions::gridSync may have
// (max_cooperative_grid_blocks on the CPU backend): every block is an OS thread and every
// thread a fiber, so at most 256 blocks and 8192 threads in all (at least one block). Throws
// std::invalid_argument for threadsPerBlock < 1.
int hostMaxCooperativeBlocks(int threadsPerBlock);

// Runs `entry` for one thread so that ptxjit_host_exit_thread(ctx) called from anywhere inside
// it (a `raise` in a device function too) ends just this thread: it returns here, true then.
bool runHostThread(HostKernelEntry entry, void **args, HostThreadCtx *ctx);

// The alignment of a block's shared memory on the host backend, so that cuda.shared.array's
// alignment= up to this is an offset in it (codegen/LowerCuda.cpp relies on it).
inline constexpr size_t kHostSharedAlign = 4096;

// The most shared memory (static + dynamic) a block may use on the host backend.
inline constexpr size_t kHostMaxSharedBytes = size_t(16) << 20;

// Runs `entry` for every thread of every block of the grid and returns when all are done.
// Without opts.cooperative the threads of a block run sequentially on one OS thread in
// x-fastest order (x, then y, then z); with it they run as fibers that switch at barriers and
// warp collectives (HostBlock.h). Each block gets its own shared memory (static, then dynamic),
// filled with 0xff bytes when the block starts (on the GPU its contents are undefined; the
// pattern makes reads before writes visible). Blocks are spread over a process-wide pool of
// worker threads (created on first use, sized by std::thread::hardware_concurrency() or the
// environment variable PTXJIT_HOST_THREADS, reused by every launch) plus the calling thread.
// Concurrent launches from several threads are serialized; a launch from inside a running host
// kernel runs inline on the calling thread. With opts.gridSync every block runs at once on an OS
// thread of its own instead (more blocks than hostMaxCooperativeBlocks: std::invalid_argument
// naming CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, as the driver would refuse it); a block that
// ends while the others wait at grid.sync() is a HostSyncError, as are the barriers' own. The
// configuration is checked like a GPU launch with the default LaunchLimits (1024 threads per block,
// block dims 1024/1024/64, grid x < 2^31, y and z < 65536) and shared memory up to
// kHostMaxSharedBytes. Throws std::invalid_argument (bad configuration or null entry);
// HostSyncError (HostBlock.h) when the threads of a block do not all reach a barrier or warp
// collective; if `entry` throws, the first exception is rethrown here after the running blocks end
// (blocks not yet started are skipped).
void launchHost(HostKernelEntry entry, Dim3 grid, Dim3 block, void **args,
                const HostLaunchOptions &opts = {});

// The number of OS threads that run blocks of one launch (pool workers + the caller), >= 1.
// Creates the pool if needed. Never throws except std::system_error if threads cannot start.
unsigned hostParallelism();

} // namespace ptxjit::runtime
