// Codegen-internal (LLVM types; never include from outside codegen/ and its tests): the
// NVPTX-only pass that gives innermost loops 32-bit counters.
//
// Python ints are int64, so `for i in range(n)` counts in i64: on the GPU every iteration pays
// a 64-bit add and a 64-bit compare (two instructions each in SASS), where nvcc's `int i` loop
// pays one of each. IndVarSimplify widens an i32 counter back to i64 when the counter is
// sign-extended at its use, so the narrowing must run after it (the vectorizer-start extension
// point). See docs/performance.md, "Compiler: 32-bit loop counters".
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class Function;
class Loop;
class LoopInfo;
} // namespace llvm

namespace ptxjit::codegen::detail {

/// Innermost loops above this many instructions are left alone (versioning copies the loop).
constexpr unsigned kNarrowIVMaxLoopInstructions = 300;

/// The metadata kind put on the latch terminator of a loop this pass made (the wide copy,
/// "wide") or narrowed behind a guard ("narrowed"); such loops are never candidates again.
constexpr const char *kNarrowIVMarker = "ptxjit.narrow_iv";

/// Narrows the i64 induction variables of innermost loops of `f` to i32 where that is provably
/// safe. A candidate is an innermost loop (simplified form, at most
/// kNarrowIVMaxLoopInstructions instructions) with a header PHI P = phi [Start, preheader],
/// [Next = add P, Step, latch], Step loop-invariant with a known non-zero sign, and an exiting
/// branch, in a block dominating the latch, on `icmp pred X, Bound` (X is P or Next, Bound
/// loop-invariant, pred signed, or eq/ne when Step is +1 or -1) whose exit direction matches
/// the sign of Step. When Start and Bound lie in [-2^30, 2^30 - 1] and |Step| <= 2^29 (and, for
/// eq/ne, Start does not lie beyond Bound), every value P and Next take fits in i32: the loop
/// is rewritten with an i32 PHI, an `add nsw i32` and an i32 compare, other uses of P and Next
/// get a sext, and the loop is marked llvm.loop.mustprogress (it provably terminates, which lets
/// ScalarEvolution count the iterations of a loop with a run-time step). What
/// ScalarEvolution/ValueTracking (and conditions dominating the loop) prove is not checked again;
/// when something is left to check, the loop is versioned: a guard in the preheader branches to the
/// narrowed loop or to a wide copy (see markWideCopiesNoUnroll). Returns true when `f` changed.
/// Loops that cannot be proven safe are left untouched (except that candidates may be put into
/// loop-simplify/LCSSA form first).
/// The analyses are `fam`'s: after a transformation everything of `f` cached there is
/// invalidated, so the dominator tree, loop info, assumptions and ScalarEvolution cached when it
/// returns describe `f` as it leaves it (other results may be stale: the pass does not preserve
/// them).
bool narrowInductionVariables(llvm::Function &f, llvm::FunctionAnalysisManager &fam);

/// True for the wide copy narrowInductionVariables makes of a loop it versions (it runs only for
/// bounds beyond the 32-bit range).
bool isNarrowIVWideCopy(const llvm::Loop &l);

/// narrowInductionVariables as a new-pass-manager function pass (registered for NVPTX at O2+
/// at the vectorizer-start extension point). When it changed the function it preserves the
/// dominator tree, loop info, assumptions and ScalarEvolution its last round computed.
class NarrowInductionVarsPass : public llvm::PassInfoMixin<NarrowInductionVarsPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &fam);
};

/// Marks the wide copies among the loops of `li` (what LLVM's unroller made of them included)
/// llvm.loop.unroll.disable, which NVPTX prints as `.pragma "nounroll"`, so that ptxas does not
/// unroll them again. For after LLVM's loop unrolling: LLVM itself still unrolls the copy as it
/// would any loop. Why: unrolled once more by ptxas, the never-run copy changed how ptxas
/// scheduled the rest of the kernel; the rowdot gufunc's row loop ran at 1.7x its `@cuda.jit`
/// twin on the H200, and a copy LLVM keeps rolled slowed the Monte Carlo kernel by 7%
/// (docs/performance.md, the thirteenth session). Changes only loop metadata; returns true when
/// it changed any.
bool markWideCopiesNoUnroll(llvm::LoopInfo &li);

/// markWideCopiesNoUnroll as a new-pass-manager function pass (registered for NVPTX at O2+ at the
/// optimizer-last extension point). Preserves the control-flow analyses.
class MarkWideCopiesNoUnrollPass : public llvm::PassInfoMixin<MarkWideCopiesNoUnrollPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &fam);
};

} // namespace ptxjit::codegen::detail
