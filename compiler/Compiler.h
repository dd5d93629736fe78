// The compiler's orchestration: a process-wide registry of user functions and their
// specializations, the one compiled-kernel object. A specialization of kernel `id` for argument
// types T and options O runs
//   frontend::buildFunction → ir::inferTypes (device-function calls specialized through the
//   registry) → codegen::lowerKernel → emitPTX (CUDA) or addToHostJIT (Host)
// once, and is cached under (id, T, O); a ufunc loop kernel around device function `id` is made
// the same way from a LoopKey (codegen::lowerLoopKernel) and cached under (id, key, O). CUDA
// modules are loaded into the driver lazily, at the first launch, so PTX can be produced on a
// machine without a GPU. PTXJIT_DUMP (compiler/Dump.h) prints every stage.
//
// Python-free: every call that may compile takes the snapshots of the function and of the
// device functions it may call (SnapshotSet), taken by the caller beforehand; the compiler
// never calls back into its caller, and never into Python.
//
// Locks, always taken in this order: the Python interpreter's (held by the bindings' callers,
// released by them around compiles), then the compile lock (typing, lowering and the caches of
// typed IR and specializations), then the registry lock (the table of registered functions,
// held only for lookups and updates, never while anything else is acquired). Registering and
// unregistering a function take the registry lock only, so they never wait for a compile:
// a function unregistered while a compile holds the compile lock has its specializations freed
// by the next compile-locked call.
#pragma once

#include "codegen/Codegen.h"
#include "codegen/CompileOptions.h"
#include "codegen/KernelABI.h"
#include "codegen/UfuncKernels.h"
#include "frontend/CodeSnapshot.h"
#include "ir/IR.h"
#include "ir/typing/Typing.h"
#include "runtime/Device.h"
#include "runtime/HostGrid.h"

#include "runtime/CudaApi.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxjit::runtime {
class Module;
}

