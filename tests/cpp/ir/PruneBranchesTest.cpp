// Dead-branch pruning per specialization (ir/PruneBranches.h): which conditions are decided
// from the argument types and constants, that the folded condition and the dead blocks go, and
// that undecided branches stay.
#include "IRText.h"

#include "ir/PruneBranches.h"
#include "ir/Types.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::parseIR;

namespace {

/// def f(x, y): if y is None: return x; return y   (the frontend's inverted `is not`)
const char *kIsNone = R"(function f(x, y) device
bb0:
  %0 = Arg 0
  StoreLocal x, %0
  %2 = Arg 1
  StoreLocal y, %2
  %4 = LoadLocal y
  %5 = Const None
  %6 = Compare is not %4, %5
  %7 = Truth %6
  Branch %7, bb2, bb1
bb1:
  %9 = LoadLocal x
  Return %9
bb2:
  %11 = LoadLocal y
  Return %11
)";

bool hasCompare(const Function &fn) {
  for (const auto &b : fn.blocks)
    for (const auto &i : b->instrs)
      if (isa<CompareInstr>(i.get()))
        return true;
  return false;
}

/// The values the function returns, printed ("%9"), in block order.
std::string returned(const Function &fn) {
  std::string out;
  for (const auto &b : fn.blocks)
    if (auto *r = b->terminator() ? dyn_cast<ReturnInstr>(b->terminator()) : nullptr)
      out += (out.empty() ? "%" : " %") + std::to_string(r->value()->id);
  return out;
}

} // namespace

TEST(PruneBranches, ParameterTypedNoneTakesTheIsNonePath) {
  std::unique_ptr<Function> fn = parseIR(kIsNone);
  EXPECT_EQ(pruneConstantBranches(*fn, {types::float64(), types::none()}), 1);
  ASSERT_EQ(fn->blocks.size(), 2u); // bb0 and the old bb1, renumbered
  EXPECT_EQ(fn->blocks[1]->id, 1);
  EXPECT_EQ(returned(*fn), "%9");
  EXPECT_FALSE(hasCompare(*fn)) << fn->print(); // the folded condition is not typed
}

TEST(PruneBranches, ParameterOfAnotherTypeIsNeverNone) {
  std::unique_ptr<Function> fn = parseIR(kIsNone);
  EXPECT_EQ(pruneConstantBranches(*fn, {types::float64(), types::int32()}), 1);
  EXPECT_EQ(returned(*fn), "%11");
}

TEST(PruneBranches, UndecidedWithoutArgumentTypesOrWithAStoreInTheBody) {
  std::unique_ptr<Function> fn = parseIR(kIsNone);
  EXPECT_EQ(pruneConstantBranches(*fn, {}), 0); // no type known for y
  EXPECT_EQ(fn->blocks.size(), 3u);
  // y assigned in the body on one path: two assignments reach the test
  std::unique_ptr<Function> two = parseIR(R"(function f(c, y) device
bb0:
  %0 = Arg 0
  StoreLocal c, %0
  %2 = Arg 1
  StoreLocal y, %2
  %4 = LoadLocal c
  %5 = Truth %4
  Branch %5, bb1, bb2
bb1:
  %7 = Const 1.0
  StoreLocal y, %7
  Jump bb2
bb2:
  %10 = LoadLocal y
  %11 = Const None
  %12 = Compare is %10, %11
  %13 = Truth %12
  Branch %13, bb3, bb4
bb3:
  %15 = Const 0
  Return %15
bb4:
  %17 = Const 1
  Return %17
)");
  EXPECT_EQ(pruneConstantBranches(*two, {types::boolean(), types::none()}), 0);
  EXPECT_EQ(two->blocks.size(), 5u);
}

TEST(PruneBranches, ConstantConditionsAndNot) {
  std::unique_ptr<Function> fn = parseIR(R"(function f() device
bb0:
  %0 = Const False
  %1 = UnaryOp not %0
  %2 = Truth %1
  Branch %2, bb1, bb2
bb1:
  %4 = Const 1
  Return %4
bb2:
  %6 = Const 2
  Return %6
)");
  EXPECT_EQ(pruneConstantBranches(*fn, {}), 1);
  EXPECT_EQ(returned(*fn), "%4");
  EXPECT_EQ(fn->entry()->instrs.size(), 1u) << fn->print(); // only the Jump is left
}
