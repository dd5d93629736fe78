// Typed IR → LLVM IR → PTX text (NVPTX + libdevice) or host machine code (LLVM ORC).
//
// The public face of the codegen layer. No LLVM type appears here (the compiler and the
// bindings include this header): a LoweredModule owns its llvm::LLVMContext and llvm::Module
// behind a pointer to an implementation.
//
// Kernel ABI (see docs and the runtime): every kernel parameter is flattened to scalar
// parameters in order — scalar T → one T (bool as i8; complex as two floats, real then imag),
// array of ndim N → `ptr data, i64 shape[N], i64 strides[N]` (strides in bytes), tuple → its
// elements flattened; a kernel's Python-float argument (a top-level weak float) is a double
// followed by its float32 copy, rounded by the launcher, which float32 code uses instead of
// converting the double in every thread. CUDA: an nvptx64-nvidia-cuda kernel with exactly those parameters,
// marked in !nvvm.annotations. Host: `void <symbol>(void **args, const HostThreadCtx *ctx)`
// where args[i] points at flattened value i and ctx is runtime::HostThreadCtx: 12 x uint32
// (tid[3], ntid[3], ctaid[3], nctaid[3]), then the block's shared memory and scheduler (read by
// cooperating-threads code only; see runtime/HostGrid.h).
//
// All functions are thread-safe: every LoweredModule has its own LLVM context, and the
// process-wide state (target initialization, libdevice, the host JIT) is created once under
// a lock.
#pragma once

#include "codegen/CompileOptions.h"
#include "ir/IR.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ptxjit::codegen {

/// Whether a lowered module's values keep the names that the lowering and LLVM's passes give
/// them (`%x`, `%indvars.iv`) or go unnamed (`%12`). The code generated is the same either way;
/// naming costs a warm compile 3-5% (LLVM's passes name most of what they create), so the
/// compiler drops the names unless the module's text is to be read (llvmIR()).
enum class ValueNames { Drop, Keep };

/// Runs `task` once, on a thread other than the caller's (on the caller's, at once, where it
/// cannot), and returns without waiting for it; never throws. Starting a thread costs the
/// starting thread about 50 µs where threads are slow to start (a virtual machine), so callers
/// that compile often keep one (compiler/Background.h's runLater).
using TaskRunner = void (*)(std::function<void()> task) noexcept;

/// The pass pipelines one emitPTX runs (LLVM's optimization pipeline, then code generation's),
/// being built ahead of the module by startPtxPipelines. Opaque (EmitPTX.cpp); for one emitPTX.
class PtxPipelines;

/// Starts building the pipelines emitPTX(…, opts, …) runs, by a task handed to `runner`, and
/// returns at once: a compile calls it before it types and lowers, so that they are ready when
/// its module is (code generation's alone was a tenth of a small kernel's compile when the
/// compiling thread built it). The task needs
/// nothing of the caller's and may outlive the handle (an abandoned compile). Without a runner,
/// code generation's pipeline alone is built, on a thread started for it. Throws only
/// std::bad_alloc.
std::shared_ptr<PtxPipelines> startPtxPipelines(const CompileOptions &opts, TaskRunner runner);

/// One lowered LLVM module (its own LLVMContext) with a single externally visible entry.
class LoweredModule {
public:
  struct Impl; ///< defined in codegen/ModuleImpl.h (LLVM types; codegen-internal)

  explicit LoweredModule(std::unique_ptr<Impl> impl);
  LoweredModule(LoweredModule &&) noexcept;
  LoweredModule &operator=(LoweredModule &&) noexcept;
  ~LoweredModule();