namespace ptxjit::compiler {

/// The snapshots of a function and of every device function it may call, transitively, keyed
/// by function id. The caller takes them (the bindings: with the interpreter held) before it
/// asks for code; they are read only when the function, or a callee, is typed for new argument
/// types, so its globals are read as they were at that request.
using SnapshotSet = std::unordered_map<int, std::shared_ptr<const frontend::CodeSnapshot>>;

/// Decorator options that are not part of CompileOptions.
struct FunctionOptions {
  bool fastmath = false;
  bool opt = true; ///< false: optLevel 0
  bool debug = false;
  bool lineinfo = false;
  /// inline="always" (or True) and forceinline=True: the function, when called from device
  /// code, is inlined into every caller (ir::Function::alwaysInline). numba-cuda inlines the
  /// first at the level of its own IR and marks the second alwaysinline for NVVM; one LLVM
  /// attribute does both here.
  bool inlineHint = false;
  bool forceInline = false;
  /// Kernels: launch bounds, register limit, shared-memory carveout (codegen::CompileOptions).
  int maxThreadsPerBlock = 0;
  int minBlocksPerSM = 0;
  int maxClusterRank = 0;
  int maxRegisters = 0;
  int carveout = codegen::CompileOptions::kNoCarveout;
  /// cache=True: kernel specializations (and, for device functions, their ufunc loop
  /// kernels) are looked up in, and written to, the disk cache (compiler/DiskCache.h) before
  /// anything is typed or lowered.
  bool cache = false;
  /// Kernels (cuda.jit(link=...)): external code linked into the module when it is loaded on the
  /// GPU, with the link items of the cuda.declare_device functions it calls. Such kernels skip
  /// the disk cache (it holds the PTX alone).
  std::vector<ir::LinkItem> links;
  /// boundscheck=: -1 unset (checked on the CPU backend, and on CUDA with debug=True), 0 off,
  /// 1 on; PTXJIT_BOUNDSCHECK=0/1 overrides it (bindings' compileOptionsFor).
  int boundscheck = -1;
};

/// What a ufunc loop kernel specialization compiles: a loop (codegen/UfuncKernels.h) around a
/// device function typed for `fnParams`.
struct LoopKey {
  std::vector<const ir::Type *> fnParams;
  codegen::LoopKernelDesc desc;
  bool operator==(const LoopKey &) const = default;
};

/// A checked launch (CompileOptions::boundscheck) whose kernel indexed an array out of bounds:
/// what() names the index, axis and size, the array, the line, the kernel and the thread
/// ("index 12 is out of bounds for axis 0 with size 10: array 'a' at line 7 of kernel 'k',
/// thread (2, 0, 0) of block (1, 0, 0)"). For a ufunc loop (`ufunc`), the ufunc instead of the
/// kernel and no thread (a loop's threads are chunks of elements, nothing the user wrote): "...
/// at line 7 of ufunc 'f'". An std::out_of_range: an IndexError in Python.
class ArrayIndexError : public std::out_of_range {
public:
  ArrayIndexError(const std::string &kernel, const codegen::BoundsRecord &r, bool ufunc = false);
  codegen::BoundsRecord record;
};

/// A launch of a kernel compiled with CompileOptions::exceptions (debug=True) in which a thread
/// raised: the raise site and the first raising thread. what() is numba-cuda's message: "In
/// function 'k', file /abs/f.py, line 7, tid=[0, 0, 0] ctaid=[0, 0, 0]" (thread and block
/// indices z, y, x, as numba-cuda prints them), then ": <first argument>" when the exception
/// has arguments. The bindings raise the site's class with that message as first argument.
class KernelException : public std::runtime_error {
public:
  KernelException(ir::RaiseSite site, const codegen::BoundsRecord &r);
  ir::RaiseSite site;
  codegen::BoundsRecord record;
  /// The message's location and thread part (what() without ": <first argument>").
  std::string prefix;
};

/// One compiled entry: a kernel specialization, or a ufunc loop kernel around a device function
/// (the compiler's one compiled-kernel object; launchers pack its `plan` and launch it).
class Specialization {
public:
  Specialization() = default;
  ~Specialization();
  Specialization(const Specialization &) = delete;
  Specialization &operator=(const Specialization &) = delete;
  int functionId = -1;
  std::string functionName;
  ir::FunctionKind kind = ir::FunctionKind::Kernel; ///< of the function (Device for loops)
  /// Set for a loop kernel: what it loops.
  std::optional<LoopKey> loop;
  /// The entry's parameter types: the kernel's argument types (concrete: a Python float's
  /// weak type travels as float64), or codegen::loopKernelParams for a loop.
  std::vector<const ir::Type *> argTypes;
  const ir::Type *returnType = nullptr;
  codegen::CompileOptions options;
  std::string symbol;        ///< the entry's name in the module / PTX
  /// CUDA: the linked, optimized module; Host: the lowered module. Read it through
  /// Compiler::llvmIR, which makes it on first request (compiles drop value names and print no
  /// text unless the disk cache or PTXJIT_DUMP=llvm wants it); written under the compile lock.
  mutable std::string llvmIR;
  std::string ptx;           ///< CUDA only
  /// CUDA only: external code linked with the PTX when it is loaded (FunctionOptions::links,
  /// then codegen::LoweredModule::links).
  std::vector<ir::LinkItem> links;
  codegen::PackingPlan plan; ///< how launch arguments are flattened into kernel parameters
  /// Host kernels only: the JIT-compiled entry.
  runtime::HostKernelEntry hostEntry = nullptr;
  /// Host kernels only: static shared memory, cooperative scheduling and local-array stack
  /// needs (from codegen::hostLaunchInfo); the launch adds its dynamic shared memory.
  runtime::HostLaunchOptions hostLaunch;
  /// Host kernels compiled with options.boundscheck or that can raise with options.exceptions:
  /// the module's fault record.
  codegen::BoundsRecord *hostBounds = nullptr;
  /// options.exceptions: the module's raise sites (codegen::LoweredModule::raiseSites).
  std::vector<ir::RaiseSite> raiseSites;
  /// CUDA: the launch waits and reads the fault record (options.boundscheck, or raise sites).
  bool checksFaults = false;
  /// The kernel synchronizes its grid (cuda.cg; codegen::LoweredModule::gridSync): CUDA
  /// launches it with cuLaunchCooperativeKernel (every block resident at once), the CPU
  /// backend runs all its blocks at once (hostLaunch.gridSync).
  bool cooperativeLaunch = false;
  /// cache=True only: true when the code was loaded from the disk cache (not compiled), and
  /// the entry's file (read or written; empty when no cache directory could be used).
  bool fromDiskCache = false;
  std::string cachePath;

