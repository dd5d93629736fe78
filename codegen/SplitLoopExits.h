// Codegen-internal (LLVM types; never include from outside codegen/ and its tests): the
// NVPTX-only pass that takes the copies of a loop's exit values off the loop's path.
//
// A loop that leaves through two exits into one block (`for i in range(n): ... if c: return i`
// then `return n`) hands that block a PHI per exit value. LLVM's NVPTX backend emits the PHI's
// copies before each exiting branch, inside the loop, and ptxas keeps them there: on every
// iteration a `mov` of the value the count exit would return, and a copy of the old counter
// `i` that the escape exit would return (its increment is issued before the test). In the
// Mandelbrot kernel that made the inner loop 15 SASS instructions against nvcc's 14 (1.04x its
// time); with the copies on the exit paths it is 13 (docs/performance.md).
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class Function;
} // namespace llvm

namespace ptxjit::codegen::detail {

/// Gives each exit edge of an innermost loop of `f` into a join (a block with PHIs and other
/// predecessors, a critical edge) a block of its own, and computes the PHIs' values for that
/// edge there, as inline PTX that LLVM's later passes cannot fold back or hoist into the loop:
///  - a counter P (a header PHI of type i32/i64 with Next = add P, Step on the latch, Step
///    loop-invariant) leaving on an edge whose branch Next dominates becomes `sub Next, Step`,
///    so P need not stay live next to Next;
///  - a value from outside the loop (a constant, an argument, an instruction before the loop)
///    of type i32/i64/f32/f64 becomes a `mov` of it, so that its copy happens on the edge.
/// Other values are left as they are (their copies land in the new block anyway). The inline
/// PTX is a plain sub/mov to ptxas. Only for the NVPTX target. Returns true when `f` changed.
bool splitLoopExits(llvm::Function &f);

/// splitLoopExits as a new-pass-manager function pass (registered for NVPTX at O2+ at the
/// optimizer-last extension point, after which no InstCombine/GVN of the optimizer runs).
/// Preserves nothing when it changed the function.
class SplitLoopExitsPass : public llvm::PassInfoMixin<SplitLoopExitsPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &fam);
};

} // namespace ptxjit::codegen::detail
