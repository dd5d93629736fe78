// Type inference with weak argument types: a Python float launch argument is a NEP 50 weak
// scalar in its parameter's variable (docs/language.md, "Literals are weak").
#include "IrBuilder.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::arr1;
using ptxjit::ir::test::FnBuilder;

namespace {

const ArrayType *f32a() { return arr1(types::float32()); }

} // namespace

TEST(TypingWeakArgs, WeakFloatParameterAdoptsFloat32) {
  // out[0] = a * x[0]
  FnBuilder b("k", {"a", "x", "out"});
  auto *mul = b.bin(BinaryOp::Mul, b.load("a"), b.item(b.load("x"), b.cint(0)));
  b.setItem(b.load("out"), b.cint(0), mul);
  b.ret(b.cnone());
  inferTypes(*b.fn, {types::weakFloat(), f32a(), f32a()}, nullptr);
  EXPECT_EQ(mul->type, types::float32());
  EXPECT_EQ(b.var("a").type, types::weakFloat());
  EXPECT_TRUE(b.var("a").isArgument);
  EXPECT_EQ(b.fn->argTypes[0], types::weakFloat());
}

TEST(TypingWeakArgs, ConcreteFloat64ParameterPromotes) {
  // The same function with a float64 argument (a NumPy float64 scalar): float64 arithmetic.
  FnBuilder b("k", {"a", "x", "out"});
  auto *mul = b.bin(BinaryOp::Mul, b.load("a"), b.item(b.load("x"), b.cint(0)));
  b.setItem(b.load("out"), b.cint(0), mul);
  b.ret(b.cnone());
  inferTypes(*b.fn, {types::float64(), f32a(), f32a()}, nullptr);
  EXPECT_EQ(mul->type, types::float64());
  EXPECT_EQ(b.var("a").type, types::float64());
}

TEST(TypingWeakArgs, ReassignedWeakParameterTakesTheUnifiedType) {
  // a = x[0]; out[0] = a * 2.0
  FnBuilder b("k", {"a", "x", "out"});
  b.store("a", b.item(b.load("x"), b.cint(0)));
  auto *mul = b.bin(BinaryOp::Mul, b.load("a"), b.cfloat(2.0));
  b.setItem(b.load("out"), b.cint(0), mul);
  b.ret(b.cnone());
  inferTypes(*b.fn, {types::weakFloat(), f32a(), f32a()}, nullptr);
  EXPECT_EQ(b.var("a").type, types::float32());
  EXPECT_EQ(mul->type, types::float32());
}

TEST(TypingWeakArgs, LocalComputedFromWeakParametersIsFloat64) {
  // b = a + c; out[0] = b * x[0]: `b` is a variable holding only Python-scalar values, so it
  // takes the default type (float64), as a variable assigned only literals does.
  FnBuilder b("k", {"a", "c", "x", "out"});
  auto *sum = b.bin(BinaryOp::Add, b.load("a"), b.load("c"));
  b.store("b", sum);
  auto *mul = b.bin(BinaryOp::Mul, b.load("b"), b.item(b.load("x"), b.cint(0)));
  b.setItem(b.load("out"), b.cint(0), mul);
  b.ret(b.cnone());
  inferTypes(*b.fn, {types::weakFloat(), types::weakFloat(), f32a(), f32a()}, nullptr);
  EXPECT_EQ(sum->type, types::weakFloat());
  EXPECT_EQ(b.var("b").type, types::float64());
  EXPECT_EQ(mul->type, types::float64());
}