  /// CUDA kernels only: the kernel function in the calling thread's current device
  /// (runtime::Device::currentOrdinal()), loading the PTX into that device's context on the
  /// first call there (thread-safe): every device gets its own module and function. Throws
  /// runtime::DriverUnavailable / runtime::CudaError.
  CUfunction cudaFunction() const { return cudaFunction(runtime::Device::currentOrdinal()); }
  /// As cudaFunction(), for device `ordinal` (makes that device's context current on the
  /// calling thread while loading).
  CUfunction cudaFunction(int ordinal) const {
    // Inline for the launch path: device 0's function, once loaded, is one load.
    if (ordinal == 0) [[likely]]
      if (CUfunction f = device0_.function.load(std::memory_order_acquire)) [[likely]]
        return f;
    return loadFunction(ordinal);
  }
  /// True once cudaFunction() has loaded the module in the calling thread's current device.
  bool loaded() const;
  /// CUDA kernels only, after cudaFunction(): true when the driver places the kernel's
  /// parameters exactly where `plan` packs them (runtime::functionParamLayoutIs), so that a
  /// launch can pass the packed buffer in one piece (runtime::launchKernelBuffer); false when
  /// the driver cannot say (before CUDA 12.4) or disagrees, and launches pass one pointer per
  /// parameter.
  bool paramBuffer() const { return paramBuffer_; }
  /// CUDA kernels only: the block size with the best occupancy without dynamic shared memory,
  /// and the smallest grid that fills the current device at that size
  /// (cuOccupancyMaxPotentialBlockSize), read once per device (loads the module). Throws as
  /// cudaFunction().
  runtime::BlockSizeSuggestion occupancy() const;

  /// The most blocks of `threadsPerBlock` threads a cooperative launch of this kernel may have
  /// (numba-cuda's max_cooperative_grid_blocks): on CUDA the blocks resident at once on the
  /// current device (runtime::maxCooperativeGridBlocks; loads the module), on the CPU backend
  /// runtime::hostMaxCooperativeBlocks. Throws std::invalid_argument for threadsPerBlock < 1,
  /// as cudaFunction().
  int maxCooperativeGridBlocks(int threadsPerBlock, size_t dynamicSharedMem = 0) const;

