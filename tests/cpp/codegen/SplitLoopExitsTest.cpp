// The NVPTX loop-exit pass (codegen/SplitLoopExits.h) on hand-written LLVM IR: each exit edge
// of an innermost loop into a join gets its own block, a counter leaves as `Next - Step`
// where Next is already computed, values from outside the loop are moved on the edge, and the
// PTX of the result is accepted by ptxas with nothing but the loop's own work inside the loop.
#include "TestUtil.h"

#include "codegen/Codegen.h"
#include "codegen/ModuleImpl.h"
#include "codegen/SplitLoopExits.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <regex>
#include <string>

namespace ptxjit::codegen::test {
namespace {

struct Result {
  bool changed = false;
  std::string ir;
};

/// Parses `ir`, runs the pass over each function and prints the module.
Result split(const std::string &ir, llvm::LLVMContext &ctx,
             std::unique_ptr<llvm::Module> *keep = nullptr) {
  std::unique_ptr<llvm::Module> m = parseTestIR(ir, ctx, "splitexits");
  if (!m)
    return {};
  Result r;
  for (llvm::Function &f : *m)
    r.changed |= detail::splitLoopExits(f);
  expectValidIR(*m);
  r.ir = moduleText(*m);
  if (keep)
    *keep = std::move(m);
  return r;
}

/// Whether `ir` contains a match of the regular expression `re` (the IR is shown when not).
::testing::AssertionResult matches(const std::string &ir, const char *re) {
  if (std::regex_search(ir, std::regex(re)))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no match for " << re << " in\n" << ir;
}

// Mandelbrot's inner loop after the 32-bit narrowing: the count exit tests P in the header,
// the escape exit is taken after Next = P + 1 was computed; both feed one block.
const char *kEscape = R"(
define i64 @escape(i64 %n, i32 %bound, double %c) {
entry:
  br label %header
header:
  %i = phi i32 [ 0, %entry ], [ %i.next, %latch ]
  %z = phi double [ 0.0, %entry ], [ %z.next, %latch ]
  %done = icmp eq i32 %i, %bound
  br i1 %done, label %exit, label %latch
latch:
  %i.next = add nuw nsw i32 %i, 1
  %zz = fmul double %z, %z
  %z.next = fadd double %zz, %c
  %small = fcmp ult double %z.next, 4.0
  br i1 %small, label %header, label %exit
exit:
  %r32 = phi i32 [ 0, %header ], [ %i, %latch ]
  %r64 = phi i64 [ %n, %header ], [ 0, %latch ]
  %zl = phi double [ %z, %header ], [ %z.next, %latch ]
  %e = sext i32 %r32 to i64
  %s = add i64 %r64, %e
  %zi = fptosi double %zl to i64
  %t = add i64 %s, %zi
  ret i64 %t
}
)";

TEST(SplitLoopExits, EachExitComputesItsValuesOnItsOwnEdge) {
  llvm::LLVMContext ctx;
  Result r = split(kEscape, ctx);
  EXPECT_TRUE(r.changed);
  // The loop itself is unchanged; its exits lead to new blocks.
  CheckResult c = fileCheck(r.ir, R"(
CHECK: header:
CHECK: br i1 %done, label %header.exit_crit_edge, label %latch
CHECK: latch:
CHECK-NOT: asm
CHECK: br i1 %small, label %header, label %latch.exit_crit_edge
)");
  EXPECT_TRUE(c.ok) << c.message << "\n" << r.ir;
  // The count exit: the constant and the argument are moved there; the in-loop %z is left
  // (its copy lands in the new block anyway).
  EXPECT_TRUE(matches(
      r.ir,
      R"(header\.exit_crit_edge:[^\n]*\s+%\.exit = call i32 asm "mov\.b32 \$0, \$1;", "=r,r"\(i32 0\)\s+%n\.exit = call i64 asm "mov\.b64 \$0, \$1;", "=l,l"\(i64 %n\)\s+br label %exit)"));
  // The escape exit: P leaves as Next - 1; the constant 0 is moved.
  EXPECT_TRUE(matches(
      r.ir,
      R"(latch\.exit_crit_edge:[^\n]*\s+%i\.exit = call i32 asm "sub\.s32 \$0, \$1, \$2;", "=r,r,r"\(i32 %i\.next, i32 1\))"));
  EXPECT_TRUE(matches(
      r.ir,
      R"(%r32 = phi i32 \[ %\.exit, %header\.exit_crit_edge \], \[ %i\.exit, %latch\.exit_crit_edge \])"));
  EXPECT_TRUE(matches(
      r.ir,
      R"(%zl = phi double \[ %z, %header\.exit_crit_edge \], \[ %z\.next, %latch\.exit_crit_edge \])"));
}

// The counter leaves from the header, before its increment: it stays P (Next is not available
// there); the floating-point value from outside the loop is moved.
const char *kCountExitOnly = R"(
define i64 @count(i64 %n, double %x) {
entry:
  br label %header
header:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %done = icmp sge i64 %i, %n
  br i1 %done, label %exit, label %body
body:
  %i.next = add nsw i64 %i, 3
  %big = icmp sgt i64 %i.next, 100
  br i1 %big, label %exit, label %header
exit:
  %r = phi i64 [ %i, %header ], [ %i, %body ]
  %f = phi double [ %x, %header ], [ 1.5, %body ]
  %fi = fptosi double %f to i64
  %s = add i64 %r, %fi
  ret i64 %s
}
)";

