// The NVPTX loop-counter narrowing pass (codegen/NarrowInductionVars.h): the transformation on
// hand-written LLVM IR (FileCheck), its results executed on the host next to the untouched
// IR with bounds on both sides of the guard, its registration (NVPTX at O2+ only), and the PTX
// of lowered kernels (ptxas).
#include "Kernels.h"
#include "TestUtil.h"

#include "codegen/Codegen.h"
#include "codegen/ModuleImpl.h"
#include "codegen/NarrowInductionVars.h"

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace ptxjit::codegen::test {
namespace {

struct ParsedModule {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
};

ParsedModule parseIR(const std::string &text) {
  ParsedModule p;
  p.ctx = std::make_unique<llvm::LLVMContext>();
  p.module = parseTestIR(text, *p.ctx, "narrowiv");
  return p;
}

/// Runs the pass (alone) over every function of `m`; true when something changed.
bool runNarrowing(llvm::Module &m) {
  AnalysisManagers am;
  bool changed = false;
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      changed |= !detail::NarrowInductionVarsPass().run(f, am.fam).areAllPreserved();
  expectValidIR(m);
  return changed;
}

/// Parses `ir`, narrows it and FileChecks the result against `checks`.
::testing::AssertionResult narrowsTo(const std::string &ir, const std::string &checks) {
  ParsedModule p = parseIR(ir);
  if (!p.module)
    return ::testing::AssertionFailure() << "unparsable IR";
  if (!runNarrowing(*p.module))
    return ::testing::AssertionFailure() << "the pass changed nothing:\n" << ir;
  std::string out = moduleText(*p.module);
  CheckResult r = fileCheck(out, checks);
  if (!r.ok)
    return ::testing::AssertionFailure() << r.message << "\n--- output ---\n" << out;
  return ::testing::AssertionSuccess();
}

/// The pass leaves `ir` exactly as it was (and says so).
::testing::AssertionResult leftAlone(const std::string &ir) {
  ParsedModule p = parseIR(ir);
  if (!p.module)
    return ::testing::AssertionFailure() << "unparsable IR";
  std::string before = moduleText(*p.module);
  bool changed = runNarrowing(*p.module);
  std::string after = moduleText(*p.module);
  if (changed || before != after)
    return ::testing::AssertionFailure() << "the pass changed the IR:\n" << after;
  return ::testing::AssertionSuccess();
}

// ---- IR of the loops ------------------------------------------------------------------------

// for (i = start; ; ) { acc = acc * 31 + i; i += 1; if (!(i < bound)) break; }
// return acc ^ i           (rotated: the exit test is on Next, in the latch)
const char *kUpNext = R"(
define i64 @up_next(i64 %start, i64 %bound) {
entry:
  %enter = icmp slt i64 %start, %bound
  br i1 %enter, label %ph, label %done
ph:
  br label %loop
loop:
  %i = phi i64 [ %start, %ph ], [ %i.next, %loop ]
  %acc = phi i64 [ 0, %ph ], [ %acc.next, %loop ]
  %m = mul i64 %acc, 31
  %acc.next = add i64 %m, %i
  %i.next = add i64 %i, 1
  %c = icmp slt i64 %i.next, %bound
  br i1 %c, label %loop, label %exit
exit:
  %i.lcssa = phi i64 [ %i.next, %loop ]
  %acc.lcssa = phi i64 [ %acc.next, %loop ]
  %r = xor i64 %i.lcssa, %acc.lcssa
  br label %done
done:
  %res = phi i64 [ %r, %exit ], [ -1, %entry ]
  ret i64 %res
}
)";

// Mandelbrot's shape after IndVarSimplify: `for i in range(n)` as `icmp eq i64 %i, smax(n, 0)`
// in the header, an early exit on a float compare in the latch, the counter used after the
// loop through an LCSSA PHI (`return i` / `return n`).
const char *kEscape = R"(
declare i64 @llvm.smax.i64(i64, i64)

define i64 @escape(i64 %n, double %c) {
entry:
  %smax = call i64 @llvm.smax.i64(i64 %n, i64 0)
  br label %header
header:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  %z = phi double [ 0.0, %entry ], [ %z.next, %latch ]
  %done = icmp eq i64 %i, %smax
  br i1 %done, label %exit, label %latch
latch:
  %i.next = add nuw i64 %i, 1
  %zz = fmul double %z, %z
  %z.next = fadd double %zz, %c
  %small = fcmp ult double %z.next, 4.0
  br i1 %small, label %header, label %exit
exit:
  %r = phi i64 [ %n, %header ], [ %i, %latch ]
  ret i64 %r
}
)";

// The loops run by the execution tests stop after at most 1000 iterations (the unsigned test
// on k, not a candidate), so that a wrong narrowing shows as a wrong value, not as a hang.

// for (i = start; i > bound; i -= 1) acc = acc * 7 + i;  return acc + i    (test on P)
const char *kDown = R"(
define i64 @down(i64 %start, i64 %bound) {
entry:
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %body ]
  %acc = phi i64 [ 0, %entry ], [ %acc.next, %body ]
  %k = phi i64 [ 0, %entry ], [ %k.next, %body ]
  %more = icmp sgt i64 %i, %bound
  br i1 %more, label %body, label %exit
