// Codegen-internal (LLVM types; never include from outside codegen/ and its tests): the
// NVPTX-only pass that issues a block's loads early.
//
// ptxas expands `sqrt.rn.f32`, `div.rn.f32` and friends into a fast path and a slow-path branch,
// and it does not move loads above such a branch. LLVM's NVPTX backend emits instructions in
// source order, so in `sqrtT = math.sqrt(T[i]); d1 = math.log(S[i] / X[i])` the loads of S and X
// wait for T's load and the square root: one load in flight where nvcc's PTX has three (its
// loads come first). Moving each load up, within its block, to just after what it depends on
// gives ptxas the loads first. Measured on Black-Scholes (docs/performance.md).
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class BasicBlock;
class Function;
} // namespace llvm

namespace ptxjit::codegen::detail {

/// Moves each simple (non-volatile, non-atomic) load of `bb` up to just after the latest of:
/// the block's PHIs, the last earlier instruction that may write memory or has other side
/// effects (a store, a barrier, a call that is not known to be free of them), the previous
/// load moved, and its operands' definitions; operands defined in the block by instructions
/// without memory access or side effects (address arithmetic) move up with it first. Loads
/// keep their relative order; nothing moves across a possible write. Returns true when `bb`
/// changed.
bool hoistLoadsInBlock(llvm::BasicBlock &bb);

/// hoistLoadsInBlock over every block of `f` as a new-pass-manager function pass (registered
/// for NVPTX at O2+ at the optimizer-last extension point). Preserves the CFG.
class HoistLoadsPass : public llvm::PassInfoMixin<HoistLoadsPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &fam);
};

} // namespace ptxjit::codegen::detail
