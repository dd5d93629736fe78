// The loop-shaping passes around LLVM's optimizer: one backedge per loop for every target
// (codegen/MergeBackedges.h) and the NVPTX unroll counts of small innermost loops
// (codegen/GpuUnroll.h), on hand-written IR (FileCheck), through the whole pipeline (the loop
// structure, the PTX) and executed on the host next to the untouched IR.
#include "TestUtil.h"

#include "codegen/CompileOptions.h"
#include "codegen/GpuUnroll.h"
#include "codegen/MergeBackedges.h"
#include "codegen/ModuleImpl.h"
#include "codegen/NarrowInductionVars.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <regex>
#include <sstream>
#include <string>

namespace ptxjit::codegen::test {
namespace {

struct Parsed {
  std::unique_ptr<llvm::LLVMContext> ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module;
};

Parsed parse(const std::string &ir) {
  Parsed p;
  p.module = parseTestIR(ir, *p.ctx, "loopshape");
  return p;
}

// `count` of the elements of p[0..n) that are <= 1.0, written as CPython 3.12 leaves a loop
// whose body ends in an `if`: the hit and the miss each jump back to the head.
const char *kTwoBackedges = R"(
define i64 @hits(i64 %n, ptr %p) {
entry:
  br label %head
head:
  %k = phi i64 [ 0, %entry ], [ %k1, %hit ], [ %k1, %miss ]
  %c = phi i64 [ 0, %entry ], [ %c1, %hit ], [ %c, %miss ]
  %done = icmp sge i64 %k, %n
  br i1 %done, label %exit, label %body
body:
  %a = getelementptr float, ptr %p, i64 %k
  %x = load float, ptr %a
  %k1 = add i64 %k, 1
  %in = fcmp ole float %x, 1.0
  br i1 %in, label %hit, label %miss
hit:
  %c1 = add i64 %c, 1
  br label %head
miss:
  br label %head
exit:
  ret i64 %c
}
)";

TEST(MergeBackedges, BackedgesMeetInOneLatch) {
  Parsed p = parse(kTwoBackedges);
  ASSERT_TRUE(p.module);
  ASSERT_TRUE(detail::mergeBackedges(*p.module->getFunction("hits")));
  expectValidIR(*p.module);
  CheckResult r = fileCheck(moduleText(*p.module), R"(
    CHECK: head:
    CHECK-NEXT: %k = phi i64 [ 0, %entry ], [ %k.be, %head.latch ]
    CHECK-NEXT: %c = phi i64 [ 0, %entry ], [ %c.be, %head.latch ]
    CHECK: hit:
    CHECK: br label %head.latch
    CHECK: miss:
    CHECK-NEXT: br label %head.latch
    CHECK: head.latch:
    CHECK-NEXT: %k.be = phi i64 [ %k1, %hit ], [ %k1, %miss ]
    CHECK-NEXT: %c.be = phi i64 [ %c1, %hit ], [ %c, %miss ]
    CHECK-NEXT: br label %head
  )");
  EXPECT_TRUE(r.ok) << r.message << "\n" << moduleText(*p.module);
  // Idempotent: one latch left, nothing more to merge.
  EXPECT_FALSE(detail::mergeBackedges(*p.module->getFunction("hits")));
}

TEST(MergeBackedges, OneBackedgeAndNoLoopAreLeftAlone) {
  Parsed p = parse(R"(
define i64 @f(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret i64 %i1
}
define i64 @g(i64 %n) {
  ret i64 %n
}
)");
  ASSERT_TRUE(p.module);
  std::string before = moduleText(*p.module);
  for (llvm::Function &f : *p.module)
    EXPECT_FALSE(detail::mergeBackedges(f));
  EXPECT_EQ(moduleText(*p.module), before);
}

/// Loops of `name` after the optimizer: {top-level loops, all loops}.
std::pair<int, int> loopCounts(llvm::Module &m, const char *name) {
  llvm::Function *f = m.getFunction(name);
  llvm::DominatorTree dt(*f);
  llvm::LoopInfo li(dt);
  int top = 0;
  for (llvm::Loop *l : li) {
    (void)l;
    ++top;
  }
  return {top, static_cast<int>(li.getLoopsInPreorder().size())};
}

// Without the merge LoopSimplify splits the loop into an inner one (until the next hit) and an
// outer one counting the hits, and the count is a branch; with it, no nested loop and a select.
TEST(MergeBackedges, PipelineKeepsOneLoopAndSelects) {
  detail::initializeTargets();
  CompileOptions o;
  auto nvptx = detail::createNvptxTargetMachine(o);
  for (int optLevel : {1, 2, 3}) {
    Parsed p = parse(kTwoBackedges);
    ASSERT_TRUE(p.module);
    p.module->setDataLayout(nvptx->createDataLayout());
    p.module->setTargetTriple(nvptx->getTargetTriple().str());
    detail::runOptimizationPipeline(*p.module, *nvptx, optLevel);
    std::string text = moduleText(*p.module);
    // (The unroller may leave a remainder loop beside it, never one inside another.)
    auto [top, all] = loopCounts(*p.module, "hits");
    EXPECT_GE(top, 1) << "O" << optLevel << "\n" << text;
    EXPECT_EQ(all, top) << "O" << optLevel << "\n" << text;
    EXPECT_TRUE(std::regex_search(text, std::regex("zext i1 %\\S+ to i64|select i1")))
        << "O" << optLevel << "\n"
        << text;
  }
}

TEST(MergeBackedges, MergedLoopComputesTheSameCount) {
  detail::initializeTargets();
  using Fn = int64_t (*)(int64_t, const float *);
  std::unique_ptr<llvm::orc::LLJIT> jits[2];
  Fn fns[2] = {nullptr, nullptr};
  for (int k = 0; k < 2; ++k) {
    Parsed p = parse(kTwoBackedges);
    ASSERT_TRUE(p.module);
    if (k == 1)
      ASSERT_TRUE(detail::mergeBackedges(*p.module->getFunction("hits")));
    auto jit = llvm::orc::LLJITBuilder().create();
    ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
    p.module->setDataLayout((*jit)->getDataLayout());
    ASSERT_FALSE(static_cast<bool>(
        (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(p.module), std::move(p.ctx)))));
    auto sym = (*jit)->lookup("hits");
    ASSERT_TRUE(static_cast<bool>(sym)) << llvm::toString(sym.takeError());
    fns[k] = sym->toPtr<Fn>();
    jits[k] = std::move(*jit);
  }
  float data[64];
  for (int i = 0; i < 64; ++i)
    data[i] = static_cast<float>((i * 37) % 23) / 11.0f; // some <= 1, some above
  for (int64_t n : {0, 1, 2, 7, 33, 64})
    EXPECT_EQ(fns[1](n, data), fns[0](n, data)) << "n = " << n;
  EXPECT_GT(fns[1](64, data), 0);
  EXPECT_LT(fns[1](64, data), 64);
}

