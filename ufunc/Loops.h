// How ufunc loop kernels (compiler specializations, codegen/UfuncKernels.h) are run: on CUDA
// with a grid sized from the occupancy API, on the host on the calling thread (target 'cpu')
// or split over the host thread pool ('parallel', and 'cuda' on the CPU backend). Their
// arguments are packed by the compiler's one packer (compiler/Packing.h).
#pragma once

#include "compiler/Compiler.h"
#include "compiler/Packing.h"

#include "runtime/CudaApi.h"

namespace ptxjit::ufunc {

/// Where a loop runs.
enum class ExecMode : uint8_t {
  Serial,   ///< host, calling thread
  Parallel, ///< host, iteration space split over the runtime's thread pool
  Device,   ///< CUDA
};

/// Blocks below which a device launch leaves the GPU under-used: numba-cuda's rule for its
/// NumbaPerformanceWarning ("Grid size N will likely result in GPU under-utilization").
constexpr int64_t kLowOccupancyBlocks = 128;

/// The bytes of aligned rows that the resident threads of one SM keep in use at once, at most
/// (launchElementwise's `liveRowBytes`). A thread walks its rows from the start, up to 16 bytes
/// a load, so the 128-byte line a load reads must stay in L1 until the thread's next trip. H200,
/// a gufunc loop with one thread per row in each of two float32 operands, blocks of 256 (docs/
/// performance.md, thirty-eighth session): rows of 16 (a thread's live lines 128 bytes) were
/// fastest with 768-1,024 threads per SM; rows of 32 to 256 (256 bytes) with 512, and 1,024
/// threads took 1.3-2x as long.
constexpr int64_t kL1LiveRowBytes = 128 * 1024;

/// The bytes of one line of L1: what launchElementwise's `liveRowBytes` counts per operand of
/// longer rows.
constexpr int64_t kL1LineBytes = 128;

/// Runs elementwise loop kernel `spec` over `n` iterations with its arguments `leaves` (one
/// per leaf of spec.plan). Device: asynchronous on `stream`, blocks of the occupancy-optimal
/// size (at least 32 threads), split into blocks of 256 threads when it is a multiple of 256, at
/// most the grid that fills the device.
/// Host: returns when done. n <= 0 does nothing. Returns the grid, in blocks of the
/// occupancy-optimal size, of a device launch whose work was too small to fill
/// kLowOccupancyBlocks such blocks (a grid capped at the device's size fills it), else 0: the
/// bindings warn of it as numba-cuda does. `liveRowBytes`: for a gufunc loop whose core
/// operands have aligned rows (codegen::LoopOperand::coreAlign: LLVM may combine their loads
/// into vector loads; a sin*cos body whose loads it did not combine gained too), the sum over those
/// operands of min(the bytes of its core array, kL1LineBytes); the device launch then takes
/// blocks of at most 256 threads, as many per SM as the occupancy allows and as keep at most
/// kL1LiveRowBytes of those lines per SM (at least one block), so that a thread's rows stay in
/// L1 from one of its loads to the next (0: no such operands).
int64_t launchElementwise(const compiler::Specialization &spec, ExecMode mode, int64_t n,
                          const compiler::ArgValue *leaves, CUstream stream,
                          int64_t liveRowBytes = 0);

/// Runs reduce loop kernel `spec` for `tasks` = results × partitions with its arguments
/// `leaves`. Device: blocks of `blockSize` threads (the kernel's), at most enough to fill the
/// device.
void launchReduce(const compiler::Specialization &spec, ExecMode mode, int64_t tasks,
                  unsigned blockSize, const compiler::ArgValue *leaves, CUstream stream);

/// The number of host chunks a Parallel run of `n` iterations uses (1 when n is small).
int64_t hostChunks(int64_t n);

} // namespace ptxjit::ufunc
