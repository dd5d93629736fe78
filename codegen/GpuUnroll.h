// Codegen-internal (LLVM types; never include from outside codegen/ and its tests): the
// NVPTX-only pass that asks LLVM's loop unroller to unroll small innermost loops by up to
// four, as CUDA's own compiler does.
//
// Why. A GPU issues a warp's instructions in order: in a rolled loop that loads, each
// iteration's load is waited for (by the add that uses it) before the next iteration's load is
// issued, so a thread has one load in flight; unrolled by four, the four loads go out
// together. nvcc unrolls such loops by four, a grid-stride loop too (it counts the iterations
// with a division). LLVM's NVPTX target asks for partial and runtime unrolling, but with a
// quarter of the usual size threshold, and its runtime unrolling refuses a trip count that
// needs a division, which is every grid-stride loop's (`n / cuda.gridsize(1)`): the block
// reduction of bench/workloads.py ran at 1.36x its CUDA C++ twin, the n-body kernel's inner
// tile loop at 1.05x. An explicit unroll count (loop metadata, as `#pragma unroll 4` gives
// clang) lifts both limits. See docs/performance.md, "Compiler: unrolling small loops".
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class Function;
class Loop;
class ScalarEvolution;
} // namespace llvm

namespace ptxjit::codegen::detail {

/// The unroll count asked for is the largest of these (4, then 2) whose unrolled body stays
/// within kGpuUnrollBudget instructions.
constexpr unsigned kGpuUnrollMaxCount = 4;
/// Instructions (PHIs and debug intrinsics aside) of the unrolled body at most.
constexpr unsigned kGpuUnrollBudget = 160;

/// The unroll count GpuUnrollPass asks for `l` (0: none). Nonzero only for an innermost loop
/// whose only exiting block is its (one) latch, whose backedge-taken count
/// ScalarEvolution can compute (a constant, or a run-time expression: the loop must be known
/// to terminate, see NarrowInductionVars.h), that holds no convergent call (a barrier or warp
/// operation: the remainder loop would split the warp's collective) and no call of a function
/// (intrinsics aside: what is left after inlining is recursive or linked code, whose frame the
/// unrolled copies' live values would grow), carries no unroll
/// metadata of its own and is not the wide copy NarrowInductionVars makes (it runs only for
/// out-of-range bounds); the count is at most the constant trip count, and 2 or more.
unsigned gpuUnrollCount(const llvm::Loop &l, llvm::ScalarEvolution &se);

/// Puts `llvm.loop.unroll.count` (gpuUnrollCount) on the loops of a function, for LLVM's
/// LoopUnrollPass that runs later in the pipeline (registered for NVPTX at O2+ at the
/// vectorizer-start extension point, after NarrowInductionVarsPass). Changes only loop
/// metadata; preserves the control-flow analyses and ScalarEvolution.
class GpuUnrollPass : public llvm::PassInfoMixin<GpuUnrollPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &fam);
};

} // namespace ptxjit::codegen::detail