body:
  %m = mul i64 %acc, 7
  %acc.next = add i64 %m, %i
  %i.next = add nsw i64 %i, -1
  %k.next = add i64 %k, 1
  %cap = icmp ult i64 %k.next, 1000
  br i1 %cap, label %loop, label %exit
exit:
  %i.lcssa = phi i64 [ %i, %loop ], [ %i.next, %body ]
  %acc.lcssa = phi i64 [ %acc, %loop ], [ %acc.next, %body ]
  %r = add i64 %acc.lcssa, %i.lcssa
  ret i64 %r
}
)";

// Step 2^29 (the largest narrowed), test `i <= bound` on P; returns i * 3 + count.
const char *kBigStep = R"(
define i64 @big_step(i64 %start, i64 %bound) {
entry:
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %body ]
  %k = phi i64 [ 0, %entry ], [ %k.next, %body ]
  %more = icmp sle i64 %i, %bound
  br i1 %more, label %body, label %exit
body:
  %k.next = add i64 %k, 1
  %i.next = add i64 %i, 536870912
  %cap = icmp ult i64 %k.next, 1000
  br i1 %cap, label %loop, label %exit
exit:
  %iv = phi i64 [ %i, %loop ], [ %i.next, %body ]
  %kv = phi i64 [ %k, %loop ], [ %k.next, %body ]
  %i3 = mul i64 %iv, 3
  %r = add i64 %i3, %kv
  ret i64 %r
}
)";

// Counting down by 3 with `i.next >= bound` on Next; returns the last i.next.
const char *kDownGe = R"(
define i64 @down_ge(i64 %start, i64 %bound) {
entry:
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]
  %k = phi i64 [ 0, %entry ], [ %k.next, %latch ]
  %i.next = add i64 %i, -3
  %c = icmp sge i64 %i.next, %bound
  br i1 %c, label %latch, label %exit
latch:
  %k.next = add i64 %k, 1
  %cap = icmp ult i64 %k.next, 1000
  br i1 %cap, label %loop, label %exit
exit:
  %r = phi i64 [ %i.next, %loop ], [ %k.next, %latch ]
  ret i64 %r
}
)";

// `while (i != bound && k < 10) { i += 1; k += 1; }` with no guarantee that start < bound: the
// guard must check the order; returns i * 16 + k.
const char *kNeUp = R"(
define i64 @ne_up(i64 %start, i64 %bound) {
entry:
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]
  %k = phi i64 [ 0, %entry ], [ %k.next, %latch ]
  %i.next = add i64 %i, 1
  %k.next = add i64 %k, 1
  %c = icmp ne i64 %i.next, %bound
  br i1 %c, label %latch, label %exit
latch:
  %d = icmp ult i64 %k.next, 10
  br i1 %d, label %loop, label %exit
exit:
  %iv = phi i64 [ %i.next, %loop ], [ %i.next, %latch ]
  %kv = phi i64 [ %k.next, %loop ], [ %k.next, %latch ]
  %s = shl i64 %iv, 4
  %r = add i64 %s, %kv
  ret i64 %r
}
)";

// A runtime step known to be in [1, 2^32 - 1] (its magnitude is checked by the guard); the add
// comes before the test on P, so the last Next is computed beyond the bound and returned.
const char *kStride = R"(
define i64 @stride(i64 %start, i64 %bound, i64 %s0) {
entry:
  %low = and i64 %s0, 4294967295
  %step = or i64 %low, 1
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %body ]
  %k = phi i64 [ 0, %entry ], [ %k.next, %body ]
  %i.next = add i64 %i, %step
  %c = icmp sle i64 %i, %bound
  br i1 %c, label %body, label %exit
body:
  %k.next = add i64 %k, 1
  %cap = icmp ult i64 %k.next, 1000
  br i1 %cap, label %loop, label %exit
exit:
  %r = mul i64 %i.next, 5
  %r2 = add i64 %r, %k
  ret i64 %r2
}
)";

// ---- the transformation ----------------------------------------------------------------------

