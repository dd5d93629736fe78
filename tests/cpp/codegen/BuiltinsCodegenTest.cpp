// Lowering of divmod, round, pow and print, and of the cmath special values: the calls and
// tables each backend gets, operators and builtins sharing one implementation, and PTX that
// ptxas accepts (vprintf included).
#include "../ir/IrBuilder.h"
#include "TestUtil.h"
#include "tests/cpp/common/NeedsLibdevice.h"

#include "codegen/CmathSpecial.h"
#include "codegen/Codegen.h"
#include "ir/typing/Typing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ptxjit::codegen::test {
namespace {

using ir::test::FnBuilder;
using namespace ir;
using namespace codegen::detail;

Instr *builtin(FnBuilder &b, const std::string &name) { return b.sym(name, "builtins." + name); }

Instr *cstr(FnBuilder &b, const std::string &s) { return b.add<ConstInstr>(ConstValue::string(s)); }

std::string hostIR(const Function &fn) {
  CompileOptions o;
  o.backend = Backend::Host;
  return lowerKernel(fn, o, "k").llvmIR();
}

std::string ptxOf(const Function &fn) {
  CompileOptions o;
  LoweredModule m = lowerKernel(fn, o, "k");
  return emitPTX(m, o);
}

/// def k(x, n, out): out[0] = <op>(x[0], n[0]) for builtin `name` on arrays of `xt`, `nt`.
std::unique_ptr<Function> binaryCall(const std::string &name, const ScalarType *xt,
                                     const ScalarType *nt, const ScalarType *outT) {
  FnBuilder b("k", {"x", "n", "out"});
  Instr *x = b.item(b.load("x"), b.cint(0));
  Instr *n = b.item(b.load("n"), b.cint(0));
  Instr *r = b.call(builtin(b, name), {x, n});
  b.setItem(b.load("out"), b.cint(0), r);
  b.ret();
  inferTypes(*b.fn,
             {types::array(xt, 1, Layout::C), types::array(nt, 1, Layout::C),
              types::array(outT, 1, Layout::C)},
             nullptr);
  return std::move(b.fn);
}

TEST(BuiltinsCodegen, PrintCallsVprintfOnCudaAndPrintfOnTheHost) {
  FnBuilder b("k", {"x", "i", "z"});
  b.call(builtin(b, "print"), {cstr(b, "100%"), b.item(b.load("x"), b.cint(0)), b.load("i"),
                               b.load("z"), b.add<ConstInstr>(ConstValue::boolean(true))});
  b.ret();
  inferTypes(*b.fn,
             {types::array(types::float32(), 1, Layout::C), types::uint16(), types::complex64()},
             nullptr);
  std::string host = hostIR(*b.fn);
  EXPECT_NE(host.find("c\"100%% %f %llu (%f%+fj) %s\\0A\\00\""), std::string::npos) << host;
  EXPECT_NE(host.find("call i32 (ptr, ...) @printf("), std::string::npos) << host;
  EXPECT_NE(host.find("call i32 @fflush(ptr null)"), std::string::npos) << host;
  EXPECT_NE(host.find("fpext float"), std::string::npos) << host; // float32 promoted to double
  EXPECT_NE(host.find("zext i16"), std::string::npos) << host;

  CompileOptions o;
  LoweredModule m = lowerKernel(*b.fn, o, "k");
  std::string ir = m.llvmIR();
  EXPECT_NE(ir.find("@vprintf(ptr"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("@printf"), std::string::npos) << ir;
  std::string ptx = emitPTX(m, o);
  EXPECT_NE(ptx.find("vprintf"), std::string::npos);
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }
}

TEST(BuiltinsCodegen, PrintWithoutArgumentsPassesNoBuffer) {
  FnBuilder b("k", {"x"});
  b.call(builtin(b, "print"), {cstr(b, "a"), cstr(b, "b")}, {"sep"});
  b.ret();
  inferTypes(*b.fn, {types::int64()}, nullptr);
  CompileOptions o;
  std::string ir = lowerKernel(*b.fn, o, "k").llvmIR();
  EXPECT_NE(ir.find("c\"a\\0A\\00\""), std::string::npos) << ir; // print("a", sep="b")
  EXPECT_NE(
      ir.find("@vprintf(ptr addrspacecast (ptr addrspace(4) @__ptxjit_fmt to ptr), ptr null)"),
      std::string::npos)
      << ir;
}

TEST(BuiltinsCodegen, PowAndTheOperatorShareTheirCode) {
  // pow(x, 3) unrolls like x ** 3 (no call); pow(x, n) of ints uses the same helper as **.
  FnBuilder b("k", {"x", "n", "out"});
  Instr *x = b.item(b.load("x"), b.cint(0));
  b.setItem(b.load("out"), b.cint(0), b.call(builtin(b, "pow"), {x, b.cint(3)}));
  b.ret();
  inferTypes(*b.fn,
             {types::array(types::float64(), 1, Layout::C), types::int64(),
              types::array(types::float64(), 1, Layout::C)},
             nullptr);
  std::string ir = hostIR(*b.fn);
  EXPECT_EQ(ir.find("pow"), std::string::npos) << ir; // neither llvm.powi nor pow()
  EXPECT_NE(ir.find("fmul"), std::string::npos) << ir;

  auto ints = binaryCall("pow", types::int32(), types::int32(), types::int32());
  FnBuilder op("k", {"x", "n", "out"});
  Instr *ox = op.item(op.load("x"), op.cint(0));
  Instr *on = op.item(op.load("n"), op.cint(0));
  op.setItem(op.load("out"), op.cint(0), op.bin(BinaryOp::Pow, ox, on));
  op.ret();
  auto arr = types::array(types::int32(), 1, Layout::C);
  inferTypes(*op.fn, {arr, arr, arr}, nullptr);
  EXPECT_EQ(hostIR(*ints), hostIR(*op.fn));
}

TEST(BuiltinsCodegen, DivmodRoundAndModularPowGiveValidPtx) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  std::vector<std::unique_ptr<Function>> fns;
  fns.push_back(binaryCall("round", types::float32(), types::int32(), types::float32()));
  fns.push_back(binaryCall("round", types::int64(), types::int64(), types::int64()));
  fns.push_back(binaryCall("round", types::uint64(), types::int8(), types::uint64()));
  {
    FnBuilder b("k", {"x", "out"});
    b.setItem(b.load("out"), b.cint(0),
              b.call(builtin(b, "round"), {b.item(b.load("x"), b.cint(0))}));
    b.ret();
    inferTypes(
        *b.fn,
        {types::array(types::float64(), 1, Layout::C), types::array(types::int64(), 1, Layout::C)},
        nullptr);
    fns.push_back(std::move(b.fn));
  }
  for (const ScalarType *t : {types::int64(), types::uint64()}) {
    FnBuilder b("k", {"x", "out"});
    Instr *x = b.item(b.load("x"), b.cint(0));
    b.setItem(b.load("out"), b.cint(0), b.call(builtin(b, "pow"), {x, x, x}));
    b.ret();
    inferTypes(*b.fn, {types::array(t, 1, Layout::C), types::array(t, 1, Layout::C)}, nullptr);
    fns.push_back(std::move(b.fn));
  }
  for (const ScalarType *t : {types::int16(), types::float64()}) {
    FnBuilder b("k", {"x", "q", "r"});
    Instr *x = b.item(b.load("x"), b.cint(0));
    Instr *d = b.call(builtin(b, "divmod"), {x, b.item(b.load("x"), b.cint(1))});
    b.setItem(b.load("q"), b.cint(0), b.tupleGet(d, 0));
    b.setItem(b.load("r"), b.cint(0), b.tupleGet(d, 1));
    b.ret();
    auto arr = types::array(t, 1, Layout::C);
    inferTypes(*b.fn, {arr, arr, arr}, nullptr);
    fns.push_back(std::move(b.fn));
  }
  for (const auto &fn : fns) {
    std::string ptx = ptxOf(*fn);
    EXPECT_EQ(ptx.find(".extern"), std::string::npos) << ptx;
    if (havePtxas()) {
      EXPECT_TRUE(ptxasAccepts(ptx));
    }
    // No 128-bit division: the host JIT has no __udivti3/__umodti3.
    std::string host = hostIR(*fn);
    EXPECT_EQ(host.find("div i128"), std::string::npos) << host;
    EXPECT_EQ(host.find("rem i128"), std::string::npos) << host;
  }
}

