// Typing of the math-like builtins: math/numpy functions and constants, NumPy
// casts, cmath, complex(), .real/.imag/.conjugate(), and their argument errors.
#include "IRText.h"
#include "IrBuilder.h"

#include "ir/typing/MathBuiltins.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::FnBuilder;
using ptxjit::ir::test::typeChecked;

namespace {

/// `module.name` as the frontend emits it (GetAttr on the module symbol).
Instr *fnAttr(FnBuilder &b, const std::string &module,
              const std::string &name) {
  return b.attr(b.sym(module, module), name);
}

} // namespace

TEST(TypingMath, FloatResultsFollowTheArgument) {
  FnBuilder b("k", {"f", "d", "i"});
  auto *s32 = b.call(fnAttr(b, "math", "sin"), {b.load("f")});
  auto *s64 = b.call(fnAttr(b, "math", "sin"), {b.load("d")});
  auto *sInt = b.call(fnAttr(b, "math", "sqrt"), {b.load("i")});
  auto *sLit = b.call(fnAttr(b, "math", "exp"), {b.cfloat(1.0)});
  auto *a32 = b.call(fnAttr(b, "math", "atan2"), {b.load("f"), b.cfloat(2.0)});
  auto *aMix = b.call(fnAttr(b, "math", "atan2"), {b.load("f"), b.load("i")});
  auto *lg2 = b.call(fnAttr(b, "math", "log"), {b.load("f"), b.cint(2)});
  auto *fl = b.call(fnAttr(b, "math", "floor"), {b.load("f")});
  auto *npfl = b.call(fnAttr(b, "numpy", "floor"), {b.load("f")});
  auto *isn = b.call(fnAttr(b, "math", "isnan"), {b.load("d")});
  auto *fr = b.call(fnAttr(b, "math", "frexp"), {b.load("f")});
  auto *mf = b.call(fnAttr(b, "math", "modf"), {b.load("d")});
  auto *ld = b.call(fnAttr(b, "math", "ldexp"), {b.load("f"), b.load("i")});
  auto *pi = fnAttr(b, "math", "pi");
  auto *scaled = b.bin(BinaryOp::Mul, b.load("f"), pi);
  auto *cast = b.call(fnAttr(b, "numpy", "float32"), {b.load("d")});
  auto *castU8 = b.call(b.sym("uint8", "numpy.uint8"), {b.load("i")});
  auto *npabs = b.call(fnAttr(b, "numpy", "abs"), {b.load("i")});
  b.ret();
  typeChecked(*b.fn, {types::float32(), types::float64(), types::int32()}, nullptr);
  EXPECT_EQ(s32->type, types::float32());
  EXPECT_EQ(s32->builtin, BuiltinId::MathSin);
  EXPECT_EQ(s64->type, types::float64());
  EXPECT_EQ(sInt->type, types::float64());
  EXPECT_EQ(sLit->type, types::float64());
  EXPECT_EQ(a32->type, types::float32());
  EXPECT_EQ(aMix->type, types::float64());
  EXPECT_EQ(lg2->type, types::float32());
  EXPECT_EQ(fl->type, types::int64());
  EXPECT_EQ(npfl->type, types::float32());
  EXPECT_EQ(isn->type, types::boolean());
  EXPECT_EQ(fr->type, types::tuple({types::float32(), types::int64()}));
  EXPECT_EQ(mf->type, types::tuple({types::float64(), types::float64()}));
  EXPECT_EQ(ld->type, types::float32());
  EXPECT_EQ(pi->type, types::weakFloat());
  EXPECT_EQ(pi->builtin, BuiltinId::MathConstPi);
  EXPECT_EQ(scaled->type, types::float32()); // math.pi is weak
  EXPECT_EQ(cast->type, types::float32());
  EXPECT_EQ(castU8->type, types::uint8());
  EXPECT_EQ(npabs->type, types::int32());
}