  /// Launches on CUDA with the arguments packed in `buf` (plan.bufferSize() bytes): the buffer
  /// in one piece when paramBuffer(), else one pointer per parameter (`params`: room for one
  /// per slot; always pointers for a cooperativeLaunch, through cuLaunchCooperativeKernel).
  /// Asynchronous on `stream`, except with checksFaults: then it waits for the kernel and
  /// throws ArrayIndexError when a thread indexed out of bounds, KernelException when one
  /// raised, and std::invalid_argument when `stream` is being captured into a graph (after the
  /// launch, which the capture recorded: cuda.graph discards it). Throws as runtime::launchKernel.
  void launchCuda(runtime::Dim3 grid, runtime::Dim3 block, unsigned sharedMem, CUstream stream,
                  char *buf, void **params) const {
    launchCuda(runtime::Device::currentOrdinal(), grid, block, sharedMem, stream, buf, params);
  }
  /// launchCuda for a caller that has read the thread's device ordinal (`ordinal`, which must be
  /// runtime::Device::currentOrdinal()) already.
  void launchCuda(int ordinal, runtime::Dim3 grid, runtime::Dim3 block, unsigned sharedMem,
                  CUstream stream, char *buf, void **params) const;
  /// Runs the host entry over `grid` x `block` (runtime::launchHost, with hostLaunch and
  /// `sharedMem` bytes of dynamic shared memory) with the arguments packed in `buf`;
  /// `params`: room for one pointer per slot. Returns when done; throws ArrayIndexError when
  /// the kernel (compiled with options.boundscheck) indexed an array out of bounds,
  /// KernelException when a thread raised (options.exceptions).
  void launchHost(runtime::Dim3 grid, runtime::Dim3 block, unsigned sharedMem, char *buf,
                  void **params) const;
  /// Host entries: after a run of hostEntry called directly (not through launchHost), throws
  /// as launchHost does when that run recorded a fault in hostBounds (clearing the record);
  /// nothing otherwise.
  void checkHostFaults() const {
    if (hostBounds && hostBounds->failed) [[unlikely]]
      takeHostFault();
  }

private:
  /// After a checked launch on `stream` (checksFaults): refuses a stream being captured into a
  /// graph (std::invalid_argument), else waits for the kernel and throws the fault it recorded.
  void checkCudaFaults(CUstream stream) const;
  /// Throws the error that fault record `r` (failed != 0) describes.
  [[noreturn]] void throwFault(const codegen::BoundsRecord &r) const;
  /// Clears hostBounds (which recorded a fault) and throws it.
  [[noreturn]] void takeHostFault() const;
  /// What one device holds of this entry: its module, function and occupancy.
  struct PerDevice {
    std::shared_ptr<runtime::Module> module;
    std::atomic<CUfunction> function{nullptr};
    std::atomic<bool> occupancyRead{false};
    runtime::BlockSizeSuggestion occupancy;
  };
  /// Device `ordinal`'s slot, created on first use (under loadMutex_; published with release).
  PerDevice &perDevice(int ordinal) const;
  /// cudaFunction(ordinal) beyond its inline case: another device, or the first load.
  CUfunction loadFunction(int ordinal) const;
  mutable bool paramBuffer_ = false; ///< written before the first function is published
  mutable bool paramBufferKnown_ = false;
  mutable std::mutex loadMutex_;
  /// Device 0's slot inline (the one-device case reads no pointer more); the others on demand.
  mutable PerDevice device0_;
  mutable std::atomic<PerDevice *> devices_[runtime::Device::kMaxDevices - 1] = {};
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

  /// Registers a user function and returns its id (> 0; ids are never reused). Takes the
  /// registry lock only.
  int registerFunction(std::string name, ir::FunctionKind kind, FunctionOptions options = {});
  /// Device functions with eager signatures (`@cuda.jit("int32(float64)", device=True)`): a
  /// call from device code picks one as a kernel launch picks an eager signature
  /// (ir::selectSignature; none fitting is a TypingError naming them), its arguments are
  /// converted to the signature's parameters and its result to the declared return type (as
  /// Numba). Set once, after registerFunction and before anything is compiled for `id`.
  void declareSignatures(int id, std::vector<ir::Signature> signatures);
  /// Forgets `id`: it is no longer registered when this returns, and its entry (typed IR and
  /// specializations) is erased now, or by the next compile-locked call when a compile is under
  /// way; while other functions' typed IR calls into its typed IR, only its specializations are
  /// freed, and the rest goes with the last such caller. Never waits for a compile, so it may
  /// be called from a destructor with the interpreter held. Unknown ids are ignored.
  void unregisterFunction(int id);
  /// True while `id` is registered.
  bool isRegistered(int id) const;
  /// The kind and name `id` was registered with. Throws std::out_of_range for unknown ids.
  ir::FunctionKind kind(int id) const;
  std::string name(int id) const;
  const FunctionOptions &options(int id) const;

