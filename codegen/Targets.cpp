// Process-wide LLVM target setup (NVPTX and the native target only), NVPTX target machines
// and the optimization pipeline shared by both backends.
#include "codegen/GpuUnroll.h"
#include "codegen/HoistLoads.h"
#include "codegen/MergeBackedges.h"
#include "codegen/ModuleImpl.h"
#include "codegen/NarrowInductionVars.h"
#include "codegen/SplitLoopExits.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/Scalar/InferAddressSpaces.h>
#include <llvm/Transforms/Scalar/InferAlignment.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <optional>
#include <vector>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace ptxjit::codegen::detail {

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

const char *nvptxTriple() { return "nvptx64-nvidia-cuda"; }

namespace {

const llvm::Target &nvptxTarget() {
  initializeTargets();
  std::string err;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(nvptxTriple(), err);
  if (!t)
    internalError("LLVM has no NVPTX target: " + err);
  return *t;
}

llvm::CodeGenOptLevel codegenLevel(int optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

std::unique_ptr<llvm::TargetMachine> makeNvptx(const std::string &cpu, const std::string &features,
                                               int optLevel) {
  llvm::TargetOptions to;
  // Contract a*b+c into fma as nvcc and Numba's NVVM do by default.
  to.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> tm(nvptxTarget().createTargetMachine(
      nvptxTriple(), cpu, features, to, std::nullopt, std::nullopt, codegenLevel(optLevel)));
  if (!tm)
    internalError("cannot create an NVPTX target machine for " + cpu);
  return tm;
}

} // namespace

const std::string &nvptxDataLayout() {
  static const std::string layout = [] {
    return makeNvptx("sm_52", "", 3)->createDataLayout().getStringRepresentation();
  }();
  return layout;
}

std::string nvptxCpuName(int ccMajor, int ccMinor) {
  // The SM versions LLVM 19's NVPTX backend accepts, newest first.
  static const int known[] = {90, 89, 87, 86, 80, 75, 72, 70, 62, 61,
                              60, 53, 52, 50, 37, 35, 32, 30, 21, 20};
  int cc = ccMajor * 10 + ccMinor;
  for (int k : known)
    if (k <= cc)
      return "sm_" + std::to_string(k);
  return "sm_" + std::to_string(known[sizeof known / sizeof known[0] - 1]);
}

std::unique_ptr<llvm::TargetMachine> createNvptxTargetMachine(const CompileOptions &opts) {
  if (opts.ptxVersion < 32 || opts.ptxVersion > 85)
    internalError("PTX ISA version " + std::to_string(opts.ptxVersion / 10) + "." +
                  std::to_string(opts.ptxVersion % 10) + " is not supported by LLVM 19");
  std::string cpu = nvptxCpuName(opts.ccMajor, opts.ccMinor);
  if (opts.archSpecific) {
    // Callers check the target (LLVM 19 has sm_90a and no other arch-specific one); sm_90a
    // needs PTX ISA 8.0.
    if (opts.ccMajor != 9 || opts.ccMinor != 0 || opts.ptxVersion < 80)
      internalError("no arch-specific target for " + opts.str());
    cpu = "sm_90a";
  }
  auto tm = makeNvptx(cpu, "+ptx" + std::to_string(opts.ptxVersion), opts.optLevel);
  // Unoptimized code keeps a*b+c as two roundings, as NVVM does at -opt=0 (numba-cuda's
  // opt=False); fastmath's per-instruction 'contract' flags still allow fusion.
  if (opts.optLevel == 0)
    tm->Options.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  if (opts.fastmath) {
    // Not NoInfsFPMath/NoNaNsFPMath: NaN and infinities keep IEEE's rules under fastmath
    // (codegen/Lowering.cpp says why).
    tm->Options.UnsafeFPMath = true;
    tm->Options.NoSignedZerosFPMath = true;
  }
  return tm;
}

namespace {

/// The idle target machines. Never destroyed: the exit handlers run in no fixed order, and a
/// target machine destroyed after LLVM's own statics would use them.
struct NvptxPool {
  std::mutex mutex;
  std::vector<std::pair<NvptxTargetMachineLease::Key, std::unique_ptr<llvm::TargetMachine>>> idle;
};

NvptxPool &nvptxPool() {
  static NvptxPool *pool = new NvptxPool;
  return *pool;
}

} // namespace

NvptxTargetMachineLease::NvptxTargetMachineLease(const CompileOptions &opts)
    : key_{opts.ptxVersion, opts.ccMajor,      opts.ccMinor,
           opts.optLevel,   opts.archSpecific, opts.fastmath} {
  {
    NvptxPool &pool = nvptxPool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    // The machine returned last first: its tables are the likeliest to be in the caches.
    for (auto it = pool.idle.rbegin(); it != pool.idle.rend(); ++it)
      if (it->first == key_) {
        tm_ = std::move(it->second);
        pool.idle.erase(std::next(it).base());
        return;
      }
  }
  tm_ = createNvptxTargetMachine(opts);
}

NvptxTargetMachineLease::~NvptxTargetMachineLease() {
  NvptxPool &pool = nvptxPool();
  try {
    std::lock_guard<std::mutex> lock(pool.mutex);
    pool.idle.emplace_back(key_, std::move(tm_));
  } catch (...) {
    // No memory to keep it: the next lease makes another.
  }
}

std::vector<llvm::StringRef> passesThatChangeNothing(const llvm::Module &m) {
  std::vector<llvm::StringRef> none{"CGProfilePass"};
  for (const llvm::Function &f : m)
    for (const llvm::BasicBlock &bb : f)
      for (const llvm::Instruction &i : bb)
        if (auto *call = llvm::dyn_cast<llvm::CallBase>(&i);
            call && call->isIndirectCall() && !call->isInlineAsm())
          return none;
  none.push_back("CalledValuePropagationPass");
  return none;
}

/// What an OptimizationPipeline holds, in the order the pipeline was built in one function
/// before (destroyed in reverse: the pass manager first, the analysis managers last).
struct OptimizationPipeline::State {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks skip;
  std::vector<llvm::StringRef> none; ///< passesThatChangeNothing of the module run
  /// Kept for the run: the analyses it registered call back into it (the alias analyses).
  std::optional<llvm::PassBuilder> pb;
  llvm::ModulePassManager mpm;
  bool ran = false;
};

OptimizationPipeline::OptimizationPipeline(llvm::TargetMachine &tm, int optLevel)
    : s_(std::make_unique<State>()) {
  State &st = *s_;
  llvm::LoopAnalysisManager &lam = st.lam;
  llvm::FunctionAnalysisManager &fam = st.fam;
  llvm::CGSCCAnalysisManager &cgam = st.cgam;
  llvm::ModuleAnalysisManager &mam = st.mam;
  // The skipped passes are module passes, so only the module analysis manager hands out the
  // callback (registered before the PassBuilder's own instrumentation analysis, which it
  // replaces; the PassBuilder gets no callbacks object, which would make it register the names
  // of all of LLVM's passes, every compile). The module's list is made when it runs.
  llvm::PassInstrumentationCallbacks &skip = st.skip;
  skip.registerShouldRunOptionalPassCallback([&none = st.none](llvm::StringRef pass, llvm::Any) {
    return std::find(none.begin(), none.end(), pass) == none.end();
  });
  mam.registerPass([callbacks = &skip] { return llvm::PassInstrumentationAnalysis(callbacks); });
  llvm::PipelineTuningOptions pto; // the PassBuilder keeps a copy
  pto.LoopVectorization = optLevel >= 2;
  pto.SLPVectorization = optLevel >= 2;
  // The constructor registers the target's callbacks (NVVMReflect and NVVMIntrRange at the
  // pipeline's start for NVPTX); registering them again would run those passes twice.
  llvm::PassBuilder &pb = st.pb.emplace(&tm, pto);
  // Every target, before the first LoopSimplify: one backedge per loop (MergeBackedges.h), so
  // that a loop with `continue` or a trailing `if` stays one loop.
  pb.registerPipelineStartEPCallback([](llvm::ModulePassManager &mpm, llvm::OptimizationLevel) {
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(MergeBackedgesPass()));
  });
  if (tm.getTargetTriple().isNVPTX() && optLevel >= 2) { // GPU only: free on x86-64
    // 32-bit counters for innermost loops, after IndVarSimplify (which would widen them back).
    pb.registerVectorizerStartEPCallback(
        [](llvm::FunctionPassManager &fpm, llvm::OptimizationLevel) {
          fpm.addPass(NarrowInductionVarsPass());
          // Then an unroll count for small innermost loops, as nvcc unrolls them (GpuUnroll.h);
          // LoopUnrollPass, later in the pipeline, does the unrolling.
          fpm.addPass(GpuUnrollPass());
        });
    // First, the 64-bit copies of narrowed loops marked for ptxas not to unroll them
    // (NarrowInductionVars.h).
    // Exit values computed on the exit paths, not copied inside the loop (SplitLoopExits.h);
    // a block's loads first, so that ptxas issues them before the slow-path branches it makes
    // of sqrt/div (HoistLoads.h).
    // Last, the address spaces of generic pointers (as NVPTX's code generation infers them),
    // then the alignments those addresses prove: a complex64 element of a constant array lies
    // at an 8-byte multiple from the array's 16-byte aligned start, which is visible only
    // once the load reads the addrspace(4) global rather than a generic cast of it; NVPTX's
    // load/store vectorizer merges the two halves of a complex into one ld.const.v2.f32 only
    // when it knows that alignment.
    pb.registerOptimizerLastEPCallback([](llvm::ModulePassManager &mpm, llvm::OptimizationLevel) {
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(MarkWideCopiesNoUnrollPass()));
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(SplitLoopExitsPass()));
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(HoistLoadsPass()));
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::InferAddressSpacesPass()));
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::InferAlignmentPass()));
    });
  }
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel <= 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  st.mpm = level == llvm::OptimizationLevel::O0 ? pb.buildO0DefaultPipeline(level)
                                                : pb.buildPerModuleDefaultPipeline(level);
}

OptimizationPipeline::~OptimizationPipeline() = default;

void OptimizationPipeline::run(llvm::Module &m) {
  State &st = *s_;
  if (st.ran)
    internalError("an optimization pipeline runs on one module only");
  st.ran = true;
  st.none = passesThatChangeNothing(m);
  st.mpm.run(m, st.mam);
}

void runOptimizationPipeline(llvm::Module &m, llvm::TargetMachine &tm, int optLevel) {
  OptimizationPipeline(tm, optLevel).run(m);
}

} // namespace ptxjit::codegen::detail