TEST(TypingMath, ComplexBuiltinsAndAttributes) {
  FnBuilder b("k", {"z", "w", "x"});
  auto *e64 = b.call(fnAttr(b, "cmath", "exp"), {b.load("z")});
  auto *e128 = b.call(fnAttr(b, "cmath", "sqrt"), {b.load("x")});
  auto *ph = b.call(fnAttr(b, "cmath", "phase"), {b.load("z")});
  auto *pol = b.call(fnAttr(b, "cmath", "polar"), {b.load("w")});
  auto *rect = b.call(fnAttr(b, "cmath", "rect"), {b.cfloat(1.0), b.load("x")});
  auto *mk =
      b.call(b.sym("complex", "builtins.complex"), {b.load("x"), b.cint(2)});
  auto *re = b.attr(b.load("z"), "real");
  auto *im = b.attr(b.load("w"), "imag");
  auto *xr = b.attr(b.load("x"), "real");
  auto *conj = b.call(b.attr(b.load("z"), "conjugate"), {});
  auto *ab = b.call(b.sym("abs", "builtins.abs"), {b.load("w")});
  auto *pw = b.bin(BinaryOp::Pow, b.load("z"), b.cint(2));
  b.ret();
  typeChecked(*b.fn, {types::complex64(), types::complex128(), types::float64()}, nullptr);
  EXPECT_EQ(e64->type, types::complex64());
  EXPECT_EQ(e128->type, types::complex128());
  EXPECT_EQ(ph->type, types::float32());
  EXPECT_EQ(pol->type, types::tuple({types::float64(), types::float64()}));
  EXPECT_EQ(rect->type, types::complex128());
  EXPECT_EQ(mk->type, types::complex128());
  EXPECT_EQ(re->type, types::float32());
  EXPECT_EQ(im->type, types::float64());
  EXPECT_EQ(xr->type, types::float64());
  EXPECT_EQ(conj->type, types::complex64());
  EXPECT_EQ(conj->builtin, BuiltinId::NumberConjugate);
  EXPECT_EQ(ab->type, types::float64());
  EXPECT_EQ(pw->type, types::complex64());
}

TEST(TypingMath, Errors) {
  auto expectCode = [](FnBuilder &b, std::vector<const Type *> args,
                       DiagCode code, const std::string &part) {
    try {
      inferTypes(*b.fn, args, nullptr);
      ADD_FAILURE() << "typing succeeded";
    } catch (const CompileError &e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
    }
  };
  {
    FnBuilder b("k", {"x"});
    b.call(fnAttr(b, "math", "factorial"), {b.load("x")});
    b.ret();
    expectCode(b, {types::int64()}, DiagCode::UnsupportedCall,
               "math.factorial");
  }
  {
    FnBuilder b("k", {"z"});
    b.call(fnAttr(b, "math", "sin"), {b.load("z")}); // complex goes to cmath
    b.ret();
    expectCode(b, {types::complex128()}, DiagCode::CallArgs, "math.sin");
  }
  {
    FnBuilder b("k", {"x"});
    b.call(fnAttr(b, "math", "atan2"), {b.load("x")});
    b.ret();
    expectCode(b, {types::float64()}, DiagCode::CallArgs, "math.atan2");
  }
  {
    FnBuilder b("k", {"x"});
    b.call(fnAttr(b, "math", "pi"), {});
    b.ret();
    // math.pi is a float constant: calling it calls a float.
    expectCode(b, {types::float64()}, DiagCode::UnsupportedCall, "float");
  }
}

TEST(TypingMath, TableKinds) {
  ASSERT_NE(mathKindOf(BuiltinId::MathSin), nullptr);
  EXPECT_EQ(*mathKindOf(BuiltinId::MathSin), MathKind::Unary);
  EXPECT_EQ(*mathKindOf(BuiltinId::NpArctan2), MathKind::Binary);
  EXPECT_EQ(mathKindOf(BuiltinId::Range), nullptr);
  EXPECT_EQ(mathCastType(BuiltinId::NpCastComplex64), types::complex64());
  EXPECT_EQ(mathCastType(BuiltinId::MathSin), nullptr);
  EXPECT_DOUBLE_EQ(mathConstantValue(BuiltinId::MathConstTau),
                   2 * 3.141592653589793);
  EXPECT_EQ(builtinByPath("numpy.arcsin"), BuiltinId::NpArcsin);
}
