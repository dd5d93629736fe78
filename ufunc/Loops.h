// Compiled ufunc loop kernels (codegen/UfuncKernels.h) and how they are run: on CUDA with a
// grid sized from the occupancy API, on the host on the calling thread (target 'cpu') or split
// over the host thread pool ('parallel', and 'cuda' on the CPU backend).
#pragma once

#include "codegen/CompileOptions.h"
#include "codegen/UfuncKernels.h"
#include "compiler/Compiler.h"
#include "runtime/HostGrid.h"

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ptxjit::runtime {
class Module;
}

namespace ptxjit::ufunc {

/// Where a loop runs.
enum class ExecMode : uint8_t {
  Serial,   ///< host, calling thread
  Parallel, ///< host, iteration space split over the runtime's thread pool
  Device,   ///< CUDA
};

/// One compiled loop kernel.
class LoopKernel {
public:
  codegen::Backend backend = codegen::Backend::Host;
  std::string symbol;
  std::string llvmIR; ///< CUDA: the optimized module; host: the lowered module
  std::string ptx;    ///< CUDA only
  runtime::HostKernelEntry hostEntry = nullptr;

  /// CUDA: the kernel, loading its module on the first call (thread-safe) and reading its
  /// occupancy-optimal block size. Throws runtime::DriverUnavailable / CudaError.
  CUfunction function() const;
  /// CUDA, after function(): the block size with the best occupancy, and the grid size that
  /// fills the device at that block size (cuOccupancyMaxPotentialBlockSize's minGridSize).
  int blockSize() const { return blockSize_; }
  int fullGrid() const { return fullGrid_; }

private:
  mutable std::mutex mutex_;
  mutable std::shared_ptr<runtime::Module> module_;
  mutable std::atomic<CUfunction> function_{nullptr};
  mutable int blockSize_ = 0, fullGrid_ = 0;
};

/// Compiles the elementwise loop for device function `functionId` typed with `params`.
/// Throws ir::CompileError (bad function) and std::logic_error for unknown ids.
std::unique_ptr<LoopKernel> compileElementwise(int functionId,
                                               const std::vector<const ir::Type *> &params,
                                               const codegen::ElementwiseKernelDesc &desc,
                                               const codegen::CompileOptions &opts,
                                               const compiler::SnapshotSet &snapshots);

/// Compiles the reduction loop for `functionId` typed (accType, accType).
std::unique_ptr<LoopKernel> compileReduce(int functionId, const codegen::ReduceKernelDesc &desc,
                                          const codegen::CompileOptions &opts,
                                          const compiler::SnapshotSet &snapshots);

/// Runs an elementwise kernel over `n` iterations (`params`: the kernel's flattened parameters,
/// see codegen/UfuncKernels.h). Device: asynchronous on `stream`, grid min(ceil(n / block),
/// fullGrid). Host: returns when done. n == 0 does nothing.
void runElementwise(const LoopKernel &k, ExecMode mode, int64_t n, void **params, CUstream stream);

/// Runs a reduce kernel for `tasks` = results × partitions. Device: blocks of `blockSize`
/// threads (the desc's), at most enough to fill the device.
void runReduce(const LoopKernel &k, ExecMode mode, int64_t tasks, unsigned blockSize, void **params,
               CUstream stream);

/// The number of host chunks a Parallel run of `n` iterations uses (1 when n is small).
int64_t hostChunks(int64_t n);

} // namespace ptxjit::ufunc
