// One backedge per loop (see MergeBackedges.h).
#include "codegen/MergeBackedges.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

namespace ptxjit::codegen::detail {
namespace {

using namespace llvm;

struct MultiLatchLoop {
  BasicBlock *header;
  SmallVector<BasicBlock *, 4> latches;
  BasicBlock *last; // the loop's last block in the function's layout
};

void mergeInto(const MultiLatchLoop &l) {
  BasicBlock *header = l.header;
  Function &f = *header->getParent();
  BasicBlock *latch = BasicBlock::Create(header->getContext(), header->getName() + ".latch", &f,
                                         l.last->getNextNode());
  SmallPtrSet<BasicBlock *, 4> old(l.latches.begin(), l.latches.end());
  for (PHINode &pn : header->phis()) {
    // One entry per edge (a latch that branches to the header twice has two).
    PHINode *merged =
        PHINode::Create(pn.getType(), pn.getNumIncomingValues(), pn.getName() + ".be", latch);
    for (unsigned i = 0; i < pn.getNumIncomingValues(); ++i)
      if (old.contains(pn.getIncomingBlock(i)))
        merged->addIncoming(pn.getIncomingValue(i), pn.getIncomingBlock(i));
    pn.removeIncomingValueIf([&](unsigned i) { return old.contains(pn.getIncomingBlock(i)); },
                             /*DeletePHIIfEmpty=*/false);
    pn.addIncoming(merged, latch);
  }
  BranchInst::Create(header, latch);
  for (BasicBlock *b : l.latches)
    b->getTerminator()->replaceSuccessorWith(header, latch);
}

} // namespace

bool mergeBackedges(Function &f) {
  if (f.isDeclaration())
    return false;
  DominatorTree dt(f);
  LoopInfo li(dt);
  // Collected first: the new blocks are not in li.
  SmallVector<MultiLatchLoop, 4> loops;
  for (Loop *l : li.getLoopsInPreorder()) {
    MultiLatchLoop m{l->getHeader(), {}, nullptr};
    l->getLoopLatches(m.latches);
    if (m.latches.size() < 2)
      continue;
    for (BasicBlock &b : f)
      if (l->contains(&b))
        m.last = &b;
    loops.push_back(std::move(m));
  }
  for (const MultiLatchLoop &m : loops)
    mergeInto(m);
  return !loops.empty();
}

PreservedAnalyses MergeBackedgesPass::run(Function &f, FunctionAnalysisManager &) {
  return mergeBackedges(f) ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace ptxjit::codegen::detail
