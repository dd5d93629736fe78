// Unrolling small innermost loops on NVPTX (see GpuUnroll.h).
#include "codegen/GpuUnroll.h"

#include "codegen/NarrowInductionVars.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

namespace ptxjit::codegen::detail {
namespace {

using namespace llvm;

/// The loop's instructions that become code (PHIs and debug intrinsics aside); 0 when one is a
/// convergent call or a call of a function (not an intrinsic). By the time this runs every
/// device function that could be was inlined, so such a call stays a call in the PTX (a
/// recursive one): the loads unrolling overlaps wait behind it anyway, and each unrolled copy
/// keeps more values live across the calls, which the callee's frame saves. A recursive
/// function's frame, times its depth, must fit CUDA's stack (1 KiB per thread by default).
unsigned bodySize(const Loop &l) {
  unsigned n = 0;
  for (const BasicBlock *b : l.blocks())
    for (const Instruction &i : *b) {
      if (isa<PHINode>(i) || isa<DbgInfoIntrinsic>(i))
        continue;
      if (const auto *call = dyn_cast<CallBase>(&i);
          call && (call->isConvergent() || !isa<IntrinsicInst>(call)))
        return 0;
      ++n;
    }
  return n;
}

} // namespace

unsigned gpuUnrollCount(const Loop &l, ScalarEvolution &se) {
  if (!l.isInnermost() || isNarrowIVWideCopy(l) || hasUnrollTransformation(&l) != TM_Unspecified)
    return 0;
  BasicBlock *latch = l.getLoopLatch();
  if (!latch || l.getExitingBlock() != latch)
    return 0;
  if (isa<SCEVCouldNotCompute>(se.getBackedgeTakenCount(&l)))
    return 0;
  unsigned size = bodySize(l);
  if (size == 0)
    return 0;
  unsigned tripCount = se.getSmallConstantTripCount(&l); // 0: not a (small) constant
  for (unsigned count = kGpuUnrollMaxCount; count >= 2; count /= 2)
    if (size * count <= kGpuUnrollBudget && (tripCount == 0 || count <= tripCount))
      return count;
  return 0;
}

PreservedAnalyses GpuUnrollPass::run(Function &f, FunctionAnalysisManager &fam) {
  if (f.isDeclaration())
    return PreservedAnalyses::all();
  LoopInfo &li = fam.getResult<LoopAnalysis>(f);
  ScalarEvolution &se = fam.getResult<ScalarEvolutionAnalysis>(f);
  bool changed = false;
  for (Loop *l : li.getLoopsInPreorder())
    if (unsigned count = gpuUnrollCount(*l, se)) {
      addStringMetadataToLoop(l, "llvm.loop.unroll.count", count);
      changed = true;
    }
  if (!changed)
    return PreservedAnalyses::all();
  // Only loop metadata changed, and none that these analyses read (ScalarEvolution reads
  // llvm.loop.mustprogress, which this pass does not add): LoopVectorize, next in the pipeline,
  // reuses them.
  PreservedAnalyses pa;
  pa.preserveSet<CFGAnalyses>();
  pa.preserve<ScalarEvolutionAnalysis>();
  return pa;
}

} // namespace ptxjit::codegen::detail
