// Loops over tuples (ir/LoopUnroll.h and typing): run-time iteration of uniform tuples, the
// unrolling of literal_unroll and of tuples of elements of different types (one copy of the body
// per element, variables per copy), global tuples of arrays, and the reductions' result types.
#include "IRText.h"

#include "ir/LoopUnroll.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::parseIR;
using ptxjit::ir::test::typedIR;
using ptxjit::ir::test::typeOf;
using ptxjit::ir::test::var;

namespace {

/// def k(out):
///     i = 0
///     for a in <iterable>:
///         s = a.sum()
///         out[i] = s
///         i += 1
std::string loop(const std::string &iterable) {
  return R"(function k(out) kernel
bb0:
  %0 = Const 0
  StoreLocal i, %0
)" + iterable +
         R"(
  %7 = GetIter %6
  StoreLocal $stack0, %7
  Jump bb1
bb1:
  %10 = LoadLocal $stack0
  %11 = IterValid %10
  Branch %11, bb2, bb3
bb2:
  %13 = LoadLocal $stack0
  %14 = IterNext %13
  StoreLocal a, %14
  %16 = LoadLocal a
  %17 = GetAttr %16 .sum
  %18 = Call %17()
  StoreLocal s, %18
  %20 = LoadLocal s
  %21 = LoadLocal out
  %22 = LoadLocal i
  SetItem %21[%22] = %20
  %24 = LoadLocal i
  %25 = Const 1
  %26 = BinOp += %24, %25
  StoreLocal i, %26
  Jump bb1
bb3:
  Return
)";
}

const char *kUnrollCases = R"(  %4 = Global literal_unroll [symbol cuda.literal_unroll]
  %5 = Global cases [tuple (array float64(3,); array int32(2, 2); array uint8(); )]
  %6 = Call %4(%5))";

const ArrayType *out64() { return types::array(types::float64(), 1, Layout::C); }

} // namespace

TEST(LoopUnroll, LiteralUnrollTypesEachCopyForItsElement) {
  auto fn = typedIR(loop(kUnrollCases), {out64()});
  // The body (one block) three times; the header jumps to the first copy.
  EXPECT_EQ(fn->blocks.size(), 6u) << fn->print();
  EXPECT_EQ(var(*fn, "a").type->str(), "readonly array(float64, 1d, C)");
  EXPECT_EQ(var(*fn, "a.1").type->str(), "readonly array(int32, 2d, C)");
  EXPECT_EQ(var(*fn, "a.2").type->str(), "readonly array(uint8, 0d, C)");
  EXPECT_EQ(var(*fn, "s").type, types::float64());
  EXPECT_EQ(var(*fn, "s.1").type, types::int64());
  EXPECT_EQ(var(*fn, "s.2").type, types::uint64());
  // `i += 1` in each copy: straight-line code once unrolled, so each copy's store starts a
  // version (ir/SplitVariables.h), all int64.
  EXPECT_EQ(var(*fn, "i").type, types::int64());
  for (const char *v : {"i.1", "i.2", "i.3"})
    EXPECT_EQ(var(*fn, v).type, types::int64()) << v;
  EXPECT_THROW(var(*fn, "i.4"), std::out_of_range);
  EXPECT_EQ(var(*fn, "$stack0").type->str(),
            "Tuple(readonly array(float64, 1d, C), readonly array(int32, 2d, C), readonly "
            "array(uint8, 0d, C))");
  int gets = 0;
  for (const auto &b : fn->blocks)
    for (const auto &i : b->instrs) {
      EXPECT_FALSE(isa<IterNextInstr>(i.get()) || isa<IterValidInstr>(i.get()) ||
                   isa<GetIterInstr>(i.get()));
      if (auto *g = dyn_cast<TupleGetInstr>(i.get()))
        EXPECT_EQ(g->index, gets++);
    }
  EXPECT_EQ(gets, 3);
}

TEST(LoopUnroll, UniformTupleIteratesAtRunTime) {
  auto fn = typedIR(loop(R"(  %4 = Global literal_unroll [symbol builtins.len]
  %5 = Global x [const 1.5]
  %6 = Global cases [tuple (array float64(3,); array float64(2,); )])"),
                    {out64()});
  EXPECT_EQ(fn->blocks.size(), 4u);
  EXPECT_EQ(typeOf(*fn, 7)->str(), "iter(UniTuple(readonly array(float64, 1d, C) x 2))");
  EXPECT_EQ(var(*fn, "a").type->str(), "readonly array(float64, 1d, C)");
}

TEST(LoopUnroll, HeterogeneousTupleUnrollsWithoutLiteralUnroll) {
  auto fn = typedIR(loop(R"(  %4 = Global unused [symbol builtins.len]
  %5 = Global x [const 1.5]
  %6 = Global cases [tuple (array float64(3,); array int8(2,); )])"),
                    {out64()});
  EXPECT_EQ(fn->blocks.size(), 5u);
  EXPECT_EQ(var(*fn, "s.1").type, types::int64());
}

TEST(LoopUnroll, EmptyTupleDropsTheBody) {
  auto fn = typedIR(loop(R"(  %4 = Global literal_unroll [symbol cuda.literal_unroll]
  %5 = Global cases [const ()]
  %6 = Call %4(%5))"),
                    {out64()});
  EXPECT_EQ(fn->blocks.size(), 3u) << fn->print();
  EXPECT_EQ(var(*fn, "s").type, types::void_()); // never assigned
}

TEST(LoopUnroll, LoopNotInTheFrontendsFormIsRefused) {
  // The iterator used again after the loop: not a loop unrolling can rewrite.
  auto fn = parseIR(R"(function k(t) kernel
bb0:
  %0 = LoadLocal t
  %1 = GetIter %0
  StoreLocal $stack0, %1
  %3 = IterValid %1
  Jump bb1
bb1:
  Return
)");
  auto *getIter = cast<GetIterInstr>(fn->blocks[0]->instrs[1].get());
  try {
    unrollTupleLoop(*fn, getIter, 2);
    ADD_FAILURE() << "expected a refusal";
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), DiagCode::UnsupportedConstruct);
    EXPECT_NE(e.message().find("this for loop over a tuple"), std::string::npos) << e.what();
  }
}

TEST(LoopUnroll, ReductionResultTypes) {
  auto fn = typedIR(
      R"(function f(a, b) device
bb0:
  %0 = Global np [symbol numpy]
  %1 = GetAttr %0 .sum
  %2 = LoadLocal a
  %3 = Call %1(%2)
  %4 = GetAttr %0 .mean
  %5 = Call %4(%2)
  %6 = LoadLocal b
  %7 = GetAttr %6 .var
  %8 = Call %7()
  %9 = GetAttr %0 .argmax
  %10 = Call %9(%6)
  %11 = GetAttr %0 .nanmax
  %12 = Call %11(%6)
  %13 = BuildTuple (%3, %5, %8, %10, %12)
  Return %13
)",
      {types::array(types::int16(), 2, Layout::F), types::array(types::complex64(), 1, Layout::A)});
  EXPECT_EQ(fn->returnType->str(), "Tuple(int64, float64, float32, int64, complex64)");
}