// ---- GpuUnroll ------------------------------------------------------------------------------

// A grid-stride sum: the step is blockDim.x * gridDim.x, known positive from the registers'
// ranges but a run-time value.
const char *kGridStride = R"(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()

define float @gridsum(ptr addrspace(1) %x, i64 %n, i64 %start) {
entry:
  %nt = call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nc = call range(i32 1, -2147483648) i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %a = zext i32 %nt to i64
  %b = zext i32 %nc to i64
  %step = mul i64 %a, %b
  %enter = icmp slt i64 %start, %n
  br i1 %enter, label %loop, label %exit
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc.next, %loop ]
  %p = getelementptr float, ptr addrspace(1) %x, i64 %i
  %v = load float, ptr addrspace(1) %p
  %acc.next = fadd float %acc, %v
  %i.next = add i64 %i, %step
  %c = icmp slt i64 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  %r = phi float [ 0.0, %entry ], [ %acc.next, %loop ]
  ret float %r
}
)";

/// Runs NarrowInductionVarsPass then GpuUnrollPass (alone) over every function of `m`.
void runNarrowThenUnroll(llvm::Module &m) {
  AnalysisManagers am;
  llvm::FunctionPassManager fpm;
  fpm.addPass(detail::NarrowInductionVarsPass());
  fpm.addPass(detail::GpuUnrollPass());
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      fpm.run(f, am.fam);
  expectValidIR(m);
}

