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

/// Runs elementwise loop kernel `spec` over `n` iterations with its arguments `leaves` (one
/// per leaf of spec.plan). Device: asynchronous on `stream`, blocks of the occupancy-optimal
/// size (at least 32 threads), split into blocks of 256 threads when it is a multiple of 256, at
/// most the grid that fills the device.
/// Host: returns when done. n <= 0 does nothing. Returns the grid, in blocks of the
/// occupancy-optimal size, of a device launch whose work was too small to fill
/// kLowOccupancyBlocks such blocks (a grid capped at the device's size fills it), else 0: the
/// bindings warn of it as numba-cuda does.
int64_t launchElementwise(const compiler::Specialization &spec, ExecMode mode, int64_t n,
                          const compiler::ArgValue *leaves, CUstream stream);

/// Runs reduce loop kernel `spec` for `tasks` = results × partitions with its arguments
/// `leaves`. Device: blocks of `blockSize` threads (the kernel's), at most enough to fill the
/// device.
void launchReduce(const compiler::Specialization &spec, ExecMode mode, int64_t tasks,
                  unsigned blockSize, const compiler::ArgValue *leaves, CUstream stream);

/// The number of host chunks a Parallel run of `n` iterations uses (1 when n is small).
int64_t hostChunks(int64_t n);

} // namespace ptxjit::ufunc
