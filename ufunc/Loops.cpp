#include "ufunc/Loops.h"

#include "codegen/Codegen.h"
#include "compiler/Compiler.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Module.h"

#include <algorithm>
#include <stdexcept>

namespace ptxjit::ufunc {
namespace {

std::atomic<int> gSymbolCounter{0};

std::string loopSymbol(const std::string &kind, int functionId) {
  return "_ptxjit_" + kind + "_" + std::to_string(functionId) + "_" +
         std::to_string(gSymbolCounter.fetch_add(1));
}

/// Emits (CUDA) or JIT-compiles (host) lowered module `m` into `k`.
void finishModule(LoopKernel &k, codegen::LoweredModule &&m, const codegen::CompileOptions &opts) {
  k.backend = opts.backend;
  if (opts.backend == codegen::Backend::CUDA) {
    k.ptx = codegen::emitPTX(m, opts);
    k.llvmIR = m.llvmIR();
  } else {
    k.llvmIR = m.llvmIR();
    k.hostEntry =
        reinterpret_cast<runtime::HostKernelEntry>(codegen::addToHostJIT(std::move(m), opts));
  }
}

/// Elements below which a Parallel loop stays on the calling thread.
constexpr int64_t kParallelGrain = 1 << 14;

void runHost(const LoopKernel &k, ExecMode mode, int64_t n, void **params) {
  int64_t chunks = mode == ExecMode::Parallel ? hostChunks(n) : 1;
  if (chunks <= 1) {
    runtime::HostThreadCtx ctx{{0, 0, 0}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, nullptr,
                               nullptr,   nullptr,   0,         0};
    k.hostEntry(params, &ctx);
    return;
  }
  runtime::launchHost(k.hostEntry, {static_cast<unsigned>(chunks), 1, 1}, {1, 1, 1}, params);
}

} // namespace

CUfunction LoopKernel::function() const {
  if (CUfunction f = function_.load(std::memory_order_acquire)) [[likely]]
    return f;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!function_.load(std::memory_order_relaxed)) {
    if (backend != codegen::Backend::CUDA || ptx.empty())
      throw std::logic_error("ufunc loop '" + symbol + "' has no PTX to load");
    auto module = runtime::Module::loadPTX(ptx);
    CUfunction f = module->function(symbol);
    runtime::BlockSizeSuggestion s = runtime::maxPotentialBlockSize(f);
    blockSize_ = std::max(s.blockSize, 32);
    fullGrid_ = std::max(s.minGridSize, 1);
    module_ = std::move(module);
    function_.store(f, std::memory_order_release);
  }
  return function_.load(std::memory_order_relaxed);
}

std::unique_ptr<LoopKernel> compileElementwise(int functionId,
                                               const std::vector<const ir::Type *> &params,
                                               const codegen::ElementwiseKernelDesc &desc,
                                               const codegen::CompileOptions &opts,
                                               const compiler::SnapshotSet &snapshots) {
  auto k = std::make_unique<LoopKernel>();
  k->symbol = loopSymbol("ufunc", functionId);
  compiler::Compiler::instance().withTypedFunction(functionId, params, snapshots, [&](const ir::Function &fn) {
    finishModule(*k, codegen::lowerElementwiseKernel(fn, desc, opts, k->symbol), opts);
  });
  return k;
}

std::unique_ptr<LoopKernel> compileReduce(int functionId, const codegen::ReduceKernelDesc &desc,
                                          const codegen::CompileOptions &opts,
                                          const compiler::SnapshotSet &snapshots) {
  auto k = std::make_unique<LoopKernel>();
  k->symbol = loopSymbol("reduce", functionId);
  std::vector<const ir::Type *> params{desc.accType, desc.accType};
  compiler::Compiler::instance().withTypedFunction(functionId, params, snapshots, [&](const ir::Function &fn) {
    finishModule(*k, codegen::lowerReduceKernel(fn, desc, opts, k->symbol), opts);
  });
  return k;
}

int64_t hostChunks(int64_t n) {
  if (n < 2 * kParallelGrain)
    return 1;
  int64_t threads = static_cast<int64_t>(runtime::hostParallelism());
  return std::max<int64_t>(1, std::min<int64_t>(threads * 4, n / kParallelGrain));
}

void runElementwise(const LoopKernel &k, ExecMode mode, int64_t n, void **params, CUstream stream) {
  if (n <= 0)
    return;
  if (mode != ExecMode::Device) {
    runHost(k, mode, n, params);
    return;
  }
  CUfunction f = k.function();
  int64_t block = k.blockSize();
  int64_t grid = std::min<int64_t>((n + block - 1) / block, k.fullGrid());
  runtime::launchKernel(f, {static_cast<unsigned>(std::max<int64_t>(grid, 1)), 1, 1},
                        {static_cast<unsigned>(block), 1, 1}, 0, stream, params);
}

void runReduce(const LoopKernel &k, ExecMode mode, int64_t tasks, unsigned blockSize, void **params,
               CUstream stream) {
  if (tasks <= 0)
    return;
  if (mode != ExecMode::Device) {
    if (mode == ExecMode::Parallel && tasks > 1) {
      int64_t threads = static_cast<int64_t>(runtime::hostParallelism());
      int64_t chunks = std::min<int64_t>(tasks, threads * 4);
      runtime::launchHost(k.hostEntry, {static_cast<unsigned>(chunks), 1, 1}, {1, 1, 1}, params);
      return;
    }
    runtime::HostThreadCtx ctx{{0, 0, 0}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, nullptr,
                               nullptr,   nullptr,   0,         0};
    k.hostEntry(params, &ctx);
    return;
  }
  CUfunction f = k.function();
  int64_t perSM = std::max<int64_t>(1, 2048 / static_cast<int64_t>(blockSize));
  int64_t full = runtime::Device::current().multiprocessorCount() * perSM;
  int64_t grid = std::min<int64_t>(tasks, full);
  runtime::launchKernel(f, {static_cast<unsigned>(grid), 1, 1}, {blockSize, 1, 1}, 0, stream,
                        params);
}

} // namespace ptxjit::ufunc