TEST(GpuUnroll, NarrowedGridStrideLoopIsFiniteAndUnrolledByFour) {
  Parsed p = parse(kGridStride);
  ASSERT_TRUE(p.module);
  runNarrowThenUnroll(*p.module);
  std::string text = moduleText(*p.module);
  // The narrowed loop: finite, count 4; the wide copy (bounds beyond 32 bits): neither.
  CheckResult r = fileCheck(text, R"(
    CHECK: br i1 %c.i32, label %loop, label %exit.loopexit, !llvm.loop !0, !ptxjit.narrow_iv !3
    CHECK: br i1 %c.wide, label %loop.wide, label %exit.loopexit, !ptxjit.narrow_iv !4
    CHECK: !0 = distinct !{!0, !1, !2}
    CHECK-NEXT: !1 = !{!"llvm.loop.mustprogress"}
    CHECK-NEXT: !2 = !{!"llvm.loop.unroll.count", i32 4}
    CHECK-NEXT: !3 = !{!"narrowed"}
    CHECK-NEXT: !4 = !{!"wide"}
  )");
  EXPECT_TRUE(r.ok) << r.message << "\n" << text;
}

/// gpuUnrollCount of the (one) loop of `ir`'s function `name`.
unsigned countFor(const std::string &ir, const char *name) {
  Parsed p = parse(ir);
  if (!p.module)
    return 99;
  llvm::Function *f = p.module->getFunction(name);
  AnalysisManagers am;
  llvm::LoopInfo &li = am.fam.getResult<llvm::LoopAnalysis>(*f);
  llvm::ScalarEvolution &se = am.fam.getResult<llvm::ScalarEvolutionAnalysis>(*f);
  if (li.getLoopsInPreorder().size() != 1)
    return 98;
  return detail::gpuUnrollCount(*li.getLoopsInPreorder().front(), se);
}

/// A counted loop (trip count `trip`, or %n when empty) whose body is `body` (may use %i and
/// must define nothing the exit needs), summing into memory.
std::string countedLoop(const std::string &trip, const std::string &body,
                        const std::string &decls = "") {
  std::string bound = trip.empty() ? "%n" : trip;
  return decls + R"(
define void @f(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %a = getelementptr float, ptr %p, i64 %i
  %x = load float, ptr %a
)" + body +
         R"(
  %i.next = add nuw nsw i64 %i, 1
  %c = icmp slt i64 %i.next, )" +
         bound + R"(
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)";
}

