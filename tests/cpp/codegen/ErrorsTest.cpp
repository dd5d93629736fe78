// Typed IR the lowering cannot handle gives a located CompileError, never a crash.
#include "Kernels.h"

#include "codegen/Codegen.h"

#include <gtest/gtest.h>

namespace ptxjit::codegen::test {
namespace {

/// Lowers `fn` for both backends and returns the error (which must be the same for both).
ir::CompileError lowerError(const Function &fn) {
  std::optional<ir::CompileError> first;
  for (Backend be : {Backend::CUDA, Backend::Host}) {
    CompileOptions o;
    o.backend = be;
    try {
      lowerKernel(fn, o, "bad");
      ADD_FAILURE() << "lowering succeeded for backend " << int(be);
    } catch (const ir::CompileError &e) {
      if (first) {
        EXPECT_EQ(first->code(), e.code());
        EXPECT_EQ(first->loc().line, e.loc().line);
      } else {
        first = e;
      }
    }
  }
  if (!first)
    return ir::CompileError(ir::DiagCode::Internal, "no error", "", {});
  return *first;
}

TEST(LoweringErrors, SlicingANumberIsAnIndexError) {
  auto f64 = types::float64();
  TypedBuilder b("k", {"x"}, {f64});
  b.line = 7;
  Instr *s =
      b.add<BuildSliceInstr>(types::slice(false), std::vector<Instr *>{b.cint(0), b.cint(2)});
  b.line = 8;
  b.item(b.load("x"), s, f64);
  b.ret();
  ir::CompileError e = lowerError(*b.fn);
  EXPECT_EQ(e.code(), ir::DiagCode::IndexTypes);
  EXPECT_EQ(e.loc().line, 8);
  EXPECT_EQ(e.file(), "kernels.py");
  EXPECT_NE(e.message().find("slice<a:b>"), std::string::npos) << e.what();
}

TEST(LoweringErrors, UntypedInstructionIsInternal) {
  auto i64 = types::int64();
  TypedBuilder b("k", {"a"}, {arr(i64)});
  b.line = 5;
  Instr *c = b.cint(3);
  c->type = nullptr;
  b.setItem(b.load("a"), b.cint(0), c);
  b.ret();
  ir::CompileError e = lowerError(*b.fn);
  EXPECT_EQ(e.kind(), ir::DiagKind::Internal);
  EXPECT_EQ(e.loc().line, 5);
  EXPECT_NE(e.message().find("untyped"), std::string::npos) << e.what();
}

TEST(LoweringErrors, UnknownCallIsUnsupported) {
  auto f64 = types::float64();
  TypedBuilder b("k", {"a"}, {arr(f64)});
  b.line = 11;
  Instr *v = b.call(b.sym("math.frexp"), {b.cfloat(1.0)}, f64);
  b.setItem(b.load("a"), b.cint(0), v);
  b.ret();
  ir::CompileError e = lowerError(*b.fn);
  EXPECT_EQ(e.code(), ir::DiagCode::UnsupportedCall);
  EXPECT_EQ(e.loc().line, 11);
  EXPECT_NE(e.message().find("math.frexp"), std::string::npos);
}

TEST(LoweringErrors, KernelReturningAValue) {
  TypedBuilder b("k", {}, {});
  b.line = 3;
  b.ret(b.cint(1, types::int64()));
  ir::CompileError e = lowerError(*b.fn);
  EXPECT_EQ(e.code(), ir::DiagCode::KernelReturnsValue);
  EXPECT_EQ(e.loc().line, 3);
}

TEST(LoweringErrors, EnumerateStateFromAnArrayIsInternal) {
  // enumerate() makes its state in the call; a GetIter of an array typed as an enumerate
  // iterator is malformed typed IR.
  auto i64 = types::int64();
  TypedBuilder b("k", {"a"}, {arr(i64)});
  const Type *inner = types::iterator(IterKind::Array, i64, {arr(i64)});
  const Type *tupleT = types::tuple({i64, i64});
  const Type *it = types::iterator(IterKind::Enumerate, tupleT, {inner});
  b.line = 4;
  b.add<GetIterInstr>(it, b.load("a"));
  b.ret();
  ir::CompileError e = lowerError(*b.fn);
  EXPECT_EQ(e.kind(), ir::DiagKind::Internal);
  EXPECT_EQ(e.loc().line, 4);
  EXPECT_NE(e.message().find("enumerate"), std::string::npos) << e.what();
}

TEST(LoweringErrors, MissingGlobalAndPlainFunction) {
  {
    TypedBuilder b("k", {"a"}, {arr(types::int64())});
    b.line = 9;
    Instr *g = b.add<GlobalInstr>(types::int64(), "undefined_name", GlobalValue::missing());
    b.setItem(b.load("a"), b.cint(0), g);
    b.ret();
    ir::CompileError e = lowerError(*b.fn);
    EXPECT_EQ(e.code(), ir::DiagCode::UndefinedName);
    EXPECT_NE(e.message().find("undefined_name"), std::string::npos);
  }
  {
    TypedBuilder b("k", {"a"}, {arr(types::int64())});
    Instr *g = b.add<GlobalInstr>(types::int64(), "helper", GlobalValue::pyFunction("helper"));
    b.setItem(b.load("a"), b.cint(0), g);
    b.ret();
    EXPECT_EQ(lowerError(*b.fn).code(), ir::DiagCode::UndecoratedFunction);
  }
}

TEST(LoweringErrors, DeviceCallWithWrongArguments) {
  auto f64 = types::float64();
  TypedBuilder d("f", {"x", "y"}, {f64, f64}, FunctionKind::Device, f64);
  d.ret(d.load("x"));
  TypedBuilder b("k", {"a"}, {arr(f64)});
  b.line = 6;
  b.setItem(b.load("a"), b.cint(0), b.callDevice(d.fn.get(), {b.cfloat(1.0)}));
  b.ret();
  ir::CompileError e = lowerError(*b.fn);
  EXPECT_EQ(e.code(), ir::DiagCode::ArgumentCount);
  EXPECT_EQ(e.loc().line, 6);
  TypedBuilder b2("k", {"a"}, {arr(f64)});
  b2.setItem(b2.load("a"), b2.cint(0),
             b2.callDevice(d.fn.get(), {b2.cfloat(1.0), b2.cfloat(2.0)}, {"z"}));
  b2.ret();
  EXPECT_EQ(lowerError(*b2.fn).code(), ir::DiagCode::CallArgs);
}

TEST(LoweringErrors, MalformedBlocksAreInternal) {
  {
    // A block without a terminator.
    TypedBuilder b("k", {}, {});
    b.cint(1);
    ir::CompileError e = lowerError(*b.fn);
    EXPECT_EQ(e.kind(), ir::DiagKind::Internal);
    EXPECT_NE(e.message().find("terminator"), std::string::npos);
  }
  {
    // An operand defined in a block that does not dominate its use.
    TypedBuilder b("k", {"a"}, {arr(types::int64())});
    Block *t = b.newBlock(), *f = b.newBlock(), *join = b.newBlock();
    b.branch(b.cbool(true), t, f);
    b.at(t);
    Instr *v = b.item(b.load("a"), b.cint(1), types::int64());
    b.jump(join);
    b.at(f);
    b.jump(join);
    b.at(join);
    b.setItem(b.load("a"), b.cint(0), v);
    b.ret();
    ir::CompileError e = lowerError(*b.fn);
    EXPECT_EQ(e.kind(), ir::DiagKind::Internal);
  }
  {
    // Untyped function (no argument types).
    TypedBuilder b("k", {"a"}, {arr(types::int64())});
    b.ret();
    b.fn->argTypes.clear();
    EXPECT_EQ(lowerError(*b.fn).kind(), ir::DiagKind::Internal);
  }
}

TEST(LoweringErrors, WrongOperandTypes) {
  // An array used as a number, and indexing a float.
  auto f64 = types::float64();
  TypedBuilder b("k", {"a"}, {arr(f64)});
  b.line = 12;
  b.bin(BinaryOp::Add, b.load("a"), b.cint(1), f64);
  b.ret();
  EXPECT_EQ(lowerError(*b.fn).code(), ir::DiagCode::OperatorTypes);
  TypedBuilder b2("k", {"x"}, {f64});
  b2.item(b2.load("x"), b2.cint(0), f64);
  b2.ret();
  EXPECT_EQ(lowerError(*b2.fn).code(), ir::DiagCode::IndexTypes);
  // A kernel parameter of a type with no run-time form.
  TypedBuilder b3("k", {"s"}, {types::slice()});
  b3.ret();
  EXPECT_EQ(lowerError(*b3.fn).code(), ir::DiagCode::UnsupportedConstruct);
}

TEST(LoweringErrors, InvalidEntrySymbol) {
  auto fn = makeSaxpy();
  EXPECT_THROW(lowerKernel(*fn, CompileOptions{}, "not a symbol"), ir::CompileError);
  EXPECT_THROW(lowerKernel(*fn, CompileOptions{}, ""), ir::CompileError);
}

} // namespace
} // namespace ptxjit::codegen::test