  /// The compiled kernel `id` for `argTypes` under `opts`, compiled on first request (typing
  /// reads `snapshots`, which must hold `id` and the device functions it may call). A
  /// top-level weak float/complex type stands for a Python scalar launch argument: typed as
  /// weak (NEP 50), passed as float64/complex128 (Specialization::argTypes and the packing
  /// plan hold the concrete type); other types must be concrete. CUDA: PTX is emitted but not
  /// loaded (see Specialization::cudaFunction). The reference stays valid until
  /// unregisterFunction(id). Throws ir::CompileError for bad programs, std::out_of_range for an
  /// unknown id, std::invalid_argument when `id` is a device function, std::logic_error when a
  /// snapshot that typing needs is missing.
  const Specialization &specialize(int id, const std::vector<const ir::Type *> &argTypes,
                                   const codegen::CompileOptions &opts,
                                   const SnapshotSet &snapshots);

  /// The loop kernel `key` around device function `id` under `opts`, compiled on first request
  /// (typing reads `snapshots` as specialize does; with the function's cache=True, through the
  /// disk cache). The reference stays valid until unregisterFunction(id). Throws as specialize,
  /// and std::invalid_argument when `id` is a kernel.
  const Specialization &specializeLoop(int id, const LoopKey &key,
                                       const codegen::CompileOptions &opts,
                                       const SnapshotSet &snapshots);

  /// The LLVM IR text of `spec`, a specialization this compiler made (Specialization::llvmIR),
  /// with the values' names. When the compile did not print it, the specialization is lowered
  /// again from its typed IR with names kept (and for CUDA linked and optimized again, the PTX
  /// discarded: the code is the one compiled), and the text kept for later calls. Needs no
  /// snapshot. Throws std::invalid_argument for a specialization of another compiler, as
  /// specialize for a failing compile.
  std::string llvmIR(const Specialization &spec);

  /// compile_ptx: lowers kernel or device function `id` for `argTypes` with opts.backend ==
  /// CUDA and returns PTX, LLVM IR (only `withLLVM`: empty otherwise, and the compile drops value
  /// names) and the return type (void for kernels) without caching the lowered code or loading
  /// anything. A non-empty `symbol` names the emitted device function (numba-cuda's
  /// abi_info={"abi_name": ...}) instead of the function's sanitized name.
  struct PtxResult {
    std::string ptx;
    std::string llvmIR;
    std::string symbol;
    const ir::Type *returnType = nullptr;
  };
  PtxResult compilePTX(int id, const std::vector<const ir::Type *> &argTypes,
                       const codegen::CompileOptions &opts, const SnapshotSet &snapshots,
                       const std::string &symbol = {}, bool withLLVM = true);

  /// Types function `id` (kernel or device) for `argTypes` and returns its return type, so that
  /// eager signatures of device functions report errors at decoration time. Cached.
  const ir::Type *typeCheck(int id, const std::vector<const ir::Type *> &argTypes,
                            const SnapshotSet &snapshots);

  /// The Python locals of function `id` typed for `argTypes` (typed first if needed), each with
  /// its type, in the function's order; the compiler's own "$stack" variables are left out.
  /// A local that holds values of different types in different parts of the function has one
  /// entry per version, as numba's SSA names them ("x", "x.1", ...: ir::Variable::printedName).
  /// For inspection (Numba's type annotations: `typemap`).
  std::vector<std::pair<std::string, const ir::Type *>>
  localTypes(int id, const std::vector<const ir::Type *> &argTypes, const SnapshotSet &snapshots);

  /// The typed IR of function `id` for `argTypes` (typed first if needed), as ir::Function::print
  /// writes it with source lines ("; line N"). For inspection (`inspect_types`).
  std::string typedIR(int id, const std::vector<const ir::Type *> &argTypes,
                      const SnapshotSet &snapshots);

  /// The number of specializations compiled so far (all functions, all backends); for tests.
  size_t compiledCount() const;
  /// The number of entries in the table of functions, registered or kept for callers; for
  /// tests (unregistered functions must not accumulate).
  size_t entryCount() const;

private:
  struct Entry;
  struct SpecKey;
  struct SpecKeyHash;
  struct DiskKey;
  class Resolver;