  /// The module as LLVM assembly text (after emitPTX: the linked and optimized module); its
  /// values are numbered, not named, when it was lowered with ValueNames::Drop.
  std::string llvmIR() const;
  /// The name of the externally visible entry (the kernel, or the device function).
  const std::string &entrySymbol() const;
  /// The backend this module was lowered for.
  Backend backend() const;
  /// True once emitPTX linked libdevice into the module (only when some __nv_* function was
  /// referenced).
  bool linkedLibdevice() const;
  /// External code (cuda.declare_device's link=) that the module's calls of foreign device
  /// functions need, each once, in the order first called: linked when the module is loaded.
  const std::vector<ir::LinkItem> &links() const;
  /// With CompileOptions::exceptions: the module's raise sites, numbered as the fault record's
  /// `index` names them (BoundsRecord, failed = 2). Empty when nothing can raise.
  const std::vector<ir::RaiseSite> &raiseSites() const;
  /// True when the kernel synchronizes its grid (cuda.cg, or a foreign device function declared
  /// with use_cooperative=True): it must be launched cooperatively, every block at once.
  bool gridSync() const;

  /// Codegen-internal access. Null after the module was moved from or handed to the JIT.
  Impl *impl() { return impl_.get(); }
  const Impl *impl() const { return impl_.get(); }

private:
  std::unique_ptr<Impl> impl_;
};

/// Lowers the typed kernel `kernel` (ir/typing/Typing.h's output; kind Kernel) and, once each,
/// every device function it calls transitively (CallInstr::calleeFunction; internal linkage, unique
/// names) into one module whose only external symbol is the kernel entry `symbol` with the
/// kernel ABI of opts.backend. Throws ir::CompileError (Unsupported* for constructs the
/// lowering does not handle, Internal for malformed typed IR or an LLVM verifier failure),
/// located at the offending instruction. `names`: see ValueNames (the module, and what emitPTX
/// later links into it).
LoweredModule lowerKernel(const ir::Function &kernel, const CompileOptions &opts,
                          const std::string &symbol, ValueNames names = ValueNames::Keep);

/// Lowers the typed device function `fn` (and its callees) as an externally visible,
/// non-kernel function `symbol` (compile_ptx(device=True)): parameters flattened as for
/// kernels, returning the function's value (void for None). On the host backend the function
/// takes one more parameter, the `const HostThreadCtx *`. Throws as lowerKernel.
LoweredModule lowerDeviceFunction(const ir::Function &fn, const CompileOptions &opts,
                                  const std::string &symbol, ValueNames names = ValueNames::Keep);

/// CUDA only: internalizes everything but the entry, links libdevice when some __nv_*
/// function is referenced (LinkOnlyNeeded), sets "nvvm-reflect-ftz" from opts.fastmath, runs
/// the NVPTX O<optLevel> pipeline (with NVVMReflect) and returns the PTX text for
/// sm_<ccMajor><ccMinor> (clamped to the newest SM LLVM 19 knows) and PTX ISA
/// opts.ptxVersion. Mutates `m` (it holds the optimized module afterwards, and the pipelines,
/// freed with it: destroying `m` off the caller's path spares it that). The pass
/// pipelines come from `pipelines` (startPtxPipelines with the same options, throws
/// CompileError(Internal) for others), where the optimization pipeline is used if it is built
/// by now (else built here); without them, code generation's is built on a thread started for
/// the call, which has ended when the call returns or throws (built on the calling thread where
/// none can be started), while this one optimizes. Thread-safe for distinct modules. Throws
/// CompileError(Internal) when libdevice is missing or LLVM fails.
std::string emitPTX(LoweredModule &m, const CompileOptions &opts,
                    std::shared_ptr<PtxPipelines> pipelines = nullptr);

/// Host only: optimizes `m` at O3 (or opts.optLevel when lower), adds it to the process-wide
/// ORC LLJIT (created on first use; process symbols such as libm are visible) in a JITDylib
/// of its own, and returns the address of the entry, valid for the life of the process.
/// Throws CompileError(Internal) on failure.
void *addToHostJIT(LoweredModule &&m, const CompileOptions &opts);

/// Host only, for the disk cache: optimizes `m` as addToHostJIT does and compiles it to a
/// relocatable object file for this host (position-independent, small code model), returned
/// as bytes. Throws CompileError(Internal) on failure.
std::string compileHostObject(LoweredModule &&m, const CompileOptions &opts);

