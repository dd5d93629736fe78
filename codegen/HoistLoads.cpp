// Early loads for NVPTX (see HoistLoads.h).
#include "codegen/HoistLoads.h"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>

namespace ptxjit::codegen::detail {
namespace {

using namespace llvm;

/// Address arithmetic and other computations that may move up freely within a block: no
/// memory access, no side effects, not a PHI, a terminator or a convergent call.
bool isMovablePure(const Instruction &i) {
  if (isa<PHINode>(i) || i.isTerminator() || i.isEHPad() || isa<AllocaInst>(i))
    return false;
  if (i.mayReadOrWriteMemory() || i.mayHaveSideEffects())
    return false;
  if (const auto *call = dyn_cast<CallBase>(&i); call && call->isConvergent())
    return false;
  return true;
}

/// A point nothing may move above: a possible write or another side effect.
bool isBarrier(const Instruction &i) { return i.mayWriteToMemory() || i.mayHaveSideEffects(); }

/// The later of two points of `bb` (null: the block's start, after its PHIs).
Instruction *later(Instruction *a, Instruction *b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return a->comesBefore(b) ? b : a;
}

/// Moves `i` up to just after `floor` and its operands defined in `bb` (moving movable pure
/// operands up first); never down. Returns the point `i` now sits at.
Instruction *place(Instruction *i, Instruction *floor, BasicBlock &bb, bool &changed,
                   unsigned depth = 0) {
  Instruction *target = floor;
  for (Value *op : i->operands()) {
    auto *def = dyn_cast<Instruction>(op);
    if (!def || def->getParent() != &bb)
      continue;
    if (isa<PHINode>(def)) // PHIs sit at the top: any point after `floor` is after them
      continue;
    if (floor && !floor->comesBefore(def)) // already at or above the floor
      continue;
    if (depth < 16 && isMovablePure(*def))
      def = place(def, floor, bb, changed, depth + 1);
    target = later(target, def);
  }
  Instruction *first = &*bb.getFirstInsertionPt();
  if (!target) {
    if (i != first && first->comesBefore(i)) {
      i->moveBefore(first);
      changed = true;
    }
    return i;
  }
  if (target->getNextNode() != i && target->comesBefore(i)) {
    i->moveAfter(target);
    changed = true;
  }
  return i;
}

} // namespace

bool hoistLoadsInBlock(BasicBlock &bb) {
  bool changed = false;
  Instruction *floor = nullptr; // the last barrier or moved load, in the current order
  SmallVector<Instruction *, 64> order;
  for (Instruction &i : bb)
    order.push_back(&i);
  for (Instruction *i : order) {
    if (isa<PHINode>(i) || i->isTerminator())
      continue;
    if (auto *load = dyn_cast<LoadInst>(i); load && load->isSimple()) {
      floor = place(load, floor, bb, changed);
      continue;
    }
    if (isBarrier(*i))
      floor = later(floor, i);
  }
  return changed;
}

PreservedAnalyses HoistLoadsPass::run(Function &f, FunctionAnalysisManager &) {
  bool changed = false;
  for (BasicBlock &bb : f)
    changed |= hoistLoadsInBlock(bb);
  if (!changed)
    return PreservedAnalyses::all();
  PreservedAnalyses pa;
  pa.preserveSet<CFGAnalyses>();
  return pa;
}

} // namespace ptxjit::codegen::detail