  class SnapshotScope;

  /// The registered entry `id` (takes the registry lock). Throws std::out_of_range.
  Entry &entry(int id) const;
  /// entry(id), which must be a function of `kind`: std::invalid_argument ("'f' is a device
  /// function, not a kernel") otherwise. For the specialize calls.
  Entry &entryOfKind(int id, ir::FunctionKind kind) const;
  /// Erases the entries of functions unregistered since the last call that no typed IR calls
  /// into (frees only the specializations of the others), cascading to callees left without
  /// callers (compile lock held).
  void freeRetiredLocked();
  /// The typed IR of `id` for `argTypes` (compile lock held), built once from snapshots_;
  /// `called`: for a call from device code, which types a kernel as a device function.
  ir::Function *typedLocked(int id, const std::vector<const ir::Type *> &argTypes,
                            const std::string &callerFile, const ir::SourceLoc &callerLoc,
                            int depth, bool called = false);
  std::string makeSymbol(const Entry &e);
  /// cache=True: the disk-cache key of the entry `what` ("kernel", or a loop's description) of
  /// function `id` for `argTypes` and `opts` (lock held), from snapshots_. nullopt when the
  /// specialization cannot be cached (a callee's snapshot is missing, a snapshot differs from
  /// the one typed earlier in this process, no usable directory).
  std::optional<DiskKey> diskKeyLocked(int id, const std::string &what,
                                       const std::vector<const ir::Type *> &argTypes,
                                       const codegen::CompileOptions &opts);
  /// cache=True: fills `spec` from the disk cache entry at `k` when there is a usable one.
  bool loadFromDiskLocked(const DiskKey &k, Specialization &spec);
  /// The specialization of function `id` (entry `e`) for `key`, from the cache or made now
  /// (lock held):
  /// `spec` (argTypes, plan and options set) is filled from the disk cache when `e` has
  /// cache=True and an entry `what` exists, else the typed function of `fnParams` is lowered
  /// (lowerSpec) and compiled for spec's backend (and stored on disk).
  const Specialization &compileLocked(int id, Entry &e, SpecKey key,
                                      std::unique_ptr<Specialization> spec,
                                      const std::vector<const ir::Type *> &fnParams,
                                      const std::string &what);

  /// The compile lock (see the file comment for the lock order).
  mutable std::mutex mutex_;
  int nextSymbol_ = 0;
  std::atomic<size_t> compiled_{0};
  /// The snapshots of the compile-locked call under way (null between calls).
  const SnapshotSet *snapshots_ = nullptr;

  /// The registry lock: entries_ (the map, and each Entry's `registered`), nextId_, retired_.
  mutable std::mutex registryMutex_;
  int nextId_ = 1;
  std::unordered_map<int, std::unique_ptr<Entry>> entries_;
  /// Unregistered while a compile held the compile lock: their specializations wait for it.
  std::vector<int> retired_;
  /// A function whose typing is under way: recursive calls of (id, argTypes) resolve to `fn`,
  /// whose returnType is provisional meanwhile (ir::inferTypes).
  struct Frame {
    int id;
    std::vector<const ir::Type *> argTypes;
    ir::Function *fn;
    /// The outermost frame whose provisional return type this typing used, directly or through
    /// its callees (the frame's own index or above: none); typed IR that used one of an outer
    /// frame is provisional (not cached) until that frame's typing ends.
    size_t dependsOn;
  };
  /// Typed functions in progress, innermost last.
  std::vector<Frame> inProgress_;
  /// Typed IR that is provisional (the in-progress functions, and functions typed from their
  /// provisional return types); emptied when the outermost typing ends.
  std::set<const ir::Function *> provisional_;
};

/// A symbol-safe rendering of a Python name ("saxpy", "<lambda>" → "_lambda_").
std::string sanitizeSymbol(const std::string &name);

} // namespace ptxjit::compiler