/// Host only: adds the object file `object` (from compileHostObject, possibly of another
/// process on the same host) to the process-wide JIT in a JITDylib of its own and returns the
/// address of `entry`, valid for the life of the process. Throws CompileError(Internal) when
/// the object cannot be linked or lacks `entry`.
void *loadHostObject(const std::string &object, const std::string &entry);

/// The LLVM version codegen was built with ("19.1.7"). Cheap: initializes nothing.
std::string llvmVersion();

/// What host code depends on: the process triple, the host CPU's name and its features, as
/// the host JIT detects them. Initializes no LLVM target.
std::string hostTargetId();

/// What the host grid runner needs to know about a host kernel besides its arguments
/// (cooperating threads: see docs/cooperation.md). Lowering stores it in the host module as the
/// constant `<entry>__launch` (four uint64: shared bytes, cooperative (bit 0: fibers, bit 1: grid
/// synchronization), local bytes, raises), so it survives compiling to an object file.
/// The fault record of a launch: the first out-of-bounds array index (a module compiled with
/// CompileOptions::boundscheck) or the first exception raised (CompileOptions::exceptions), as
/// the first failing thread records it in the module's global `<entry>__bounds` (all zero until
/// then; the launcher reads it after the launch and clears it).
struct BoundsRecord {
  static constexpr int64_t kIndexError = 1; ///< `failed` of an index out of bounds
  static constexpr int64_t kRaised = 2;     ///< `failed` of a raise: `index` is the raise site
  int64_t failed = 0;                       ///< 0, kIndexError or kRaised
  int64_t index = 0;  ///< the index as written (before negative indices wrap); the raise site
  int64_t size = 0;   ///< the dimension's size
  int64_t axis = 0;
  int64_t line = 0;    ///< the source line of the indexing
  int64_t tid[3] = {}; ///< threadIdx and blockIdx of the thread
  int64_t ctaid[3] = {};
  char array[32] = {};    ///< the indexed array's name in the source, NUL-terminated
  char function[32] = {}; ///< the function (kernel or device function) indexing it
};
constexpr int kBoundsRecordWords = 19;
static_assert(sizeof(BoundsRecord) == kBoundsRecordWords * 8);

struct HostLaunchInfo {
  uint64_t staticSharedBytes = 0; ///< bytes of cuda.shared.array with constant shapes per block
  bool cooperative = false;       ///< uses barriers or warp collectives: threads run as fibers
  bool gridSync = false;          ///< uses cuda.cg's grid synchronization: all blocks run at once
  uint64_t localBytes = 0;        ///< bytes of cuda.local.array per thread (all functions)
  bool raises = false;            ///< a thread may end early (a raise: ptxjit_host_exit_thread)
  /// The module's bounds record (CompileOptions::boundscheck), null without one.
  BoundsRecord *bounds = nullptr;
};

/// The launch facts of an entry returned by addToHostJIT or loadHostObject (all zero when its
/// module has no `<entry>__launch` constant). Thread-safe.
HostLaunchInfo hostLaunchInfo(const void *entry);

/// Frees the code and data of an entry returned by addToHostJIT or loadHostObject (its own
/// JITDylib) and forgets its launch facts, so that kernels compiled and dropped do not keep
/// their code. The entry must never run again. Unknown entries are ignored. Thread-safe; never
/// throws (a failure to free leaves the code in place).
void releaseHostCode(const void *entry) noexcept;

/// Makes `symbols` (name, address) resolvable from every module the host JIT links: the runtime
/// helpers host kernels call (the extension is loaded RTLD_LOCAL, so process lookup cannot find
/// them). Names already defined are skipped. Thread-safe; throws CompileError(Internal).
void defineHostSymbols(const std::vector<std::pair<std::string, void *>> &symbols);

} // namespace ptxjit::codegen