TEST(NarrowIV, RuntimeBoundsVersionTheLoop) {
  EXPECT_TRUE(narrowsTo(kUpNext, R"(
    CHECK: ph:
    CHECK: %niv.offset = sub i64 %start, -1073741824
    CHECK-NEXT: %niv.inrange = icmp ule i64 %niv.offset, 2147483647
    CHECK-NEXT: %niv.offset1 = sub i64 %bound, -1073741824
    CHECK-NEXT: %niv.inrange2 = icmp ule i64 %niv.offset1, 2147483647
    CHECK-NEXT: %niv.guard = and i1 %niv.inrange, %niv.inrange2
    CHECK-NEXT: br i1 %niv.guard, label %loop.narrow.ph, label %loop.narrow.ph.wide
    CHECK: loop.narrow.ph:
    CHECK: %i.start32 = trunc i64 %start to i32
    CHECK: %i.bound32 = trunc i64 %bound to i32
    CHECK: loop:
    CHECK-NEXT: %i.i32 = phi i32 [ %i.start32, %loop.narrow.ph ], [ %i.next.i32, %loop ]
    CHECK-NOT: phi i64 [ %start
    CHECK: %i.sext = sext i32 %i.i32 to i64
    CHECK: %acc.next = add i64 %m, %i.sext
    CHECK: %i.next.i32 = add nsw i32 %i.i32, 1
    CHECK-NEXT: %c.i32 = icmp slt i32 %i.next.i32, %i.bound32
    CHECK-NEXT: br i1 %c.i32, label %loop, label %exit, !llvm.loop !{{[0-9]+}}, !ptxjit.narrow_iv !{{[0-9]+}}
    CHECK: loop.narrow.ph.wide:
    CHECK: loop.wide:
    CHECK-NEXT: %i.wide = phi i64 [ %start, %loop.narrow.ph.wide ], [ %i.next.wide, %loop.wide ]
    CHECK: %i.next.wide = add i64 %i.wide, 1
    CHECK-NEXT: %c.wide = icmp slt i64 %i.next.wide, %bound
    CHECK-NEXT: br i1 %c.wide, label %loop.wide, label %exit, !ptxjit.narrow_iv
    CHECK: exit:
    CHECK-NEXT: %i.lcssa.i32 = phi i32 [ %i.next.i32, %loop ], [ 0, %loop.wide ]
    CHECK: %i.lcssa = phi i64 [ 0, %loop ], [ %i.next.wide, %loop.wide ]
    CHECK: %i.lcssa.sext = sext i32 %i.lcssa.i32 to i64
    CHECK-NEXT: %i.lcssa.value = add i64 %i.lcssa, %i.lcssa.sext
    CHECK: xor i64 %i.lcssa.value, %acc.lcssa
    CHECK: !{!"llvm.loop.mustprogress"}
    CHECK: !{!"narrowed"}
    CHECK: !{!"wide"}
  )"));
}

TEST(NarrowIV, IndVarsEqualityExitWithEarlyExitAndLcssaUse) {
  // 0 <= smax(n, 0) is known, so the guard only checks smax(n, 0) <= 2^30 - 1; the float exit
  // carries i out of the loop as i32, sign-extended after the loop.
  EXPECT_TRUE(narrowsTo(kEscape, R"(
    CHECK: entry:
    CHECK: %niv.inrange = icmp sle i64 %smax, 1073741823
    CHECK-NEXT: br i1 %niv.inrange, label %header.narrow.ph, label %header.narrow.ph.wide
    CHECK: header.narrow.ph:
    CHECK-NEXT: %i.bound32 = trunc i64 %smax to i32
    CHECK: header:
    CHECK-NEXT: %i.i32 = phi i32 [ 0, %header.narrow.ph ], [ %i.next.i32, %latch ]
    CHECK: %done.i32 = icmp eq i32 %i.i32, %i.bound32
    CHECK: latch:
    CHECK-NEXT: %i.next.i32 = add nsw i32 %i.i32, 1
    CHECK: header.wide:
    CHECK-NEXT: %i.wide = phi i64
    CHECK: %done.wide = icmp eq i64 %i.wide, %smax
    CHECK: exit:
    CHECK-NEXT: %r.i32 = phi i32 [ 0, %header ], [ %i.i32, %latch ], [ 0, %header.wide ], [ 0, %latch.wide ]
    CHECK-NEXT: %r = phi i64 [ %n, %header ], [ 0, %latch ], [ %n, %header.wide ], [ %i.wide, %latch.wide ]
    CHECK-NEXT: %r.sext = sext i32 %r.i32 to i64
    CHECK-NEXT: %r.value = add i64 %r, %r.sext
    CHECK-NEXT: ret i64 %r.value
  )"));
}

TEST(NarrowIV, DecreasingCounter) {
  EXPECT_TRUE(narrowsTo(kDown, R"(
    CHECK: entry:
    CHECK: br i1 %niv.guard, label %loop.narrow.ph, label %loop.narrow.ph.wide
    CHECK: loop:
    CHECK-NEXT: %i.i32 = phi i32 [ %i.start32, %loop.narrow.ph ], [ %i.next.i32, %body ]
    CHECK: %more.i32 = icmp sgt i32 %i.i32, %i.bound32
    CHECK: body:
    CHECK: %i.next.i32 = add nsw i32 %i.i32, -1
    CHECK: exit:
    CHECK-NEXT: %i.lcssa.i32 = phi i32 [ %i.i32, %loop ], [ %i.next.i32, %body ], [ 0, %loop.wide ], [ 0, %body.wide ]
  )"));
}

TEST(NarrowIV, ConstantBoundsNarrowInPlace) {
  // i from 0 to 1000 (IndVarSimplify's `icmp eq %i.next, 1000`): nothing to check at run time.
  EXPECT_TRUE(narrowsTo(R"(
define i64 @sum(i64 %x) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %acc = phi i64 [ %x, %entry ], [ %acc.next, %loop ]
  %sq = mul i64 %i, %i
  %acc.next = add i64 %acc, %sq
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, 1000
  br i1 %done, label %exit, label %loop
exit:
  %r = phi i64 [ %acc.next, %loop ]
  ret i64 %r
}
)",
                        R"(
    CHECK: entry:
    CHECK-NOT: niv.
    CHECK: loop:
    CHECK-NEXT: %i.i32 = phi i32 [ 0, %entry ], [ %i.next.i32, %loop ]
    CHECK: %i.next.i32 = add nsw i32 %i.i32, 1
    CHECK-NEXT: %done.i32 = icmp eq i32 %i.next.i32, 1000
    CHECK-NOT: .wide
    CHECK-NOT: ptxjit.narrow_iv
    CHECK: ret i64
  )"));
}

TEST(NarrowIV, DominatingConditionsProveTheRange) {
  // if (n > 0 && n < 1000) for (i = 0; i < n; ++i) ...: proven on entry, narrowed in place.
  EXPECT_TRUE(narrowsTo(R"(
define i64 @guarded(i64 %n) {
entry:
  %pos = icmp sgt i64 %n, 0
  br i1 %pos, label %check, label %out
check:
  %small = icmp slt i64 %n, 1000
  br i1 %small, label %ph, label %out
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i.next, %loop ]
  %acc = phi i64 [ 1, %ph ], [ %acc.next, %loop ]
  %acc.next = mul i64 %acc, %i
  %i.next = add i64 %i, 1
  %c = icmp slt i64 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  %r = phi i64 [ %acc.next, %loop ]
  br label %out
out:
  %res = phi i64 [ %r, %exit ], [ 0, %entry ], [ 0, %check ]
  ret i64 %res
}
)",
                        R"(
    CHECK: ph:
    CHECK-NOT: niv.
    CHECK: loop:
    CHECK-NEXT: %i.i32 = phi i32
    CHECK: %c.i32 = icmp slt i32 %i.next.i32, %i.bound32
    CHECK-NOT: .wide
  )"));
}

TEST(NarrowIV, NotEqualExitChecksTheOrderAtRunTime) {
  // i != bound with step 1 only stays in i32 when start < bound: one more guard condition.
  EXPECT_TRUE(narrowsTo(kNeUp, R"(
    CHECK: entry:
    CHECK: %niv.order = icmp slt i64 %start, %bound
    CHECK: %niv.guard = and i1 %niv.both, %niv.order
    CHECK-NEXT: br i1 %niv.guard, label %loop.narrow.ph, label %loop.narrow.ph.wide
    CHECK: loop:
    CHECK: %c.i32 = icmp ne i32 %i.next.i32, %i.bound32
  )"));
}

TEST(NarrowIV, ConvergentLoopNarrowsOnlyWithoutCopy) {
  // A barrier must not be split between two copies of the loop behind a guard that may differ
  // between threads; with constant bounds no copy is needed.
  const char *body = R"(
declare void @barrier() convergent

define void @bar(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @barrier() convergent
  %i.next = add i64 %i, 1
  %c = icmp slt i64 %i.next, BOUND
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)";
  auto with = [&](const std::string &bound) {
    std::string s = body;
    s.replace(s.find("BOUND"), 5, bound);
    return s;
  };
  EXPECT_TRUE(leftAlone(with("%n")));
  EXPECT_TRUE(narrowsTo(with("64"), R"(
    CHECK: %i.i32 = phi i32
    CHECK-NOT: .wide
  )"));
}

TEST(NarrowIV, RunningTwiceChangesNothingMore) {
  ParsedModule p = parseIR(kEscape);
  ASSERT_TRUE(p.module);
  ASSERT_TRUE(runNarrowing(*p.module));
  std::string once = moduleText(*p.module);
  EXPECT_FALSE(runNarrowing(*p.module));
  EXPECT_EQ(moduleText(*p.module), once);
}

TEST(NarrowIV, TheAnalysesItPreservesDescribeTheFunctionItLeaves) {
  // Analyses cached before the pass (on the loop it then versions) must not survive the
  // transformation; those it says it preserves are those its last round computed on the
  // versioned function (the second loop, a non-candidate with a step of unknown sign, makes that
  // round compute ScalarEvolution), which the passes after it reuse.
  ParsedModule p = parseIR(R"(
define i64 @two(i64 %start, i64 %bound, i64 %s) {
entry:
  br label %a
a:
  %i = phi i64 [ %start, %entry ], [ %i.next, %a ]
  %i.next = add i64 %i, 1
  %c = icmp slt i64 %i.next, %bound
  br i1 %c, label %a, label %mid
mid:
  %iv = phi i64 [ %i.next, %a ]
  br label %b
b:
  %j = phi i64 [ 0, %mid ], [ %j.next, %b ]
  %j.next = add i64 %j, %s
  %d = icmp slt i64 %j.next, %bound
  br i1 %d, label %b, label %exit
exit:
  %jv = phi i64 [ %j.next, %b ]
  %r = add i64 %iv, %jv
  ret i64 %r
}
)");
  ASSERT_TRUE(p.module);
  llvm::Function &f = *p.module->getFunction("two");
  AnalysisManagers am;
  am.fam.getResult<llvm::ScalarEvolutionAnalysis>(f); // caches the tree, loops and SCEV too
  llvm::PreservedAnalyses pa = detail::NarrowInductionVarsPass().run(f, am.fam);
  ASSERT_FALSE(pa.areAllPreserved());
  am.fam.invalidate(f, pa);
  auto *dt = am.fam.getCachedResult<llvm::DominatorTreeAnalysis>(f);
  auto *li = am.fam.getCachedResult<llvm::LoopAnalysis>(f);
  auto *se = am.fam.getCachedResult<llvm::ScalarEvolutionAnalysis>(f);
  ASSERT_TRUE(dt && li && se);
  EXPECT_TRUE(dt->verify());

  llvm::DominatorTree freshDt(f);
  llvm::LoopInfo freshLi(freshDt);
  llvm::AssumptionCache freshAc(f);
  llvm::ScalarEvolution freshSe(f, am.fam.getResult<llvm::TargetLibraryAnalysis>(f), freshAc,
                                freshDt, freshLi);
  auto exitCounts = [](llvm::LoopInfo &loops, llvm::ScalarEvolution &scev) {
    std::vector<std::string> counts;
    for (llvm::Loop *l : loops.getLoopsInPreorder()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << l->getHeader()->getName() << ": " << *scev.getBackedgeTakenCount(l);
      counts.push_back(os.str());
    }
    return counts;
  };
  std::vector<std::string> fresh = exitCounts(freshLi, freshSe);
  EXPECT_EQ(fresh.size(), 3u); // the narrowed loop, its wide copy, the other loop
  EXPECT_EQ(exitCounts(*li, *se), fresh);
}

// ---- what is left alone ----------------------------------------------------------------------

/// A counting loop `i = START; do { i = i + STEP } while (i PRED BOUND)` returning i.
std::string countingLoop(const std::string &start, const std::string &step, const std::string &pred,
                         const std::string &bound) {
  return "define i64 @f(i64 %n, i64 %s) {\nentry:\n  br label %loop\nloop:\n"
         "  %i = phi i64 [ " +
         start + ", %entry ], [ %i.next, %loop ]\n  %i.next = add i64 %i, " + step +
         "\n  %c = icmp " + pred + " i64 %i.next, " + bound +
         "\n  br i1 %c, label %loop, label %exit\nexit:\n  ret i64 %i.next\n}\n";
}

TEST(NarrowIV, NonCandidatesAreLeftAlone) {
  // The control: this one is narrowed.
  EXPECT_TRUE(narrowsTo(countingLoop("0", "1", "slt", "%n"), "CHECK: phi i32"));
  // A step that may be 0 (or negative) has no known direction.
  EXPECT_TRUE(leftAlone(countingLoop("0", "%s", "slt", "%n")));
  // != with a step of 2 may jump over the bound.
  EXPECT_TRUE(leftAlone(countingLoop("0", "2", "ne", "%n")));
  // Unsigned compares are not handled.
  EXPECT_TRUE(leftAlone(countingLoop("0", "1", "ult", "%n")));
  // Counting up while i > n: the exit direction does not match the step.
  EXPECT_TRUE(leftAlone(countingLoop("0", "1", "sgt", "%n")));
  // Steps beyond 2^29 and constant bounds beyond the i32 range can never pass the guard.
  EXPECT_TRUE(leftAlone(countingLoop("0", "2147483648", "slt", "%n")));
  EXPECT_TRUE(leftAlone(countingLoop("0", "536870913", "slt", "%n")));
  EXPECT_TRUE(leftAlone(countingLoop("2147483643", "1", "slt", "2147483653")));
  // The bound changes inside the loop.
  EXPECT_TRUE(leftAlone(R"(
define i64 @f(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  %b = add i64 %i, 10
  %c = icmp slt i64 %i.next, %b
  br i1 %c, label %loop, label %exit
exit:
  ret i64 %i.next
}
)"));
}

TEST(NarrowIV, ExitTestThatMaySkipAnIterationIsLeftAlone) {
  // The only test on i runs on some iterations only: nothing bounds i on the others.
  EXPECT_TRUE(leftAlone(R"(
define i64 @f(i64 %n, i1 %b) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  br i1 %b, label %test, label %latch
test:
  %c = icmp slt i64 %i, %n
  br i1 %c, label %latch, label %exit
latch:
  %i.next = add i64 %i, 1
  %d = icmp ult i64 %i.next, 100
  br i1 %d, label %loop, label %exit
exit:
  %r = phi i64 [ %i, %test ], [ %i.next, %latch ]
  ret i64 %r
}
)"));
}

TEST(NarrowIV, OuterLoopsAreLeftAlone) {
  // The outer loop would qualify were it innermost; the inner loop's unsigned test does not.
  EXPECT_TRUE(leftAlone(R"(
define i64 @f(i64 %n, i64 %m) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i.next, %outer.latch ]
  %acc = phi i64 [ 0, %entry ], [ %acc.inner, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner ]
  %acc.in = phi i64 [ %acc, %outer ], [ %acc.next, %inner ]
  %acc.next = add i64 %acc.in, %i
  %j.next = add i64 %j, 1
  %c = icmp ult i64 %j.next, %m
  br i1 %c, label %inner, label %outer.latch
outer.latch:
  %acc.inner = phi i64 [ %acc.next, %inner ]
  %i.next = add i64 %i, 1
  %d = icmp slt i64 %i.next, %n
  br i1 %d, label %outer, label %exit
exit:
  %r = phi i64 [ %acc.inner, %outer.latch ]
  ret i64 %r
}
)"));
}

TEST(NarrowIV, LargeLoopsAreLeftAlone) {
  std::string body;
  for (unsigned k = 0; k < detail::kNarrowIVMaxLoopInstructions; ++k)
    body += "  %a" + std::to_string(k + 1) + " = add i64 %a" + std::to_string(k) + ", %i\n";
  std::string ir = "define i64 @f(i64 %n) {\nentry:\n  br label %loop\nloop:\n"
                   "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]\n"
                   "  %a0 = phi i64 [ 0, %entry ], [ %a" +
                   std::to_string(detail::kNarrowIVMaxLoopInstructions) + ", %loop ]\n" + body +
                   "  %i.next = add i64 %i, 1\n  %c = icmp slt i64 %i.next, %n\n"
                   "  br i1 %c, label %loop, label %exit\nexit:\n  ret i64 %a0\n}\n";
  EXPECT_TRUE(leftAlone(ir));
}

// ---- the narrowed code computes what the wide code computes ----------------------------------

/// Compiles the functions of `ir` for the host, as written and narrowed, in two JITs.
class BothVersions {
public:
  explicit BothVersions(const std::string &ir) {
    detail::initializeTargets();
    for (int k = 0; k < 2; ++k) {
      ParsedModule p = parseIR(ir);
      if (!p.module)
        return;
      if (k == 1)
        narrowed_ = runNarrowing(*p.module);
      auto jit = llvm::orc::LLJITBuilder().create();
      if (!jit) {
        ADD_FAILURE() << llvm::toString(jit.takeError());
        return;
      }
      p.module->setDataLayout((*jit)->getDataLayout());
      p.module->setTargetTriple((*jit)->getTargetTriple().str());
      if (llvm::Error e = (*jit)->addIRModule(
              llvm::orc::ThreadSafeModule(std::move(p.module), std::move(p.ctx)))) {
        ADD_FAILURE() << llvm::toString(std::move(e));
        return;
      }
      jits_[k] = std::move(*jit);
    }
  }

  bool narrowed() const { return narrowed_; }

  /// The address of `name` in the untouched (0) or narrowed (1) module.
  template <typename F> F get(int which, const std::string &name) {
    auto sym = jits_[which]->lookup(name);
    if (!sym) {
      ADD_FAILURE() << llvm::toString(sym.takeError());
      return nullptr;
    }
    return sym->toPtr<F>();
  }

private:
  std::unique_ptr<llvm::orc::LLJIT> jits_[2];
  bool narrowed_ = false;
};

constexpr int64_t k2p29 = int64_t(1) << 29, k2p30 = int64_t(1) << 30, k2p31 = int64_t(1) << 31;

/// (start, bound) pairs a few iterations apart around the edges of the guard and of i32.
std::vector<std::pair<int64_t, int64_t>> edgePairs(int64_t span) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t edge : {int64_t(0), k2p30 - 1, k2p30, -k2p30, -k2p30 - 1, k2p31 - 1, k2p31, -k2p31,
                       -k2p31 - 1, int64_t(5) * k2p31})
    for (int64_t d : {-span, -3 * span / 4, -1 - span / 2, int64_t(0), span / 3, span})
      for (int64_t e : {-span, -2 * span / 3, int64_t(0), 1 + span / 2, span}) {
        out.push_back({edge + d, edge + e});
        out.push_back({edge + e, edge + d});
      }
  return out;
}

TEST(NarrowIV, NarrowedLoopsComputeTheSameValues) {
  std::string ir = std::string(kUpNext) + kDown + kBigStep + kDownGe + kNeUp;
  BothVersions v(ir);
  ASSERT_TRUE(v.narrowed());
  using Fn = int64_t (*)(int64_t, int64_t);
  struct Case {
    const char *name;
    int64_t span;
  };
  for (Case c : {Case{"up_next", 8}, Case{"down", 8}, Case{"big_step", 3 * k2p29},
                 Case{"down_ge", 20}, Case{"ne_up", 12}}) {
    Fn wide = v.get<Fn>(0, c.name), narrow = v.get<Fn>(1, c.name);
    ASSERT_TRUE(wide && narrow);
    for (auto [a, b] : edgePairs(c.span))
      ASSERT_EQ(narrow(a, b), wide(a, b)) << c.name << "(" << a << ", " << b << ")";
  }
}

TEST(NarrowIV, RuntimeStepIsCheckedByTheGuard) {
  EXPECT_TRUE(narrowsTo(kStride, R"(
    CHECK: entry:
    CHECK: %niv.inrange = icmp sle i64 %step, 536870912
    CHECK: br i1 %niv.guard, label %loop.narrow.ph, label %loop.narrow.ph.wide
    CHECK: loop.narrow.ph:
    CHECK: %i.step32 = trunc i64 %step to i32
    CHECK: %i.next.i32 = add nsw i32 %i.i32, %i.step32
  )"));
  BothVersions v(kStride);
  ASSERT_TRUE(v.narrowed());
  using Fn = int64_t (*)(int64_t, int64_t, int64_t);
  Fn wide = v.get<Fn>(0, "stride"), narrow = v.get<Fn>(1, "stride");
  ASSERT_TRUE(wide && narrow);
  for (int64_t step : {int64_t(1), int64_t(5), k2p29 - 1, k2p29, k2p29 + 1, k2p30 - 1, k2p30,
                       k2p31 - 1, k2p31 + 1})
    for (auto [a, b] : edgePairs(4 * step))
      ASSERT_EQ(narrow(a, b, step), wide(a, b, step))
          << "stride(" << a << ", " << b << ", " << step << ")";
}

TEST(NarrowIV, EarlyExitLoopComputesTheSameValues) {
  BothVersions v(kEscape);
  ASSERT_TRUE(v.narrowed());
  using Fn = int64_t (*)(int64_t, double);
  Fn wide = v.get<Fn>(0, "escape"), narrow = v.get<Fn>(1, "escape");
  ASSERT_TRUE(wide && narrow);
  // c = 0.3 escapes after a few dozen iterations, c = 2.5 at once, c = 0.2 never.
  for (double c : {0.3, 2.5, 0.2})
    for (int64_t n : {int64_t(-k2p31 - 7), int64_t(-5), int64_t(0), int64_t(3), int64_t(40),
                      int64_t(1000), k2p30 - 1, k2p30, k2p31 + 3, int64_t(1) << 40}) {
      if (c == 0.2 && n > 1000)
        continue; // would run n iterations
      EXPECT_EQ(narrow(n, c), wide(n, c)) << "escape(" << n << ", " << c << ")";
    }
}

// ---- registration: NVPTX at O2 and above only ------------------------------------------------

const char *kStoreLoop = R"(
define void @k(ptr %p, i64 %n) {
entry:
  %enter = icmp sgt i64 %n, 0
  br i1 %enter, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %a = getelementptr inbounds double, ptr %p, i64 %i
  %x = load double, ptr %a
  %y = fmul double %x, %x
  %z = fadd double %y, 1.0
  store double %z, ptr %a
  %i.next = add nsw i64 %i, 1
  %c = icmp slt i64 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)";

bool pipelineNarrows(llvm::TargetMachine &tm, int optLevel) {
  ParsedModule p = parseIR(kStoreLoop);
  if (!p.module)
    return false;
  p.module->setDataLayout(tm.createDataLayout());
  p.module->setTargetTriple(tm.getTargetTriple().str());
  detail::runOptimizationPipeline(*p.module, tm, optLevel);
  return moduleText(*p.module).find(detail::kNarrowIVMarker) != std::string::npos;
}

TEST(NarrowIV, RunsInTheNvptxPipelineOnlyFromO2) {
  CompileOptions o;
  auto nvptx = detail::createNvptxTargetMachine(o);
  EXPECT_TRUE(pipelineNarrows(*nvptx, 3));
  EXPECT_TRUE(pipelineNarrows(*nvptx, 2));
  EXPECT_FALSE(pipelineNarrows(*nvptx, 1));
  detail::initializeTargets();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  ASSERT_TRUE(static_cast<bool>(jtmb));
  auto host = jtmb->createTargetMachine();
  ASSERT_TRUE(static_cast<bool>(host));
  EXPECT_FALSE(pipelineNarrows(**host, 3));
}

// ---- PTX of lowered kernels ------------------------------------------------------------------

/// def k(out, n, x):
///     acc = 0.0
///     for j in range(<n or 1000>):
///         acc = acc * x + 1.0
///     out[0] = acc
std::unique_ptr<Function> makeRecurrence(bool constantTrip) {
  auto f64 = types::float64();
  TypedBuilder b("k", {"out", "n", "x"}, {arr(f64), types::int64(), f64});
  b.declare("acc", f64);
  b.declare("j", types::int64());
  b.store("acc", b.cfloat(0.0));
  b.forRange("j", {constantTrip ? b.cint(1000) : b.load("n")}, [&] {
    b.store("acc", b.bin(BinaryOp::Add, b.bin(BinaryOp::Mul, b.load("acc"), b.load("x"), f64),
                         b.cfloat(1.0), f64));
  });
  b.setItem(b.load("out"), b.cint(0), b.load("acc"));
  b.ret();
  return std::move(b.fn);
}

bool has(const std::string &s, const std::string &re) {
  return std::regex_search(s, std::regex(re));
}

TEST(NarrowIV, KernelWithRuntimeTripCountGetsA32BitCounterAndA64BitFallback) {
  auto fn = makeRecurrence(false);
  CompileOptions o;
  LoweredModule m = lowerKernel(*fn, o, "k");
  std::string ptx = emitPTX(m, o);
  std::string ir = m.llvmIR();
  EXPECT_TRUE(has(ir, "!\\{!\"narrowed\"\\}")) << ir;
  EXPECT_TRUE(has(ir, "!\\{!\"wide\"\\}")) << ir;
  // The narrowed loop counts and compares in 32 bits, the fallback in 64.
  EXPECT_TRUE(has(ptx, "add\\.s32\\s+%r\\d+, %r\\d+, -?\\d+;")) << ptx;
  EXPECT_TRUE(has(ptx, "setp\\.[a-z]+\\.s32\\s+%p\\d+, %r\\d+, (%r\\d+|-?\\d+);")) << ptx;
  EXPECT_TRUE(has(ptx, "add\\.s64\\s+%rd\\d+, %rd\\d+, -?\\d+;")) << ptx;
  EXPECT_TRUE(has(ptx, "setp\\.[a-z]+\\.s64\\s+%p\\d+, %rd\\d+, (%rd\\d+|-?\\d+);")) << ptx;
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }

  // The contrast: at O1 the pass does not run and the loop counts in 64 bits only.
  CompileOptions o1;
  o1.optLevel = 1;
  LoweredModule m1 = lowerKernel(*fn, o1, "k");
  std::string ptx1 = emitPTX(m1, o1);
  EXPECT_FALSE(has(m1.llvmIR(), "ptxjit\\.narrow_iv"));
  EXPECT_FALSE(has(ptx1, "add\\.s32\\s+%r\\d+, %r\\d+, -?\\d+;")) << ptx1;
}

// ptxas does not unroll the wide copy once more (LLVM unrolls it as any loop): unrolled by ptxas,
// the never-run copy changed how ptxas scheduled the whole kernel (a gufunc's row loop ran at
// 1.7x its @cuda.jit twin on the H200).
TEST(NarrowIV, KernelWideCopyIsNotUnrolledAgainByPtxas) {
  auto f64 = types::float64();
  TypedBuilder b("k", {"out", "n", "x"}, {arr(f64), types::int64(), arr(f64)});
  b.declare("acc", f64);
  b.declare("j", types::int64());
  b.store("acc", b.cfloat(0.0));
  b.forRange("j", {b.load("n")}, [&] {
    b.store("acc", b.bin(BinaryOp::Add, b.load("acc"), b.item(b.load("x"), b.load("j"), f64), f64));
  });
  b.setItem(b.load("out"), b.cint(0), b.load("acc"));
  b.ret();
  CompileOptions o;
  LoweredModule m = lowerKernel(*b.fn, o, "k");
  std::string ptx = emitPTX(m, o);
  std::string ir = m.llvmIR();
  // The wide latch's loop ID (after LLVM's unrolling) holds unroll.disable, with no operand
  // (`i32 0` would read as "false").
  auto node = [&](const std::string &re) {
    std::smatch mt;
    return std::regex_search(ir, mt, std::regex(re)) ? mt[1].str() : std::string();
  };
  std::string wide = node("!(\\d+) = !\\{!\"wide\"\\}");
  std::string disable = node("!(\\d+) = !\\{!\"llvm\\.loop\\.unroll\\.disable\"\\}");
  ASSERT_FALSE(wide.empty() || disable.empty()) << ir;
  std::string loopId = node("!llvm\\.loop !(\\d+), !ptxjit\\.narrow_iv !" + wide + "\\b");
  ASSERT_FALSE(loopId.empty()) << ir;
  EXPECT_TRUE(has(ir, "!" + loopId + " = distinct !\\{[^\\n]*!" + disable + "[,}]")) << ir;
  size_t nounroll = 0;
  for (size_t at = ptx.find(".pragma \"nounroll\""); at != std::string::npos;
       at = ptx.find(".pragma \"nounroll\"", at + 1))
    ++nounroll;
  // Every loop: the narrowed one and its remainder, the wide one and its remainder.
  EXPECT_EQ(nounroll, 4u) << ptx;
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }
}

TEST(NarrowIV, KernelWithConstantTripCountNeedsNoFallback) {
  auto fn = makeRecurrence(true);
  CompileOptions o;
  LoweredModule m = lowerKernel(*fn, o, "k");
  std::string ptx = emitPTX(m, o);
  std::string ir = m.llvmIR();
  EXPECT_FALSE(has(ir, "ptxjit\\.narrow_iv")) << ir; // no copy, no guard
  EXPECT_TRUE(has(ir, "phi i32")) << ir;
  EXPECT_TRUE(has(ptx, "add\\.s32\\s+%r\\d+, %r\\d+, -?\\d+;")) << ptx;
  EXPECT_FALSE(has(ptx, "add\\.s64\\s+%rd\\d+, %rd\\d+, -?\\d+;")) << ptx;
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }
}

} // namespace
} // namespace ptxjit::codegen::test