TEST(SplitLoopExits, TheCounterLeavesAsNextMinusStepOnlyWhereNextIsComputed) {
  llvm::LLVMContext ctx;
  Result r = split(kCountExitOnly, ctx);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(matches(
      r.ir,
      R"(%i\.exit = call i64 asm "sub\.s64 \$0, \$1, \$2;", "=l,l,l"\(i64 %i\.next, i64 3\))"));
  EXPECT_TRUE(matches(
      r.ir,
      R"(%r = phi i64 \[ %i, %header\.exit_crit_edge \], \[ %i\.exit, %body\.exit_crit_edge \])"));
  EXPECT_TRUE(
      matches(r.ir, R"(%x\.exit = call double asm "mov\.f64 \$0, \$1;", "=d,d"\(double %x\))"));
  EXPECT_TRUE(
      matches(r.ir, R"(call double asm "mov\.f64 \$0, \$1;", "=d,d"\(double 1\.500000e\+00\))"));
}

// Left alone: an outer loop (only innermost loops are split), exits into blocks without PHIs,
// and an exit into a block of its own (LCSSA PHIs with one predecessor: the copies are already
// off the loop's path).
const char *kLeftAlone = R"(
define i64 @single(i64 %n, ptr %p) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc.next, %loop ]
  %v = load i64, ptr %p
  %acc.next = add i64 %acc, %v
  %i.next = add i64 %i, 1
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %loop, label %exit
exit:
  %r = phi i64 [ %acc.next, %loop ]
  %k = phi i64 [ %n, %loop ]
  %s = add i64 %r, %k
  ret i64 %s
}

define void @nest(ptr %p, i64 %n) {
entry:
  br label %outer
outer:
  %j = phi i64 [ 0, %entry ], [ %j.next, %outer.latch ]
  br label %inner
inner:
  %i = phi i64 [ 0, %outer ], [ %i.next, %inner ]
  %i.next = add i64 %i, 1
  store i64 %i, ptr %p
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %inner, label %outer.latch
outer.latch:
  %j.next = add i64 %j, 1
  %again = icmp slt i64 %j.next, %n
  br i1 %again, label %outer, label %done
done:
  ret void
}
)";

TEST(SplitLoopExits, OuterLoopsAndExitsOutsideJoinsAreLeftAlone) {
  llvm::LLVMContext ctx;
  auto before = parseTestIR(kLeftAlone, ctx, "splitexits");
  ASSERT_TRUE(before);
  Result r = split(kLeftAlone, ctx);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.ir, moduleText(*before));
}

// Through the NVPTX pipeline (O3): the PTX of kEscape keeps the exits' sub/mov outside the
// loop (between the back branch and the join), and ptxas accepts it.
TEST(SplitLoopExits, PtxLoopHoldsNoCopiesAndPtxasAcceptsIt) {
  llvm::LLVMContext ctx;
  std::string kernel = std::string(kEscape) + R"(
define void @k(ptr %out, i64 %n, i32 %bound, double %c) {
  %r = call i64 @escape(i64 %n, i32 %bound, double %c)
  store i64 %r, ptr %out
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
)";
  std::unique_ptr<llvm::Module> m = parseTestIR(kernel, ctx, "splitexits");
  ASSERT_TRUE(m);
  CompileOptions o;
  auto tm = detail::createNvptxTargetMachine(o);
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple().str());
  detail::runOptimizationPipeline(*m, *tm, 3);
  std::string ptx;
  {
    llvm::SmallString<0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    ASSERT_FALSE(tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile));
    pm.run(*m);
    ptx = std::string(buf.str());
  }
  // Each loop: from the label a backward branch targets to that branch.
  int loops = 0;
  std::regex branch(R"(bra(\.uni)?\s+(\$L__BB\d+_\d+);)");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), branch); it != std::sregex_iterator();
       ++it) {
    size_t at = static_cast<size_t>(it->position(0));
    size_t label = ptx.find((*it)[2].str() + ":");
    if (label == std::string::npos || label > at)
      continue; // a forward branch
    ++loops;
    std::string loop = ptx.substr(label, at - label);
    EXPECT_EQ(loop.find("mov."), std::string::npos) << loop;
    EXPECT_EQ(loop.find("sub.s32"), std::string::npos) << loop;
  }
  EXPECT_GE(loops, 1) << ptx;
  EXPECT_NE(ptx.find("sub.s32"), std::string::npos) << ptx;
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }
}

} // namespace
} // namespace ptxjit::codegen::test
