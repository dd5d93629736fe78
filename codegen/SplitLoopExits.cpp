// Exit values computed off the loop's path, for ptxas (see SplitLoopExits.h).
//
// Why inline PTX and not IR: the split blocks must survive the NVPTX codegen pipeline's IR
// passes. A block holding only PHI-feeding constants is removed again by CodeGenPrepare, and
// `sub Next, Step` is rewritten by LoopStrengthReduce as its own induction expression, which
// GVN then folds back to P (a `freeze` in between is dropped by CanonicalizeFreezeInLoops).
// Inline assembly without side effects is opaque to all of them and costs nothing: ptxas sees a
// `sub` or a `mov` it would have had to emit anyway, now on the exit path.
#include "codegen/SplitLoopExits.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <string>

namespace ptxjit::codegen::detail {
namespace {

using namespace llvm;

/// The NVPTX inline-asm register constraint for values of type t (null: not handled).
const char *ptxRegister(Type *t) {
  if (t->isIntegerTy(32))
    return "r";
  if (t->isIntegerTy(64))
    return "l";
  if (t->isFloatTy())
    return "f";
  if (t->isDoubleTy())
    return "d";
  return nullptr;
}

/// `<op>.<type> $0, $1[, $2];` on `operands` values of type t (ptxRegister(t) non-null).
InlineAsm *ptxInstruction(Type *t, const char *op, const char *typeLetter, unsigned operands) {
  std::string reg = ptxRegister(t);
  std::string text = op, constraints = "=" + reg;
  text += '.';
  text += typeLetter;
  text += std::to_string(t->getPrimitiveSizeInBits());
  text += " $0";
  for (unsigned k = 1; k <= operands; ++k) {
    text += ", $" + std::to_string(k);
    constraints += "," + reg;
  }
  text += ';';
  SmallVector<Type *, 2> params(operands, t);
  return InlineAsm::get(FunctionType::get(t, params, false), text, constraints,
                        /*hasSideEffects=*/false);
}

/// `mov.b32/b64/f32/f64 $0, $1;` on values of type t.
InlineAsm *ptxMov(Type *t) { return ptxInstruction(t, "mov", t->isIntegerTy() ? "b" : "f", 1); }

/// `sub.s32/s64 $0, $1, $2;` on integers of type t.
InlineAsm *ptxSub(Type *t) { return ptxInstruction(t, "sub", "s", 2); }

struct Counter {
  PHINode *p;
  BinaryOperator *next;
  Value *step;
};

/// The header PHIs of `l` (one latch) that count: P = phi [.., latch: Next = add P, Step], Step
/// loop-invariant, P of type i32 or i64.
SmallVector<Counter, 2> counters(const Loop &l, BasicBlock *latch) {
  SmallVector<Counter, 2> out;
  for (PHINode &p : l.getHeader()->phis()) {
    auto *next = dyn_cast<BinaryOperator>(p.getIncomingValueForBlock(latch));
    if (!(p.getType()->isIntegerTy(32) || p.getType()->isIntegerTy(64)) || !next ||
        next->getOpcode() != Instruction::Add || !l.contains(next))
      continue;
    Value *step = next->getOperand(0) == &p   ? next->getOperand(1)
                  : next->getOperand(1) == &p ? next->getOperand(0)
                                              : nullptr;
    if (step && l.isLoopInvariant(step))
      out.push_back({&p, next, step});
  }
  return out;
}

/// The number of edges from `from` to `to` (a conditional branch may have two).
unsigned edgeCount(BasicBlock *from, BasicBlock *to) {
  unsigned n = 0;
  for (BasicBlock *s : successors(from))
    n += s == to;
  return n;
}

} // namespace

bool splitLoopExits(Function &f) {
  if (f.isDeclaration())
    return false;
  DominatorTree dt(f);
  LoopInfo li(dt);
  struct Edge {
    Loop *loop;
    BasicBlock *from, *to;
    SmallVector<Counter, 2> counters; // those whose Next dominates the exiting branch
  };
  SmallVector<Edge, 8> edges;
  for (Loop *l : li.getLoopsInPreorder()) {
    BasicBlock *latch = l->getLoopLatch();
    if (!l->isInnermost() || !latch)
      continue;
    SmallVector<Counter, 2> all = counters(*l, latch);
    SmallVector<std::pair<BasicBlock *, BasicBlock *>, 4> exits;
    l->getExitEdges(exits);
    for (auto [from, to] : exits) {
      // Only edges into a join: on an edge to a block of its own LLVM already puts the copies
      // there, outside the loop.
      if (!isa<PHINode>(to->begin()) || to->hasNPredecessors(1) || to->isEHPad() ||
          edgeCount(from, to) != 1 || !isa<BranchInst, SwitchInst>(from->getTerminator()))
        continue;
      Edge e{l, from, to, {}};
      for (const Counter &c : all)
        if (dt.dominates(c.next, from->getTerminator()))
          e.counters.push_back(c);
      edges.push_back(std::move(e));
    }
  }
  for (const Edge &e : edges) {
    // Without LoopInfo SplitEdge adds no LCSSA PHIs to the new block.
    BasicBlock *mid = SplitEdge(e.from, e.to, &dt);
    IRBuilder<> b(mid->getTerminator());
    for (PHINode &pn : e.to->phis()) {
      int i = pn.getBasicBlockIndex(mid);
      Value *v = pn.getIncomingValue(i);
      if (!ptxRegister(v->getType()) || isa<UndefValue>(v))
        continue;
      Value *exitValue = nullptr;
      for (const Counter &c : e.counters)
        if (v == c.p)
          exitValue = b.CreateCall(ptxSub(v->getType()), {c.next, c.step}, v->getName() + ".exit");
      if (!exitValue && e.loop->isLoopInvariant(v))
        exitValue = b.CreateCall(ptxMov(v->getType()), {v}, v->getName() + ".exit");
      if (exitValue)
        pn.setIncomingValue(i, exitValue);
    }
  }
  return !edges.empty();
}

PreservedAnalyses SplitLoopExitsPass::run(Function &f, FunctionAnalysisManager &) {
  return splitLoopExits(f) ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace ptxjit::codegen::detail
