// ir/Dominators.h: the dominator tree of the block graph, and the variables the lowering may
// keep as values (one assignment that dominates every read).
#include "IRText.h"

#include "ir/Dominators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace {

using namespace ptxjit::ir;
using ptxjit::ir::test::parseIR;

/// The index of the variable of `fn` printed as `name` (IRText.h's var).
size_t var(const Function &fn, const std::string &name) {
  return static_cast<size_t>(&ptxjit::ir::test::var(fn, name) - fn.vars.data());
}

TEST(Dominators, TreeOfBranchesLoopsAndUnreachableBlocks) {
  // bb0 branches to bb1 / bb2, which meet at bb3, a loop (bb3 -> bb3) left for bb4; nothing
  // reaches bb5.
  auto fn = parseIR(R"(function k(a) kernel
bb0:
  %0 = LoadLocal a
  %1 = Truth %0
  Branch %1, bb1, bb2
bb1:
  Jump bb3
bb2:
  Jump bb3
bb3:
  %5 = LoadLocal a
  %6 = Truth %5
  Branch %6, bb3, bb4
bb4:
  Return
bb5:
  Jump bb4
)");
  BlockDominators dom(*fn);
  auto bb = [&](int id) { return fn->blocks[id].get(); };
  const std::vector<const Block *> &order = dom.reversePostOrder();
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order.front(), bb(0));
  EXPECT_EQ(std::count(order.begin(), order.end(), bb(5)), 0);
  auto pos = [&](const Block *b) { return std::find(order.begin(), order.end(), b); };
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b)
      if (dom.dominates(bb(a), bb(b)))
        EXPECT_LE(pos(bb(a)), pos(bb(b))) << "bb" << a << " dominates bb" << b;

  for (int b = 0; b < 5; ++b) {
    EXPECT_TRUE(dom.reachable(bb(b)));
    EXPECT_TRUE(dom.dominates(bb(0), bb(b)));
    EXPECT_TRUE(dom.dominates(bb(b), bb(b)));
  }
  EXPECT_FALSE(dom.dominates(bb(1), bb(3))); // bb3 is reached through bb2 as well
  EXPECT_FALSE(dom.dominates(bb(2), bb(3)));
  EXPECT_TRUE(dom.dominates(bb(3), bb(4)));
  EXPECT_FALSE(dom.dominates(bb(4), bb(3)));
  EXPECT_FALSE(dom.dominates(bb(1), bb(0)));
  EXPECT_FALSE(dom.reachable(bb(5)));
  EXPECT_FALSE(dom.dominates(bb(5), bb(4)));
  EXPECT_FALSE(dom.dominates(bb(0), bb(5)));
}

TEST(Dominators, JumpsOutOfTheFunctionAreRejected) {
  auto fn = parseIR(R"(function k() kernel
bb0:
  Jump bb1
bb1:
  Return
)");
  cast<JumpInstr>(fn->blocks[0]->terminator())->target = nullptr;
  try {
    BlockDominators dom(*fn);
    FAIL() << "a jump to a null block was accepted";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("bb0 of function k jumps to a null block"),
              std::string::npos)
        << e.what();
  }
}

TEST(Dominators, VariablesWithOneDominatingAssignment) {
  // def k(a, b, n):
  //     b = b + 1            # a parameter assigned something else: memory
  //     t = a * 2            # one assignment, read below: a value
  //     if a:
  //         u = 1            # assigned on one path, read after the join: memory
  //     r = u                # one assignment, never read: a value
  //     t
  //     for i in range(n):   # the loop's variable, read in the body: a value
  //         w = i            # assigned in the loop, read after it: memory
  //     s; w                 # `s` read, never assigned: memory
  auto fn = parseIR(R"(function k(a, b, n) kernel
bb0:
  %0 = Arg 0 (a)
  StoreLocal a, %0
  %2 = Arg 1 (b)
  StoreLocal b, %2
  %4 = Arg 2 (n)
  StoreLocal n, %4
  %6 = LoadLocal b
  %7 = Const 1
  %8 = BinOp + %6, %7
  StoreLocal b, %8
  %10 = LoadLocal a
  %11 = Const 2
  %12 = BinOp * %10, %11
  StoreLocal t, %12
  %14 = LoadLocal a
  %15 = Truth %14
  Branch %15, bb1, bb2
bb1:
  %17 = Const 1
  StoreLocal u, %17
  Jump bb2
bb2:
  %20 = LoadLocal u
  StoreLocal r, %20
  %22 = LoadLocal t
  %23 = LoadLocal n
  %24 = Global range [symbol builtins.range]
  %25 = Call %24(%23)
  %26 = GetIter %25
  Jump bb3
bb3:
  %28 = IterValid %26
  Branch %28, bb4, bb5
bb4:
  %30 = IterNext %26
  StoreLocal i, %30
  %32 = LoadLocal i
  StoreLocal w, %32
  Jump bb3
bb5:
  %35 = LoadLocal s
  %36 = LoadLocal w
  Return
)");
  BlockDominators dom(*fn);
  std::vector<bool> single = singleValueVariables(*fn, dom);
  ASSERT_EQ(single.size(), fn->vars.size());
  EXPECT_TRUE(single[var(*fn, "a")]) << "a parameter that keeps its argument";
  EXPECT_TRUE(single[var(*fn, "n")]);
  EXPECT_FALSE(single[var(*fn, "b")]) << "a parameter assigned something else";
  EXPECT_TRUE(single[var(*fn, "t")]) << "one assignment in the entry";
  EXPECT_FALSE(single[var(*fn, "u")]) << "assigned on one path, read at the join";
  EXPECT_TRUE(single[var(*fn, "r")]) << "assigned once, never read";
  EXPECT_TRUE(single[var(*fn, "i")]) << "the loop's variable, read in the body after it";
  EXPECT_FALSE(single[var(*fn, "w")]) << "assigned in the loop, read after it";
  EXPECT_FALSE(single[var(*fn, "s")]) << "read, never assigned";
}

TEST(Dominators, ReadsBeforeTheAssignmentInItsBlockKeepMemory) {
  // A loop whose body reads `x` (the previous iteration's) before assigning it.
  auto fn = parseIR(R"(function k(n) kernel
bb0:
  %0 = Arg 0 (n)
  StoreLocal n, %0
  Jump bb1
bb1:
  %3 = LoadLocal x
  %4 = LoadLocal n
  StoreLocal x, %4
  %6 = Truth %4
  Branch %6, bb1, bb2
bb2:
  %8 = LoadLocal x
  Return
)");
  BlockDominators dom(*fn);
  std::vector<bool> single = singleValueVariables(*fn, dom);
  EXPECT_FALSE(single[var(*fn, "x")]);
  EXPECT_TRUE(single[var(*fn, "n")]);
  // Without the read at the top of the loop, the one assignment dominates the other read.
  fn->blocks[1]->instrs.erase(fn->blocks[1]->instrs.begin());
  EXPECT_TRUE(singleValueVariables(*fn, BlockDominators(*fn))[var(*fn, "x")]);
}

} // namespace
