// The compiler's orchestration: a process-wide registry of user functions and their
// specializations. A specialization of function `id` for argument types T and options O runs
//   frontend::buildFunction → ir::inferTypes (device-function calls specialized through the
//   registry) → codegen::lowerKernel → emitPTX (CUDA) or addToHostJIT (Host)
// once, and is cached under (id, T, O). CUDA modules are loaded into the driver lazily, at the
// first launch, so PTX can be produced on a machine without a GPU.
//
// Python-free: the bindings register each @cuda.jit function with a SnapshotProvider (which
// copies the Python function into a CodeSnapshot), and GoogleTest registers fixtures.
#pragma once

#include "codegen/CompileOptions.h"
#include "compiler/PackingPlan.h"
#include "frontend/CodeSnapshot.h"
#include "ir/IR.h"
#include "runtime/HostGrid.h"

#include <cuda.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxjit::runtime {
class Module;
}

namespace ptxjit::compiler {

/// Produces the snapshot of a user function. Called (with the compiler's lock held) each time
/// the function is typed for new argument types, so globals are read as they are then; may
/// throw (the exception propagates to the caller of specialize()).
using SnapshotProvider = std::function<std::shared_ptr<const frontend::CodeSnapshot>()>;

/// Decorator options that are not part of CompileOptions.
struct FunctionOptions {
  bool fastmath = false;
  bool opt = true; ///< false: optLevel 0
  bool debug = false;
  bool lineinfo = false;
  bool inlineHint = false;
  /// cache=True: kernel specializations are looked up in, and written to, the disk cache
  /// (compiler/DiskCache.h) before anything is typed or lowered.
  bool cache = false;
};

/// One compiled specialization of a kernel (or, for compile_ptx, of a device function).
class Specialization {
public:
  int functionId = -1;
  std::string functionName;
  ir::FunctionKind kind = ir::FunctionKind::Kernel;
  std::vector<const ir::Type *> argTypes;
  const ir::Type *returnType = nullptr;
  codegen::CompileOptions options;
  std::string symbol; ///< the entry's name in the module / PTX
  std::string llvmIR; ///< CUDA: the linked, optimized module; Host: the lowered module
  std::string ptx;    ///< CUDA only
  PackingPlan plan;   ///< how launch arguments are flattened into kernel parameters
  /// Host kernels only: the JIT-compiled entry.
  runtime::HostKernelEntry hostEntry = nullptr;
  /// Host kernels only: static shared memory, cooperative scheduling and local-array stack
  /// needs (from codegen::hostLaunchInfo); the launch adds its dynamic shared memory.
  runtime::HostLaunchOptions hostLaunch;
  /// cache=True only: true when the code was loaded from the disk cache (not compiled), and
  /// the entry's file (read or written; empty when no cache directory could be used).
  bool fromDiskCache = false;
  std::string cachePath;

  /// CUDA kernels only: the kernel function, loading the PTX into the device's context on the
  /// first call (thread-safe). Throws runtime::DriverUnavailable / runtime::CudaError.
  CUfunction cudaFunction() const;
  /// True once cudaFunction() has loaded the module.
  bool loaded() const;
  /// CUDA kernels only, after cudaFunction(): true when the driver places the kernel's
  /// parameters exactly where `plan` packs them (runtime::functionParamLayoutIs), so that a
  /// launch can pass the packed buffer in one piece (runtime::launchKernelBuffer); false when
  /// the driver cannot say (before CUDA 12.4) or disagrees, and launches pass one pointer per
  /// parameter.
  bool paramBuffer() const { return paramBuffer_; }

private:
  mutable bool paramBuffer_ = false; ///< written before function_ is published
  mutable std::mutex loadMutex_;
  mutable std::shared_ptr<runtime::Module> module_;
  mutable std::atomic<CUfunction> function_{nullptr};
};

/// The process-wide compiler. Every public method is thread-safe (one lock around compiling).
class Compiler {
public:
  /// The single instance (never destroyed, so that nothing runs at process exit).
  static Compiler &instance();

  Compiler();
  ~Compiler();
  Compiler(const Compiler &) = delete;
  Compiler &operator=(const Compiler &) = delete;

