// The NVPTX early-load pass (codegen/HoistLoads.h) on hand-written LLVM IR, and on the PTX of
// Black-Scholes-like code: loads move up within their block, with their address arithmetic,
// never across a possible write, and keep their order.
#include "Kernels.h"
#include "TestUtil.h"

#include "codegen/Codegen.h"
#include "codegen/HoistLoads.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace ptxjit::codegen::test {
namespace {

/// The instruction names of function `f`'s first block, in order, after the pass ran.
std::vector<std::string> namesAfterHoisting(const std::string &ir, bool *changed = nullptr) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parseTestIR(ir, ctx, "hoist");
  if (!m)
    return {};
  llvm::Function *f = m->getFunction("f");
  bool c = detail::hoistLoadsInBlock(f->getEntryBlock());
  if (changed)
    *changed = c;
  expectValidIR(*m);
  std::vector<std::string> names;
  for (llvm::Instruction &i : f->getEntryBlock())
    if (i.hasName())
      names.push_back(i.getName().str());
  return names;
}

size_t pos(const std::vector<std::string> &v, const std::string &name) {
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k] == name)
      return k;
  ADD_FAILURE() << name << " missing";
  return v.size();
}

// sqrtT = sqrt(T[i]); q = S[i] / X[i]: the loads of S and X (and their addresses) move above
// the square root, after T's load.
const char *kSqrtThenLoads = R"(
declare float @llvm.sqrt.f32(float)
define float @f(ptr %T, ptr %S, ptr %X, i64 %i) {
entry:
  %pt = getelementptr inbounds float, ptr %T, i64 %i
  %t = load float, ptr %pt, align 4
  %sq = call float @llvm.sqrt.f32(float %t)
  %ps = getelementptr inbounds float, ptr %S, i64 %i
  %s = load float, ptr %ps, align 4
  %px = getelementptr inbounds float, ptr %X, i64 %i
  %x = load float, ptr %px, align 4
  %q = fdiv float %s, %x
  %r = fadd float %q, %sq
  ret float %r
}
)";

TEST(HoistLoads, LoadsAndTheirAddressesMoveAboveArithmetic) {
  bool changed = false;
  std::vector<std::string> n = namesAfterHoisting(kSqrtThenLoads, &changed);
  EXPECT_TRUE(changed);
  EXPECT_LT(pos(n, "s"), pos(n, "sq"));
  EXPECT_LT(pos(n, "x"), pos(n, "sq"));
  EXPECT_LT(pos(n, "ps"), pos(n, "s"));
  EXPECT_LT(pos(n, "px"), pos(n, "x"));
  EXPECT_LT(pos(n, "t"), pos(n, "s")); // the loads keep their order
  EXPECT_LT(pos(n, "s"), pos(n, "x"));
}

TEST(HoistLoads, NothingMovesAboveAPossibleWrite) {
  const char *ir = R"(
declare float @llvm.sqrt.f32(float)
declare void @opaque()
define float @f(ptr %A, ptr %B, ptr %C) {
entry:
  %a = load float, ptr %A, align 4
  %sq = call float @llvm.sqrt.f32(float %a)
  store float %sq, ptr %C, align 4
  %b = load float, ptr %B, align 4
  %m = fmul float %b, %b
  call void @opaque()
  %c = load float, ptr %C, align 4
  %r = fadd float %m, %c
  ret float %r
}
)";
  std::vector<std::string> n = namesAfterHoisting(ir);
  // %b stays below the store (it may alias %C), %c below the opaque call.
  ASSERT_EQ(n.size(), 6u);
  EXPECT_EQ(n, (std::vector<std::string>{"a", "sq", "b", "m", "c", "r"}));
}

TEST(HoistLoads, VolatileLoadsAndAlreadyEarlyLoadsStay) {
  const char *ir = R"(
define float @f(ptr %A, ptr %B) {
entry:
  %a = load float, ptr %A, align 4
  %m = fmul float %a, %a
  %b = load volatile float, ptr %B, align 4
  %r = fadd float %m, %b
  ret float %r
}
)";
  bool changed = true;
  std::vector<std::string> n = namesAfterHoisting(ir, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(n, (std::vector<std::string>{"a", "m", "b", "r"}));
}

TEST(HoistLoads, ALoadWaitsForTheLoadItsAddressComesFrom) {
  const char *ir = R"(
define float @f(ptr %P, float %y) {
entry:
  %d = fmul float %y, %y
  %q = load ptr, ptr %P, align 8
  %e = fadd float %d, %y
  %v = load float, ptr %q, align 4
  %r = fadd float %e, %v
  ret float %r
}
)";
  std::vector<std::string> n = namesAfterHoisting(ir);
  EXPECT_EQ(n, (std::vector<std::string>{"q", "v", "d", "e", "r"}));
}

// The kernel of tests/cpp/codegen/Kernels.h's saxpy shape, with a division before the second
// load: the PTX issues both loads before the division.
TEST(HoistLoads, PtxIssuesTheLoadsBeforeADivision) {
  const ScalarType *f32 = types::float32();
  TypedBuilder b("divload", {"x", "y", "out"}, {arr(f32), arr(f32), arr(f32)});
  Instr *i = b.grid(1);
  Instr *q = b.bin(BinaryOp::TrueDiv, b.item(b.arg(0), i, f32), b.cfloat(3.0, f32), f32);
  b.setItem(b.arg(2), i, b.bin(BinaryOp::TrueDiv, q, b.item(b.arg(1), i, f32), f32));
  b.ret();
  CompileOptions o;
  LoweredModule m = lowerKernel(*b.fn, o, "divload");
  std::string ptx = emitPTX(m, o);
  size_t firstDiv = ptx.find("div.rn.f32");
  size_t secondLoad = ptx.find("ld.global.f32", ptx.find("ld.global.f32") + 1);
  ASSERT_NE(firstDiv, std::string::npos) << ptx;
  ASSERT_NE(secondLoad, std::string::npos) << ptx;
  EXPECT_LT(secondLoad, firstDiv) << ptx;
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }
}

} // namespace
} // namespace ptxjit::codegen::test