TEST(BuiltinsCodegen, CmathSpecialValuesBranchToATable) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  FnBuilder b("k", {"z", "out"});
  Instr *f = b.attr(b.sym("cmath", "cmath"), "sin");
  b.setItem(b.load("out"), b.cint(0), b.call(f, {b.item(b.load("z"), b.cint(0))}));
  b.ret();
  auto arr = types::array(types::complex64(), 1, Layout::C);
  inferTypes(*b.fn, {arr, arr}, nullptr);
  std::string host = hostIR(*b.fn);
  // sin(z) = -i sinh(iz): the sinh table, read on the branch for non-finite parts.
  EXPECT_NE(host.find("@__ptxjit_cmath_sinh = private unnamed_addr constant [98 x double]"),
            std::string::npos)
      << host;
  EXPECT_NE(host.find("cmath.special:"), std::string::npos) << host;
  std::string ptx = ptxOf(*b.fn);
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }
}

TEST(CmathSpecial, ClassesAndEntries) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cmathClassOf(-inf), CmathClass::NegInf);
  EXPECT_EQ(cmathClassOf(-1e-300), CmathClass::Neg);
  EXPECT_EQ(cmathClassOf(-0.0), CmathClass::NegZero);
  EXPECT_EQ(cmathClassOf(0.0), CmathClass::PosZero);
  EXPECT_EQ(cmathClassOf(5.0), CmathClass::Pos);
  EXPECT_EQ(cmathClassOf(inf), CmathClass::PosInf);
  EXPECT_EQ(cmathClassOf(nan), CmathClass::Nan);

  auto entry = [](CmathTable t, double re, double im) {
    return cmathSpecialTable(t)[7 * int(cmathClassOf(re)) + int(cmathClassOf(im))];
  };
  auto same = [](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
  };
  auto expect = [&](CmathTable t, double re, double im, double wre, double wim) {
    auto e = entry(t, re, im);
    EXPECT_TRUE(same(e.first, wre) && same(e.second, wim))
        << cmathTableName(t) << "(" << re << ", " << im << ") = (" << e.first << ", " << e.second
        << ")";
  };
  expect(CmathTable::Exp, -inf, 0.0, 0.0, 0.0);
  expect(CmathTable::Exp, inf, -0.0, inf, -0.0);
  expect(CmathTable::Log, -inf, inf, inf, 0.75 * M_PI);
  expect(CmathTable::Log, -0.0, -0.0, -inf, -M_PI);
  expect(CmathTable::Sqrt, nan, -inf, inf, -inf);
  expect(CmathTable::Acos, inf, nan, nan, inf);
  expect(CmathTable::Atanh, 1.0, inf, 0.0, M_PI / 2);
  expect(CmathTable::Tanh, -inf, nan, -1.0, 0.0);
  expect(CmathTable::Rect, -inf, 0.0, -inf, -0.0); // -inf * (cos 0, sin 0) as -(inf, 0)
  // Both parts finite: never read (nan).
  EXPECT_TRUE(std::isnan(entry(CmathTable::Exp, 1.0, 1.0).first));
}

} // namespace
} // namespace ptxjit::codegen::test