  /// Registers a user function and returns its id (> 0; ids are never reused).
  int registerFunction(std::string name, ir::FunctionKind kind, SnapshotProvider provider,
                       FunctionOptions options = {});
  /// Forgets the provider and the kernel specializations of `id` (typed IR that other
  /// functions' specializations may refer to stays). Unknown ids are ignored.
  void unregisterFunction(int id);
  /// True while `id` is registered.
  bool isRegistered(int id) const;
  /// The kind and name `id` was registered with. Throws std::out_of_range for unknown ids.
  ir::FunctionKind kind(int id) const;
  std::string name(int id) const;
  const FunctionOptions &options(int id) const;

  /// The compiled kernel `id` for `argTypes` under `opts`, compiled on first request. A
  /// top-level weak float/complex type stands for a Python scalar launch argument: typed as
  /// weak (NEP 50), passed as float64/complex128 (Specialization::argTypes and the packing
  /// plan hold the concrete type); other types must be concrete. CUDA: PTX is emitted but not
  /// loaded (see Specialization::cudaFunction). The reference stays valid until
  /// unregisterFunction(id). Throws ir::CompileError for bad programs, std::out_of_range for an
  /// unknown id, std::invalid_argument when `id` is a device function.
  const Specialization &specialize(int id, const std::vector<const ir::Type *> &argTypes,
                                   const codegen::CompileOptions &opts);

  /// compile_ptx: lowers kernel or device function `id` for `argTypes` with opts.backend ==
  /// CUDA and returns PTX, LLVM IR and the return type (void for kernels) without caching the
  /// lowered code or loading anything.
  struct PtxResult {
    std::string ptx;
    std::string llvmIR;
    std::string symbol;
    const ir::Type *returnType = nullptr;
  };
  PtxResult compilePTX(int id, const std::vector<const ir::Type *> &argTypes,
                       const codegen::CompileOptions &opts);

  /// Types function `id` (kernel or device) for `argTypes` and returns its return type, so that
  /// eager signatures of device functions report errors at decoration time. Cached.
  const ir::Type *typeCheck(int id, const std::vector<const ir::Type *> &argTypes);

  /// Types function `id` (kernel or device) for `argTypes` like typeCheck and calls `use` with
  /// the typed IR while holding the compiler's lock, so code generators outside the compiler
  /// (ufunc/ loop kernels) can lower it and its callees safely. Throws as typeCheck, and what
  /// `use` throws.
  void withTypedFunction(int id, const std::vector<const ir::Type *> &argTypes,
                         const std::function<void(const ir::Function &)> &use);

  /// The number of specializations compiled so far (all functions, all backends); for tests.
  size_t compiledCount() const;

private:
  struct Entry;
  struct TypedKey;
  struct TypedKeyHash;
  struct SpecKey;
  struct SpecKeyHash;
  struct DiskKey;
  class Resolver;

  Entry &entry(int id);
  const Entry &entry(int id) const;
  /// The typed IR of `id` for `argTypes` (lock held), built once.
  ir::Function *typedLocked(int id, const std::vector<const ir::Type *> &argTypes,
                            const std::string &callerFile, const ir::SourceLoc &callerLoc,
                            int depth);
  std::string makeSymbol(const Entry &e);
  /// cache=True: the disk-cache key of kernel `id` for `argTypes` and `opts` (lock held), with
  /// the snapshots it read kept in prefetched_ for the compile that may follow. nullopt when
  /// the specialization cannot be cached (a callee is gone, a snapshot differs from the one
  /// typed earlier in this process, no usable directory).
  std::optional<DiskKey> diskKeyLocked(int id, const std::vector<const ir::Type *> &argTypes,
                                       const codegen::CompileOptions &opts);
  /// cache=True: fills `spec` from the disk cache entry at `k` when there is a usable one.
  bool loadFromDiskLocked(const DiskKey &k, Specialization &spec);

  mutable std::mutex mutex_;
  int nextId_ = 1;
  int nextSymbol_ = 0;
  size_t compiled_ = 0;
  std::unordered_map<int, std::unique_ptr<Entry>> entries_;
  /// Snapshots read for a disk-cache key, used by the compile that follows (so typing sees
  /// what the key describes); cleared when specialize() returns.
  std::unordered_map<int, std::shared_ptr<const frontend::CodeSnapshot>> prefetched_;
  /// Typed functions in progress (recursion detection), innermost last.
  std::vector<std::pair<int, std::vector<const ir::Type *>>> inProgress_;
};

/// A symbol-safe rendering of a Python name ("saxpy", "<lambda>" → "_lambda_").
std::string sanitizeSymbol(const std::string &name);

} // namespace ptxjit::compiler
