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

/// The bytes of vector-loaded rows the resident threads of one SM read at once, at most
/// (launchElementwise's `rowBytes`). A gufunc loop with one thread per row of 64 float32 in
/// each of two operands (512 bytes a thread) ran in 0.21 ms with 256 or 512 threads resident
/// per SM and in 0.39 ms with 1,024, its rows evicted from L1 before their next load (H200,
/// docs/performance.md, thirty-seventh session).
constexpr int64_t kL1RowBytes = 256 * 1024;

/// Runs elementwise loop kernel `spec` over `n` iterations with its arguments `leaves` (one
/// per leaf of spec.plan). Device: asynchronous on `stream`, blocks of the occupancy-optimal
/// size (at least 32 threads), split into blocks of 256 threads when it is a multiple of 256, at
/// most the grid that fills the device.
/// Host: returns when done. n <= 0 does nothing. Returns the grid, in blocks of the
/// occupancy-optimal size, of a device launch whose work was too small to fill
/// kLowOccupancyBlocks such blocks (a grid capped at the device's size fills it), else 0: the
/// bindings warn of it as numba-cuda does. `rowBytes`: for a gufunc loop whose core operands
/// are read with vector loads (codegen::LoopOperand::coreAlign), the bytes of those operands'
/// core arrays that one iteration reads; the device grid then holds at most kL1RowBytes of them
/// per SM (at least one block's), so that a thread's rows stay in L1 from one of its loads to
/// the next (0: no such operands).
int64_t launchElementwise(const compiler::Specialization &spec, ExecMode mode, int64_t n,
                          const compiler::ArgValue *leaves, CUstream stream, int64_t rowBytes = 0);

/// Runs reduce loop kernel `spec` for `tasks` = results × partitions with its arguments
/// `leaves`. Device: blocks of `blockSize` threads (the kernel's), at most enough to fill the
/// device.
void launchReduce(const compiler::Specialization &spec, ExecMode mode, int64_t tasks,
                  unsigned blockSize, const compiler::ArgValue *leaves, CUstream stream);

/// The number of host chunks a Parallel run of `n` iterations uses (1 when n is small).
int64_t hostChunks(int64_t n);

} // namespace ptxjit::ufunc
