// Type inference with weak argument types: a Python float launch argument is a NEP 50 weak
// scalar in its parameter's variable (docs/language.md, "Literals are weak").
#include "IRText.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::typedIR;
using ptxjit::ir::test::typeOf;
using ptxjit::ir::test::var;

namespace {

const ArrayType *f32a() { return types::array(types::float32(), 1, Layout::C); }

/// def k(a, x, out): out[0] = a * x[0]
const char *kScale = R"(function k(a, x, out) kernel
bb0:
  %0 = LoadLocal a
  %1 = LoadLocal x
  %2 = Const 0
  %3 = GetItem %1[%2]
  %4 = BinOp * %0, %3
  %5 = LoadLocal out
  SetItem %5[%2] = %4
  %7 = Const None
  Return %7
)";

} // namespace

TEST(TypingWeakArgs, WeakFloatParameterAdoptsFloat32) {
  auto fn = typedIR(kScale, {types::weakFloat(), f32a(), f32a()});
  EXPECT_EQ(typeOf(*fn, 4), types::float32());
  EXPECT_EQ(var(*fn, "a").type, types::weakFloat());
  EXPECT_TRUE(var(*fn, "a").isArgument);
  EXPECT_EQ(fn->argTypes[0], types::weakFloat());
}

TEST(TypingWeakArgs, ConcreteFloat64ParameterPromotes) {
  // The same function with a float64 argument (a NumPy float64 scalar): float64 arithmetic.
  auto fn = typedIR(kScale, {types::float64(), f32a(), f32a()});
  EXPECT_EQ(typeOf(*fn, 4), types::float64());
  EXPECT_EQ(var(*fn, "a").type, types::float64());
}

TEST(TypingWeakArgs, ReassignedWeakParameterTakesTheUnifiedType) {
  // a = x[0]; out[0] = a * 2.0
  auto fn = typedIR(R"(function k(a, x, out) kernel
bb0:
  %0 = LoadLocal x
  %1 = Const 0
  %2 = GetItem %0[%1]
  StoreLocal a, %2
  %4 = LoadLocal a
  %5 = Const 2.0
  %6 = BinOp * %4, %5
  %7 = LoadLocal out
  SetItem %7[%1] = %6
  %9 = Const None
  Return %9
)",
                    {types::weakFloat(), f32a(), f32a()});
  EXPECT_EQ(var(*fn, "a").type, types::float32());
  EXPECT_EQ(typeOf(*fn, 6), types::float32());
}

TEST(TypingWeakArgs, LocalComputedFromWeakParametersIsFloat64) {
  // b = a + c; out[0] = b * x[0]: `b` is a variable holding only Python-scalar values, so it
  // takes the default type (float64), as a variable assigned only literals does.
  auto fn = typedIR(R"(function k(a, c, x, out) kernel
bb0:
  %0 = LoadLocal a
  %1 = LoadLocal c
  %2 = BinOp + %0, %1
  StoreLocal b, %2
  %4 = LoadLocal b
  %5 = LoadLocal x
  %6 = Const 0
  %7 = GetItem %5[%6]
  %8 = BinOp * %4, %7
  %9 = LoadLocal out
  SetItem %9[%6] = %8
  %11 = Const None
  Return %11
)",
                    {types::weakFloat(), types::weakFloat(), f32a(), f32a()});
  EXPECT_EQ(typeOf(*fn, 2), types::weakFloat());
  EXPECT_EQ(var(*fn, "b").type, types::float64());
  EXPECT_EQ(typeOf(*fn, 8), types::float64());
}
