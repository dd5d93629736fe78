// Codegen-internal: what a LoweredModule holds, and the process-wide target facts shared by
// lowering, PTX emission and the host JIT. Includes LLVM headers: never include this from
// outside codegen/.
#pragma once

#include "codegen/Codegen.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class TargetMachine;
}

namespace ptxjit::codegen {

struct LoweredModule::Impl {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
  std::string entry;
  Backend backend = Backend::CUDA;
  bool libdeviceLinked = false;
  /// External code the module's cuda.declare_device calls need (LoweredModule::links).
  std::vector<ir::LinkItem> links;
  /// The raise sites of opts.exceptions (LoweredModule::raiseSites).
  std::vector<ir::RaiseSite> raiseSites;
  /// The kernel synchronizes its grid (LoweredModule::gridSync).
  bool gridSync = false;
  /// After emitPTX: its pipelines (the optimization pipeline that ran, code generation's pass
  /// manager and its target machine lease, and an optimization pipeline built too late to be
  /// used), kept so that they are destroyed with the module (first), wherever the module's
  /// owner destroys it.
  std::shared_ptr<void> finishedCodegen;
};

namespace detail {

/// Initializes the NVPTX and native targets (once per process; thread-safe).
void initializeTargets();

/// "nvptx64-nvidia-cuda".
const char *nvptxTriple();
/// The NVPTX 64-bit data layout string (from LLVM's NVPTX target).
const std::string &nvptxDataLayout();
/// The newest SM name LLVM knows that is not newer than cc (major*10+minor), e.g. "sm_90".
std::string nvptxCpuName(int ccMajor, int ccMinor);
/// A fresh NVPTX target machine for `opts` (sm and PTX version). Throws CompileError.
std::unique_ptr<llvm::TargetMachine> createNvptxTargetMachine(const CompileOptions &opts);
/// An NVPTX target machine for `opts` (what createNvptxTargetMachine makes for the same sm, PTX
/// version, optimization level and fast-math), held by one user at a time: taken from the
/// process's idle ones (the one given back last first), or made when none is idle, and given
/// back when the lease ends. Building one (its subtarget's lowering tables) is a tenth of a
/// small kernel's compile, so a process keeps them; one compile holds two (its optimization
/// pipeline's and code generation's, both built before the module is ready), three when the
/// optimization pipeline was not built in time and the compile builds another. A module's code
/// generation keeps no state in it that the next module sees. Thread-safe; the constructor throws
/// as createNvptxTargetMachine.
class NvptxTargetMachineLease {
public:
  explicit NvptxTargetMachineLease(const CompileOptions &opts);
  ~NvptxTargetMachineLease();
  NvptxTargetMachineLease(const NvptxTargetMachineLease &) = delete;
  NvptxTargetMachineLease &operator=(const NvptxTargetMachineLease &) = delete;

  llvm::TargetMachine &operator*() const { return *tm_; }
  llvm::TargetMachine *operator->() const { return tm_.get(); }

  /// Everything createNvptxTargetMachine reads from the options.
  struct Key {
    int ptxVersion, ccMajor, ccMinor, optLevel;
    bool archSpecific, fastmath;
    bool operator==(const Key &) const = default;
  };

private:
  Key key_;
  std::unique_ptr<llvm::TargetMachine> tm_;
};

/// The host triple and data layout of the ORC JIT's target machine (detected once).
const std::string &hostTriple();
const std::string &hostDataLayout();

/// The new-pass-manager default pipeline at optLevel (0..3) with `tm`'s target callbacks and
/// ptxjit's own passes registered, built before there is a module to run it on: building it
/// (its pass managers, the registration of the analyses) is 2% of a small kernel's compile, which
/// a compile does on another thread while it types and lowers (codegen::startPtxPipelines).
/// `tm` must outlive it. Not thread-safe; built on one thread, it may run on another.
class OptimizationPipeline {
public:
  /// Builds the pipeline; throws CompileError(Internal) as LLVM's set-up does.
  OptimizationPipeline(llvm::TargetMachine &tm, int optLevel);
  ~OptimizationPipeline();
  OptimizationPipeline(const OptimizationPipeline &) = delete;
  OptimizationPipeline &operator=(const OptimizationPipeline &) = delete;

  /// Runs the pipeline over `m`, less the passes passesThatChangeNothing(m) names. Once: a second
  /// call throws CompileError(Internal) (LLVM's pass managers run on one module).
  void run(llvm::Module &m);

private:
  struct State; ///< LLVM's pass and analysis managers (Targets.cpp)
  std::unique_ptr<State> s_;
};

/// OptimizationPipeline(tm, optLevel).run(m).
void runOptimizationPipeline(llvm::Module &m, llvm::TargetMachine &tm, int optLevel);

/// The module passes of the default pipeline that can change nothing in `m`, by what they
/// transform (the names are LLVM's pass class names): CGProfilePass always (it records call
/// counts from profile data, which ptxjit never attaches), CalledValuePropagationPass when no
/// call in `m` is indirect (it only annotates indirect calls with their possible callees).
/// runOptimizationPipeline skips them; both cost about 2.5% of a small kernel's compile.
std::vector<llvm::StringRef> passesThatChangeNothing(const llvm::Module &m);

/// The kernel entry's string attribute listing its Python-float parameters' float32 copies:
/// "d:f,d:f,..." with d the double parameter's index and f its float32 copy's (lowerKernel).
inline constexpr const char *kFloat32CopiesAttr = "ptxjit-float32-copies";

/// In the CUDA kernel `entry` (after optimization, so inlined device code is covered): every
/// `fptrunc double %d to float` of a parameter listed in kFloat32CopiesAttr becomes its float32
/// copy, which the launcher rounded the same way (to nearest), so the conversion leaves the
/// threads. No-op when the entry has no such parameter.
void useFloat32Copies(llvm::Module &m, const std::string &entry);

/// Rewrites every 16- and 32-bit integer negation in NVPTX's output (`neg.s16`/`neg.s32 d, s;`)
/// as `not d, s; add d, d, 1;`, the same two's-complement value. Why: ptxas of CUDA 13.0 (and
/// the driver 580 PTX JIT, sm_90) fuses `min(min(x, neg y), z)` into one three-input VIMNMX3
/// and drops the negation (computes min(x, y, z)); CUDA C++ is hit the same way. ptxas keeps
/// not + add as an add-then-min (VIADDMNMX). docs/reliability.md shows the SASS.
/// Other lines are untouched; a predicate guard (`@%p neg...`) is kept on both instructions.
void spellIntegerNegations(std::string &ptx);

/// Throws CompileError(Internal) with `message` (no source location).
[[noreturn]] void internalError(const std::string &message);

} // namespace detail
} // namespace ptxjit::codegen
