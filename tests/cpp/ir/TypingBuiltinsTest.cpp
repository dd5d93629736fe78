// Typing of the builtins divmod, round, pow and print: result types (NEP 50 weak literals
// included) and the errors for arguments that do not fit.
#include "IRText.h"
#include "IrBuilder.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::FnBuilder;
using ptxjit::ir::test::typeChecked;

namespace {

Instr *builtin(FnBuilder &b, const std::string &name) { return b.sym(name, "builtins." + name); }

Instr *cstr(FnBuilder &b, const std::string &s) { return b.add<ConstInstr>(ConstValue::string(s)); }

/// The code and message of the CompileError that typing `b` for `args` throws.
std::pair<DiagCode, std::string> typingError(FnBuilder &b, std::vector<const Type *> args) {
  try {
    inferTypes(*b.fn, args, nullptr);
  } catch (const CompileError &e) {
    return {e.code(), e.message()};
  }
  ADD_FAILURE() << "no error";
  return {DiagCode::Internal, ""};
}

} // namespace

TEST(TypingBuiltins, DivmodFollowsFloorDivision) {
  FnBuilder b("k", {"i", "f", "u"});
  auto *ii = b.call(builtin(b, "divmod"), {b.load("i"), b.cint(3)});
  auto *fi = b.call(builtin(b, "divmod"), {b.load("f"), b.load("i")});
  auto *lit = b.call(builtin(b, "divmod"), {b.cfloat(7.0), b.cfloat(2.0)});
  auto *bb = b.call(builtin(b, "divmod"), {b.add<ConstInstr>(ConstValue::boolean(true)),
                                           b.add<ConstInstr>(ConstValue::boolean(true))});
  auto *iu = b.call(builtin(b, "divmod"), {b.load("i"), b.load("u")});
  b.ret();
  typeChecked(*b.fn, {types::int32(), types::float32(), types::uint64()}, nullptr);
  EXPECT_EQ(ii->type, types::tuple({types::int32(), types::int32()}));
  EXPECT_EQ(ii->builtin, BuiltinId::Divmod);
  EXPECT_EQ(fi->type, types::tuple({types::float64(), types::float64()}));
  EXPECT_EQ(lit->type, types::tuple({types::float64(), types::float64()}));
  EXPECT_EQ(bb->type, types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(iu->type, types::tuple({types::float64(), types::float64()})); // NumPy promotion
}

TEST(TypingBuiltins, RoundResults) {
  FnBuilder b("k", {"f", "d", "i", "flag"});
  auto *f0 = b.call(builtin(b, "round"), {b.load("f")});
  auto *f2 = b.call(builtin(b, "round"), {b.load("f"), b.cint(2)});
  auto *d2 = b.call(builtin(b, "round"), {b.load("d"), b.load("i")});
  auto *fNone = b.call(builtin(b, "round"), {b.load("d"), b.cnone()});
  auto *i0 = b.call(builtin(b, "round"), {b.load("i")});
  auto *i2 = b.call(builtin(b, "round"), {b.load("i"), b.cint(-1)});
  auto *bl = b.call(builtin(b, "round"), {b.load("flag")});
  auto *lit = b.call(builtin(b, "round"), {b.cfloat(2.5), b.cint(1)});
  b.ret();
  typeChecked(*b.fn, {types::float32(), types::float64(), types::int16(), types::boolean()},
              nullptr);
  EXPECT_EQ(f0->type, types::int64());
  EXPECT_EQ(f0->builtin, BuiltinId::Round);
  EXPECT_EQ(f2->type, types::float32());
  EXPECT_EQ(d2->type, types::float64());
  EXPECT_EQ(fNone->type, types::int64());
  EXPECT_EQ(i0->type, types::int16());
  EXPECT_EQ(i2->type, types::int16());
  EXPECT_EQ(bl->type, types::int64());
  EXPECT_EQ(lit->type, types::float64());
}

TEST(TypingBuiltins, PowLikeTheOperatorAndModular) {
  FnBuilder b("k", {"f", "i", "j", "z"});
  auto *fp = b.call(builtin(b, "pow"), {b.load("f"), b.cint(2)});
  auto *op = b.bin(BinaryOp::Pow, b.load("f"), b.cint(2));
  auto *ii = b.call(builtin(b, "pow"), {b.load("i"), b.load("j")});
  auto *zc = b.call(builtin(b, "pow"), {b.load("z"), b.cfloat(0.5)});
  auto *lit = b.call(builtin(b, "pow"), {b.cint(2), b.cint(10)});
  auto *mod = b.call(builtin(b, "pow"), {b.load("i"), b.load("j"), b.cint(7)});
  b.ret();
  typeChecked(*b.fn, {types::float32(), types::int8(), types::int32(), types::complex64()},
              nullptr);
  EXPECT_EQ(fp->type, op->type);
  EXPECT_EQ(fp->type, types::float32());
  EXPECT_EQ(ii->type, types::int32());
  EXPECT_EQ(zc->type, types::complex64());
  EXPECT_EQ(lit->type, types::weakInt()); // like 2 ** 10
  EXPECT_EQ(mod->type, types::int32());
  EXPECT_EQ(mod->builtin, BuiltinId::Pow);
}

TEST(TypingBuiltins, PrintTakesNumbersStringConstantsAndTuples) {
  FnBuilder b("k", {"x", "z"});
  Instr *t = b.tuple({b.load("x"), cstr(b, "inner")});
  auto *p =
      b.call(builtin(b, "print"),
             {cstr(b, "x ="), b.load("x"), b.load("z"), b.cnone(), t, cstr(b, ", "), cstr(b, "\n")},
             {"sep", "end"});
  b.ret();
  typeChecked(*b.fn, {types::float32(), types::complex128()}, nullptr);
  EXPECT_EQ(p->type, types::none());
  EXPECT_EQ(p->builtin, BuiltinId::Print);
}

TEST(TypingBuiltins, Errors) {
  {
    FnBuilder b("k", {"z"});
    b.call(builtin(b, "round"), {b.load("z")});
    b.ret();
    auto [code, msg] = typingError(b, {types::complex128()});
    EXPECT_EQ(code, DiagCode::CallArgs);
    EXPECT_EQ(msg, "round cannot be called with (complex128)");
  }
  {
    FnBuilder b("k", {"x"});
    b.call(builtin(b, "round"), {b.load("x"), b.cfloat(1.0)});
    b.ret();
    EXPECT_EQ(typingError(b, {types::float64()}).first, DiagCode::CallArgs);
  }
  {
    FnBuilder b("k", {"x"});
    b.call(builtin(b, "pow"), {b.load("x"), b.cint(2), b.cint(3)});
    b.ret();
    auto [code, msg] = typingError(b, {types::float64()});
    EXPECT_EQ(code, DiagCode::CallArgs);
    EXPECT_NE(msg.find("pow cannot be called with (float64"), std::string::npos) << msg;
  }
  {
    FnBuilder b("k", {"i", "u"});
    b.call(builtin(b, "pow"), {b.load("i"), b.load("u"), b.cint(3)}); // -> float64: not an int
    b.ret();
    EXPECT_EQ(typingError(b, {types::int64(), types::uint64()}).first, DiagCode::CallArgs);
  }
  {
    FnBuilder b("k", {"z"});
    b.call(builtin(b, "divmod"), {b.load("z"), b.cint(2)});
    b.ret();
    EXPECT_EQ(typingError(b, {types::complex64()}).first, DiagCode::CallArgs);
  }
  {
    FnBuilder b("k", {"x"});
    b.call(builtin(b, "divmod"), {b.load("x"), b.cint(2)}, {"b"});
    b.ret();
    auto [code, msg] = typingError(b, {types::int64()});
    EXPECT_EQ(code, DiagCode::CallArgs);
    EXPECT_NE(msg.find("keyword arguments"), std::string::npos) << msg;
  }
  {
    FnBuilder b("k", {"a"});
    b.call(builtin(b, "print"), {b.load("a")});
    b.ret();
    auto [code, msg] = typingError(b, {types::array(types::float32(), 1, Layout::C)});
    EXPECT_EQ(code, DiagCode::UnsupportedConstruct);
    EXPECT_NE(msg.find("print() of a value of type array(float32, 1d, C)"), std::string::npos)
        << msg;
  }
  {
    FnBuilder b("k", {"x"});
    b.call(builtin(b, "print"), {b.load("x"), b.cnone()}, {"file"});
    b.ret();
    auto [code, msg] = typingError(b, {types::int64()});
    EXPECT_EQ(code, DiagCode::UnsupportedConstruct);
    EXPECT_NE(msg.find("'file'"), std::string::npos) << msg;
  }
  {
    FnBuilder b("k", {"x"});
    b.store("s", cstr(b, "text"));
    b.call(builtin(b, "print"), {b.load("s"), b.load("x")});
    b.ret();
    auto [code, msg] = typingError(b, {types::int64()});
    EXPECT_EQ(code, DiagCode::UnsupportedConstruct);
    EXPECT_NE(msg.find("not a constant"), std::string::npos) << msg;
  }
  {
    FnBuilder b("k", {"x"});
    b.call(builtin(b, "print"), {b.load("x"), b.load("x")}, {"end"});
    b.ret();
    auto [code, msg] = typingError(b, {types::int64()});
    EXPECT_EQ(code, DiagCode::UnsupportedConstruct);
    EXPECT_NE(msg.find("print(end=...)"), std::string::npos) << msg;
  }
}