TEST(GpuUnroll, CountFollowsSizeTripCountAndShape) {
  // Small body, counted by n (nonnegative start, step 1: ScalarEvolution counts it): 4.
  EXPECT_EQ(countFor(countedLoop("", "  %y = fmul float %x, 2.0\n  store float %y, ptr %a\n"), "f"),
            4u);
  // A constant trip count of 3 leaves room for 2 only.
  EXPECT_EQ(countFor(countedLoop("3", "  store float 1.0, ptr %a\n"), "f"), 2u);
  // A body of ~60 instructions: 2; of ~200: none.
  auto chain = [](int n) {
    std::string s = "  %y0 = fadd float %x, 1.0\n";
    for (int k = 1; k < n; ++k)
      s += "  %y" + std::to_string(k) + " = fadd float %y" + std::to_string(k - 1) + ", 1.0\n";
    return s + "  store float %y" + std::to_string(n - 1) + ", ptr %a\n";
  };
  EXPECT_EQ(countFor(countedLoop("", chain(60)), "f"), 2u);
  EXPECT_EQ(countFor(countedLoop("", chain(200)), "f"), 0u);
  // A barrier in the body: the remainder loop would split the block's collective.
  EXPECT_EQ(
      countFor(countedLoop("", "  call void @barrier()\n", "declare void @barrier() convergent\n"),
               "f"),
      0u);
  // A call of a function (left after inlining: a recursive one, or one into linked code): each
  // unrolled copy would keep more values live across the calls, in the callee's frame.
  EXPECT_EQ(countFor(countedLoop("", "  %y = call float @g(float %x)\n  store float %y, ptr %a\n",
                                 "declare float @g(float)\n"),
                     "f"),
            0u);
  // An intrinsic is not a call in the PTX: the loop still unrolls.
  EXPECT_EQ(countFor(countedLoop("",
                                 "  %y = call float @llvm.fabs.f32(float %x)\n"
                                 "  store float %y, ptr %a\n",
                                 "declare float @llvm.fabs.f32(float)\n"),
                     "f"),
            4u);
}

TEST(GpuUnroll, LoopsItCannotCountOrThatExitTwiceAreLeftAlone) {
  // The exit depends on loaded data: no trip count.
  EXPECT_EQ(countFor(R"(
define void @f(ptr %p) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %a = getelementptr float, ptr %p, i64 %i
  %x = load float, ptr %a
  %i.next = add i64 %i, 1
  %c = fcmp olt float %x, 1.0
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)",
                     "f"),
            0u);
  // Two exits (a counted one and an early one, as Mandelbrot's escape test).
  EXPECT_EQ(countFor(R"(
define void @f(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  %a = getelementptr float, ptr %p, i64 %i
  %x = load float, ptr %a
  %e = fcmp ogt float %x, 4.0
  br i1 %e, label %exit, label %latch
latch:
  %i.next = add nuw nsw i64 %i, 1
  %c = icmp slt i64 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)",
                     "f"),
            0u);
  // A run-time step LLVM cannot prove nonzero, not narrowed: not known to terminate.
  EXPECT_EQ(countFor(R"(
define void @f(ptr %p, i64 %n, i64 %s) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %a = getelementptr float, ptr %p, i64 %i
  store float 1.0, ptr %a
  %i.next = add i64 %i, %s
  %c = icmp slt i64 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)",
                     "f"),
            0u);
}

std::string ptxOf(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return "";
  pm.run(m);
  return std::string(out.str());
}

// The whole pipeline: the grid-stride loop's 32-bit copy issues four loads per iteration (nvcc's
// shape, with the trip count's division before the loop); at O1 (no narrowing, no counts) one.
TEST(GpuUnroll, GridStrideLoopIssuesFourLoadsPerIteration) {
  detail::initializeTargets();
  CompileOptions o;
  auto nvptx = detail::createNvptxTargetMachine(o);
  auto loadsInLongestBlock = [](const std::string &ptx) {
    int best = 0, cur = 0;
    std::istringstream in(ptx);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("$L__BB", 0) == 0)
        cur = 0;
      else if (line.find("ld.global.f32") != std::string::npos)
        best = std::max(best, ++cur);
    }
    return best;
  };
  for (int optLevel : {3, 1}) {
    Parsed p = parse(kGridStride);
    ASSERT_TRUE(p.module);
    detail::runOptimizationPipeline(*p.module, *nvptx, optLevel);
    std::string ptx = ptxOf(*p.module, *nvptx);
    ASSERT_FALSE(ptx.empty());
    EXPECT_EQ(loadsInLongestBlock(ptx), optLevel == 3 ? 4 : 1) << "O" << optLevel << "\n" << ptx;
    if (optLevel == 3)
      EXPECT_NE(ptx.find("div.u32"), std::string::npos) << ptx;
  }
}

} // namespace
} // namespace ptxjit::codegen::test
