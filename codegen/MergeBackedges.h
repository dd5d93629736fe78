// Codegen-internal (LLVM types; never include from outside codegen/ and its tests): the pass
// that gives every loop a single backedge before LLVM's optimizer sees it.
//
// Why. A Python loop often jumps back to its head from more than one place: `continue` does,
// and from 3.12 on CPython gives an `if` that ends a loop body its own jump back (the jump to
// a shared JUMP_BACKWARD is replaced by a copy of it). A loop header with several backedges
// is split by LLVM's LoopSimplify into nested loops when a header PHI keeps its own value on
// some of them: `for k in range(n): ... if inside: count += 1` becomes an inner loop that runs
// until the next hit inside an outer loop that counts hits, with a divergent branch per
// iteration where one `selp` would do (the Monte Carlo pi kernel of bench/workloads.py ran at
// 2.8x its CUDA C++ twin under Python 3.12). Numba canonicalizes its loops the same way
// (one backedge per loop) before lowering.
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class Function;
} // namespace llvm

namespace ptxjit::codegen::detail {

/// For each natural loop of `f` whose header has two or more backedges, adds one block (named
/// after the header, ".latch") that every backedge now enters and that branches to the
/// header; each header PHI's values on the old backedges move to a PHI in that block. Returns
/// true when `f` changed. The loops themselves, and every other edge, are unchanged.
bool mergeBackedges(llvm::Function &f);

/// mergeBackedges as a new-pass-manager function pass (registered for every target at O1+ at
/// the pipeline-start extension point, before the first LoopSimplify). Preserves nothing when
/// it changed the function.
class MergeBackedgesPass : public llvm::PassInfoMixin<MergeBackedgesPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &fam);
};

} // namespace ptxjit::codegen::detail
